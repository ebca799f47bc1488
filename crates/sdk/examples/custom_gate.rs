//! Hand-written integration: emit your own events and await a gate where the
//! builder does not fit (e.g. inside a framework callback).
//! `cargo run -p mindgate-sdk --example custom_gate`

use std::time::Duration;

use mindgate_sdk::{Client, Config, Decision, GateNode, NodeKind, PausePoint};

#[tokio::main]
async fn main() {
    let client = Client::new(Config::default().app("custom-gate"));
    client.ready(Duration::from_millis(500)).await;
    let node = GateNode {
        node_id: "custom:framework-hook",
        kind: NodeKind::Custom,
        name: "framework-hook",
    };
    match client.gate(PausePoint::Before, node).await {
        Decision::Continue | Decision::Retry => println!("running the hook"),
        Decision::Inject(value) => println!("the debugger supplied {value}"),
        Decision::Abort => println!("the debugger aborted the run"),
    }
    client.shutdown(Duration::from_millis(500)).await;
}
