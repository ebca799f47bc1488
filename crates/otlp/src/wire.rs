//! OTLP/protobuf read under the decode budget ([`crate::budget`]): the request is walked
//! in its wire form, each span's attributes counted before the span is decoded, and only
//! the spans within budget are decoded (one `prost` decode per span, resource and scope),
//! so memory follows what is accepted, never what a body claims.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;

use crate::budget::{Budget, MAX_VALUE_DEPTH};
use crate::error::DecodeError;

/// One field of a message in wire form.
enum Field<'a> {
    Varint,
    Fixed,
    Bytes(&'a [u8]),
}

/// The fields of one message, in order.
struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn malformed(what: &str) -> DecodeError {
    DecodeError::Malformed(what.to_owned())
}

impl<'a> Fields<'a> {
    fn of(buf: &'a [u8]) -> Fields<'a> {
        Fields { buf, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| malformed("a varint runs past the end"))?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("a varint is longer than 10 bytes"))
    }

    fn skip(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| malformed("a field runs past the end of its message"))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// The next field's number and value; `None` at the end.
    fn next_field(&mut self) -> Result<Option<(u64, Field<'a>)>, DecodeError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => {
                self.varint()?;
                Field::Varint
            }
            1 => {
                self.skip(8)?;
                Field::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?)
                    .map_err(|_| malformed("a length does not fit"))?;
                Field::Bytes(self.skip(len)?)
            }
            5 => {
                self.skip(4)?;
                Field::Fixed
            }
            _ => return Err(malformed("an unsupported wire type")),
        };
        Ok(Some((key >> 3, field)))
    }

    /// Calls `f` with every length-delimited field numbered `number`.
    fn each(
        buf: &'a [u8],
        number: u64,
        mut f: impl FnMut(&'a [u8]) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let mut fields = Fields::of(buf);
        while let Some((n, field)) = fields.next_field()? {
            if let (true, Field::Bytes(bytes)) = (n == number, field) {
                f(bytes)?;
            }
        }
        Ok(())
    }
}

fn decode<M: Message + Default>(bytes: &[u8]) -> Result<M, DecodeError> {
    M::decode(bytes).map_err(DecodeError::Protobuf)
}

/// What a walk over an `ExportTraceServiceRequest` meets, in the order sent.
pub(crate) enum Item<'a> {
    /// A `ResourceSpans` begins: its resource (within budget), if it has one.
    Resource(Option<Resource>),
    /// A `ScopeSpans` of it begins: its scope (within budget), if it has one.
    Scope(Option<InstrumentationScope>),
    /// A span within budget: its encoded form (decoded by the caller, when it needs it).
    Span(&'a [u8]),
    /// A span over the budget, and why.
    Rejected(String),
}

/// Walks a request in its wire form under the decode budget, handing `visit` each
/// resource, scope and span in order: only resources and scopes are decoded here, and
/// a span's attributes are counted before anything of it is.
pub(crate) fn walk<'a>(
    body: &'a [u8],
    mut visit: impl FnMut(Item<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut budget = Budget::default();
    Fields::each(body, 1, |rs| {
        let resource = last_field(rs, 1)?
            .map(|bytes| {
                within_budget("the resource", bytes, 1)?;
                decode::<Resource>(bytes)
            })
            .transpose()?;
        visit(Item::Resource(resource))?;
        Fields::each(rs, 2, |ss| {
            let scope = last_field(ss, 1)?
                .map(|bytes| {
                    within_budget("the scope", bytes, 3)?;
                    decode::<InstrumentationScope>(bytes)
                })
                .transpose()?;
            visit(Item::Scope(scope))?;
            Fields::each(ss, 2, |span| match span_within_budget(span, &mut budget)? {
                Ok(()) => visit(Item::Span(span)),
                Err(reason) => visit(Item::Rejected(reason)),
            })
        })
    })
}

/// The last length-delimited field numbered `number` (protobuf: the last one wins).
fn last_field(buf: &[u8], number: u64) -> Result<Option<&[u8]>, DecodeError> {
    let mut last = None;
    Fields::each(buf, number, |bytes| {
        last = Some(bytes);
        Ok(())
    })?;
    Ok(last)
}

/// What reading under the budget gave: the spans kept, the rejected ones' reasons.
pub(crate) struct Read {
    pub(crate) request: ExportTraceServiceRequest,
    pub(crate) rejected: Vec<String>,
}

