//! Tool arguments: read into each tool's own struct with serde, before any
//! connection is made, so a bad call costs nothing and says what to fix.
//!
//! A tool's arguments come as a JSON object that the request parser already
//! refused if it gave a key twice. [`names`] refuses a name the tool does
//! not take and a required one that is missing (absent or `null`); [`read`]
//! then reads the struct a tool declares, field by field in the order it
//! declares them, so the first problem reported is that of the first
//! argument. The newtypes below carry the rules of a value (a pad id, a text
//! within Rustpad's limit) and say what is wrong in this server's words: a
//! problem about "argument …" is completed with the argument's name by the
//! reader, in one place ([`reader`]).

mod reader;
mod revert;
mod schemas;

pub use revert::{By, ChangeHandle};

use std::fmt;
use std::ops::RangeInclusive;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::locate::{EditSpec, MAX_EDITS};
use crate::rustpad::base::Base;
use crate::text::{
    MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS, char_len, clean_line,
};
use crate::tools::outcome::ToolError;

/// The most lines a pad can have: one more than its characters.
pub const MAX_LINE: usize = MAX_DOCUMENT_CHARS + 1;

/// Refuses an argument `tool` does not take (`known`, in its schema's
/// order) and a `required` one that is missing.
pub fn names(
    tool: &str,
    known: &[&str],
    required: &[&str],
    map: &Map<String, Value>,
) -> Result<(), ToolError> {
    if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
        let takes = if known.is_empty() {
            "no arguments".to_string()
        } else {
            known.join(", ")
        };
        return Err(ToolError::new(format!(
            "unknown argument \"{}\": {tool} takes {takes}",
            clean_line(unknown, 64)
        )));
    }
    match required
        .iter()
        .find(|name| map.get(**name).is_none_or(Value::is_null))
    {
        Some(name) => Err(ToolError::new(format!(
            "missing required argument \"{name}\""
        ))),
        None => Ok(()),
    }
}

/// Reads `map` into `T`, checking its fields in the order `T` declares them.
pub fn read<'a, T: Deserialize<'a>>(map: &'a Map<String, Value>) -> Result<T, ToolError> {
    reader::read(map).map_err(|problem| ToolError::new(problem.to_string()))
}

/// A visitor of one kind of borrowed string, checked by `check`.
struct Str<F> {
    expecting: &'static str,
    check: F,
}

impl<'de, T, P: fmt::Display, F: FnOnce(&'de str) -> Result<T, P>> Visitor<'de> for Str<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<T, E> {
        (self.check)(text).map_err(E::custom)
    }
}

fn string<'de, D: Deserializer<'de>, T, P: fmt::Display>(
    deserializer: D,
    check: impl FnOnce(&'de str) -> Result<T, P>,
) -> Result<T, D::Error> {
    deserializer.deserialize_str(Str {
        expecting: "a string",
        check,
    })
}

/// A pad id: 1–100 of `A-Z a-z 0-9 . _ -`, and not `.` or `..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PadId<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for PadId<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |id| check_id(id).map(PadId))
    }
}

/// What is wrong with a pad id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidPadId {
    /// Empty, or longer than [`MAX_ID_CHARS`].
    Length,
    /// A character outside `A-Z a-z 0-9 . _ -`.
    Characters,
    /// `.` or `..`, which name no pad (they would be path steps).
    DotName,
}

impl fmt::Display for InvalidPadId {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            InvalidPadId::Length => {
                write!(
                    f,
                    "invalid pad id: it must be 1–{MAX_ID_CHARS} characters long"
                )
            }
            InvalidPadId::Characters => f.write_str(
                "invalid pad id: only letters, digits, dot, underscore and hyphen are allowed",
            ),
            InvalidPadId::DotName => {
                f.write_str("invalid pad id: \".\" and \"..\" are not pad ids")
            }
        }
    }
}

/// Checks a pad id, or says what is wrong with it.
pub fn check_id(id: &str) -> Result<&str, InvalidPadId> {
    if id.is_empty() || id.len() > MAX_ID_CHARS {
        return Err(InvalidPadId::Length);
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(InvalidPadId::Characters);
    }
    if id == "." || id == ".." {
        return Err(InvalidPadId::DotName);
    }
    Ok(id)
}

/// Text of at most Rustpad's limit for a whole pad; may be empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text<'a>(pub &'a str);

/// Text of 1 to Rustpad's limit for a whole pad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonEmptyText<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |text| check_text(text, 0).map(Text))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for NonEmptyText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |text| check_text(text, 1).map(NonEmptyText))
    }
}

fn check_text(text: &str, min: usize) -> Result<&str, String> {
    let length = char_len(text);
    if length < min {
        return Err("argument must not be empty".into());
    }
    if length > MAX_DOCUMENT_CHARS {
        return Err(format!(
            "argument is {length} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS} for a whole pad"
        ));
    }
    Ok(text)
}

/// A Monaco language id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Language<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Language<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |language| {
            let valid = (1..=MAX_LANGUAGE_CHARS).contains(&language.len())
                && language
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+#.-".contains(c));
            if valid {
                Ok(Language(language))
            } else {
                Err(format!(
                    "invalid language: a Monaco language id is 1–{MAX_LANGUAGE_CHARS} letters, digits and + # . - (e.g. \"markdown\", \"rust\", \"plaintext\")"
                ))
            }
        })
    }
}

