//! Marks: how this server's writes say so in a pad's history.
//!
//! A history entry carries only the number of the connection that sent it,
//! names are known only while a connection is open, and anyone may take any
//! name. So right before its edit, every write of this server's sends
//! entries that change nothing (an operation that keeps the whole text),
//! which Rustpad records under that connection's number like any edit. An
//! edit is read by the run of such entries its own connection sent since its
//! previous edit (or since it joined):
//!
//! - one: the edit is a *write* of this server's: what it inserts is this
//!   server's text;
//! - two: a write a person approved;
//! - three: a revert (`revert_changes`), which puts back text others wrote,
//!   so what it inserts is never credited as this server's own
//!   (`rustpad::authorship` counts it as marked text); four: a revert a
//!   person approved;
//! - five: a write of this server's that also says its connection is
//!   *held* (kept by the host between calls, `rustpad::kept`): from then
//!   on, an edit of that connection with no run before it is a write of
//!   this server's too, so a held connection's appends need no mark;
//! - none: not a write of this server's (a person, another program), but
//!   on a held connection, a write.
//!
//! A run with no edit after it yet is a write under way. Only a connection
//! whose first entry is a mark carries writes of ours: Rustpad stores an
//! edit that collided with another (two people deleting the same text) as
//! an entry that keeps everything, so on a connection that began by
//! changing the text, a person's, such entries say nothing. A connection
//! that makes one write (every connection of a host that joins per call)
//! reads the same as when a mark was a connection's first entries; one
//! that carries many writes (a socket held between calls) says so once with
//! a run of five, which a person's editor would make only if five edits in
//! a row collided, and then marks only what may remove text (its appends
//! remove nothing, so the order of removals has no need to wait for them).
//!
//! Anyone can send the same entries, but only on their own connection: a
//! mark speaks for the one edit that ends it on the connection that made it.
//! The removal rule (`guard::removal`) therefore uses a writer's mark only to
//! be stricter (its text does not count toward the pad's size, and its
//! entries do not move the window on), and an approved mark only to leave
//! that one edit's removals out of the count. A write that marked and made
//! no edit never hands its connection on (`security.md`), so a run never
//! adds up across two writes of ours.

use std::collections::HashMap;

use serde_json::Value;

use super::ot::Builder;

/// Connection numbers [`Marked`] keeps a byte for (grown only as far as the
/// numbers a pad's history holds: 128 KiB at most)...
const MAX_NUMBERED: usize = 1 << 17;
/// ... and other numbers it keeps; past it, a new one counts as unmarked.
const MAX_OTHERS: usize = 1_000;
/// Marking entries in a row that say a connection is held.
const HOLDING: u8 = 5;

/// What the marking entries before an edit said about its write.
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
    /// A write that says its connection is held: its later appends send
    /// no mark.
    Holding,
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
            Mark::Holding => HOLDING as usize,
        }
    }
}

/// A connection's standing as one the host keeps between calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Joined for this call.
    Joined,
    /// Taken from the host; its history does not say it is held yet.
    Kept,
    /// Taken from the host, and its history says it is held ([`Mark::Holding`]).
    Held,
}

/// One marking entry for a text of `length` code points: keep it all.
pub fn keep_all(length: usize) -> Value {
    Builder::new().retain(length).finish()
}

/// Whether a wire operation surely removes nothing: it holds only inserted
/// text and counts kept (Rustpad writes a deletion as a negative count).
pub fn removes_nothing(operation: &Value) -> bool {
    operation
        .as_array()
        .is_some_and(|parts| parts.iter().all(|part| part.is_string() || part.is_u64()))
}

/// Where one connection's writes stand as its entries arrive: the rule
/// [`Classifier`] and [`Marked`] both follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct WriteState {
    /// Its first entry was a mark: it carries writes of ours.
    began_marked: bool,
    /// It said it is held: an edit with no run before it is a write too.
    held: bool,
    /// Its last entry kept everything: a write under way (or one that gave up).
    under_way: bool,
    /// Its last entry was the edit of a write.
    finished: bool,
    /// Entries that kept everything since its last edit, up to [`HOLDING`].
    run: u8,
}

impl WriteState {
    /// Takes the connection's next entry, `first` when it is its first, and
    /// returns its class (for an edit, the class of the write it ends; for
    /// a mark, of the write under way so far).
    fn follow(&mut self, first: bool, keeps_everything: bool) -> Class {
        if first {
            self.began_marked = keeps_everything;
        }
        if !self.began_marked {
            return Class::Unmarked;
        }
        if keeps_everything {
            self.run = (self.run + 1).min(HOLDING);
            (self.under_way, self.finished) = (true, false);
            return class_of_run(self.run);
        }
        let class = match self.run {
            0 if self.held => Class::Writer,
            HOLDING => {
                self.held = true;
                Class::Writer
            }
            run => class_of_run(run),
        };
        (self.under_way, self.finished) = (false, class != Class::Unmarked);
        self.run = 0;
        class
    }

    /// The state in one byte, for [`Marked`]'s table; bit 7 says the
    /// connection has made an entry.
    fn pack(self) -> u8 {
        0x80 | u8::from(self.began_marked)
            | u8::from(self.held) << 1
            | u8::from(self.under_way) << 2
            | u8::from(self.finished) << 3
            | self.run << 4
    }

