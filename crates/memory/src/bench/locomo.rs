//! The LoCoMo retrieval benchmark, LLM-free: evidence recall of the memory search.
//!
//! Each conversation's dialog turns are stored as one fact per turn (id
//! `<sample>:<dia_id>`, text stamped with the session date and the speaker), scoped to the
//! conversation (`userId` = sample id). Every question of categories 1–4 is searched within
//! its own conversation, and the evidence turns found in the top k are counted.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;
use std::time::Instant;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{MemoryError, Result};
use crate::store::{MemoryStore, SemanticMemory};
use crate::types::*;

/// One dialog turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// `D<session>:<turn>`.
    pub dia_id: String,
    /// Speaker name.
    pub speaker: String,
    /// What was said.
    pub text: String,
    /// Caption of a shared image, when there is one.
    pub caption: Option<String>,
    /// The session's date line, as written in the data.
    pub date: String,
}

/// One question with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Category 1–5.
    pub category: u8,
    /// Evidence `dia_id`s (malformed entries dropped).
    pub evidence: Vec<String>,
}

impl Question {
    /// Whether recall is scored on this question: categories 1–4 (5 is adversarial, its
    /// answer is not in the conversation) with at least one evidence turn.
    pub fn is_scored(&self) -> bool {
        (1..=4).contains(&self.category) && !self.evidence.is_empty()
    }
}

/// One conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// Sample id (`conv-26`).
    pub sample_id: String,
    /// Turns in order.
    pub turns: Vec<Turn>,
    /// Questions.
    pub questions: Vec<Question>,
}

static DIA_ID: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"D\d+:\d+").ok());

fn bad(reason: impl Into<String>) -> MemoryError {
    MemoryError::invalid("locomo", reason)
}

/// Parses LoCoMo JSON (a list of samples).
pub fn parse(text: &str) -> Result<Vec<Conversation>> {
    let value: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let samples = value
        .as_array()
        .ok_or_else(|| bad("expected a list of samples"))?;
    let mut out = Vec::new();
    for (n, sample) in samples.iter().enumerate() {
        let sample_id = sample
            .get("sample_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("sample-{n}"));
        let conv = sample
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| bad(format!("{sample_id}: no conversation")))?;
        let mut sessions: Vec<(u32, &Vec<Value>)> = conv
            .iter()
            .filter_map(|(k, v)| {
                let n = k.strip_prefix("session_")?.parse::<u32>().ok()?;
                Some((n, v.as_array()?))
            })
            .collect();
        sessions.sort_by_key(|s| s.0);
        let mut turns = Vec::new();
        for (n, list) in sessions {
            let date = conv
                .get(&format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            for t in list {
                let (Some(dia_id), Some(text)) = (
                    t.get("dia_id").and_then(Value::as_str),
                    t.get("text").and_then(Value::as_str),
                ) else {
                    continue;
                };
                turns.push(Turn {
                    dia_id: dia_id.trim().to_owned(),
                    speaker: t
                        .get("speaker")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    text: text.to_owned(),
                    caption: t
                        .get("blip_caption")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    date: date.clone(),
                });
            }
        }
        let mut questions = Vec::new();
        for q in sample
            .get("qa")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(question), Some(category)) = (
                q.get("question").and_then(Value::as_str),
                q.get("category").and_then(Value::as_u64),
            ) else {
                continue;
            };
            let mut evidence = Vec::new();
            for e in q
                .get("evidence")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(s), Some(re)) = (e.as_str(), DIA_ID.as_ref()) {
                    for m in re.find_iter(s) {
                        if !evidence.iter().any(|x: &String| x == m.as_str()) {
                            evidence.push(m.as_str().to_owned());
                        }
                    }
                }
            }
            questions.push(Question {
                question: question.to_owned(),
                category: u8::try_from(category).unwrap_or(0),
                evidence,
            });
        }
        out.push(Conversation {
            sample_id,
            turns,
            questions,
        });
    }
    Ok(out)
}

/// Reads and parses a LoCoMo file.
pub fn load_file(path: &Path) -> Result<Vec<Conversation>> {
    let text = std::fs::read_to_string(path).map_err(|source| MemoryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text)
}

/// The text stored for a turn: `[<date>] <speaker>: <text>` plus the image caption.
pub fn turn_text(turn: &Turn) -> String {
    let mut text = format!("[{}] {}: {}", turn.date, turn.speaker, turn.text);
    if let Some(c) = &turn.caption {
        text.push_str(" [shared an image: ");
        text.push_str(c);
        text.push(']');
    }
    text
}

/// Record id of a turn.
pub fn turn_id(sample_id: &str, dia_id: &str) -> String {
    format!("{sample_id}:{dia_id}")
}

/// The scope of a turn: the conversation's user, and its session (`D<session>` of the
/// dialog id), so a turn's neighbours in the session are the turns said around it
/// ([`crate::neighbours`]).
pub fn turn_scope(sample_id: &str, dia_id: &str) -> Scope {
    let session = dia_id.split(':').next().unwrap_or(dia_id);
    Scope::user(sample_id).with_session(format!("{sample_id}:{session}"))
}