/// `confirm_token`: only its shape is checked here; the guard reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfirmToken<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for ConfirmToken<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string(deserializer, |token| {
            if token.is_empty() || char_len(token) > MAX_TOKEN_CHARS {
                Err(format!(
                    "confirm_token must be 1–{MAX_TOKEN_CHARS} characters: pass exactly the token a previous call returned, or omit it"
                ))
            } else {
                Ok(ConfirmToken(token))
            }
        })
    }
}

/// The base a model read, as a `get_document` window, `edit_document`,
/// `get_changes` and `wait_for_changes` give it, where a tool needs one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GivenBase(pub Base);

/// A base where a tool may go without one ([`GivenBase`] otherwise):
/// `edit_document`, which then edits the pad as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseOrNow(pub Base);

/// What a base that is not one of ours is told: where bases come from, and
/// `instead` (what else the tool takes).
fn not_a_base(instead: &str) -> String {
    format!(
        "argument is not a base this server gives out (r<revision>.<16 hex digits>): pass unchanged the base that a get_document window, edit_document, get_changes or wait_for_changes returned{instead}"
    )
}

/// A base, or the error that says where bases come from and `instead`.
fn a_base<'de, D: Deserializer<'de>>(deserializer: D, instead: &str) -> Result<Base, D::Error> {
    string(deserializer, |text| {
        Base::parse(text).ok_or_else(|| not_a_base(instead))
    })
}

impl<'de> Deserialize<'de> for GivenBase {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        a_base(deserializer, "").map(GivenBase)
    }
}

impl<'de> Deserialize<'de> for BaseOrNow {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        a_base(
            deserializer,
            ", or leave it out to edit the pad as it is now",
        )
        .map(BaseOrNow)
    }
}

/// A tool that takes no arguments.
#[derive(schemars::JsonSchema)]
pub struct NoArguments {}

/// A yes-or-no argument; absent means no.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Expecting;
        impl Visitor<'_> for Expecting {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true or false")
            }
            fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Flag, E> {
                Ok(Flag(flag))
            }
        }
        deserializer.deserialize_bool(Expecting)
    }
}

/// A 1-based line number, at most one past the longest pad's last line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line(pub usize);

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Within 1..=MAX_LINE, so it fits a usize.
        a_whole_number(deserializer, "a whole line number", 1..=MAX_LINE as u64)
            .map(|line| Line(line as usize))
    }
}

/// Reads a whole number within `range`; anything else is refused as not
/// being `what` "from" the range's start "to" its end (a negative number, a
/// fraction or another type too, in serde's words for each).
pub fn a_whole_number<'de, D: Deserializer<'de>>(
    deserializer: D,
    what: &'static str,
    range: RangeInclusive<u64>,
) -> Result<u64, D::Error> {
    struct Expecting {
        what: &'static str,
        range: RangeInclusive<u64>,
    }
    impl Visitor<'_> for Expecting {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            let (what, from, to) = (self.what, self.range.start(), self.range.end());
            write!(f, "{what} from {from} to {to}")
        }
        fn visit_u64<E: de::Error>(self, number: u64) -> Result<u64, E> {
            if self.range.contains(&number) {
                Ok(number)
            } else {
                Err(E::invalid_value(de::Unexpected::Unsigned(number), &self))
            }
        }
    }
    deserializer.deserialize_u64(Expecting { what, range })
}

/// `edit_document`'s edits: 1–100 objects of old_text, new_text and an
/// optional line, each checked in that order.
#[derive(Debug)]
pub struct Edits<'a>(pub Vec<EditSpec<'a>>);

/// One item of `edits`, read from an object holding its fields and no other.
struct GivenEdit<'a>(EditSpec<'a>);

/// An edit's fields, in the order they are checked.
const EDIT_FIELDS: &[&str] = &["old_text", "new_text", "line"];

impl<'de> Deserialize<'de> for GivenEdit<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Expecting;
        impl<'de> Visitor<'de> for Expecting {
            type Value = GivenEdit<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object with old_text, new_text and optionally line")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut fields: A,
            ) -> Result<GivenEdit<'de>, A::Error> {
                let (mut old_text, mut new_text, mut line) = (None, None, None);
                while let Some(field) = fields.next_key::<&str>()? {
                    match field {
                        "old_text" => old_text = Some(fields.next_value::<Text>()?.0),
                        "new_text" => new_text = Some(fields.next_value::<Text>()?.0),
                        _ => line = Some(fields.next_value::<Line>()?.0),
                    }
                }
                let present = |text: Option<&'de str>, name: &str| {
                    text.ok_or_else(|| {
                        de::Error::custom(format!(
                            "missing {name} (it may be empty, but it must be there)"
                        ))
                    })
                };
                Ok(GivenEdit(EditSpec {
                    old_text: present(old_text, "old_text")?,
                    new_text: present(new_text, "new_text")?,
                    line,
                }))
            }
        }
        deserializer.deserialize_struct("an edit", EDIT_FIELDS, Expecting)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Edits<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Expecting;
        impl<'de> Visitor<'de> for Expecting {
            type Value = Edits<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of {old_text, new_text, line?} objects")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Edits<'de>, A::Error> {
                let count = items.size_hint().unwrap_or(0);
                if count == 0 || count > MAX_EDITS {
                    return Err(de::Error::custom(format!(
                        "argument must hold 1–{MAX_EDITS} edits; it holds {count}"
                    )));
                }
                let mut edits = Vec::with_capacity(count);
                while let Some(GivenEdit(edit)) = items.next_element()? {
                    edits.push(edit);
                }
                Ok(Edits(edits))
            }
        }
        deserializer.deserialize_seq(Expecting)
    }
}

#[cfg(test)]
mod tests;