/// Reads an `ExportTraceServiceRequest` in full (prost types), rejecting the spans over
/// budget one by one.
pub(crate) fn read_request(body: &[u8]) -> Result<Read, DecodeError> {
    let mut read = Read {
        request: ExportTraceServiceRequest::default(),
        rejected: Vec::new(),
    };
    walk(body, |item| {
        let resource_spans = &mut read.request.resource_spans;
        match item {
            Item::Resource(resource) => resource_spans.push(ResourceSpans {
                resource,
                ..ResourceSpans::default()
            }),
            Item::Scope(scope) => {
                if let Some(rs) = resource_spans.last_mut() {
                    rs.scope_spans.push(ScopeSpans {
                        scope,
                        ..ScopeSpans::default()
                    });
                }
            }
            Item::Span(bytes) => {
                if let Some(ss) = resource_spans
                    .last_mut()
                    .and_then(|rs| rs.scope_spans.last_mut())
                {
                    ss.spans.push(decode::<Span>(bytes)?);
                }
            }
            Item::Rejected(reason) => read.rejected.push(reason),
        }
        Ok(())
    })?;
    Ok(read)
}

/// A resource or scope whose attributes (field `attributes`) are over the budget makes
/// the whole request unreadable (every span of it would carry them).
fn within_budget(what: &str, buf: &[u8], attributes: u64) -> Result<(), DecodeError> {
    let mut budget = Budget::default();
    let mut over = None;
    Fields::each(buf, attributes, |kv| {
        if over.is_none()
            && let Err(reason) = count_attribute(kv, what, &mut budget)?
        {
            over = Some(reason);
        }
        Ok(())
    })?;
    match over {
        Some(reason) => Err(DecodeError::Shape(reason)),
        None => Ok(()),
    }
}

/// Counts a span's attributes, its events' (field 11, attributes 3) and links' (field
/// 13, attributes 5) against the budget; the inner `Err` is the reason to reject it.
fn span_within_budget(buf: &[u8], budget: &mut Budget) -> Result<Result<(), String>, DecodeError> {
    let mut name = String::new();
    Fields::each(buf, 5, |n| {
        name = String::from_utf8_lossy(&n[..n.len().min(256)]).into_owned();
        Ok(())
    })?;
    if let Err(reason) = budget.start_span(&name, buf.len()) {
        return Ok(Err(reason));
    }
    let mut over: Option<String> = None;
    let mut fields = Fields::of(buf);
    while let Some((n, field)) = fields.next_field()? {
        let (Field::Bytes(bytes), None) = (field, over.as_ref()) else {
            continue;
        };
        let nested = match n {
            9 => {
                if let Err(reason) = count_attribute(bytes, &name, budget)? {
                    over = Some(reason);
                }
                continue;
            }
            11 => 3,
            13 => 5,
            _ => continue,
        };
        Fields::each(bytes, nested, |kv| {
            if over.is_none()
                && let Err(reason) = count_attribute(kv, &name, budget)?
            {
                over = Some(reason);
            }
            Ok(())
        })?;
    }
    Ok(match over {
        Some(reason) => Err(reason),
        None => budget.end_span(&name),
    })
}

/// Counts one `KeyValue` against the current span's budget.
fn count_attribute(
    kv: &[u8],
    span: &str,
    budget: &mut Budget,
) -> Result<Result<(), String>, DecodeError> {
    let mut key = String::new();
    let mut values = Some(0);
    let mut fields = Fields::of(kv);
    while let Some((n, field)) = fields.next_field()? {
        match (n, field) {
            (1, Field::Bytes(k)) => {
                key = String::from_utf8_lossy(&k[..k.len().min(256)]).into_owned()
            }
            (2, Field::Bytes(value)) => {
                let mut count = 0usize;
                values = count_values(value, 0, &mut count)?.then_some(count);
            }
            _ => {}
        }
    }
    Ok(budget.attribute(span, &key, values, kv.len()))
}

/// Counts an `AnyValue` and what is nested in it (`array_value` 5 → `values` 1;
/// `kvlist_value` 6 → `values` 1 → `value` 2); `false` once past the attribute's budget
/// or the depth limit (counting stops there).
fn count_values(buf: &[u8], depth: usize, count: &mut usize) -> Result<bool, DecodeError> {
    *count += 1;
    if *count > crate::budget::MAX_ATTRIBUTE_VALUES || depth > MAX_VALUE_DEPTH {
        return Ok(false);
    }
    let mut fields = Fields::of(buf);
    while let Some((n, field)) = fields.next_field()? {
        let Field::Bytes(list) = field else {
            continue;
        };
        let within = match n {
            5 => each_until(list, |v| count_values(v, depth + 1, count))?,
            6 => each_until(list, |kv| {
                let mut ok = true;
                Fields::each(kv, 2, |v| {
                    if ok {
                        ok = count_values(v, depth + 1, count)?;
                    }
                    Ok(())
                })?;
                Ok(ok)
            })?,
            _ => true,
        };
        if !within {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Calls `f` with each `values` (field 1) of a list until it answers `false`.
fn each_until(
    list: &[u8],
    mut f: impl FnMut(&[u8]) -> Result<bool, DecodeError>,
) -> Result<bool, DecodeError> {
    let mut fields = Fields::of(list);
    while let Some((n, field)) = fields.next_field()? {
        if let (1, Field::Bytes(v)) = (n, field)
            && !f(v)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}
