//! The viewer's deep links into memory (`#/memory/<kind>/<id>`) and the one encoder of ids
//! in them and in API paths.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::types::MemoryKind;

/// The viewer route of a record, block or entity: `#/memory/<kind>/<id>` (the id encoded
/// like JavaScript's `encodeURIComponent`).
pub fn viewer_route(kind: MemoryKind, id: &str) -> String {
    format!("#/memory/{kind}/{}", encode_component(id))
}

/// The viewer route of an entity: `#/memory/entity/<id>`.
pub fn entity_route(id: &str) -> String {
    format!("#/memory/entity/{}", encode_component(id))
}

/// What JavaScript's `encodeURIComponent` leaves as is: ASCII letters, digits and
/// `-_.!~*'()`.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// Percent-encodes `s` like JavaScript's `encodeURIComponent` (the viewer decodes its
/// routes with `decodeURIComponent`): the one encoder of viewer deep links and of ids in
/// API paths and query strings, for every view.
///
/// ```
/// use mindgate_memory::route::encode_component;
/// assert_eq!(encode_component("tool:search/é x"), "tool%3Asearch%2F%C3%A9%20x");
/// assert_eq!(encode_component("r-1_a.b!~*'()"), "r-1_a.b!~*'()");
/// ```
pub fn encode_component(s: &str) -> String {
    utf8_percent_encode(s, URI_COMPONENT).to_string()
}
