//! Who wrote what, as far as a pad's history tells.
//!
//! Rustpad keeps every entry since the pad was created or loaded, each with
//! the number of the connection that sent it, and sends them all when a
//! connection opens. Folded in order, they tell for every character of the
//! text who inserted it, as one of three kinds ([`Credit`]), and what each
//! entry removed and of which kinds. That is the record the removal rule
//! reads (`guard::removal`).
//!
//! A mark (see [`marks`](super::marks)) says an edit is a write of
//! rustpad-mcp's, but not whose: it carries no key, so every deployment's
//! writers (and anyone who copies the mark) look alike in the history. Text
//! counts as this process's *own* only when the host's record of the writes
//! this process made (`grants::writers`) names the connection and the
//! revision of the write's last entry, and the history agrees: the entry at
//! that revision is the connection's. Hosts that keep nothing name none.
//!
//! The same fold follows the writes under way: a write of this server's
//! marks its connection right before its edit, so a connection whose last
//! entries are a mark is a write still being decided
//! ([`Authorship::unfinished_writers`], which `rustpad::order` waits for).
//!
//! Facts only: which removals count, and over which stretch, is the rule's.

use std::collections::{BTreeMap, HashMap, HashSet};

use operational_transform::{Operation as SeqPart, OperationSeq};
use ropey::Rope;

use super::marks::{Class, Classifier};
use super::ot::{Operation, Part};

/// Removals remembered; past it the record says it cannot be read, and the
/// rule asks (a history that long is no ordinary pad's).
const MAX_REMOVALS: usize = 1_000_000;
/// Writers of this process's the record takes from the host, at most (the
/// host keeps fewer per pad).
const MAX_OWN_WRITERS: usize = 1_024;
/// One byte per character of the text, for who inserted it.
const OWN: u8 = b'o';
const MARKED: u8 = b'm';
const UNMARKED: u8 = b'.';

/// Characters of a stretch of text, by who inserted them; the rest (the
/// unmarked: people, mostly) is the stretch's length minus both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Credit {
    /// By a write of this process's own (see the module's text).
    pub own: u64,
    /// By any other marked writer: another deployment of rustpad-mcp, this
    /// one where it keeps no record of its writes, or someone copying a mark.
    pub marked: u64,
}

impl std::ops::Add for Credit {
    type Output = Credit;

    fn add(self, other: Credit) -> Credit {
        Credit {
            own: self.own + other.own,
            marked: self.marked + other.marked,
        }
    }
}

impl std::ops::Sub for Credit {
    type Output = Credit;

    fn sub(self, other: Credit) -> Credit {
        Credit {
            own: self.own - other.own,
            marked: self.marked - other.marked,
        }
    }
}

/// One entry that removed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Removed {
    pub author: u64,
    /// The class of the write that removed them (unmarked: not one of ours).
    pub class: Class,
    /// Characters it removed.
    pub chars: u64,
    /// Of them, what marked writers had inserted.
    pub credit: Credit,
    /// Entries by unmarked connections that changed the text, up to and
    /// including this one.
    pub unmarked_through: u64,
    /// Characters those entries inserted or removed, up to and including
    /// this one.
    pub unmarked_chars_through: u64,
}

/// The pad's history, folded into who wrote what.
pub struct Authorship {
    /// Parallel to the text: [`OWN`], [`MARKED`] or [`UNMARKED`], for who
    /// inserted each character.
    credit: Rope,
    authors: HashMap<u64, Classifier>,
    /// The class of each entry's write, by revision (entry n at n - 1).
    classes: Vec<Class>,
    /// This process's writes, as the host noted them: each connection and
    /// the revision of the write's last entry.
    own_writes: HashSet<(u64, u64)>,
    /// Those of them whose edit the history holds as the host noted it.
    own_connections: HashSet<u64>,
    removals: Vec<Removed>,
    /// Entries followed: the revision the history has reached.
    entries: u64,
    unmarked_entries: u64,
    unmarked_chars: u64,
    /// Writers whose mark is in the history and who have not changed the
    /// text yet, with the revision of their mark.
    unfinished: BTreeMap<u64, u64>,
    /// Characters of the text now that marked writers inserted.
    in_text: Credit,
    /// More removals than [`MAX_REMOVALS`]: the record is incomplete.
    overflowed: bool,
}

impl Authorship {
    pub fn new() -> Authorship {
        Authorship {
            credit: Rope::new(),
            authors: HashMap::new(),
            classes: Vec::new(),
            own_writes: HashSet::new(),
            own_connections: HashSet::new(),
            removals: Vec::new(),
            entries: 0,
            unmarked_entries: 0,
            unmarked_chars: 0,
            unfinished: BTreeMap::new(),
            in_text: Credit::default(),
            overflowed: false,
        }
    }

    /// Takes the writes the host noted this process made, each a connection
    /// with the revision of the write's last entry once acknowledged, before
    /// their entries are followed. A write still under way, or never
    /// acknowledged, is not known to be this process's.
    pub fn know_own_writers(&mut self, noted: impl IntoIterator<Item = (u64, Option<u64>)>) {
        let room = MAX_OWN_WRITERS.saturating_sub(self.own_writes.len());
        self.own_writes.extend(
            noted
                .into_iter()
                .filter_map(|(connection, last)| Some((connection, last?)))
                .take(room),
        );
    }

