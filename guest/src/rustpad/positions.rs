//! Where people's carets and selections are: read from Rustpad's
//! `UserCursor` messages (bounded, whatever a browser sends), and carried
//! over every later edit the way Rustpad and its browser client carry them,
//! so they stay on the text they were on.
//!
//! Offsets are code points in the text at the session's revision. Rustpad
//! checks none of them, so one past the end of the pad is simply ignored when
//! they are shown ([`Positions::within`]).

use std::fmt;
use std::marker::PhantomData;

use operational_transform::{Operation as SeqPart, OperationSeq};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use super::ot::{Operation, Part};

/// Carets, and selections, kept per connection; the rest are skipped.
pub const MAX_PER_KIND: usize = 8;

/// One connection's carets and selections (start, end: either order, as a
/// browser sends them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Positions {
    #[serde(default, deserialize_with = "first_few")]
    pub cursors: Vec<u64>,
    #[serde(default, deserialize_with = "first_few")]
    pub selections: Vec<(u64, u64)>,
}

impl Positions {
    pub fn is_empty(&self) -> bool {
        self.cursors.is_empty() && self.selections.is_empty()
    }

    /// Carries every position over an operation built here, as Rustpad
    /// does.
    pub fn carry_over_seq(&mut self, operation: &OperationSeq) {
        carry(self.places(), operation.ops().iter().map(Step::of_seq_part));
    }

    fn places(&mut self) -> impl Iterator<Item = &mut u64> {
        self.cursors.iter_mut().chain(
            self.selections
                .iter_mut()
                .flat_map(|(start, end)| [start, end]),
        )
    }

    /// The positions inside a text of `length` code points (its end
    /// included); selections ordered start first.
    pub fn within(&self, length: u64) -> Positions {
        Positions {
            cursors: self
                .cursors
                .iter()
                .copied()
                .filter(|&at| at <= length)
                .collect(),
            selections: self
                .selections
                .iter()
                .filter(|(start, end)| *start <= length && *end <= length)
                .map(|&(start, end)| (start.min(end), start.max(end)))
                .collect(),
        }
    }
}

/// One part of an operation, by what it does to a position.
enum Step {
    Keep(u64),
    Insert(u64),
    Remove(u64),
}

impl Step {
    fn of_part(part: &Part) -> Step {
        match part {
            Part::Retain(n) => Step::Keep(*n),
            Part::Delete(n) => Step::Remove(*n),
            Part::Insert(text) => Step::Insert(text.chars().count() as u64),
        }
    }

    fn of_seq_part(part: &SeqPart) -> Step {
        match part {
            SeqPart::Retain(n) => Step::Keep(*n),
            SeqPart::Delete(n) => Step::Remove(*n),
            SeqPart::Insert(text) => Step::Insert(text.chars().count() as u64),
        }
    }
}

/// Carries everyone's positions over a History entry, as Rustpad does.
pub fn carry_all<'a>(everyone: impl Iterator<Item = &'a mut Positions>, operation: &Operation) {
    carry(
        everyone.flat_map(Positions::places),
        operation.0.iter().map(Step::of_part),
    );
}

/// Rustpad's `transform_index` for every position at once: text inserted at
/// a caret pushes it right, a deletion around it pulls it to the deletion's
/// start. One pass over the operation and the sorted positions, so a long
/// operation costs its parts plus the positions, not their product.
fn carry<'a>(places: impl Iterator<Item = &'a mut u64>, steps: impl Iterator<Item = Step>) {
    let mut places: Vec<&mut u64> = places.collect();
    if places.is_empty() {
        return;
    }
    places.sort_unstable_by_key(|at| **at);
    let mut places = places.into_iter().peekable();
    // Of the old text before the current step: how far, how much was
    // inserted and how much removed.
    let (mut old, mut inserted, mut removed) = (0u64, 0u64, 0u64);
    for step in steps {
        match step {
            Step::Keep(n) => {
                let end = old.saturating_add(n);
                while let Some(at) = places.next_if(|at| **at < end) {
                    *at = at.saturating_add(inserted).saturating_sub(removed);
                }
                old = end;
            }
            Step::Insert(n) => inserted = inserted.saturating_add(n),
            Step::Remove(n) => {
                let end = old.saturating_add(n);
                while let Some(at) = places.next_if(|at| **at < end) {
                    *at = old.saturating_add(inserted).saturating_sub(removed);
                }
                removed = removed.saturating_add(n);
                old = end;
            }
        }
    }
    for at in places {
        *at = at.saturating_add(inserted).saturating_sub(removed);
    }
}

