//! Who wrote what, as far as a pad's history tells.
//!
//! Rustpad keeps every entry since the pad was created or loaded, each with
//! the number of the connection that sent it, and sends them all when a
//! connection opens. Folded in order, they tell for every character of the
//! text who inserted it, as one of three kinds ([`Credit`]), and what each
//! entry removed and of which kinds. That is the record the removal rule
//! reads (`guard::removal`).
//!
//! A mark (see [`marks`](super::marks)) says a connection is a writer of
//! rustpad-mcp's, but not whose: it carries no key, so every deployment's
//! writers (and anyone who copies the mark) look alike in the history. Text
//! counts as this process's *own* only when the host's record of the
//! connections this process wrote over (`grants::writers`) names the
//! connection, and the history agrees: the entry at the revision noted as
//! that write's last is the connection's. Hosts that keep nothing name none.
//!
//! The same fold follows the writes under way: a writer of this server's
//! marks its connection before its edit, so a connection whose mark is in
//! the history and whose edit is not yet is a write still being decided
//! ([`Authorship::unfinished_writers`], which `rustpad::order` waits for).
//!
//! Facts only: which removals count, and over which stretch, is the rule's.

use std::collections::{BTreeMap, HashMap, HashSet};

use operational_transform::{Operation as SeqPart, OperationSeq};
use ropey::Rope;

use super::marks::{Class, Classifier, changes_nothing};
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
    /// This process's writers, as the host noted them: each connection and
    /// the revision of its last entry.
    own_writers: HashMap<u64, u64>,
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
            own_writers: HashMap::new(),
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

    /// Takes the connections the host noted this process wrote over, each
    /// with the revision of its last entry once acknowledged, before their
    /// entries are followed. A write still under way, or never
    /// acknowledged, is not known to be this process's.
    pub fn know_own_writers(&mut self, noted: impl IntoIterator<Item = (u64, Option<u64>)>) {
        let room = MAX_OWN_WRITERS.saturating_sub(self.own_writers.len());
        self.own_writers.extend(
            noted
                .into_iter()
                .filter_map(|(connection, last)| Some((connection, last?)))
                .take(room),
        );
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
        let fill = match class {
            Class::Unmarked => UNMARKED,
            // What a revert puts back was anyone's, and which characters
            // whose is not kept: marked text is the reading that is safe
            // both ways (removing it counts as a person's text would, and
            // it never swells the people's share a later removal is
            // measured against), never this server's own.
            Class::Restorer | Class::ApprovedRestorer => MARKED,
            // The revision of this entry is the one the host noted as the
            // write's last: the connection is this process's (a number
            // alone is not enough: numbers start again when Rustpad does).
            _ if self.own_writers.get(&author) == Some(&self.entries) => OWN,
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

    /// The class a connection's entries gave it (unmarked when it made none).
    pub fn class(&self, author: u64) -> Class {
        self.authors
            .get(&author)
            .map_or(Class::Unmarked, Classifier::class)
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

    fn fold_onto(mut authorship: Authorship, entries: &[(u64, &str)]) -> Authorship {
        for (author, json) in entries {
            let operation: Operation = serde_json::from_str(json).unwrap();
            authorship.follow(*author, &operation);
        }
        authorship
    }

    fn fold(entries: &[(u64, &str)]) -> Authorship {
        fold_onto(Authorship::new(), entries)
    }

    fn credit(own: u64, marked: u64) -> Credit {
        Credit { own, marked }
    }

    /// A person's "person", then a writer's " and server" (its mark first).
    const A_PERSON_THEN_A_WRITER: [(u64, &str); 3] = [
        (u64::MAX, r#"["person"]"#),
        (1, "[6]"),
        (1, r#"[6," and server"]"#),
    ];

    #[test]
    fn what_a_revert_puts_back_is_credited_as_marked_text() {
        let written = fold(&A_PERSON_THEN_A_WRITER);
        let record = fold_onto(
            written,
            &[
                // A person's deletion of "person".
                (2, r#"[-6,11]"#),
                // A revert (three marks) puts "person" back.
                (3, "[11]"),
                (3, "[11]"),
                (3, "[11]"),
                (3, r#"["person",11]"#),
            ],
        );
        assert_eq!(record.class(3), Class::Restorer);
        // What came back counts as marked text, like the writer's: never
        // people's share, never this server's own.
        assert_eq!(record.in_text(), credit(0, 17));
        let mut all = OperationSeq::default();
        all.delete(17);
        assert_eq!(record.removed_by(&all), Some(credit(0, 17)));
        // The revert moved no window on: two people's entries, as before it.
        assert_eq!(record.unmarked_changes(), (2, 12));
    }

    #[test]
    fn a_writers_text_is_credited_until_anyone_removes_it() {
        let record = fold(&A_PERSON_THEN_A_WRITER);
        assert_eq!(record.in_text(), credit(0, 11));
        assert_eq!(record.class(1), Class::Writer);
        // Someone else removes " and" (a writer's) and "on" (a person's).
        let mut record = record;
        let mut removal = OperationSeq::default();
        removal.retain(4);
        removal.delete(6);
        removal.retain(7);
        assert_eq!(record.removed_by(&removal), Some(credit(0, 4)));
        assert_eq!(record.removed_by(&OperationSeq::default()), None);
        record.follow(2, &serde_json::from_str(r#"[4,-6,7]"#).unwrap());
        assert_eq!(record.in_text(), credit(0, 7));
        assert_eq!(
            record.removals().unwrap(),
            [Removed {
                author: 2,
                chars: 6,
                credit: credit(0, 4),
                unmarked_through: 2,
                unmarked_chars_through: 6 + 6,
            }]
        );
    }

    #[test]
    fn only_a_writer_the_host_noted_at_its_last_entry_is_this_processs_own() {
        let entries = [
            (u64::MAX, r#"["person"]"#),
            (1, "[6]"),
            (1, r#"[6," one"]"#),
            (2, "[10]"),
            (2, r#"[10," two"]"#),
            (3, "[14]"),
            (3, r#"[14," three"]"#),
            // Unmarked: a person, whatever the host noted.
            (4, r#"[20," four"]"#),
        ];
        // Writer 1 as noted; writer 2 noted at another revision (another
        // Rustpad instance numbered a connection 2 too); writer 3 still
        // under way when the host was asked; writer 4 no writer at all.
        let noted = [(1, Some(3)), (2, Some(9)), (3, None), (4, Some(8))];
        let mut record = Authorship::new();
        record.know_own_writers(noted);
        let record = fold_onto(record, &entries);
        assert_eq!(record.in_text(), credit(4, 10));
        let mut everything = OperationSeq::default();
        everything.delete(25);
        assert_eq!(record.removed_by(&everything), Some(credit(4, 10)));
        // Without the host's record, every writer's text is only marked.
        assert_eq!(fold(&entries).in_text(), credit(0, 14));
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
        assert_eq!(record.in_text(), Credit::default());
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
