//! The smallest instrumented agent: one run, a streamed model step, two tools in
//! parallel. Start `mindgate serve`, then `cargo run -p mindgate-sdk --example quickstart`.
//! Without a viewer it runs exactly the same, detached.

use std::time::Duration;

use mindgate_sdk::{Aborted, NodeKind, graph_hint, hint, run, step, tool};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
enum AgentError {
    #[error(transparent)]
    Aborted(#[from] Aborted),
    #[error("tool failed: {0}")]
    Tool(String),
}

#[tokio::main]
async fn main() -> Result<(), AgentError> {
    mindgate_sdk::init(mindgate_sdk::Config::default().app("quickstart"));
    let client = mindgate_sdk::global();
    let attached = client.ready(Duration::from_secs(1)).await;
    println!("viewer attached: {attached} ({})", client.url());

    let answer = run("weather-question", json!({"user": "ada"}), async {
        graph_hint([
            hint(NodeKind::Tool, "get_weather"),
            hint(NodeKind::Tool, "get_time"),
        ]);

        step()
            .input(&json!({"prompt": "What's the weather and time in Oslo?"}))
            .call(|ctx| async move {
                for word in ["Let ", "me ", "check ", "both."] {
                    ctx.token(word);
                    tokio::time::sleep(Duration::from_millis(40)).await;
                }
                ctx.usage(25, 4);
                Ok::<_, AgentError>(())
            })
            .await?;

        let weather = tool("get_weather")
            .input(&json!({"city": "Oslo"}))
            .call(|_| async { Ok::<_, AgentError>(json!({"sky": "clear", "c": 18})) });
        let time = tool("get_time")
            .input(&json!({"tz": "Europe/Oslo"}))
            .call(|_| async { Ok::<_, AgentError>("14:05".to_owned()) });
        let (weather, time) = tokio::join!(weather, time);
        let (weather, time) = (weather?, time?);
        if weather.is_null() {
            return Err(AgentError::Tool("no weather".into()));
        }

        step()
            .call(|ctx| {
                let text = format!("It is {time} and {} in Oslo.", weather["sky"]);
                async move {
                    ctx.token(&text);
                    Ok::<_, AgentError>(text)
                }
            })
            .await
    })
    .await?;
    println!("{answer}");
    client.shutdown(Duration::from_secs(1)).await;
    Ok(())
}