/// Reads the first [`MAX_PER_KIND`] elements of a list and skips the rest,
/// so a flood of positions costs reading, never keeping.
fn first_few<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct FirstFew<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for FirstFew<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of positions")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut kept = Vec::new();
            while kept.len() < MAX_PER_KIND {
                match seq.next_element()? {
                    Some(element) => kept.push(element),
                    None => return Ok(kept),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(kept)
        }
    }
    deserializer.deserialize_seq(FirstFew(PhantomData))
}

/// Someone in the pad with carets or selections, as a session knows them.
pub struct Placed<'a> {
    /// The name they gave, cleaned.
    pub name: &'a str,
    pub positions: &'a Positions,
    /// Their connection's history shows a writer's mark (see
    /// `PadState::is_writer`): a write of rustpad-mcp's, or someone
    /// who copied the mark onto their own connection.
    pub writer: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(json: &str) -> Positions {
        serde_json::from_str(json).unwrap()
    }

    /// Rustpad's own `transform_index`, one position at a time.
    fn transform_index(position: u64, operation: &Operation) -> u64 {
        let mut before = position as i128;
        let mut moved = before;
        for step in operation.0.iter().map(Step::of_part) {
            match step {
                Step::Keep(n) => before -= n as i128,
                Step::Insert(n) => moved += n as i128,
                Step::Remove(n) => {
                    moved -= before.min(n as i128);
                    before -= n as i128;
                }
            }
            if before < 0 {
                break;
            }
        }
        moved.clamp(0, u64::MAX as i128) as u64
    }

    #[test]
    fn one_pass_carries_every_position_as_rustpad_would_one_by_one() {
        let operations = [
            r#"[2,"XY",1,-2,1]"#,
            r#"["ab",-3,2,"c",1,-1]"#,
            r#"[-6,"zz"]"#,
            r#"[6,"end"]"#,
            r#"[1,"a",1,"b",-1,1,"c",-2]"#,
        ];
        for operation in operations {
            let operation: Operation = serde_json::from_str(operation).unwrap();
            let mut everyone = [
                positions(r#"{"cursors":[0,1,2,3,4,5,6,9],"selections":[[1,5],[6,0]]}"#),
                positions(r#"{"cursors":[3,3,2]}"#),
            ];
            let expected: Vec<Positions> = everyone
                .iter()
                .map(|p| Positions {
                    cursors: p
                        .cursors
                        .iter()
                        .map(|&at| transform_index(at, &operation))
                        .collect(),
                    selections: p
                        .selections
                        .iter()
                        .map(|&(a, b)| {
                            (
                                transform_index(a, &operation),
                                transform_index(b, &operation),
                            )
                        })
                        .collect(),
                })
                .collect();
            carry_all(everyone.iter_mut(), &operation);
            assert_eq!(everyone.to_vec(), expected, "{operation:?}");
        }
    }

    #[test]
    fn carets_move_as_rustpad_moves_them() {
        let mut seen = positions(r#"{"cursors":[0,2,3,6],"selections":[[1,5]]}"#);
        // "abcdef": insert "XY" at 2, delete "de".
        let operation: Operation = serde_json::from_str(r#"[2,"XY",1,-2,1]"#).unwrap();
        carry_all(std::iter::once(&mut seen), &operation);
        // An insert at a caret pushes it right; a deletion pulls a caret to its start.
        assert_eq!(seen.cursors, [0, 4, 5, 6]);
        assert_eq!(seen.selections, [(1, 5)]);
        let mut seq = OperationSeq::default();
        seq.delete(3);
        seq.retain(3);
        seen.carry_over_seq(&seq);
        assert_eq!(seen.cursors, [0, 1, 2, 3]);
    }

    #[test]
    fn only_a_few_positions_are_kept_and_the_rest_are_read_past() {
        let many: Vec<String> = (0..1000).map(|n| n.to_string()).collect();
        let json = format!(
            r#"{{"cursors":[{}],"selections":[[9,1],[2,3]]}}"#,
            many.join(",")
        );
        let seen = positions(&json);
        assert_eq!(seen.cursors, (0..MAX_PER_KIND as u64).collect::<Vec<_>>());
        assert_eq!(seen.selections, [(9, 1), (2, 3)]);
        let inside = seen.within(5);
        assert_eq!(inside.cursors, [0, 1, 2, 3, 4, 5]);
        assert_eq!(inside.selections, [(2, 3)]);
        assert!(positions(r#"{"cursors":[],"selections":[]}"#).is_empty());
    }
}
