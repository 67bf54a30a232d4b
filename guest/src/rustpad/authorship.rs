//! Who wrote what, as far as a pad's history tells.
//!
//! Rustpad keeps every entry since the pad was created or loaded, each with
//! the number of the connection that sent it, and sends them all when a
//! connection opens. Folded in order, they tell for every character of the
//! text whether one of this server's write connections inserted it (see
//! [`marks`](super::marks)), and what each entry removed and from whom.
//! That is the record the removal rule reads (`guard::removal`): it is the
//! same at every process, replica and host that opens the pad.
//!
//! The same fold follows the writes under way: a writer of this server's
//! marks its connection before its edit, so a connection whose mark is in
//! the history and whose edit is not yet is a write still being decided
//! ([`Authorship::unfinished_writers`], which `rustpad::order` waits for).
//!
//! Facts only: which removals count, and over which stretch, is the rule's.

use std::collections::{BTreeMap, HashMap};

use operational_transform::{Operation as SeqPart, OperationSeq};
use ropey::Rope;

use super::marks::{Class, Classifier, changes_nothing};
use super::ot::{Operation, Part};

/// Removals remembered; past it the record says it cannot be read, and the
/// rule asks (a history that long is no ordinary pad's).
const MAX_REMOVALS: usize = 1_000_000;
/// One byte per character of the text: this server's, or anyone else's.
const OURS: char = 'w';
const THEIRS: char = '.';

/// One entry that removed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Removed {
    pub author: u64,
    /// Characters it removed.
    pub chars: u64,
    /// How many of them a writer of this server's had inserted.
    pub ours: u64,
    /// Entries by unmarked connections that changed the text, up to and
    /// including this one.
    pub unmarked_through: u64,
    /// Characters those entries inserted or removed, up to and including
    /// this one.
    pub unmarked_chars_through: u64,
}

/// The pad's history, folded into who wrote what.
pub struct Authorship {
    /// Parallel to the text: [`OURS`] where a writer of this server's
    /// inserted the character, [`THEIRS`] elsewhere.
    credit: Rope,
    authors: HashMap<u64, Classifier>,
    removals: Vec<Removed>,
    /// Entries followed: the revision the history has reached.
    entries: u64,
    unmarked_entries: u64,
    unmarked_chars: u64,
    /// Writers whose mark is in the history and who have not changed the
    /// text yet, with the revision of their mark.
    unfinished: BTreeMap<u64, u64>,
    /// Characters of the text now marked [`OURS`].
    ours_in_text: u64,
    /// More removals than [`MAX_REMOVALS`]: the record is incomplete.
    overflowed: bool,
}

impl Authorship {
    pub fn new() -> Authorship {
        Authorship {
            credit: Rope::new(),
            authors: HashMap::new(),
            removals: Vec::new(),
            entries: 0,
            unmarked_entries: 0,
            unmarked_chars: 0,
            unfinished: BTreeMap::new(),
            ours_in_text: 0,
            overflowed: false,
        }
    }

    /// Follows one entry, which the text has just taken (so it fits).
    pub fn follow(&mut self, author: u64, operation: &Operation) {
        self.entries += 1;
        let keeps_everything = changes_nothing(operation);
        let first = !self.authors.contains_key(&author);
        let class = self
            .authors
            .entry(author)
            .or_default()
            .follow(keeps_everything);
        if keeps_everything {
            if first && class != Class::Unmarked {
                self.unfinished.insert(author, self.entries);
            }
            // Nothing in the text changes, and nothing moves the window.
            return;
        }
        self.unfinished.remove(&author);
        let fill = if class == Class::Unmarked {
            THEIRS
        } else {
            OURS
        };
        let (mut at, mut chars, mut ours, mut inserted) = (0usize, 0u64, 0u64, 0u64);
        for part in &operation.0 {
            match part {
                Part::Retain(n) => at += *n as usize,
                Part::Delete(n) => {
                    let end = at + *n as usize;
                    ours += self.ours_between(at, end);
                    self.credit.remove(at..end);
                    chars += n;
                }
                Part::Insert(text) => {
                    let length = text.chars().count();
                    let mut run = [0u8; 4];
                    self.credit
                        .insert(at, &fill.encode_utf8(&mut run).repeat(length));
                    inserted += length as u64;
                    at += length;
                }
            }
        }
        if class == Class::Unmarked {
            self.unmarked_entries += 1;
            self.unmarked_chars += chars + inserted;
        } else {
            self.ours_in_text += inserted;
        }
        self.ours_in_text -= ours;
        if chars == 0 {
            return;
        }
        if self.removals.len() >= MAX_REMOVALS {
            self.overflowed = true;
            return;
        }
        self.removals.push(Removed {
            author,
            chars,
            ours,
            unmarked_through: self.unmarked_entries,
            unmarked_chars_through: self.unmarked_chars,
        });
    }