    fn unpack(byte: u8) -> WriteState {
        WriteState {
            began_marked: byte & 1 != 0,
            held: byte & 2 != 0,
            under_way: byte & 4 != 0,
            finished: byte & 8 != 0,
            run: (byte >> 4) & 7,
        }
    }
}

/// The class a run of `keeps` marking entries gives the edit that ends it.
fn class_of_run(keeps: u8) -> Class {
    match keeps {
        0 => Class::Unmarked,
        1 | HOLDING => Class::Writer,
        2 => Class::Approved,
        3 => Class::Restorer,
        _ => Class::ApprovedRestorer,
    }
}

/// A connection's writes as its entries arrive: each edit of a connection
/// that began with a mark is classed by the run of marking entries just
/// before it; every entry of one that did not is unmarked.
#[derive(Clone, Copy, Debug)]
pub struct Classifier {
    /// Where the connection's writes stand; None before its first entry.
    state: Option<WriteState>,
    /// The class of the connection's latest write: the run so far while it
    /// is under way, else the class of its last edit.
    class: Class,
}

impl Classifier {
    pub fn new() -> Classifier {
        Classifier {
            state: None,
            class: Class::Unmarked,
        }
    }

    /// Takes the connection's next entry; returns its class (for an edit,
    /// the class of the write it ends).
    pub fn follow(&mut self, keeps_everything: bool) -> Class {
        let first = self.state.is_none();
        self.class = self
            .state
            .get_or_insert_default()
            .follow(first, keeps_everything);
        self.class
    }

    /// The class of the connection's latest write.
    pub fn class(&self) -> Class {
        self.class
    }

    /// Whether a write of this server's is under way on the connection: it
    /// marked and has not made its edit.
    pub fn under_way(&self) -> bool {
        self.state.is_some_and(|state| state.under_way)
    }

    /// Whether the connection's last entry is the edit of a write of this
    /// server's: done (see [`Marked::finished`]).
    pub fn finished(&self) -> bool {
        self.state.is_some_and(|state| state.finished)
    }
}

impl Default for Classifier {
    fn default() -> Classifier {
        Classifier::new()
    }
}

/// The connections whose latest write is marked, as a read tells this
/// server's writers among the people in a pad without the rest of who wrote
/// what (`authorship`, which also tells an approved mark). Cheap enough to
/// follow every entry of a long history: Rustpad numbers a pad's connections
/// from 0, so each is a byte in a table indexed by its number (a few
/// numbers past it, such as Rustpad's own for text loaded from its
/// database, in a map).
#[derive(Clone, Debug, Default)]
pub struct Marked {
    /// Per connection number, its [`WriteState`] packed; 0 if it has made
    /// no entry.
    states: Vec<u8>,
    /// Numbers past the table's bound, with their states.
    others: HashMap<u64, WriteState>,
}

impl Marked {
    /// Takes connection `author`'s next entry.
    #[inline(always)]
    pub fn follow(&mut self, author: u64, keeps_everything: bool) {
        let number = match usize::try_from(author) {
            Ok(number) if number < MAX_NUMBERED => number,
            _ => return self.follow_other(author, keeps_everything),
        };
        if number >= self.states.len() {
            self.states.resize(number + 1, 0);
        }
        let packed = self.states[number];
        let mut state = WriteState::unpack(packed);
        state.follow(packed == 0, keeps_everything);
        self.states[number] = state.pack();
    }

    /// [`Marked::follow`] for a number past the table's bound. Past
    /// [`MAX_OTHERS`] of them a new connection is not followed, so it reads
    /// as unmarked.
    #[cold]
    fn follow_other(&mut self, author: u64, keeps_everything: bool) {
        if self.others.len() >= MAX_OTHERS && !self.others.contains_key(&author) {
            return;
        }
        let first = !self.others.contains_key(&author);
        self.others
            .entry(author)
            .or_default()
            .follow(first, keeps_everything);
    }

    /// Where connection `author`'s writes stand, if it made an entry.
    fn state(&self, author: u64) -> Option<WriteState> {
        match usize::try_from(author) {
            Ok(number) if number < MAX_NUMBERED => self
                .states
                .get(number)
                .filter(|packed| **packed != 0)
                .map(|packed| WriteState::unpack(*packed)),
            _ => self.others.get(&author).copied(),
        }
    }

    /// Whether connection `author`'s last entry is the edit of a write of
    /// this server's: a write connection leaves right after it, so a report
    /// of who is in the pad can leave it out before Rustpad says it left (a
    /// person who copies the mark and types on is shown again from their
    /// next keystroke).
    pub fn finished(&self, author: u64) -> bool {
        self.state(author).is_some_and(|state| state.finished)
    }

    /// Whether connection `author`'s latest write is marked: under way, or
    /// its last entry the edit of a write.
    pub fn is_marked(&self, author: u64) -> bool {
        self.state(author)
            .is_some_and(|state| state.under_way || state.finished)
    }

    /// The connections that made an entry, in no order.
    pub fn connections(&self) -> impl Iterator<Item = u64> + '_ {
        let numbered = (self.states.iter().enumerate())
            .filter(|(_, packed)| **packed != 0)
            .map(|(number, _)| number as u64);
        numbered.chain(self.others.keys().copied())
    }
}

#[cfg(test)]
mod tests;