    /// Follows one entry, which the text has just taken (so it fits).
    pub fn follow(&mut self, author: u64, operation: &Operation) {
        self.entries += 1;
        let keeps_everything = operation.changes_nothing();
        let classifier = self.authors.entry(author).or_default();
        let under_way = classifier.under_way();
        let class = classifier.follow(keeps_everything);
        self.classes.push(class);
        if keeps_everything {
            if !under_way && class != Class::Unmarked {
                // A mark begins a write: under way until its edit.
                self.unfinished.insert(author, self.entries);
            }
            // Nothing in the text changes, and nothing moves the window.
            return;
        }
        self.unfinished.remove(&author);
        let fill = match class {
            Class::Unmarked => UNMARKED,
            // What a revert puts back was anyone's, and which characters
            // whose is not kept: marked text is the reading that is safe
            // both ways (removing it counts as a person's text would, and
            // it never swells the people's share a later removal is
            // measured against), never this server's own.
            Class::Restorer | Class::ApprovedRestorer => MARKED,
            // The revision of this entry is the one the host noted as the
            // write's last: the write is this process's (a number alone is
            // not enough: numbers start again when Rustpad does).
            _ if self.own_writes.contains(&(author, self.entries)) => OWN,
            _ => MARKED,
        };
        let (mut at, mut chars, mut inserted) = (0usize, 0u64, 0u64);
        let mut removed = Credit::default();
        for part in &operation.0 {
            match part {
                Part::Retain(n) => at += *n as usize,
                Part::Delete(n) => {
                    let end = at + *n as usize;
                    removed = removed + self.credit_between(at, end);
                    self.credit.remove(at..end);
                    chars += n;
                }
                Part::Insert(text) => {
                    let length = text.chars().count();
                    let run = String::from_utf8(vec![fill; length]).expect("ASCII");
                    self.credit.insert(at, &run);
                    inserted += length as u64;
                    at += length;
                }
            }
        }
        match fill {
            UNMARKED => {
                self.unmarked_entries += 1;
                self.unmarked_chars += chars + inserted;
            }
            OWN => {
                self.own_connections.insert(author);
                self.in_text.own += inserted;
            }
            _ => self.in_text.marked += inserted,
        }
        self.in_text = self.in_text - removed;
        if chars == 0 {
            return;
        }
        if self.removals.len() >= MAX_REMOVALS {
            self.overflowed = true;
            return;
        }
        self.removals.push(Removed {
            author,
            class,
            chars,
            credit: removed,
            unmarked_through: self.unmarked_entries,
            unmarked_chars_through: self.unmarked_chars,
        });
    }

    /// Who inserted the text's `start..end`.
    fn credit_between(&self, start: usize, end: usize) -> Credit {
        let mut credit = Credit::default();
        for byte in self.credit.slice(start..end).bytes() {
            match byte {
                OWN => credit.own += 1,
                MARKED => credit.marked += 1,
                _ => {}
            }
        }
        credit
    }

    /// Who inserted what `operation` (against the text as it stands)
    /// removes; None when it does not fit the text.
    pub fn removed_by(&self, operation: &OperationSeq) -> Option<Credit> {
        if operation.base_len() != self.credit.len_chars() {
            return None;
        }
        let mut at = 0usize;
        let mut removed = Credit::default();
        for part in operation.ops() {
            match part {
                SeqPart::Retain(n) => at += *n as usize,
                SeqPart::Delete(n) => {
                    removed = removed + self.credit_between(at, at + *n as usize);
                    at += *n as usize;
                }
                SeqPart::Insert(_) => {}
            }
        }
        Some(removed)
    }

    /// Whether the connection is one of this process's writers, checked
    /// against the history (never so in hosts that keep nothing).
    pub fn is_own(&self, author: u64) -> bool {
        self.own_connections.contains(&author)
    }

    /// The class of a connection's latest write (unmarked when it made
    /// none, or its latest edit was not announced by a mark).
    pub fn class(&self, author: u64) -> Class {
        self.authors
            .get(&author)
            .map_or(Class::Unmarked, Classifier::class)
    }

    /// The class of the write the entry at `revision` belongs to (unmarked
    /// for a revision the record has not followed).
    pub fn class_at(&self, revision: u64) -> Class {
        let index = revision
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok());
        index
            .and_then(|i| self.classes.get(i))
            .copied()
            .unwrap_or(Class::Unmarked)
    }

    /// Whether the connection is a finished write of this server's (see
    /// [`super::marks::Marked::finished`]).
    pub fn finished(&self, author: u64) -> bool {
        self.authors.get(&author).is_some_and(Classifier::finished)
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

    /// Characters of the text now that marked writers inserted.
    pub fn in_text(&self) -> Credit {
        self.in_text
    }

    /// The revision of the mark that began connection `author`'s write
    /// under way; None when it has none.
    pub fn under_way_since(&self, author: u64) -> Option<u64> {
        self.unfinished.get(&author).copied()
    }

    /// The connections with a write of this server's under way (the history
    /// holds its mark and not yet its edit), with the revision of the mark
    /// that began it, in connection order.
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
mod tests;
