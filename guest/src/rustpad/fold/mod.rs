//! Folding a History into lengths straight from its frame.
//!
//! A long-lived pad's first message carries its whole history (about 2.7 MB
//! for 100,000 single-character edits). A session that needs only lengths
//! (info, append, create, set_language) adds up each operation's parts as it
//! reads them: no operation, part or entry is built, nothing is allocated.
//!
//! Two readers do it. [`scan`] reads the History in the one shape Rustpad
//! writes it, byte by byte, and gives up on anything else — another shape, a
//! refusal, an edit that does not fit. Then the History is read again by
//! serde with the same rules as the full path (`UserOperation` and
//! `ot::Operation` parsed, then `Document::apply`), which says exactly what
//! is wrong, if anything. Either way the fold accepts and refuses exactly
//! what the full path does, with the same limits (integers only, no
//! zero-length parts, no part longer than any document, each operation
//! covering the document, no document over Rustpad's limit) and the same
//! deadline checks; the `fold_lengths` fuzz target holds them to that, on
//! accept/reject and on every length.

use std::fmt;
use std::time::Instant;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

mod scan;

use super::marks::Marked;
use super::ot::{CannotApply, MAX_PART};

/// Where a History's fold starts, and how it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lengths {
    /// The document's length in code points.
    pub length: u64,
    /// Edits folded so far.
    pub revision: u64,
    /// How many of the edits folded were ours.
    pub ours: u64,
    /// The revision of the last of them, if any.
    pub last_ours: Option<u64>,
}

/// Who folds a History and how long it may take, the same for every fold
/// of one pad's frame.
#[derive(Debug, Clone, Copy)]
pub struct Folding {
    /// This connection's id, whose edits count as ours.
    pub me: Option<u64>,
    /// When the fold gives up.
    pub deadline: Instant,
    /// Entries between two looks at the clock.
    pub check_every: u64,
}

/// Why a fold stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum FoldError {
    /// The frame is not a History this client can read.
    NotUnderstood(String),
    /// An edit does not fit the document.
    CannotApply(CannotApply),
    /// The deadline passed before the fold was done.
    Deadline,
}

/// Folds `entries` (the History's `operations`, a JSON array of `{id,
/// operation}`) into `from`, skipping the first `skip` entries (already
/// folded) but still reading them, `by` whom and within what time;
/// `marked`, when given, follows each entry's connection.
pub fn fold_lengths(
    entries: &str,
    from: Lengths,
    skip: u64,
    by: Folding,
    marked: Option<&mut Marked>,
) -> Result<Lengths, FoldError> {
    // The fast reader may give up half way: the careful one then follows
    // the same entries again, from the marks as they stood before.
    let mut marked = marked;
    let before = marked.as_deref().cloned();
    match scan::fold(entries, from, skip, by, marked.as_deref_mut()) {
        scan::Scanned::Folded(lengths) => return Ok(lengths),
        scan::Scanned::Late => return Err(FoldError::Deadline),
        scan::Scanned::Unsure => restore(marked.as_deref_mut(), before),
    }
    let mut fold = Fold {
        at: from,
        skip,
        by,
        index: 0,
        stopped: None,
        marked,
    };
    let mut parser = serde_json::Deserializer::from_str(entries);
    let read = Entries(&mut fold)
        .deserialize(&mut parser)
        .and_then(|()| parser.end());
    match (read, fold.stopped) {
        (_, Some(stopped)) => Err(stopped),
        (Err(error), None) => Err(FoldError::NotUnderstood(super::wire_problem(&error))),
        (Ok(()), None) => Ok(fold.at),
    }
}

/// A whole History frame folded onto a pad at `from`, when it is in the
/// plain shape Rustpad writes; none when it must be read the careful way
/// (any other message, any other shape, anything to refuse).
pub fn fold_history_frame(
    frame: &str,
    from: Lengths,
    by: Folding,
    mut marked: Option<&mut Marked>,
) -> Option<Result<Lengths, FoldError>> {
    let before = marked.as_deref().cloned();
    match scan::history_frame(frame, from, by, marked.as_deref_mut()) {
        scan::Scanned::Folded(lengths) => Some(Ok(lengths)),
        scan::Scanned::Late => Some(Err(FoldError::Deadline)),
        scan::Scanned::Unsure => {
            restore(marked, before);
            None
        }
    }
}

