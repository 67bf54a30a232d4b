//! Operations as Rustpad sends and accepts them, and the document they build.
//!
//! Incoming operations are parsed strictly (integers only, no zero-length
//! parts, no lengths beyond what any document could hold), borrowing their
//! text from the frame. A [`Document`] folds them either as lengths alone
//! (enough to inspect, append or set a language, and as strict) or into a
//! rope when the text itself is needed, so folding a long history costs a few
//! logarithmic steps per edit rather than a copy of the document per edit.
//! Outgoing operations are built
//! with the `operational-transform` crate, which Rustpad itself uses, so our
//! wire format is its wire format.

use std::borrow::Cow;
use std::fmt;

use operational_transform::{self as transform, OperationSeq};
use ropey::Rope;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::digest::HashedStart;
use crate::text::MAX_DOCUMENT_CHARS;

/// A length no part of a valid operation can exceed: it must fit the
/// document before or after the edit.
pub(crate) const MAX_PART: u64 = 2 * MAX_DOCUMENT_CHARS as u64;

/// One part of an operation, in code points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part<'a> {
    Retain(u64),
    Delete(u64),
    Insert(Cow<'a, str>),
}

/// A whole-document operation as received from Rustpad.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Operation<'a>(pub Vec<Part<'a>>);

/// A History entry, parsed whole (for a session that keeps the text, or hears who made each).
#[derive(Deserialize)]
pub(crate) struct UserOperation<'a> {
    pub id: u64,
    #[serde(borrow)]
    pub operation: Operation<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Part<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Part<'a>, D::Error> {
        struct PartVisitor;
        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-zero integer or a non-empty string")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Part<'de>, E> {
                match n {
                    0 => Err(E::custom("an operation contains a zero-length part")),
                    n if n > MAX_PART => {
                        Err(E::custom("an operation part is longer than any document"))
                    }
                    n => Ok(Part::Retain(n)),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Part<'de>, E> {
                match n {
                    0.. => self.visit_u64(n as u64),
                    n if n.unsigned_abs() > MAX_PART => {
                        Err(E::custom("an operation part is longer than any document"))
                    }
                    n => Ok(Part::Delete(n.unsigned_abs())),
                }
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Part<'de>, E> {
                insert(Cow::Borrowed(s))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Part<'de>, E> {
                insert(Cow::Owned(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Part<'de>, E> {
                insert(Cow::Owned(s))
            }
        }
        deserializer.deserialize_any(PartVisitor)
    }
}

fn insert<E: de::Error>(text: Cow<'_, str>) -> Result<Part<'_>, E> {
    if text.is_empty() {
        return Err(E::custom("an operation contains a zero-length part"));
    }
    Ok(Part::Insert(text))
}

impl Operation<'_> {
    /// Whether the entry changes nothing (keeps the whole text, or is empty).
    pub fn changes_nothing(&self) -> bool {
        self.0.iter().all(|part| matches!(part, Part::Retain(_)))
    }

    /// Code points at the start of the text the operation keeps as they
    /// are (its leading retain; a retain after a delete that an insert puts
    /// back is not counted, which only makes it smaller).
    pub fn kept_first(&self) -> usize {
        match self.0.first() {
            Some(Part::Retain(n)) => *n as usize,
            _ => 0,
        }
    }

    /// The same edit as the `operational-transform` crate holds it, for
    /// transforming and composing.
    pub fn to_seq(&self) -> OperationSeq {
        let mut seq = OperationSeq::with_capacity(self.0.len());
        for part in &self.0 {
            match part {
                Part::Retain(n) => seq.retain(*n),
                Part::Delete(n) => seq.delete(*n),
                Part::Insert(text) => seq.insert(text),
            }
        }
        seq
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Operation<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Operation<'a>, D::Error> {
        struct OperationVisitor;
        impl<'de> Visitor<'de> for OperationVisitor {
            type Value = Operation<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of operation parts")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Operation<'de>, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
                while let Some(part) = seq.next_element()? {
                    parts.push(part);
                }
                Ok(Operation(parts))
            }
        }
        deserializer.deserialize_seq(OperationVisitor)
    }
}

/// Code points at the end of a text that its kept hashing leaves out.
/// Rustpad puts an append made on an older revision where the text ended
/// then, before the lines others appended meanwhile; a hashing that stopped
/// short of the end by this much goes on past such appends, where one that
/// reached the end would have to start again at every write.
const UNSETTLED_CHARS: usize = 4096;

/// A pad as folded from its history: always its length, and its text when
/// it was asked to keep it, with the hashing of that text's start where it
/// was handed one (a kept connection's cursor).
#[derive(Debug, Default)]
pub struct Document {
    length: usize,
    text: Option<Rope>,
    hashed: Option<HashedStart>,
}

impl Document {
    /// A document that folds lengths only.
    pub fn lengths_only() -> Document {
        Document::default()
    }

    /// A document that also keeps the text.
    pub fn with_text() -> Document {
        Document {
            length: 0,
            text: Some(Rope::new()),
            hashed: None,
        }
    }

    /// A document that keeps its text, holding `text` (read elsewhere).
    pub fn of_text(text: &str) -> Document {
        let rope = Rope::from_str(text);
        Document {
            length: rope.len_chars(),
            text: Some(rope),
            hashed: None,
        }
    }

    /// Takes `hashed` as the hashing of this text's start; ignored when it
    /// claims more code points than the text has.
    pub fn set_hashed(&mut self, hashed: HashedStart) {
        if self.text.is_some() && hashed.chars() <= self.length {
            self.hashed = Some(hashed);
        }
    }

