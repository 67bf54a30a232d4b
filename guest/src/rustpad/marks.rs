//! Marks: how this server's writes say so in a pad's history.
//!
//! A history entry carries only the number of the connection that sent it,
//! names are known only while a connection is open, and anyone may take any
//! name. So before its edit, every write connection of this server sends
//! entries that change nothing (an operation that keeps the whole text),
//! which Rustpad records under that connection's number like any edit:
//!
//! - a connection whose first entry keeps everything is a *writer* of this
//!   server's: what it inserts is this server's text;
//! - a connection whose first two entries keep everything carries an edit a
//!   person approved;
//! - three such entries: a revert (`revert_changes`), which puts back text
//!   others wrote, so what it inserts is never credited as this server's
//!   own (`rustpad::authorship` counts it as marked text); four: a revert a
//!   person approved.
//!
//! Anyone can send the same entries, but only on their own connection: a
//! mark speaks for the entries of the connection that made it and no other.
//! The removal rule (`guard::removal`) therefore uses a writer's mark only to
//! be stricter (its text does not count toward the pad's size, and its
//! entries do not move the window on), and an approved mark only to leave
//! that one connection's removals out of the count.

use std::collections::HashSet;

use serde_json::Value;

use super::ot::{Builder, Operation, Part};

/// Connection numbers [`Marked`] keeps as bits (grown only as far as the
/// numbers a pad's history holds: 32 KiB at most)...
const MAX_NUMBERED: usize = 1 << 17;
/// ... and other numbers it keeps; past it, a new one counts as unmarked.
const MAX_OTHERS: usize = 1_000;

/// What a connection's first entries said about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No mark: a person, another program, or this server before marks.
    Unmarked,
    /// One of this server's write connections.
    Writer,
    /// One of this server's write connections, carrying an approved edit.
    Approved,
    /// One of this server's reverts: what it inserts is put back, not written.
    Restorer,
    /// A revert a person approved.
    ApprovedRestorer,
}

impl Class {
    /// Whether the connection's edit was approved by a person.
    pub fn approved(self) -> bool {
        matches!(self, Class::Approved | Class::ApprovedRestorer)
    }

    /// Whether the connection puts back what others wrote.
    pub fn restores(self) -> bool {
        matches!(self, Class::Restorer | Class::ApprovedRestorer)
    }
}

/// Which mark a write sends before its edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Writer,
    Approved,
    Restorer,
    ApprovedRestorer,
}

impl Mark {
    pub fn of(approved: bool) -> Mark {
        if approved {
            Mark::Approved
        } else {
            Mark::Writer
        }
    }

    /// A revert's mark.
    pub fn restoring(approved: bool) -> Mark {
        if approved {
            Mark::ApprovedRestorer
        } else {
            Mark::Restorer
        }
    }

    /// How many entries that keep everything the mark takes.
    pub fn entries(self) -> usize {
        match self {
            Mark::Writer => 1,
            Mark::Approved => 2,
            Mark::Restorer => 3,
            Mark::ApprovedRestorer => 4,
        }
    }
}

/// One marking entry for a text of `length` code points: keep it all.
pub fn keep_all(length: usize) -> Value {
    Builder::new().retain(length).finish()
}

/// Whether an entry changes nothing (keeps the whole text, or is empty).
pub fn changes_nothing(operation: &Operation) -> bool {
    operation
        .0
        .iter()
        .all(|part| matches!(part, Part::Retain(_)))
}

/// A connection's class as its entries arrive: decided by its first four.
#[derive(Clone, Copy, Debug)]
pub struct Classifier {
    class: Class,
    seen: u8,
    /// Entries that changed the text, counted up to two.
    changed: u8,
}

impl Classifier {
    pub fn new() -> Classifier {
        Classifier {
            class: Class::Unmarked,
            seen: 0,
            changed: 0,
        }
    }

    /// Takes the connection's next entry; returns its class from now on.
    pub fn follow(&mut self, keeps_everything: bool) -> Class {
        match (self.seen, self.class) {
            (0, _) if keeps_everything => self.class = Class::Writer,
            (1, Class::Writer) if keeps_everything => self.class = Class::Approved,
            (2, Class::Approved) if keeps_everything => self.class = Class::Restorer,
            (3, Class::Restorer) if keeps_everything => self.class = Class::ApprovedRestorer,
            _ => {}
        }
        self.seen = self.seen.saturating_add(1);
        if !keeps_everything {
            self.changed = (self.changed + 1).min(2);
        }
        self.class
    }

