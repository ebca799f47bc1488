//! Cost (`cost`): usage × prices per node, run and app — cache tokens priced apart, an
//! `inclusive` parent not counted twice, an unknown model reported unpriced, not guessed.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, PriceTable, RunFilter, RunStore, WriterConfig};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    the_report_costs_each_node_and_the_run_exactly,
    the_users_prices_price_an_unknown_model,
    apps_add_up_their_runs,
    a_run_that_grows_is_costed_again
);

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq as i64, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// One model call: `node.started` (model in the input, as graphmind-ai's OpenAI and
/// Anthropic integrations send it, when `input_model` is given) and `node.finished` with
/// `usage` (and `output.model`, as its LangChain integration sends it, when given).
fn call(
    run: &str,
    seq: &mut u64,
    node: &str,
    instance: &str,
    input_model: Option<&str>,
    output_model: Option<&str>,
    usage: Value,
) -> Vec<NewEvent> {
    let mut started = json!({"nodeId": node, "kind": "llm", "name": node, "instanceId": instance, "parentId": "agent:a"});
    if let Some(m) = input_model {
        started["input"] = json!({"provider": "openai", "model": m, "messages": []});
    }
    let mut finished = json!({"nodeId": node, "instanceId": instance, "durationMs": 3, "status": "ok", "usage": usage});
    if let Some(m) = output_model {
        finished["output"] = json!({"text": "…", "model": m});
    }
    let out = vec![
        ev(run, *seq, "node.started", started),
        ev(run, *seq + 1, "node.finished", finished),
    ];
    *seq += 2;
    out
}

fn mixed_run(run: &str) -> Vec<NewEvent> {
    let mut seq = 2;
    let mut events = vec![
        ev(
            run,
            0,
            "run.started",
            json!({"app": "shop", "sdk": {"name": "t", "version": "1"}}),
        ),
        ev(
            run,
            1,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
    ];
    // Two executions of one node, the model with a provider prefix and a date.
    events.extend(call(
        run,
        &mut seq,
        "llm:plan",
        "p1",
        Some("openai/gpt-4o-2024-08-06"),
        None,
        json!({"inputTokens": 1000, "outputTokens": 200, "cacheReadTokens": 4000}),
    ));
    events.extend(call(
        run,
        &mut seq,
        "llm:plan",
        "p2",
        Some("gpt-4o"),
        None,
        json!({"inputTokens": 500, "outputTokens": 100}),
    ));
    // The model named by the output; cache reads and writes priced apart.
    events.extend(call(
        run,
        &mut seq,
        "llm:summarize",
        "s1",
        None,
        Some("claude-3-5-haiku-20241022"),
        json!({"inputTokens": 2000, "outputTokens": 400, "cacheReadTokens": 1000, "cacheWriteTokens": 3000}),
    ));
    // A model no table prices.
    events.extend(call(
        run,
        &mut seq,
        "llm:local",
        "l1",
        Some("llama3:70b"),
        None,
        json!({"inputTokens": 10, "outputTokens": 10}),
    ));
    // The agent reports its children's usage as its own, flagged inclusive.
    events.push(ev(
        run,
        seq,
        "node.finished",
        json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 20, "status": "ok",
               "usage": {"inputTokens": 3510, "outputTokens": 710, "cacheReadTokens": 5000, "inclusive": true, "model": "gpt-4o"}}),
    ));
    events.push(ev(run, seq + 1, "run.finished", json!({"status": "ok"})));
    events
}

fn priced_run(run: &str, app: &str) -> Vec<NewEvent> {
    let mut seq = 1;
    let mut events = vec![ev(
        run,
        0,
        "run.started",
        json!({"app": app, "sdk": {"name": "t", "version": "1"}}),
    )];
    events.extend(call(
        run,
        &mut seq,
        "llm:x",
        "x1",
        Some("gpt-4o-mini"),
        None,
        json!({"inputTokens": 1_000_000, "outputTokens": 0}),
    ));
    events.push(ev(run, seq, "run.finished", json!({"status": "ok"})));
    events
}

