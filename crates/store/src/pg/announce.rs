//! Commit announcements: what each PostgreSQL write transaction tells the other
//! instances, sent with `pg_notify` just before its `COMMIT` (so a listener that hears
//! one is sure to read the committed rows).
//!
//! Payload (JSON, at most [`MAX_PAYLOAD_BYTES`] each; a larger commit is split over
//! several notifications of the same transaction):
//!
//! ```json
//! {"w":"<writer id>","s":"<schema>","runs":[{"id":"r1","seqs":[[1,40],[42,42]]}],"deleted":["r0"]}
//! ```
//!
//! `seqs` are the seqs this transaction newly stored, as inclusive ranges (rows a
//! replay deduplicated are not listed); a run listed with no ranges changed without new
//! events (a status change, an abandon). `s` is the schema the store lives in: the
//! channel is per database, so instances on other schemas ignore the announcement.

use serde::{Deserialize, Serialize};

/// The `LISTEN` / `NOTIFY` channel of commit announcements.
pub const CHANNEL: &str = "mindgate_run_commits";

/// Largest payload of one notification (PostgreSQL refuses 8,000 bytes and more).
pub const MAX_PAYLOAD_BYTES: usize = 7_500;

/// One run's part of an announcement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AnnouncedRun {
    /// The run id.
    pub(crate) id: String,
    /// Newly stored seqs, inclusive ranges in ascending order.
    #[serde(default)]
    pub(crate) seqs: Vec<[u64; 2]>,
}

/// One notification's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Announcement {
    /// The announcing writer.
    pub(crate) w: String,
    /// The schema of its store.
    pub(crate) s: String,
    /// Runs created or changed.
    #[serde(default)]
    pub(crate) runs: Vec<AnnouncedRun>,
    /// Runs deleted.
    #[serde(default)]
    pub(crate) deleted: Vec<String>,
}

/// `seqs` (any order, duplicates allowed) as ascending inclusive ranges.
pub(crate) fn ranges(mut seqs: Vec<u64>) -> Vec<[u64; 2]> {
    seqs.sort_unstable();
    seqs.dedup();
    let mut out: Vec<[u64; 2]> = Vec::new();
    for seq in seqs {
        match out.last_mut() {
            Some(last) if last[1].checked_add(1) == Some(seq) => last[1] = seq,
            _ => out.push([seq, seq]),
        }
    }
    out
}

/// Bytes a run entry adds to a payload, roughly (its JSON plus a comma).
fn entry_bytes(run: &AnnouncedRun) -> usize {
    serde_json::to_string(run).map_or(0, |s| s.len()) + 1
}

/// The payloads announcing one commit: `runs` (with their new seqs) and `deleted`,
/// packed into as few notifications as fit [`MAX_PAYLOAD_BYTES`]. A run with more
/// ranges than fit one payload is listed in several, each with part of its ranges.
pub(crate) fn payloads(
    writer: &str,
    schema: &str,
    runs: Vec<AnnouncedRun>,
    deleted: Vec<String>,
) -> Vec<String> {
    let empty = Announcement {
        w: writer.to_owned(),
        s: schema.to_owned(),
        runs: Vec::new(),
        deleted: Vec::new(),
    };
    let base = serde_json::to_string(&empty).map_or(0, |s| s.len());
    let budget = MAX_PAYLOAD_BYTES.saturating_sub(base).max(1_024);
    let mut out = Vec::new();
    let mut current = empty.clone();
    let mut used = 0usize;
    let mut push = |current: &mut Announcement, used: &mut usize| {
        if !current.runs.is_empty() || !current.deleted.is_empty() {
            if let Ok(text) = serde_json::to_string(current) {
                out.push(text);
            }
            current.runs.clear();
            current.deleted.clear();
        }
        *used = 0;
    };
    for run in runs {
        for part in split_run(run, budget) {
            let bytes = entry_bytes(&part);
            if used + bytes > budget {
                push(&mut current, &mut used);
            }
            used += bytes;
            current.runs.push(part);
        }
    }
    for id in deleted {
        let bytes = serde_json::to_string(&id).map_or(0, |s| s.len()) + 1;
        if used + bytes > budget {
            push(&mut current, &mut used);
        }
        used += bytes;
        current.deleted.push(id);
    }
    push(&mut current, &mut used);
    out
}

/// `run` as entries of at most `budget` bytes each (one unless its ranges are many).
fn split_run(run: AnnouncedRun, budget: usize) -> Vec<AnnouncedRun> {
    if entry_bytes(&run) <= budget {
        return vec![run];
    }
    let head = entry_bytes(&AnnouncedRun {
        id: run.id.clone(),
        seqs: Vec::new(),
    });
    let mut parts = Vec::new();
    let mut seqs = Vec::new();
    let mut used = head;
    for range in run.seqs {
        // `[lo,hi],` at most 2 × 20 digits + 4.
        let bytes = range[0].to_string().len() + range[1].to_string().len() + 4;
        if used + bytes > budget && !seqs.is_empty() {
            parts.push(AnnouncedRun {
                id: run.id.clone(),
                seqs: std::mem::take(&mut seqs),
            });
            used = head;
        }
        used += bytes;
        seqs.push(range);
    }
    parts.push(AnnouncedRun { id: run.id, seqs });
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_neighbours_and_drop_duplicates() {
        assert_eq!(
            ranges(vec![5, 1, 2, 3, 3, 9, 10]),
            vec![[1, 3], [5, 5], [9, 10]]
        );
        assert!(ranges(Vec::new()).is_empty());
        assert_eq!(
            ranges(vec![u64::MAX, u64::MAX - 1]),
            vec![[u64::MAX - 1, u64::MAX]]
        );
    }

    #[test]
    fn a_large_commit_is_split_under_the_payload_limit_and_loses_nothing() {
        let runs: Vec<AnnouncedRun> = (0..200)
            .map(|i| AnnouncedRun {
                id: format!("run-{i:04}-{}", "x".repeat(40)),
                seqs: vec![[1, 10]],
            })
            .chain(std::iter::once(AnnouncedRun {
                id: "gappy".to_owned(),
                seqs: (0..3_000u64).map(|i| [i * 2, i * 2]).collect(),
            }))
            .collect();
        let deleted: Vec<String> = (0..300).map(|i| format!("gone-{i}")).collect();
        let texts = payloads("w1", "public", runs.clone(), deleted.clone());
        assert!(texts.len() > 2, "{}", texts.len());
        let mut seen_runs: Vec<AnnouncedRun> = Vec::new();
        let mut seen_deleted = Vec::new();
        for text in &texts {
            assert!(text.len() <= MAX_PAYLOAD_BYTES, "{}", text.len());
            let a: Announcement = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((a.w.as_str(), a.s.as_str()), ("w1", "public"));
            for run in a.runs {
                match seen_runs.iter_mut().find(|r| r.id == run.id) {
                    Some(r) => r.seqs.extend(run.seqs),
                    None => seen_runs.push(run),
                }
            }
            seen_deleted.extend(a.deleted);
        }
        assert_eq!(seen_runs, runs);
        assert_eq!(seen_deleted, deleted);
    }

    #[test]
    fn nothing_changed_announces_nothing() {
        assert!(payloads("w", "s", Vec::new(), Vec::new()).is_empty());
    }
}