    pub fn class(&self) -> Class {
        self.class
    }

    /// Whether the connection is a finished write of this server's: marked,
    /// and its one edit made (see [`Marked::finished`]).
    pub fn finished(&self) -> bool {
        self.class != Class::Unmarked && self.changed == 1
    }
}

impl Default for Classifier {
    fn default() -> Classifier {
        Classifier::new()
    }
}

/// The connections whose first entry in a pad's history is a mark: the
/// writers of rustpad-mcp's (of any deployment, or someone copying the
/// mark), as a read tells them among the people in a pad without the rest
/// of who wrote what (`authorship`, which also tells an approved mark).
/// Cheap enough to follow every entry of a long history: Rustpad numbers a
/// pad's connections from 0, so each is two bits in a vector indexed by its
/// number (a few numbers past it, such as Rustpad's own for text loaded
/// from its database, in sets).
#[derive(Debug, Default)]
pub struct Marked {
    /// Bit per connection number: it has made an entry.
    seen: Vec<u64>,
    /// Bit per connection number: its first entry kept everything.
    marked: Vec<u64>,
    /// Bit per marked connection: it has made an entry that changed the text...
    edited: Vec<u64>,
    /// ... and more than one.
    edited_again: Vec<u64>,
    others_seen: HashSet<u64>,
    others_marked: HashSet<u64>,
    /// Marked numbers past the vectors' bound, with the entries of theirs
    /// that changed the text, counted up to two.
    others_edits: std::collections::HashMap<u64, u8>,
}

impl Marked {
    /// Takes connection `author`'s next entry. Only a connection's first
    /// entry decides its mark, so entries taken again in the same order (a
    /// fold begun afresh after another gave up half way) never change it;
    /// later ones count only toward [`Marked::finished`].
    #[inline(always)]
    pub fn follow(&mut self, author: u64, keeps_everything: bool) {
        let number = match usize::try_from(author) {
            Ok(number) if number < MAX_NUMBERED => number,
            _ => return self.follow_other(author, keeps_everything),
        };
        let (word, bit) = (number >> 6, 1u64 << (number & 63));
        if word >= self.seen.len() {
            self.seen.resize(word + 1, 0);
            self.marked.resize(word + 1, 0);
            self.edited.resize(word + 1, 0);
            self.edited_again.resize(word + 1, 0);
        }
        let seen = &mut self.seen[word];
        if *seen & bit == 0 {
            *seen |= bit;
            if keeps_everything {
                self.marked[word] |= bit;
            }
        } else if !keeps_everything && self.marked[word] & bit != 0 {
            // A marked connection's edit. Entries taken again (a fold begun
            // afresh) count again, which can only hide a finish, never make one.
            if self.edited[word] & bit != 0 {
                self.edited_again[word] |= bit;
            }
            self.edited[word] |= bit;
        }
    }

    /// [`Marked::follow`] for a number past the vector's bound. Past
    /// [`MAX_OTHERS`] of them a new connection is not followed: its later
    /// entries would be taken for its first, so it stays unmarked.
    #[cold]
    fn follow_other(&mut self, author: u64, keeps_everything: bool) {
        if self.others_seen.len() >= MAX_OTHERS && !self.others_seen.contains(&author) {
            return;
        }
        if self.others_seen.insert(author) {
            if keeps_everything {
                self.others_marked.insert(author);
            }
        } else if !keeps_everything && self.others_marked.contains(&author) {
            let edits = self.others_edits.entry(author).or_default();
            *edits = (*edits + 1).min(2);
        }
    }

    /// Whether connection `author` is a finished write of this server's:
    /// marked, and exactly one edit made. Each write connection makes one
    /// edit and then leaves, so a report of who is in the pad can leave it
    /// out before Rustpad says it left (a person who copies the mark and
    /// types on is shown again from their second edit).
    pub fn finished(&self, author: u64) -> bool {
        match usize::try_from(author) {
            Ok(number) if number < MAX_NUMBERED => {
                has_bit(&self.edited, number) && !has_bit(&self.edited_again, number)
            }
            _ => self.others_edits.get(&author) == Some(&1),
        }
    }