/// Puts the marks back as they stood before a fast read that gave up half
/// way, so the careful read that follows them again starts from there (a
/// connection's state depends on the order of its entries, so following
/// some twice would not be the same).
fn restore(marked: Option<&mut Marked>, before: Option<Marked>) {
    if let (Some(marked), Some(before)) = (marked, before) {
        *marked = before;
    }
}

struct Fold<'c> {
    at: Lengths,
    skip: u64,
    by: Folding,
    /// The entry being read, counted from the History's first.
    index: u64,
    /// Set when the fold, not the parser, refused (the parser then stops too).
    stopped: Option<FoldError>,
    marked: Option<&'c mut Marked>,
}

impl Fold<'_> {
    /// Takes one operation's totals into the document, as `Document::apply` would.
    fn apply(&mut self, base: u64, target: u64) -> Result<(), FoldError> {
        CannotApply::check(base, target, self.at.length).map_err(FoldError::CannotApply)?;
        self.at.length = target;
        self.at.revision += 1;
        Ok(())
    }

    /// Stops the parse for a reason of the fold's own.
    fn stop<E: de::Error>(&mut self, reason: FoldError) -> E {
        self.stopped = Some(reason);
        E::custom("the fold stopped")
    }
}

/// The array of entries.
struct Entries<'f, 'c>(&'f mut Fold<'c>);

impl<'de> DeserializeSeed<'de> for Entries<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut entries: A) -> Result<(), A::Error> {
        let fold = self.0;
        while let Some(()) = entries.next_element_seed(Entry(fold))? {
            fold.index += 1;
        }
        Ok(())
    }
}

/// One `{id, operation}` entry (or `[id, operation]`, which serde reads the same).
struct Entry<'f, 'c>(&'f mut Fold<'c>);

impl<'de> DeserializeSeed<'de> for Entry<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_struct("UserOperation", &["id", "operation"], self)
    }
}

