//! The typed fast path of the DSH reader.
//!
//! Most lines of a DSH file are `step/*`, `request/header`, `assistant/chunk`, `tool/call`
//! and `tool/result` in their usual shapes. For those, the line is deserialised straight into
//! borrowed structs holding just the fields the reader uses (strings borrow from the input
//! unless they hold escapes), with no `serde_json::Value` tree per line. Anything else — another
//! type, an alias, a field of an unexpected kind, a `null` where an object is expected, a
//! duplicate key — makes the fast path answer [`Fast::Fallback`] and the line goes through the
//! lenient `Value` reader, so both always produce the same events (checked by the tests in
//! `dsh.rs` over every fixture and a set of odd lines).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::json_shape::{Text, object, objects, present};
use crate::event::{EventKind, Usage};
use crate::json_fields::value_text;

/// What the fast path made of a line's data.
pub(super) enum Fast {
    /// The events of the line (possibly none).
    Events(Vec<EventKind>),
    /// Read this line with the lenient reader.
    Fallback,
}

type Str<'a> = Option<Cow<'a, str>>;

/// A present field as raw JSON, `null` included (a plain `Option<&RawValue>` reads `null` as
/// absent, where the lenient reader sees a present `null`).
fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn first<'b>(a: &'b Str<'_>, b: &'b Str<'_>) -> Option<&'b str> {
    a.as_deref().or(b.as_deref())
}

fn num(v: Option<u64>) -> u32 {
    v.map_or(0, |n| n.min(u64::from(u32::MAX)) as u32)
}

/// Deserialises a present sub-object; `Err(())` (fall back) for `null` or another shape.
fn sub<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Result<T, ()> {
    let text = raw.get();
    if !text.starts_with('{') {
        return Err(());
    }
    serde_json::from_str(text).map_err(|_| ())
}

fn value<T: DeserializeOwned>(raw: &RawValue) -> Result<T, ()> {
    serde_json::from_str(raw.get()).map_err(|_| ())
}

#[derive(Deserialize)]
struct TurnStep {
    #[serde(default)]
    turn: Option<u64>,
    #[serde(default)]
    step: Option<u64>,
}

#[derive(Deserialize)]
struct Config<'a> {
    #[serde(borrow, default)]
    provider: Str<'a>,
    #[serde(borrow, default)]
    model: Str<'a>,
    #[serde(borrow, default, rename = "modelId")]
    model_id: Str<'a>,
}

#[derive(Deserialize)]
struct Header<'a> {
    #[serde(borrow, default, deserialize_with = "raw")]
    config: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RequestHeader<'a> {
    #[serde(borrow, default, deserialize_with = "raw")]
    header: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    config: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ChunkData<'a> {
    #[serde(borrow, default, deserialize_with = "raw")]
    chunk: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default, deserialize_with = "raw")]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    reason: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageFields {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default, rename = "input_tokens")]
    input_tokens_snake: Option<u64>,
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default, rename = "output_tokens")]
    output_tokens_snake: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    cache_read_tokens: Option<u64>,
    #[serde(default, rename = "cache_read_tokens")]
    cache_read_tokens_snake: Option<u64>,
    #[serde(default)]
    cache_read: Option<u64>,
    #[serde(default)]
    cached_input_tokens: Option<u64>,
}

impl UsageFields {
    fn usage(&self) -> Usage {
        Usage {
            input: self
                .input_tokens
                .or(self.input_tokens_snake)
                .or(self.input)
                .or(self.prompt_tokens)
                .unwrap_or(0),
            output: self
                .output_tokens
                .or(self.output_tokens_snake)
                .or(self.output)
                .or(self.completion_tokens)
                .unwrap_or(0),
            cache_read: self
                .cache_read_tokens
                .or(self.cache_read_tokens_snake)
                .or(self.cache_read)
                .or(self.cached_input_tokens)
                .unwrap_or(0),
            cache_write: 0,
        }
    }
}

#[derive(Deserialize)]
struct ReasonObject<'a> {
    #[serde(borrow, default)]
    kind: Str<'a>,
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    reason: Str<'a>,
}