    /// Whether connection `author`'s first entry was a mark.
    pub fn is_marked(&self, author: u64) -> bool {
        match usize::try_from(author) {
            Ok(number) if number < MAX_NUMBERED => has_bit(&self.marked, number),
            _ => self.others_marked.contains(&author),
        }
    }

    /// The connections that made an entry, in no order.
    pub fn connections(&self) -> impl Iterator<Item = u64> + '_ {
        let numbered = (0..self.seen.len() * 64)
            .filter(|number| has_bit(&self.seen, *number))
            .map(|number| number as u64);
        numbered.chain(self.others_seen.iter().copied())
    }
}

/// Whether connection `number`'s bit is set in `bits`.
fn has_bit(bits: &[u64], number: usize) -> bool {
    bits.get(number / 64)
        .is_some_and(|word| word & (1 << (number % 64)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(entries: &[bool]) -> Vec<Class> {
        let mut classifier = Classifier::new();
        entries.iter().map(|e| classifier.follow(*e)).collect()
    }

    #[test]
    fn the_first_entries_decide() {
        use Class::*;
        assert_eq!(classes(&[false, true, true]), [Unmarked; 3]);
        assert_eq!(classes(&[true, false, true]), [Writer; 3]);
        assert_eq!(classes(&[true, true, false]), [Writer, Approved, Approved]);
        assert_eq!(
            classes(&[true, true, true, false, true]),
            [Writer, Approved, Restorer, Restorer, Restorer]
        );
        assert_eq!(
            classes(&[true, true, true, true, true]),
            [
                Writer,
                Approved,
                Restorer,
                ApprovedRestorer,
                ApprovedRestorer
            ]
        );
        assert!(ApprovedRestorer.approved() && ApprovedRestorer.restores());
        assert!(!Restorer.approved() && !Approved.restores());
        // A mark later in a connection's life is no mark.
        assert_eq!(classes(&[false, true]), [Unmarked, Unmarked]);
    }

    #[test]
    fn a_connection_is_marked_by_its_first_entry_and_reading_again_changes_nothing() {
        let mut marked = Marked::default();
        let entries = [
            (3, true),
            (3, false),
            (5, false),
            (5, true),
            (u64::MAX, true),
            (70, true),
        ];
        for (author, keeps) in entries {
            marked.follow(author, keeps);
        }
        // Read again from the start (a fold that gave up half way): nothing changes.
        for (author, keeps) in entries {
            marked.follow(author, keeps);
        }
        assert!(marked.is_marked(3) && marked.is_marked(70) && marked.is_marked(u64::MAX));
        assert!(!marked.is_marked(5) && !marked.is_marked(4));
        let mut connections: Vec<u64> = marked.connections().collect();
        connections.sort_unstable();
        assert_eq!(connections, [3, 5, 70, u64::MAX]);
    }

    #[test]
    fn a_writer_is_finished_after_its_one_edit_and_a_second_edit_shows_a_person() {
        let mut marked = Marked::default();
        let mut classifier = Classifier::new();
        for number in [4, u64::MAX] {
            marked.follow(number, true);
            assert!(!marked.finished(number), "marked, no edit yet");
            marked.follow(number, false);
            assert!(marked.finished(number), "its edit made");
            marked.follow(number, false);
            assert!(!marked.finished(number), "typing on: not a write of ours");
        }
        marked.follow(6, false);
        marked.follow(6, false);
        assert!(!marked.finished(6), "unmarked");
        for (keeps, finished) in [(true, false), (true, false), (false, true), (false, false)] {
            classifier.follow(keeps);
            assert_eq!(classifier.finished(), finished);
        }
        let mut person = Classifier::new();
        person.follow(false);
        assert!(!person.finished());
    }

    #[test]
    fn only_keeping_everything_changes_nothing() {
        fn op(json: &str) -> Operation<'_> {
            serde_json::from_str(json).unwrap()
        }
        assert!(changes_nothing(&op("[]")));
        assert!(changes_nothing(&op("[12]")));
        assert!(!changes_nothing(&op(r#"[1,"a"]"#)));
        assert!(!changes_nothing(&op("[-1]")));
        assert_eq!(keep_all(7), serde_json::json!([7]));
        assert_eq!(keep_all(0), serde_json::json!([]));
    }
}
