//! Deserialisers that take a JSON value only in the shape the lenient reader would read the
//! same way: an object (never an array read by position, never `null`), an array of objects,
//! a present `null` kept apart from an absent field.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};

/// A string that borrows from the input unless it holds escapes.
#[derive(Deserialize)]
pub(super) struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// Reads a `T` only from a JSON object: a derived struct would also take an array (its
/// fields by position) and `null` where the lenient reader sees neither.
pub(super) struct Object<T>(pub PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Object<T> {
    type Value = T;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// `deserialize_with` for a field that must be an object when present (`null` included:
/// a present `null` fails the line).
pub(super) fn object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Object(PhantomData).deserialize(d).map(Some)
}

/// `deserialize_with` for a field whose present `null` is read as a `T` (by default serde
/// reads it as absent, where the lenient reader sees a present `null`).
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// `deserialize_with` for a field that must be an array of objects when present.
pub(super) fn objects<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(Objects(PhantomData)).map(Some)
}

struct Objects<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Objects<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of JSON objects")
    }

    fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Vec<T>, S::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(64));
        while let Some(item) = seq.next_element_seed(Object(PhantomData))? {
            out.push(item);
        }
        Ok(out)
    }
}