impl Entry<'_, '_> {
    /// Takes a complete entry into the document, when it is past the skipped ones.
    fn finish<E: de::Error>(self, id: u64, totals: (u64, u64, bool)) -> Result<(), E> {
        let fold = self.0;
        if fold.index < fold.skip {
            return Ok(());
        }
        if fold.index.is_multiple_of(fold.by.check_every) && Instant::now() > fold.by.deadline {
            return Err(fold.stop(FoldError::Deadline));
        }
        if let Err(reason) = fold.apply(totals.0, totals.1) {
            return Err(fold.stop(reason));
        }
        if Some(id) == fold.by.me {
            fold.at.ours += 1;
            fold.at.last_ours = Some(fold.at.revision);
        }
        if let Some(marked) = fold.marked.as_deref_mut() {
            marked.follow(id, totals.2);
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Entry<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct UserOperation")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut fields: A) -> Result<(), A::Error> {
        let id: u64 = fields
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let totals = fields
            .next_element_seed(Parts)?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        self.finish(id, totals)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<(), A::Error> {
        let (mut id, mut totals) = (None, None);
        while let Some(key) = fields.next_key::<Field>()? {
            match key {
                Field::Id if id.is_some() => return Err(de::Error::duplicate_field("id")),
                Field::Id => id = Some(fields.next_value::<u64>()?),
                Field::Operation if totals.is_some() => {
                    return Err(de::Error::duplicate_field("operation"));
                }
                Field::Operation => totals = Some(fields.next_value_seed(Parts)?),
                Field::Other => {
                    fields.next_value::<IgnoredAny>()?;
                }
            }
        }
        let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
        let totals = totals.ok_or_else(|| de::Error::missing_field("operation"))?;
        self.finish(id, totals)
    }
}

/// A key of an entry (JSON's keys are strings, so any other is `Other`).
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Id,
    Operation,
    #[serde(other)]
    Other,
}

/// An operation's parts, read as (base length, target length, whether it
/// only retains).
struct Parts;

impl<'de> DeserializeSeed<'de> for Parts {
    type Value = (u64, u64, bool);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Parts {
    type Value = (u64, u64, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of operation parts")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut parts: A) -> Result<Self::Value, A::Error> {
        let (mut base, mut target, mut keeps) = (0u64, 0u64, true);
        while let Some(part) = parts.next_element::<Part>()? {
            match part {
                Part::Retain(n) => {
                    base += n;
                    target += n;
                }
                Part::Delete(n) => {
                    base += n;
                    keeps = false;
                }
                Part::Insert(n) => {
                    target += n;
                    keeps = false;
                }
            }
        }
        Ok((base, target, keeps))
    }
}

/// One part, reduced to what lengths need: an insert's length in code points.
enum Part {
    Retain(u64),
    Delete(u64),
    Insert(u64),
}

impl<'de> de::Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Part, D::Error> {
        struct PartVisitor;
        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-zero integer or a non-empty string")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Part, E> {
                match n {
                    0 => Err(E::custom("an operation contains a zero-length part")),
                    n if n > MAX_PART => {
                        Err(E::custom("an operation part is longer than any document"))
                    }
                    n => Ok(Part::Retain(n)),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Part, E> {
                match n {
                    0.. => self.visit_u64(n as u64),
                    n if n.unsigned_abs() > MAX_PART => {
                        Err(E::custom("an operation part is longer than any document"))
                    }
                    n => Ok(Part::Delete(n.unsigned_abs())),
                }
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Part, E> {
                if s.is_empty() {
                    return Err(E::custom("an operation contains a zero-length part"));
                }
                Ok(Part::Insert(s.chars().count() as u64))
            }
        }
        deserializer.deserialize_any(PartVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn fold(entries: &str, skip: u64) -> Result<Lengths, FoldError> {
        let start = Lengths {
            length: 0,
            revision: 0,
            ours: 0,
            last_ours: None,
        };
        let by = Folding {
            me: Some(7),
            deadline: Instant::now() + Duration::from_secs(60),
            check_every: 4096,
        };
        fold_lengths(entries, start, skip, by, None)
    }

    #[test]
    fn lengths_add_up_in_code_points_and_our_edits_are_found() {
        let folded = fold(
            r#"[{"id":1,"operation":["h🎉llo"]},{"operation":[5,"!"],"id":7,"x":{}},[2,[-6]]]"#,
            0,
        )
        .unwrap();
        assert_eq!(
            folded,
            Lengths {
                length: 0,
                revision: 3,
                ours: 1,
                last_ours: Some(2),
            }
        );
        // Skipped entries are read, not applied.
        let skipped = fold(
            r#"[{"id":1,"operation":[4]},{"id":7,"operation":["ab"]}]"#,
            1,
        );
        assert_eq!(skipped.unwrap().length, 2);
    }

    #[test]
    fn what_the_full_parser_refuses_is_refused() {
        for bad in [
            r#"[{"id":1,"operation":[1.0]}]"#,
            r#"[{"id":1,"operation":[0]}]"#,
            r#"[{"id":1,"operation":[""]}]"#,
            r#"[{"id":1.5,"operation":["a"]}]"#,
            r#"[{"id":1,"id":2,"operation":["a"]}]"#,
            r#"[{"id":1}]"#,
            r#"[{"id":1,"operation":[null]}]"#,
            r#"[{"id":1,"operation":[524289]}]"#,
            r#"{"id":1}"#,
            r#"[[1,["a"],3]]"#,
            r#"[] x"#,
        ] {
            assert!(
                matches!(fold(bad, 0), Err(FoldError::NotUnderstood(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            fold(r#"[{"id":1,"operation":[3]}]"#, 0),
            Err(FoldError::CannotApply(_))
        ));
    }
}