    /// Characters a writer of this server's inserted, of the text's
    /// `start..end`.
    fn ours_between(&self, start: usize, end: usize) -> u64 {
        self.credit
            .slice(start..end)
            .bytes()
            .filter(|b| *b == OURS as u8)
            .count() as u64
    }

    /// Of what `operation` (against the text as it stands) removes, the
    /// characters a writer of this server's inserted; None when it does not
    /// fit the text.
    pub fn ours_removed_by(&self, operation: &OperationSeq) -> Option<u64> {
        if operation.base_len() != self.credit.len_chars() {
            return None;
        }
        let (mut at, mut ours) = (0usize, 0u64);
        for part in operation.ops() {
            match part {
                SeqPart::Retain(n) => at += *n as usize,
                SeqPart::Delete(n) => {
                    ours += self.ours_between(at, at + *n as usize);
                    at += *n as usize;
                }
                SeqPart::Insert(_) => {}
            }
        }
        Some(ours)
    }

    /// The class a connection's entries gave it (unmarked when it made none).
    pub fn class(&self, author: u64) -> Class {
        self.authors
            .get(&author)
            .map_or(Class::Unmarked, Classifier::class)
    }

    /// Every entry that removed text, in history order; None when there were
    /// too many to keep.
    pub fn removals(&self) -> Option<&[Removed]> {
        (!self.overflowed).then_some(&self.removals)
    }

    /// Entries by unmarked connections in the whole history that changed
    /// the text, and the characters they inserted or removed.
    pub fn unmarked_changes(&self) -> (u64, u64) {
        (self.unmarked_entries, self.unmarked_chars)
    }

    /// Characters of the text now that a writer of this server's inserted.
    pub fn ours_in_text(&self) -> u64 {
        self.ours_in_text
    }

    /// The writers of this server's whose mark the history holds and whose
    /// edit it does not (yet), with the revision of their mark, in
    /// connection order.
    pub fn unfinished_writers(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.unfinished
            .iter()
            .map(|(author, mark)| (*author, *mark))
    }
}

impl Default for Authorship {
    fn default() -> Authorship {
        Authorship::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(entries: &[(u64, &str)]) -> Authorship {
        let mut authorship = Authorship::new();
        for (author, json) in entries {
            let operation: Operation = serde_json::from_str(json).unwrap();
            authorship.follow(*author, &operation);
        }
        authorship
    }

    #[test]
    fn a_writers_text_is_credited_until_anyone_removes_it() {
        let record = fold(&[
            (u64::MAX, r#"["person"]"#),
            (1, "[6]"),
            (1, r#"[6," and server"]"#),
        ]);
        assert_eq!(record.ours_in_text(), 11);
        assert_eq!(record.class(1), Class::Writer);
        // Someone else removes " and" (ours) and "on" (theirs).
        let mut record = record;
        let mut removal = OperationSeq::default();
        removal.retain(4);
        removal.delete(6);
        removal.retain(7);
        assert_eq!(record.ours_removed_by(&removal), Some(4));
        assert_eq!(record.ours_removed_by(&OperationSeq::default()), None);
        record.follow(2, &serde_json::from_str(r#"[4,-6,7]"#).unwrap());
        assert_eq!(record.ours_in_text(), 7);
        assert_eq!(
            record.removals().unwrap(),
            [Removed {
                author: 2,
                chars: 6,
                ours: 4,
                unmarked_through: 2,
                unmarked_chars_through: 6 + 6,
            }]
        );
    }

    #[test]
    fn marked_entries_and_entries_that_change_nothing_do_not_move_the_unmarked_count() {
        let record = fold(&[
            (u64::MAX, r#"["abc"]"#),
            (1, "[3]"),
            (1, "[3]"),
            (1, "[-3]"),
            (2, r#"["x"]"#),
            (2, "[1]"),
            (2, "[]"),
        ]);
        assert_eq!(record.class(1), Class::Approved);
        assert_eq!(record.unmarked_changes(), (2, 4));
        assert_eq!(record.removals().unwrap()[0].unmarked_through, 1);
        assert_eq!(record.ours_in_text(), 0);
    }

    #[test]
    fn a_writer_is_unfinished_from_its_mark_until_it_changes_the_text() {
        let mut record = fold(&[(u64::MAX, r#"["abc"]"#), (4, "[3]"), (5, "[3]")]);
        assert_eq!(
            record.unfinished_writers().collect::<Vec<_>>(),
            [(4, 2), (5, 3)]
        );
        // A second mark (an approved write) is still unfinished.
        record.follow(4, &serde_json::from_str("[3]").unwrap());
        record.follow(5, &serde_json::from_str(r#"[3,"d"]"#).unwrap());
        assert_eq!(record.unfinished_writers().collect::<Vec<_>>(), [(4, 2)]);
        // Someone whose first entry changes the text is no writer.
        record.follow(6, &serde_json::from_str(r#"[4,"e"]"#).unwrap());
        record.follow(6, &serde_json::from_str("[5]").unwrap());
        assert_eq!(record.unfinished_writers().collect::<Vec<_>>(), [(4, 2)]);
    }
}
