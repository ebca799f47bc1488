//! Issue 31 item 4: usage across sessions. The report's totals equal the sum of the sessions'
//! own figures (each session's `summary.tokens` and `graph_cost`, every session of every tree
//! once), every grouping loses nothing, and cache writes are kept and priced apart — over the
//! fixtures of every agent, and over the genuine transcripts in `../shared/data/real-sessions`
//! when present.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use mindgate_pricing::PriceTable;
use mindgate_taskgraph::discover::usage_of_tasks;
use mindgate_taskgraph::graph::TokenTotals;
use mindgate_taskgraph::graph::graph_cost;
use mindgate_taskgraph::usage::{UsageBy, UsageQuery, UsageReport};
use mindgate_taskgraph::{Catalog, DiscoveryConfig, GraphTree};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture_config() -> DiscoveryConfig {
    let f = fixtures();
    DiscoveryConfig {
        dsh_sessions: Some(f.join("dsh")),
        pi_sessions: Some(f.join("pi")),
        claude_projects: Some(f.join("claude")),
        codex_sessions: Some(f.join("codex")),
        gemini_sessions: Some(f.join("gemini/tmp")),
        opencode_data: Some(f.join("opencode")),
        extra_paths: vec![f.join("fidelity")],
        ..DiscoveryConfig::empty()
    }
}

fn real_sessions() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions");
    dir.is_dir().then_some(dir)
}

fn query(by: UsageBy) -> UsageQuery {
    UsageQuery {
        by,
        since_ms: None,
        tz: TimeZone::UTC,
    }
}