fn fill(db: &TestDb, runs: Vec<Vec<NewEvent>>) -> RunStore {
    let (w, _) = db.writer(WriterConfig::default(), None);
    for e in runs.into_iter().flatten() {
        w.append(e).unwrap();
    }
    w.flush().unwrap();
    w.close().unwrap();
    db.reader()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

// gpt-4o: 2.50 in, 10 out, 1.25 cache read per million tokens.
const PLAN_USD: f64 = (1500.0 * 2.50 + 300.0 * 10.0 + 4000.0 * 1.25) / 1e6;
// claude-3-5-haiku: 0.80 in, 4 out, 0.08 cache read, 1.00 cache write.
const SUMMARIZE_USD: f64 = (2000.0 * 0.80 + 400.0 * 4.0 + 1000.0 * 0.08 + 3000.0 * 1.00) / 1e6;

fn the_report_costs_each_node_and_the_run_exactly(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let store = fill(&db, vec![mixed_run("c1")]);
    let report = store.run_report("c1").unwrap().expect("run");
    let node = |id: &str| {
        report
            .tokens
            .by_node
            .iter()
            .find(|n| n.node_id == id)
            .unwrap_or_else(|| panic!("{id} in {:?}", report.tokens.by_node))
    };

    let plan = node("llm:plan");
    assert_eq!(
        (
            plan.input_tokens,
            plan.output_tokens,
            plan.cache_read_tokens
        ),
        (1500, 300, 4000)
    );
    assert_eq!(plan.models, ["gpt-4o", "openai/gpt-4o-2024-08-06"]);
    assert!(close(plan.cost.usd.unwrap(), PLAN_USD), "{:?}", plan.cost);

    let summarize = node("llm:summarize");
    assert_eq!(summarize.models, ["claude-3-5-haiku-20241022"]);
    assert_eq!(
        (summarize.cache_read_tokens, summarize.cache_write_tokens),
        (1000, 3000)
    );
    assert!(close(summarize.cost.usd.unwrap(), SUMMARIZE_USD));

    let local = node("llm:local");
    assert_eq!(local.cost.usd, None, "an unknown model is not guessed");
    assert_eq!(local.cost.unpriced_models, ["llama3:70b"]);

    // The inclusive agent shows its own figure …
    let agent = node("agent:a");
    assert!(agent.inclusive);
    let agent_usd = (3510.0 * 2.50 + 710.0 * 10.0 + 5000.0 * 1.25) / 1e6;
    assert!(close(agent.cost.usd.unwrap(), agent_usd));

    // … and the run counts its children only: not twice.
    let run = &report.tokens.cost;
    assert_eq!(run.usd, None, "one unpriced model makes the total unknown");
    assert_eq!(run.unpriced_models, ["llama3:70b"]);
    assert!(
        close(run.priced_usd, PLAN_USD + SUMMARIZE_USD),
        "{} vs {}",
        run.priced_usd,
        PLAN_USD + SUMMARIZE_USD
    );
    assert_eq!(
        (
            report.tokens.input_tokens,
            report.tokens.output_tokens,
            report.tokens.cache_read_tokens,
            report.tokens.cache_write_tokens
        ),
        (3510, 710, 5000, 3000)
    );

    // The run list and the run read the same figure.
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(listed.runs[0].cost.as_ref(), Some(run));
    let one = store.get_run_with_cost("c1").unwrap().unwrap();
    assert_eq!(one.cost.as_ref(), Some(run));
    assert_eq!(store.get_run("c1").unwrap().unwrap().cost, None);
}

fn the_users_prices_price_an_unknown_model(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let store = fill(&db, vec![mixed_run("c1")]);
    let prices = PriceTable::builtin()
        .with_file_text(
            "[models.\"llama3:70b\"]\ninput = 100.0\noutput = 100.0\n",
            Path::new("prices.toml"),
        )
        .unwrap();
    let store = store.with_prices(prices);
    let cost = store.run_cost("c1").unwrap().unwrap();
    let local = 20.0 * 100.0 / 1e6;
    assert!(close(cost.usd.unwrap(), PLAN_USD + SUMMARIZE_USD + local));
    assert!(cost.unpriced_models.is_empty());
}

fn apps_add_up_their_runs(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let store = fill(
        &db,
        vec![
            mixed_run("c1"),
            priced_run("c2", "shop"),
            priced_run("c3", "bank"),
        ],
    );
    let apps = store.app_costs().unwrap();
    assert!(!apps.truncated);
    let names: Vec<&str> = apps.apps.iter().map(|a| a.app.as_str()).collect();
    assert_eq!(names, ["bank", "shop"]);
    let bank = &apps.apps[0];
    assert_eq!(bank.run_count, 1);
    assert!(close(bank.cost.usd.unwrap(), 0.15));
    let shop = &apps.apps[1];
    assert_eq!(shop.run_count, 2);
    assert_eq!(shop.cost.usd, None);
    assert_eq!(shop.cost.unpriced_models, ["llama3:70b"]);
    assert!(close(shop.cost.priced_usd, PLAN_USD + SUMMARIZE_USD + 0.15));
    assert_eq!(shop.tokens.input, 3510 + 1_000_000);
    assert!(store.run_cost("nope").unwrap().is_none());
}

fn a_run_that_grows_is_costed_again(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, _) = db.writer(WriterConfig::default(), None);
    let events = priced_run("g1", "shop");
    let (first, rest) = events.split_at(3);
    for e in first {
        w.append(e.clone()).unwrap();
    }
    w.flush().unwrap();
    let store = db.reader();
    assert!(close(
        store.run_cost("g1").unwrap().unwrap().usd.unwrap(),
        0.15
    ));
    // A second call of the node, then a read: the cost read before is not reused.
    let mut seq = 10;
    for e in call(
        "g1",
        &mut seq,
        "llm:y",
        "y1",
        Some("gpt-4o-mini"),
        None,
        json!({"inputTokens": 0, "outputTokens": 1_000_000}),
    )
    .into_iter()
    .chain(rest.iter().cloned())
    {
        w.append(e).unwrap();
    }
    w.flush().unwrap();
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    let cost = listed.runs[0].cost.as_ref().unwrap();
    assert!(close(cost.usd.unwrap(), 0.15 + 0.60), "{cost:?}");
    w.close().unwrap();
}
