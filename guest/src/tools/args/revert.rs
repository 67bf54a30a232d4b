//! The arguments only `revert_changes` takes: a change's handle, and whose
//! changes since a base to take back.

use serde::Deserialize;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::string;
use crate::rustpad::change::Handle;
use crate::text::{MAX_LABEL_CHARS, char_len};

/// `change`: the handle a write's result gave out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeHandle(pub Handle);

impl<'de> Deserialize<'de> for ChangeHandle {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |text| {
            Handle::parse(text).map(ChangeHandle).ok_or(
                "argument is not a change this server gives out (r<revision>.<16 hex digits>:c<connection>:t<start time>): pass unchanged the change that a write's result returned, or use base and by instead",
            )
        })
    }
}

/// `by`: whose changes since the base are taken back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum By {
    /// This deployment's own writes, as far as it can tell them.
    ThisServer,
    /// Every change: the pad goes back to the text at the base.
    Everyone,
    /// One connection, as get_changes numbers it.
    Connection(u64),
    /// The one connection in the pad now that has this name.
    Name(String),
}

const BY_SHAPES: &str = "\"this_server\", \"everyone\", {\"connection\": N} (a number get_changes lists) or {\"name\": \"…\"} (someone in the pad now)";

impl<'de> Deserialize<'de> for By {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ByVisitor)
    }
}

struct ByVisitor;

impl<'de> Visitor<'de> for ByVisitor {
    type Value = By;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(BY_SHAPES)
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<By, E> {
        match word {
            "this_server" => Ok(By::ThisServer),
            "everyone" => Ok(By::Everyone),
            _ => Err(E::custom(format!("argument must be {BY_SHAPES}"))),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<By, A::Error> {
        let by = match map.next_key::<String>()?.as_deref() {
            Some("connection") => map.next_value::<Value>()?.as_u64().map(By::Connection),
            Some("name") => match map.next_value::<Value>()? {
                Value::String(name) if !name.is_empty() && char_len(&name) <= MAX_LABEL_CHARS => {
                    Some(By::Name(name))
                }
                _ => None,
            },
            _ => None,
        };
        match (by, map.next_key::<String>()?) {
            (Some(by), None) => Ok(by),
            _ => Err(de::Error::custom(format!("argument must be {BY_SHAPES}"))),
        }
    }
}