    /// The hashing of this text's start, taken on to [`UNSETTLED_CHARS`]
    /// before `point` and kept for next time: only what lies after it is
    /// hashed again when a text that grows is fingerprinted.
    pub fn hashed_until(&mut self, point: usize) -> Option<HashedStart> {
        let text = self.text.as_ref()?;
        let mut hashed = self.hashed.take().unwrap_or_default();
        hashed.extend(text, point.saturating_sub(UNSETTLED_CHARS));
        self.hashed = Some(hashed.clone());
        Some(hashed)
    }

    /// Length in code points, as Rustpad counts.
    pub fn len(&self) -> usize {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Whether this document keeps its text (or folds lengths only).
    pub fn keeps_text(&self) -> bool {
        self.text.is_some()
    }

    /// Sets the length of a document that folds lengths only, from a fold
    /// done elsewhere ([`super::fold`]).
    pub fn set_length(&mut self, length: usize) {
        debug_assert!(self.text.is_none(), "a document with text folds its own");
        self.length = length;
    }

    /// The text, when this document keeps it.
    pub fn text(&self) -> Option<String> {
        self.text.as_ref().map(Rope::to_string)
    }

    /// The text as a rope (cheap to clone: clones share their pieces).
    pub fn rope(&self) -> Option<&Rope> {
        self.text.as_ref()
    }

    /// Applies one operation, checking it covers the document exactly and
    /// leaves it within Rustpad's limit. On error the document is unchanged.
    pub fn apply(&mut self, operation: &Operation) -> Result<(), CannotApply> {
        let (mut base, mut target) = (0u64, 0u64);
        for part in &operation.0 {
            match part {
                Part::Retain(n) => {
                    base += n;
                    target += n;
                }
                Part::Delete(n) => base += n,
                Part::Insert(s) => target += s.chars().count() as u64,
            }
        }
        CannotApply::check(base, target, self.len() as u64)?;
        self.length = target as usize;
        if self
            .hashed
            .as_ref()
            .is_some_and(|hashed| operation.kept_first() < hashed.chars())
            && !operation.changes_nothing()
        {
            self.hashed = None;
        }
        let Some(rope) = &mut self.text else {
            return Ok(());
        };
        let mut at = 0usize;
        for part in &operation.0 {
            match part {
                Part::Retain(n) => at += *n as usize,
                Part::Delete(n) => rope.remove(at..at + *n as usize),
                Part::Insert(s) => {
                    rope.insert(at, s);
                    at += s.chars().count();
                }
            }
        }
        Ok(())
    }
}

/// Why an operation cannot be applied to a text: the one rule the document
/// here and the history's fold ([`super::fold`]) both keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CannotApply {
    /// It covers another length than the text has.
    Length { covers: u64, has: u64 },
    /// It would make the text longer than Rustpad allows.
    TooLong { length: u64 },
}

impl CannotApply {
    /// Whether an operation that covers `covers` characters and leaves
    /// `makes` may be applied to a text of `has`.
    pub fn check(covers: u64, makes: u64, has: u64) -> Result<(), CannotApply> {
        if covers != has {
            return Err(CannotApply::Length { covers, has });
        }
        if makes > MAX_DOCUMENT_CHARS as u64 {
            return Err(CannotApply::TooLong { length: makes });
        }
        Ok(())
    }
}

impl fmt::Display for CannotApply {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            CannotApply::Length { covers, has } => write!(
                f,
                "an operation covers {covers} characters but the document has {has}"
            ),
            CannotApply::TooLong { length } => write!(
                f,
                "an operation makes the document {length} characters long, above Rustpad's limit of {MAX_DOCUMENT_CHARS}"
            ),
        }
    }
}

/// Applies an operation built with the `operational-transform` crate to a
/// rope, in place; refuses one that does not cover the rope exactly.
pub fn apply_to_rope(rope: &mut Rope, operation: &OperationSeq) -> Result<(), CannotApply> {
    let (covers, has) = (operation.base_len() as u64, rope.len_chars() as u64);
    if covers != has {
        return Err(CannotApply::Length { covers, has });
    }
    let mut at = 0usize;
    for part in operation.ops() {
        match part {
            transform::Operation::Retain(n) => at += *n as usize,
            transform::Operation::Delete(n) => rope.remove(at..at + *n as usize),
            transform::Operation::Insert(text) => {
                rope.insert(at, text);
                at += text.chars().count();
            }
        }
    }
    Ok(())
}

/// Builds whole-document operations in code points.
pub struct Builder(OperationSeq);

impl Builder {
    pub fn new() -> Builder {
        Builder(OperationSeq::default())
    }

    pub fn retain(mut self, n: usize) -> Builder {
        self.0.retain(n as u64);
        self
    }

    pub fn delete(mut self, n: usize) -> Builder {
        self.0.delete(n as u64);
        self
    }

    pub fn insert(mut self, s: &str) -> Builder {
        self.0.insert(s);
        self
    }

    /// The operation in Rustpad's wire format.
    pub fn finish(self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    /// The operation itself, to transform before it is sent.
    pub fn build(self) -> OperationSeq {
        self.0
    }
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

/// Where `search` occurs in `text`: left to right, without overlap, as
/// (start, length) in code points.
pub fn find_literal(text: &str, search: &str) -> Vec<(usize, usize)> {
    let search_len = search.chars().count();
    let mut matches = Vec::new();
    let (mut byte, mut chars) = (0usize, 0usize);
    for (index, _) in text.match_indices(search) {
        chars += text[byte..index].chars().count();
        matches.push((chars, search_len));
        chars += search_len;
        byte = index + search.len();
    }
    matches
}

#[cfg(test)]
mod tests;