/// Every distinct session graph of the catalog's trees (a session listed on its own and as
/// its parent's child counts once), read again through `Catalog::tree`.
fn distinct_graphs(catalog: &Catalog) -> Vec<GraphTree> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for t in catalog.tasks() {
        let (_, tree) = catalog.tree(t.path.to_str().unwrap()).unwrap();
        let mut stack = vec![tree];
        while let Some(t) = stack.pop() {
            stack.extend(t.children.iter().cloned());
            if seen.insert(t.graph.session_id.to_string()) {
                out.push(GraphTree {
                    graph: t.graph,
                    children: Vec::new(),
                });
            }
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The report's totals are the sum of the graphs' own figures, and each grouping's rows sum
/// to the totals.
fn check_against_graphs(catalog: &Catalog, prices: &PriceTable, what: &str) -> UsageReport {
    let graphs = distinct_graphs(catalog);
    let mut tokens = TokenTotals::default();
    let mut priced = 0.0;
    let mut unpriced: Vec<String> = Vec::new();
    let mut with_usage = 0;
    for t in &graphs {
        let s = t.graph.summary.tokens;
        tokens.input += s.input;
        tokens.output += s.output;
        tokens.cache_read += s.cache_read;
        tokens.cache_write += s.cache_write;
        tokens.total += s.total;
        let cost = graph_cost(&t.graph, prices);
        priced += cost.priced_usd;
        unpriced.extend(cost.unpriced_models);
        if s.total > 0 {
            with_usage += 1;
        }
    }
    unpriced.sort();
    unpriced.dedup();
    let day = catalog.usage(&query(UsageBy::Day), prices);
    assert_eq!(
        day.total.tokens, tokens,
        "{what}: report total = sum of graphs"
    );
    assert!(
        close(day.total.cost.priced_usd, priced),
        "{what}: cost {} vs {priced}",
        day.total.cost.priced_usd
    );
    assert_eq!(day.unpriced_models, unpriced, "{what}");
    assert_eq!(
        day.total.sessions, with_usage,
        "{what}: sessions with usage"
    );
    for by in UsageBy::ALL {
        let r = catalog.usage(&query(by), prices);
        assert_eq!(r.total, day.total, "{what}: {by:?} total");
        let mut sum = TokenTotals::default();
        let mut cost = 0.0;
        for row in &r.rows {
            sum.input += row.tokens.input;
            sum.output += row.tokens.output;
            sum.cache_read += row.tokens.cache_read;
            sum.cache_write += row.tokens.cache_write;
            sum.total += row.tokens.total;
            cost += row.cost.priced_usd;
            assert!(row.tokens.cache_write <= row.tokens.input, "{what}: {by:?}");
        }
        assert_eq!(sum, r.total.tokens, "{what}: {by:?} rows sum to the total");
        assert!(close(cost, r.total.cost.priced_usd), "{what}: {by:?} cost");
    }
    day
}

#[test]
fn usage_totals_equal_the_sum_of_the_fixture_graphs() {
    let mut catalog = Catalog::new(fixture_config());
    catalog.refresh();
    let agents: HashSet<&str> = catalog.tasks().iter().map(|t| t.agent.as_str()).collect();
    for a in ["dsh", "pi", "claude_code", "codex", "gemini", "opencode"] {
        assert!(agents.contains(a), "no {a} fixture found: {agents:?}");
    }
    let report = check_against_graphs(&catalog, &PriceTable::builtin(), "fixtures");
    // Claude's cache creation and pi's cacheWrite are kept, apart.
    assert!(
        report.total.tokens.cache_write > 0,
        "{:?}",
        report.total.tokens
    );
    let by_agent = catalog.usage(&query(UsageBy::Agent), &PriceTable::builtin());
    let agent_rows: HashMap<&str, &TokenTotals> = by_agent
        .rows
        .iter()
        .map(|r| (r.key.as_str(), &r.tokens))
        .collect();
    assert!(agent_rows["claude_code"].cache_write > 0);
    assert!(agent_rows["pi"].cache_write > 0);
    assert_eq!(agent_rows.get("codex").map_or(0, |t| t.cache_write), 0);
}

#[test]
fn cache_writes_are_priced_apart_and_unknown_models_are_named() {
    let mut catalog = Catalog::new(fixture_config());
    catalog.refresh();
    // A table that knows one model of the fixtures, with cache writes dearer than input.
    let by_model = catalog.usage(&query(UsageBy::Model), &PriceTable::builtin());
    let (model, tokens) = by_model
        .rows
        .iter()
        .find(|r| r.tokens.cache_write > 0 && r.key != "unknown")
        .map(|r| (r.key.clone(), r.tokens))
        .expect("a model with cache writes");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prices.toml");
    std::fs::write(
        &file,
        format!(
            "[models.\"{model}\"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.5\ncache_write = 4.0\n"
        ),
    )
    .unwrap();
    let prices = PriceTable::load(&file).unwrap();
    let report = catalog.usage(&query(UsageBy::Model), &prices);
    let row = report.rows.iter().find(|r| r.key == model).unwrap();
    let expected = ((tokens.input - tokens.cache_write) as f64 * 1.0
        + tokens.output as f64 * 2.0
        + tokens.cache_read as f64 * 0.5
        + tokens.cache_write as f64 * 4.0)
        / 1e6;
    assert!(
        close(row.cost.usd.unwrap(), expected),
        "{} vs {expected}",
        row.cost.priced_usd
    );
    check_against_graphs(&catalog, &prices, "fixtures, one price file");
}

#[test]
fn periods_follow_the_time_zone_and_since() {
    let mut catalog = Catalog::new(fixture_config());
    catalog.refresh();
    let prices = PriceTable::builtin();
    let utc = catalog.usage(&query(UsageBy::Day), &prices);
    assert!(
        utc.rows
            .iter()
            .all(|r| r.key.len() == 10 || r.key == "(no time)")
    );
    let month = catalog.usage(&query(UsageBy::Month), &prices);
    assert!(
        month
            .rows
            .iter()
            .all(|r| r.key.len() == 7 || r.key == "(no time)")
    );
    // Far east: a step at 23:00 UTC falls on the next day.
    let mut q = query(UsageBy::Day);
    q.tz = TimeZone::get("Pacific/Kiritimati").unwrap();
    let east = catalog.usage(&q, &prices);
    assert_eq!(east.tz, "Pacific/Kiritimati");
    assert_eq!(east.total, utc.total);
    // `since` after every step leaves nothing; before every step leaves everything.
    let mut q = query(UsageBy::Day);
    q.since_ms = Some(i64::MAX / 2);
    assert_eq!(catalog.usage(&q, &prices).total.tokens.total, 0);
    q.since_ms = Some(0);
    let all = catalog.usage(&q, &prices);
    let no_time: u64 = utc
        .rows
        .iter()
        .filter(|r| r.key == "(no time)")
        .map(|r| r.tokens.total)
        .sum();
    assert_eq!(all.total.tokens.total + no_time, utc.total.tokens.total);
}

#[test]
fn usage_of_listed_tasks_equals_the_catalog_report() {
    let mut catalog = Catalog::new(fixture_config());
    catalog.refresh();
    let prices = PriceTable::builtin();
    let q = query(UsageBy::Session);
    assert_eq!(
        usage_of_tasks(catalog.tasks(), &q, &prices),
        catalog.usage(&q, &prices)
    );
}

#[test]
fn usage_over_the_real_sessions_equals_their_graphs() {
    let Some(dir) = real_sessions() else {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    };
    let config = DiscoveryConfig {
        extra_paths: ["claude", "codex", "pi", "gemini"]
            .iter()
            .map(|a| dir.join(a))
            .collect(),
        opencode_data: Some(opencode_copy(&dir)),
        ..DiscoveryConfig::empty()
    };
    let mut catalog = Catalog::new(config);
    catalog.refresh();
    assert!(catalog.tasks().len() >= 10, "{}", catalog.tasks().len());
    let agents: HashSet<&str> = catalog.tasks().iter().map(|t| t.agent.as_str()).collect();
    for a in ["pi", "claude_code", "codex", "gemini", "opencode"] {
        assert!(agents.contains(a), "no {a} session read: {agents:?}");
    }
    let report = check_against_graphs(&catalog, &PriceTable::builtin(), "real sessions");
    assert!(report.total.tokens.cache_write > 0);
}

/// The shared OpenCode database, copied (SQLite writes its `-shm` even when reading).
fn opencode_copy(dir: &Path) -> PathBuf {
    let tmp = std::env::temp_dir().join(format!("mg-usage-opencode-{}", std::process::id()));
    let from = dir.join("opencode/op30mmd__JulesGuiCs__1629936e");
    std::fs::create_dir_all(&tmp).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, tmp.join(p.file_name().unwrap())).unwrap();
        }
    }
    tmp
}