/// The data of a `tool/call` line.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolCall<'a> {
    #[serde(default)]
    turn: Option<u64>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(borrow, default)]
    call_id: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(borrow, default, deserialize_with = "raw")]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    args: Option<&'a RawValue>,
}

/// The data of a `tool/result` line. Read typed all the way down to the text of its parts
/// (one pass over the line); anything off the usual shape fails it, for the lenient reader.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolResult<'a> {
    #[serde(borrow, default, deserialize_with = "object")]
    message: Option<ResultMessage<'a>>,
    #[serde(borrow, default, deserialize_with = "raw")]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Str<'a>,
    #[serde(borrow, default)]
    tool_call_id: Str<'a>,
}

#[derive(Deserialize)]
struct ResultMessage<'a> {
    #[serde(borrow, default, deserialize_with = "object")]
    source: Option<Source<'a>>,
    #[serde(borrow, default, deserialize_with = "objects")]
    content: Option<Vec<ResultPart<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Source<'a> {
    #[serde(borrow, default)]
    call_id: Str<'a>,
    #[serde(borrow, default)]
    tool_call_id: Str<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultPart<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    tool_call_id: Str<'a>,
    #[serde(borrow, default)]
    call_id: Str<'a>,
    #[serde(borrow, default, deserialize_with = "present")]
    content: Option<PartText<'a>>,
    #[serde(borrow, default, deserialize_with = "raw")]
    output: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    result: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// A part's `content` in the shapes tools write: a string, or an array of `{"text": "…"}`
/// objects (joined as `value_text` joins them). Anything else (`null` included) fails the
/// line, for the lenient reader.
enum PartText<'a> {
    Text(Cow<'a, str>),
    Items(Vec<TextItem<'a>>),
}

#[derive(Deserialize)]
struct TextItem<'a> {
    #[serde(borrow)]
    text: Text<'a>,
}

impl PartText<'_> {
    /// The text, as `value_text` reads the same JSON.
    fn into_text(self) -> String {
        match self {
            PartText::Text(t) => t.into_owned(),
            PartText::Items(items) => {
                let mut out = String::new();
                for item in items.iter().filter(|i| !i.text.0.is_empty()) {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&item.text.0);
                }
                out
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for PartText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartTextVisitor(std::marker::PhantomData))
    }
}

struct PartTextVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for PartTextVisitor<'a> {
    type Value = PartText<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or an array of text objects")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(PartText::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PartText::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(PartText::Text(Cow::Owned(v)))
    }

    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
        let items: Option<Vec<TextItem<'a>>> =
            objects(serde::de::value::SeqAccessDeserializer::new(seq))?;
        Ok(PartText::Items(items.unwrap_or_default()))
    }
}

/// A raw value as `value_text` reads it (strings without building a `Value`).
fn text_of(raw: &RawValue) -> Result<String, ()> {
    let t = raw.get();
    if t.starts_with('"') {
        return value::<String>(raw);
    }
    Ok(value_text(&value::<Value>(raw)?))
}

/// `parse_arguments` over a raw value.
fn arguments(raw: &RawValue) -> Result<Value, ()> {
    if raw.get() == "null" {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    if raw.get().starts_with('"') {
        let s: String = value(raw)?;
        let t = s.trim();
        if t.starts_with('{') || t.starts_with('[') {
            return Ok(serde_json::from_str(t).unwrap_or(Value::String(s)));
        }
        return Ok(Value::String(s));
    }
    value(raw)
}

/// Line types DSH writes that the reader does not graph (the lenient reader ignores them
/// too); their data, often the largest in the file (`request/context` holds the whole
/// prompt), is not even parsed. Any other type the fast path does not know goes to the
/// lenient reader, so a type added there is never skipped here.
const IGNORED: &[&str] = &[
    "request/context",
    "agent/inbox/spliced",
    "llm/retry-started",
];

/// Reads the raw data of a line of type `ty`, when it has the usual shape.
pub(super) fn convert(ty: &str, data: &RawValue) -> Fast {
    let out = match ty {
        "step/start" | "step/end" => step(ty, data),
        "request/header" => request_header(data),
        "assistant/chunk" => assistant_chunk(data),
        "tool/call" => sub(data).and_then(tool_call),
        "tool/result" => sub(data).and_then(tool_result),
        t if IGNORED.contains(&t) => Ok(Vec::new()),
        _ => Err(()),
    };
    match out {
        Ok(events) => Fast::Events(events),
        Err(()) => Fast::Fallback,
    }
}

fn step(ty: &str, data: &RawValue) -> Result<Vec<EventKind>, ()> {
    let d: TurnStep = sub(data)?;
    let (turn, step) = (num(d.turn), num(d.step));
    Ok(vec![if ty == "step/start" {
        EventKind::StepStart { turn, step }
    } else {
        EventKind::StepEnd { turn, step }
    }])
}

fn request_header(data: &RawValue) -> Result<Vec<EventKind>, ()> {
    let d: RequestHeader<'_> = sub(data)?;
    let header_config = match d.header {
        Some(h) => sub::<Header<'_>>(h)?.config,
        None => None,
    };
    let cfg: Config<'_> = match (header_config, d.config) {
        (Some(c), _) | (None, Some(c)) => sub(c)?,
        (None, None) => sub(data)?,
    };
    Ok(vec![EventKind::RequestHeader {
        provider: cfg.provider.map(Cow::into_owned),
        model: first(&cfg.model, &cfg.model_id).map(str::to_owned),
    }])
}

