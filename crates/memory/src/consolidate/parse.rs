//! Defensive reading of the completions: the JSON object is found (code fences and chatter
//! around it are tolerated), every field is checked, and an item that does not fit is
//! skipped with the reason, never guessed. A completion with no usable object is refused.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::ConsolidateError;
use crate::rules::row::{MAX_ID_CHARS, MAX_TEXT_CHARS};
use mindgate_embed::openai::route::excerpt;

/// Most facts read from one extraction completion (the rest are skipped).
pub const MAX_FACTS_PER_CALL: usize = 50;
/// Most insights read from one reflection completion (the rest are skipped).
pub const MAX_INSIGHTS: usize = 10;

/// Something a completion held that was not stored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// Which item (`fact 3 of call 1`, `insight 2`, `summary of call 2`).
    pub what: String,
    /// Why it was skipped.
    pub reason: String,
}

/// A fact as the extraction pass proposed it (checked, not yet stored).
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedFact {
    /// The statement.
    pub text: String,
    /// Subject of the triple.
    pub subject: Option<String>,
    /// Relation of the triple.
    pub predicate: Option<String>,
    /// Object of the triple.
    pub object: Option<String>,
    /// Importance in `[0, 1]`.
    pub importance: Option<f64>,
    /// Labels of the messages it rests on (only labels the prompt gave).
    pub evidence: Vec<String>,
}

/// What one extraction completion proposed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extraction {
    /// The episode summary, if usable.
    pub summary: Option<String>,
    /// The usable facts.
    pub facts: Vec<ProposedFact>,
}

/// An insight as the reflection pass proposed it, its citations mapped to record ids.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedInsight {
    /// The observation.
    pub text: String,
    /// Ids of the records it rests on.
    pub cites: Vec<String>,
}

/// The JSON object of a completion: the whole text, or the text inside code fences, or
/// the span from the first `{` to the last `}`.
pub fn json_object(completion: &str) -> Result<Map<String, Value>, ConsolidateError> {
    let trimmed = completion.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    let candidates = [Some(unfenced), braces(unfenced)];
    for candidate in candidates.into_iter().flatten() {
        if let Ok(value) = serde_json::from_str::<Value>(candidate) {
            return match value {
                Value::Object(map) => Ok(map),
                other => Err(ConsolidateError::Completion(format!(
                    "expected a JSON object, got {}",
                    kind_of(&other)
                ))),
            };
        }
    }
    Err(ConsolidateError::Completion(format!(
        "no JSON object in the completion: {}",
        excerpt(completion)
    )))
}

fn braces(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    (end > start).then(|| &text[start..=end])
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A usable text: a non-empty string within the store's limit.
fn text_field(value: Option<&Value>, field: &str) -> Result<String, String> {
    match value {
        None | Some(Value::Null) => Err(format!("no {field}")),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("empty {field}")),
        Some(Value::String(s)) if s.chars().count() > MAX_TEXT_CHARS => {
            Err(format!("{field} over {MAX_TEXT_CHARS} characters"))
        }
        Some(Value::String(s)) => Ok(s.trim().to_owned()),
        Some(other) => Err(format!("{field} is {}, not a string", kind_of(other))),
    }
}

/// An optional name of the triple: absent, null or empty is `None`; anything else must be
/// a string the store accepts as a name.
fn name_field(value: Option<&Value>, field: &str) -> Result<Option<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.chars().count() > MAX_ID_CHARS {
                Err(format!("{field} over {MAX_ID_CHARS} characters"))
            } else if s.chars().any(char::is_control) {
                Err(format!("{field} has control characters"))
            } else {
                Ok(Some(s.to_owned()))
            }
        }
        Some(other) => Err(format!("{field} is {}, not a string", kind_of(other))),
    }
}

fn labels(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().trim_matches(['[', ']']).to_owned())
            .collect(),
        Some(Value::String(s)) => vec![s.trim().trim_matches(['[', ']']).to_owned()],
        _ => Vec::new(),
    }
}

/// Reads an extraction completion (call `call`, from 1). Message labels outside
/// `message_labels` are dropped from a fact's evidence.
pub fn extraction(
    completion: &str,
    call: usize,
    message_labels: &HashMap<String, String>,
    skipped: &mut Vec<Skipped>,
) -> Result<Extraction, ConsolidateError> {
    let object = json_object(completion)?;
    let facts = object.get("facts");
    if object.get("summary").is_none() && facts.is_none() {
        return Err(ConsolidateError::Completion(format!(
            "call {call}: the object has neither \"summary\" nor \"facts\": {}",
            excerpt(completion)
        )));
    }
    let mut out = Extraction::default();
    match text_field(object.get("summary"), "summary") {
        Ok(summary) => out.summary = Some(summary),
        Err(reason) => skipped.push(Skipped {
            what: format!("summary of call {call}"),
            reason,
        }),
    }
    let items = match facts {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            skipped.push(Skipped {
                what: format!("facts of call {call}"),
                reason: format!("\"facts\" is {}, not a list", kind_of(other)),
            });
            &Vec::new()
        }
    };
    for (i, item) in items.iter().enumerate() {
        let what = format!("fact {} of call {call}", i + 1);
        if i >= MAX_FACTS_PER_CALL {
            skipped.push(Skipped {
                what,
                reason: format!("over {MAX_FACTS_PER_CALL} facts in one call"),
            });
            continue;
        }
        match fact(item, message_labels) {
            Ok(f) => out.facts.push(f),
            Err(reason) => skipped.push(Skipped { what, reason }),
        }
    }
    Ok(out)
}

