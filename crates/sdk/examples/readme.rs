//! One tool and one model step, drawn live by `mindgate serve`.
use std::time::Duration;

use mindgate_sdk::{Aborted, Config, run, step, tool};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Aborted> {
    // Dials ws://127.0.0.1:4747/ingest (or $MINDGATE_URL); without a viewer it runs detached.
    mindgate_sdk::init(Config::default().app("weather-bot"));
    mindgate_sdk::global().ready(Duration::from_secs(2)).await;
    let answer = run("weather-question", json!({"city": "Oslo"}), async {
        let forecast: Value = tool("get_weather")
            .input(&json!({"city": "Oslo"}))
            .call(|_| async { Ok::<_, Aborted>(json!({"sky": "clear", "celsius": 18})) })
            .await?;
        let celsius = forecast["celsius"].as_i64().unwrap_or_default();
        step() // your model call goes in here; tokens and usage show on its box
            .input(&forecast)
            .call(|ctx| async move {
                ctx.usage(21, 9);
                Ok::<_, Aborted>(format!("Clear and {celsius} °C in Oslo."))
            })
            .await
    })
    .await?;
    println!("{answer}");
    mindgate_sdk::global()
        .shutdown(Duration::from_secs(1))
        .await;
    Ok(())
}