/// Stores every turn in its session ([`turn_scope`]); answers `(facts written, seconds)`.
/// With `with_context`, each turn is indexed with the turn it replies to as retrieval
/// context (not part of its text).
pub fn load_into<S: MemoryStore>(
    store: &S,
    conversations: &[Conversation],
    with_context: bool,
) -> Result<(usize, f64)> {
    let start = Instant::now();
    let mut written = 0;
    for conv in conversations {
        let mut seen = HashSet::new();
        let facts: Vec<NewFact> = conv
            .turns
            .iter()
            .enumerate()
            .filter(|(_, t)| seen.insert(t.dia_id.clone()))
            .map(|(i, t)| {
                let mut f = NewFact::new(turn_scope(&conv.sample_id, &t.dia_id), turn_text(t));
                f.meta.id = Some(turn_id(&conv.sample_id, &t.dia_id));
                if with_context && i > 0 {
                    let prev = &conv.turns[i - 1];
                    f.context = Some(format!("in reply to {}: {}", prev.speaker, prev.text));
                }
                f.meta.provenance = Some(MemoryProvenance::User);
                f
            })
            .collect();
        for chunk in facts.chunks(500) {
            written += store
                .semantic()
                .remember_many_unchecked(chunk.to_vec())?
                .len();
        }
    }
    Ok((written, start.elapsed().as_secs_f64()))
}

/// Recall figures of one mode (and one category, or overall).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recall {
    /// Questions counted.
    pub questions: usize,
    /// Mean evidence recall in the top 5.
    pub recall_at_5: f64,
    /// Mean evidence recall in the top 10.
    pub recall_at_10: f64,
    /// Share of questions with any evidence in the top 10.
    pub hit_at_10: f64,
}

#[derive(Default)]
struct Sums {
    n: usize,
    r5: f64,
    r10: f64,
    h10: f64,
}

impl Sums {
    fn add(&mut self, r5: f64, r10: f64, h10: f64) {
        self.n += 1;
        self.r5 += r5;
        self.r10 += r10;
        self.h10 += h10;
    }

    fn mean(&self) -> Recall {
        let n = self.n.max(1) as f64;
        Recall {
            questions: self.n,
            recall_at_5: self.r5 / n,
            recall_at_10: self.r10 / n,
            hit_at_10: self.h10 / n,
        }
    }
}

/// Recall of one search mode, overall and per category.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModeRecall {
    /// All categories 1–4.
    pub overall: Recall,
    /// By numeric category id.
    pub by_category: BTreeMap<u8, Recall>,
}

/// The fusion knobs of the searches of one evaluation (`None`: the store's defaults).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tuning {
    /// Candidates taken from each list before fusion.
    pub candidate_pool: Option<usize>,
    /// Weight of the vector list.
    pub vector_weight: Option<f64>,
    /// Rank or score fusion.
    pub fusion: Option<FusionMethod>,
    /// Least cosine a vector candidate needs.
    pub vector_floor: Option<f64>,
    /// Lexical hits whose words expand the query ([`crate::feedback`]).
    pub query_feedback: Option<usize>,
    /// Share of a hit's score its session neighbours get ([`crate::neighbours`]).
    pub neighbour_weight: Option<f64>,
}

/// Evaluates one mode over every question of categories 1–4 with evidence.
pub fn evaluate<S: MemoryStore>(
    store: &S,
    conversations: &[Conversation],
    mode: SearchMode,
    tuning: &Tuning,
) -> Result<ModeRecall> {
    let mut overall = Sums::default();
    let mut by: BTreeMap<u8, Sums> = BTreeMap::new();
    for conv in conversations {
        for q in &conv.questions {
            if !q.is_scored() {
                continue;
            }
            let mut o = MemorySearchOptions::new(conv.sample_id.clone(), q.question.clone());
            o.top_k = Some(10);
            o.mode = Some(mode);
            o.candidate_pool = tuning.candidate_pool;
            o.vector_weight = tuning.vector_weight;
            o.fusion = tuning.fusion;
            o.vector_floor = tuning.vector_floor;
            o.query_feedback = tuning.query_feedback;
            o.neighbour_weight = tuning.neighbour_weight;
            let hits = store.search(&o)?;
            let want: HashSet<String> = q
                .evidence
                .iter()
                .map(|e| turn_id(&conv.sample_id, e))
                .collect();
            let found = |k: usize| {
                hits.iter()
                    .take(k)
                    .filter(|h| want.contains(h.record.id()))
                    .count() as f64
            };
            let total = want.len() as f64;
            let (r5, r10) = (found(5) / total, found(10) / total);
            let h10 = if found(10) > 0.0 { 1.0 } else { 0.0 };
            overall.add(r5, r10, h10);
            by.entry(q.category).or_default().add(r5, r10, h10);
        }
    }
    Ok(ModeRecall {
        overall: overall.mean(),
        by_category: by.into_iter().map(|(k, v)| (k, v.mean())).collect(),
    })
}