fn fact(item: &Value, message_labels: &HashMap<String, String>) -> Result<ProposedFact, String> {
    let Value::Object(f) = item else {
        return Err(format!("{}, not an object", kind_of(item)));
    };
    let importance = match f.get("importance") {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|v| v.is_finite())
            .map(|v| v.clamp(0.0, 1.0)),
        _ => None,
    };
    Ok(ProposedFact {
        text: text_field(f.get("text"), "text")?,
        subject: name_field(f.get("subject"), "subject")?,
        predicate: name_field(f.get("predicate"), "predicate")?,
        object: name_field(f.get("object"), "object")?,
        importance,
        evidence: labels(f.get("evidence"))
            .into_iter()
            .filter(|l| message_labels.contains_key(l))
            .collect(),
    })
}

/// Reads the reflection completion; citations are labels of `records` (label → id) or
/// the ids themselves, anything else is dropped, and an insight left without a citation
/// is skipped.
pub fn reflection(
    completion: &str,
    records: &HashMap<String, String>,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<ProposedInsight>, ConsolidateError> {
    let object = json_object(completion)?;
    let items = match object.get("insights") {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => {
            return Err(ConsolidateError::Completion(format!(
                "the reflection has no \"insights\" list: {}",
                excerpt(completion)
            )));
        }
        Some(other) => {
            return Err(ConsolidateError::Completion(format!(
                "the reflection's \"insights\" is {}, not a list",
                kind_of(other)
            )));
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let what = format!("insight {}", i + 1);
        if i >= MAX_INSIGHTS {
            skipped.push(Skipped {
                what,
                reason: format!("over {MAX_INSIGHTS} insights"),
            });
            continue;
        }
        match insight(item, records) {
            Ok(found) => out.push(found),
            Err(reason) => skipped.push(Skipped { what, reason }),
        }
    }
    Ok(out)
}

fn insight(item: &Value, records: &HashMap<String, String>) -> Result<ProposedInsight, String> {
    let Value::Object(o) = item else {
        return Err(format!("{}, not an object", kind_of(item)));
    };
    let text = text_field(o.get("text"), "text")?;
    let mut cites = Vec::new();
    for label in labels(o.get("cites")) {
        let id = records
            .get(&label)
            .cloned()
            .or_else(|| records.values().find(|id| **id == label).cloned());
        if let Some(id) = id
            && !cites.contains(&id)
        {
            cites.push(id);
        }
    }
    if cites.is_empty() {
        return Err("cites no record of this consolidation".to_owned());
    }
    Ok(ProposedInsight { text, cites })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels_of(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(l, id)| ((*l).to_owned(), (*id).to_owned()))
            .collect()
    }

    #[test]
    fn the_object_is_found_inside_fences_and_chatter() {
        for text in [
            r#"{"summary":"s"}"#,
            "```json\n{\"summary\":\"s\"}\n```",
            "Here you go: {\"summary\":\"s\"} hope it helps",
        ] {
            assert_eq!(json_object(text).unwrap()["summary"], "s", "{text}");
        }
        for text in ["", "no json here", "[1, 2]", "{\"summary\": \"cut off"] {
            let err = json_object(text).unwrap_err();
            assert!(
                matches!(err, ConsolidateError::Completion(_)),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn bad_facts_are_skipped_with_their_reason_and_good_ones_kept() {
        let messages = labels_of(&[("m1", "msg_1"), ("m2", "msg_2")]);
        let mut skipped = Vec::new();
        let out = extraction(
            r#"{"summary": "Alice plans a trip.",
                "facts": [
                  {"text": "Alice lives in Lisbon", "subject": "Alice", "predicate": "lives_in",
                   "object": "Lisbon", "importance": 1.7, "evidence": ["m1", "m9"]},
                  {"subject": "Bob"},
                  "just a string",
                  {"text": "x", "subject": 42}
                ]}"#,
            1,
            &messages,
            &mut skipped,
        )
        .unwrap();
        assert_eq!(out.summary.as_deref(), Some("Alice plans a trip."));
        assert_eq!(out.facts.len(), 1);
        let f = &out.facts[0];
        assert_eq!(f.importance, Some(1.0), "importance is clamped into [0, 1]");
        assert_eq!(f.evidence, vec!["m1".to_owned()], "unknown labels dropped");
        let reasons: Vec<_> = skipped
            .iter()
            .map(|s| (s.what.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            vec![
                ("fact 2 of call 1", "no text"),
                ("fact 3 of call 1", "a string, not an object"),
                ("fact 4 of call 1", "subject is a number, not a string"),
            ]
        );
    }

    #[test]
    fn an_object_without_summary_or_facts_is_refused() {
        let err = extraction(r#"{"answer": 42}"#, 2, &HashMap::new(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("call 2"), "{err}");
    }

    #[test]
    fn insights_keep_only_citations_of_this_consolidation() {
        let records = labels_of(&[("f1", "fact_a"), ("e1", "episode_a"), ("m3", "msg_3")]);
        let mut skipped = Vec::new();
        let out = reflection(
            r#"{"insights": [
                {"text": "Alice travels often", "cites": ["f1", "[e1]", "fact_a", "f7"]},
                {"text": "uncited", "cites": ["f9"]},
                {"text": "cites by id", "cites": ["msg_3"]}
            ]}"#,
            &records,
            &mut skipped,
        )
        .unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0].cites,
            vec!["fact_a".to_owned(), "episode_a".to_owned()]
        );
        assert_eq!(out[1].cites, vec!["msg_3".to_owned()]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].what, "insight 2");
        assert!(reflection(r#"{"insights": "none"}"#, &records, &mut skipped).is_err());
    }
}
