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
//!   person approved.
//!
//! Anyone can send the same entries, but only on their own connection: a
//! mark speaks for the entries of the connection that made it and no other.
//! The removal rule (`guard::removal`) therefore uses a writer's mark only to
//! be stricter (its text does not count toward the pad's size, and its
//! entries do not move the window on), and an approved mark only to leave
//! that one connection's removals out of the count.

use std::collections::HashMap;

use serde_json::Value;

use super::ot::{Builder, Operation, Part};

/// Connections [`Classes`] follows; past it, a new one counts as unmarked.
const MAX_CLASSIFIED: usize = 100_000;

/// What a connection's first entries said about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No mark: a person, another program, or this server before marks.
    Unmarked,
    /// One of this server's write connections.
    Writer,
    /// One of this server's write connections, carrying an approved edit.
    Approved,
}

/// Which mark a write sends before its edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Writer,
    Approved,
}

impl Mark {
    pub fn of(approved: bool) -> Mark {
        if approved {
            Mark::Approved
        } else {
            Mark::Writer
        }
    }

    /// How many entries that keep everything the mark takes.
    pub fn entries(self) -> usize {
        match self {
            Mark::Writer => 1,
            Mark::Approved => 2,
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

/// A connection's class as its entries arrive: decided by its first two.
#[derive(Clone, Copy, Debug)]
pub struct Classifier {
    class: Class,
    seen: u8,
}

impl Classifier {
    pub fn new() -> Classifier {
        Classifier {
            class: Class::Unmarked,
            seen: 0,
        }
    }

    /// Takes the connection's next entry; returns its class from now on.
    pub fn follow(&mut self, keeps_everything: bool) -> Class {
        match (self.seen, self.class) {
            (0, _) if keeps_everything => self.class = Class::Writer,
            (1, Class::Writer) if keeps_everything => self.class = Class::Approved,
            _ => {}
        }
        self.seen = self.seen.saturating_add(1);
        self.class
    }

    pub fn class(&self) -> Class {
        self.class
    }
}

impl Default for Classifier {
    fn default() -> Classifier {
        Classifier::new()
    }
}

/// Every connection's class, as a history's entries arrive: what a read
/// needs to tell this server's writers among the people in a pad, without
/// the rest of who wrote what (`authorship`).
#[derive(Debug, Default)]
pub struct Classes {
    classes: HashMap<u64, Classifier>,
}

impl Classes {
    /// Takes connection `author`'s next entry.
    pub fn follow(&mut self, author: u64, keeps_everything: bool) {
        let full = self.classes.len() >= MAX_CLASSIFIED;
        match self.classes.get_mut(&author) {
            Some(classifier) => {
                classifier.follow(keeps_everything);
            }
            // Unfollowed, its entries later in the history would be taken
            // for its first: it stays unmarked instead.
            None if full => {}
            None => {
                let mut classifier = Classifier::new();
                classifier.follow(keeps_everything);
                self.classes.insert(author, classifier);
            }
        }
    }

    /// The class connection `author`'s entries gave it (unmarked when it
    /// made none, or more connections than are followed came first).
    pub fn class(&self, author: u64) -> Class {
        self.classes
            .get(&author)
            .map_or(Class::Unmarked, Classifier::class)
    }

    /// The connections followed, in no order.
    pub fn connections(&self) -> impl Iterator<Item = u64> + '_ {
        self.classes.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(entries: &[bool]) -> Vec<Class> {
        let mut classifier = Classifier::new();
        entries.iter().map(|e| classifier.follow(*e)).collect()
    }

    #[test]
    fn the_first_two_entries_decide() {
        use Class::*;
        assert_eq!(classes(&[false, true, true]), [Unmarked; 3]);
        assert_eq!(classes(&[true, false, true]), [Writer; 3]);
        assert_eq!(classes(&[true, true, false]), [Writer, Approved, Approved]);
        // A mark later in a connection's life is no mark.
        assert_eq!(classes(&[false, true]), [Unmarked, Unmarked]);
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