fn assistant_chunk(data: &RawValue) -> Result<Vec<EventKind>, ()> {
    let d: ChunkData<'_> = sub(data)?;
    let chunk_raw = d.chunk.unwrap_or(data);
    let chunk: Chunk<'_> = sub(chunk_raw)?;
    match chunk.ty.as_deref().unwrap_or_default() {
        "usage" => {
            let u: UsageFields = sub(chunk.usage.unwrap_or(chunk_raw))?;
            Ok(vec![EventKind::Usage(u.usage())])
        }
        "finish" => {
            let Some(r) = chunk.reason else {
                return Ok(Vec::new());
            };
            let reason = if r.get().starts_with('"') {
                value::<String>(r)?
            } else {
                let o: ReasonObject<'_> = sub(r)?;
                match o.kind.or(o.ty).or(o.reason) {
                    Some(k) => k.into_owned(),
                    None => return Ok(Vec::new()),
                }
            };
            Ok(vec![EventKind::Finish { reason }])
        }
        _ => Ok(Vec::new()),
    }
}

/// The events of a `tool/call` line's data.
pub(super) fn tool_call(d: ToolCall<'_>) -> Result<Vec<EventKind>, ()> {
    let call_id = d.call_id.filter(|c| !c.is_empty()).ok_or(())?;
    let name = d.name.ok_or(())?;
    let arguments = match (d.arguments, d.args) {
        (Some(a), _) => arguments(a)?,
        (None, None) => Value::Object(serde_json::Map::new()),
        (None, Some(_)) => return Err(()),
    };
    Ok(vec![EventKind::ToolCall {
        turn: num(d.turn),
        step: num(d.step),
        call_id: call_id.into_owned(),
        name: name.into_owned(),
        arguments: arguments.into(),
    }])
}

/// The events of a `tool/result` line's data.
pub(super) fn tool_result(d: ToolResult<'_>) -> Result<Vec<EventKind>, ()> {
    if d.error.is_some() {
        return Err(());
    }
    let msg = d.message.ok_or(())?;
    let source_id = msg
        .source
        .as_ref()
        .and_then(|s| first(&s.call_id, &s.tool_call_id))
        .or(first(&d.call_id, &d.tool_call_id));
    let parts = msg.content.ok_or(())?;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let pty = p.ty.as_deref().unwrap_or_default();
        if !pty.is_empty() && pty != "tool-result" && pty != "tool_result" {
            continue;
        }
        let Some(id) = first(&p.tool_call_id, &p.call_id).or(source_id) else {
            continue;
        };
        let output = match (p.content, p.output, p.result) {
            (Some(text), _, _) => text.into_text(),
            (None, Some(c), _) | (None, None, Some(c)) => text_of(c)?,
            (None, None, None) => String::new(),
        };
        out.push(EventKind::ToolResult {
            call_id: id.to_owned(),
            output: output.into(),
            is_error: p.is_error.unwrap_or(false),
        });
    }
    if out.is_empty() {
        return Err(());
    }
    Ok(out)
}
