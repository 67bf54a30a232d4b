//! The serde deserializer that reads a tool's arguments: a struct's fields
//! in the order it declares them, an absent or `null` argument left to its
//! default, a nested object (an edit) holding no key it does not name, an
//! array saying up front how many items it has; and [`Problem`], which says
//! what is wrong where.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::{Map, Value};

use crate::text::clean_line;

/// Reads `map` into `T`.
pub(super) fn read<'a, T: Deserialize<'a>>(map: &'a Map<String, Value>) -> Result<T, Problem> {
    T::deserialize(Object { map, nested: false })
}

/// What is wrong with an argument, and where.
#[derive(Debug)]
pub struct Problem {
    message: String,
    /// Innermost last: the argument, then (for `edits`) the item and its field.
    at: Vec<Place>,
}

#[derive(Debug)]
enum Place {
    Field(&'static str),
    Item(usize),
}

impl Problem {
    fn at(mut self, place: Place) -> Problem {
        self.at.insert(0, place);
        self
    }

    /// The message with its place: `argument "id" must be a string`,
    /// `edit 2: line must be …`. A message that does not start with
    /// "argument" names its subject itself.
    fn render(&self) -> String {
        let about = |name: &str| match self.message.strip_prefix("argument ") {
            Some(rest) => format!("{name} {rest}"),
            None => self.message.clone(),
        };
        match self.at.as_slice() {
            [Place::Field(argument), Place::Item(index), rest @ ..] => {
                let item = argument.strip_suffix('s').unwrap_or(argument);
                let inner = match rest {
                    [Place::Field(field), ..] => about(field),
                    _ => self
                        .message
                        .strip_prefix("argument ")
                        .map_or_else(|| self.message.clone(), str::to_string),
                };
                format!("{item} {}: {inner}", index + 1)
            }
            [Place::Field(argument), ..] => about(&format!("argument \"{argument}\"")),
            _ => self.message.clone(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Problem {}

impl de::Error for Problem {
    fn custom<T: fmt::Display>(message: T) -> Problem {
        Problem {
            message: message.to_string(),
            at: Vec::new(),
        }
    }

    /// A value of the wrong kind: it "must be" what its reader expects.
    fn invalid_type(_: de::Unexpected, expected: &dyn de::Expected) -> Problem {
        Problem::custom(format!("argument must be {expected}"))
    }

    fn invalid_value(unexpected: de::Unexpected, expected: &dyn de::Expected) -> Problem {
        Problem::invalid_type(unexpected, expected)
    }
}

/// An object of arguments (or of an item's fields) as serde reads it: a
/// struct's fields are visited in its order, and an absent or `null` one is
/// left to its default. A nested object may hold no other key.
struct Object<'a> {
    map: &'a Map<String, Value>,
    nested: bool,
}

impl<'de> Deserializer<'de> for Object<'de> {
    type Error = Problem;

    /// `name` says what a nested object is ("an edit") when it holds a key
    /// it should not.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Problem> {
        if self.nested
            && let Some(unknown) = self.map.keys().find(|k| !fields.contains(&k.as_str()))
        {
            let (last, rest) = fields.split_last().unwrap_or((&"", &[]));
            return Err(de::Error::custom(format!(
                "unknown field \"{}\": {name} takes {} and {last}",
                clean_line(unknown, 64),
                rest.join(", ")
            )));
        }
        visitor.visit_map(Fields {
            map: self.map,
            fields: fields.iter(),
            value: None,
        })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Problem> {
        visitor.visit_map(Fields {
            map: self.map,
            fields: [].iter(),
            value: None,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

struct Fields<'a> {
    map: &'a Map<String, Value>,
    fields: std::slice::Iter<'static, &'static str>,
    value: Option<(&'static str, &'a Value)>,
}

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = Problem;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Problem> {
        for name in self.fields.by_ref() {
            if let Some(value) = self.map.get(*name).filter(|v| !v.is_null()) {
                self.value = Some((name, value));
                return seed
                    .deserialize(de::value::BorrowedStrDeserializer::new(name))
                    .map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Problem> {
        let (name, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("argument is missing"))?;
        seed.deserialize(Argument(value))
            .map_err(|problem| problem.at(Place::Field(name)))
    }
}

/// One argument's value.
struct Argument<'a>(&'a Value);

impl<'de> Deserializer<'de> for Argument<'de> {
    type Error = Problem;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Problem> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(flag) => visitor.visit_bool(*flag),
            Value::Number(number) => match (number.as_u64(), number.as_i64()) {
                (Some(n), _) => visitor.visit_u64(n),
                (None, Some(n)) => visitor.visit_i64(n),
                (None, None) => visitor.visit_f64(number.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(text) => visitor.visit_borrowed_str(text),
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                len: items.len(),
            }),
            // Only a type that asks for any value sees a map this way
            // (`revert_changes`'s `by`); structs are read by field below.
            Value::Object(map) => visitor.visit_map(Entries {
                entries: map.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Problem> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Problem> {
        match self.0 {
            Value::Object(map) => {
                Object { map, nested: true }.deserialize_struct(name, fields, visitor)
            }
            // Never read positionally from an array, as serde would allow.
            _ => Err(de::Error::invalid_type(
                de::Unexpected::Other("not an object"),
                &visitor,
            )),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Problem> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// An object argument's entries, for a type that reads any value.
struct Entries<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = Problem;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Problem> {
        match self.entries.next() {
            None => Ok(None),
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(de::value::BorrowedStrDeserializer::new(key.as_str()))
                    .map(Some)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Problem> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("argument has a value without a key"))?;
        seed.deserialize(Argument(value))
    }
}

/// An array argument's items, which say how many there are up front.
struct Items<'a> {
    items: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    len: usize,
}

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = Problem;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Problem> {
        match self.items.next() {
            None => Ok(None),
            Some((index, item)) => seed
                .deserialize(Argument(item))
                .map(Some)
                .map_err(|problem| problem.at(Place::Item(index))),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}
