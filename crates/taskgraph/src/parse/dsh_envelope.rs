//! The envelope of a DSH line, `{type, seq, time, data}`, read in one pass with its data.
//!
//! Tool results hold most of a session's bytes (22 of 35.6 MB in the reference session of
//! issue 26), and a line's data used to be scanned once per level of nesting: the envelope
//! kept `data` as raw JSON, the result read it again for its message, the message again for
//! its content, each part again for its text. DSH writes `type` before `data`, so when the
//! type is known by the time `data` comes and has a typed reader ([`Data`]), the data is
//! deserialised right there, in the envelope's own pass. Any other order or type keeps `data`
//! raw for [`super::dsh_fast::convert`]; a data of an unexpected shape fails the line, which
//! then goes to the lenient reader (the fast path never guesses).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::dsh_fast::{self, Fast, ToolCall, ToolResult};
use super::json_shape::{Object, Text};

/// The outer shape of a line: `{type, seq, time, data}`.
pub(super) struct Envelope<'a> {
    /// `type`.
    pub ty: Option<Cow<'a, str>>,
    /// `seq`.
    pub seq: Option<u64>,
    /// `time`, as written (seconds or milliseconds).
    pub time: Option<i64>,
    /// `data` (a present `null` included).
    pub data: Option<Data<'a>>,
}

/// A line's `data`: typed when its type was known as it was read, else raw JSON.
pub(super) enum Data<'a> {
    /// Raw JSON, for [`super::dsh_fast::convert`].
    Raw(&'a RawValue),
    /// The data of a `tool/call` line.
    ToolCall(ToolCall<'a>),
    /// The data of a `tool/result` line.
    ToolResult(ToolResult<'a>),
}

impl Envelope<'_> {
    /// The event time as `time_value_ms` reads an integer (`None` when absent; values that
    /// reader would treat differently are rejected by [`envelope`]).
    pub fn time_ms(&self) -> Option<i64> {
        self.time.map(|t| {
            if t.abs() < 100_000_000_000 {
                t * 1000
            } else {
                t
            }
        })
    }
}

/// Parses the envelope of a line (with its data when typed), or `None` when the lenient
/// reader must read it.
pub(super) fn envelope(raw: &[u8]) -> Option<Envelope<'_>> {
    if raw.first() != Some(&b'{') {
        return None;
    }
    let env: Envelope<'_> = serde_json::from_slice(raw).ok()?;
    // Integers beyond 2^53 go through f64 in `time_value_ms`; keep those on the lenient path.
    if env.time.is_some_and(|t| t.unsigned_abs() >= 1 << 53) {
        return None;
    }
    Some(env)
}

/// The envelope's keys; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Type,
    Seq,
    Time,
    Data,
    #[serde(other)]
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor(PhantomData))
    }
}

struct EnvelopeVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for EnvelopeVisitor<'a> {
    type Value = Envelope<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a DSH line object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Envelope<'a>, M::Error> {
        let mut ty: Option<Option<Cow<'a, str>>> = None;
        let mut seq: Option<Option<u64>> = None;
        let mut time: Option<Option<i64>> = None;
        let mut data: Option<Data<'a>> = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type => {
                    once(&ty, "type")?;
                    ty = Some(map.next_value::<Option<Text<'a>>>()?.map(|t| t.0));
                }
                Key::Seq => {
                    once(&seq, "seq")?;
                    seq = Some(map.next_value()?);
                }
                Key::Time => {
                    once(&time, "time")?;
                    time = Some(map.next_value()?);
                }
                Key::Data => {
                    once(&data, "data")?;
                    let known = ty.as_ref().and_then(|t| t.as_deref());
                    data = Some(match known {
                        Some("tool/result") => {
                            Data::ToolResult(map.next_value_seed(Object(PhantomData))?)
                        }
                        Some("tool/call") => {
                            Data::ToolCall(map.next_value_seed(Object(PhantomData))?)
                        }
                        _ => Data::Raw(map.next_value()?),
                    });
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Envelope {
            ty: ty.flatten(),
            seq: seq.flatten(),
            time: time.flatten(),
            data,
        })
    }
}

/// Reads the data of a line of type `ty`, when it has the usual shape: already typed in the
/// envelope's pass, else raw.
pub(super) fn convert(ty: &str, data: Data<'_>) -> Fast {
    let out = match data {
        Data::ToolCall(d) => dsh_fast::tool_call(d),
        Data::ToolResult(d) => dsh_fast::tool_result(d),
        Data::Raw(data) => return dsh_fast::convert(ty, data),
    };
    match out {
        Ok(events) => Fast::Events(events),
        Err(()) => Fast::Fallback,
    }
}

/// A duplicate key fails the line (the lenient reader, over a `Value`, keeps the last).
fn once<T, E: de::Error>(seen: &Option<T>, key: &'static str) -> Result<(), E> {
    match seen {
        Some(_) => Err(E::duplicate_field(key)),
        None => Ok(()),
    }
}
