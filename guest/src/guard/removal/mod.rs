//! The removal rule: a person is asked before an edit that would take away
//! most of a pad, counting what was taken from the same pad lately, so that
//! several harmless-looking calls cannot add up to one that would have asked.
//!
//! What an edit removes is measured in code points, per replaced piece, as
//! the old text's length minus what it shares with its replacement at the
//! start and at the end: fixing a typo removes a character or two, while
//! replacing a sentence with unrelated text removes the whole sentence.
//! (Net loss would not do: an equal-length overwrite removes nothing net.)
//!
//! The record is the pad's own history ([`Authorship`]), which every
//! process, replica and host sees alike. An edit asks when the removals
//! counted there, this edit's included, exceed [`MAX_REMOVED_CHARS`], or half
//! of the pad as others left it: its characters that no writer of this
//! server's inserted, with the counted removals of such characters put back.
//! What counts:
//!
//! - removals by every connection that may be this server's: one that has
//!   left the pad (its name is gone with it), one named `rustpad-mcp`, one
//!   that never said who it is; not those of people at work in the pad now
//!   under another name, and not those of a connection carrying the mark of
//!   an approved edit (a person saw them);
//! - within the window: the stretch of history holding the last
//!   [`WINDOW_EDITS`] entries of unmarked connections (people, mostly), and
//!   everything after it. This server's own writes are marked, so nothing a
//!   model does through it moves the window on; people typing do.
//!
//! Text a writer of this server's inserted is left out of the pad's size
//! (padding a pad with new text first does not dilute the rule) for as long
//! as it is in the pad: removed, approved or not, it leaves the count. Marks
//! can be copied, but only onto one's own connection's entries, and a mark
//! only ever makes the rule stricter there, except that an approved
//! connection's own removals are not counted again.
//!
//! Where the host keeps a tally (rustpad-mcp's own host: what this process
//! removed from the pad without asking in the last [`TALLY_WINDOW_SECONDS`]),
//! the larger of the two counts is the one judged. A count that cannot be
//! read (a history too long to follow, a full tally) asks, and a removal the
//! tally cannot record is not made without asking.

use operational_transform::{Operation, OperationSeq};

use crate::digest;
use crate::grants::tally;
use crate::rustpad::authorship::Authorship;
use crate::rustpad::marks::Class;
use crate::text::shared_ends;

/// Entries of unmarked connections that the window spans (see above).
pub const WINDOW_EDITS: u64 = 1_000;
/// How long the host's tally keeps a removal, where there is one.
pub const TALLY_WINDOW_SECONDS: u32 = 15 * 60;
/// Removals above this many characters always ask, whatever the pad's size.
pub const MAX_REMOVED_CHARS: u64 = 10_000;
/// Removals of more than one part in this many of the pad ask (a half).
pub const MAX_REMOVED_PARTS: u64 = 2;

/// The share [`MAX_REMOVED_PARTS`] names, as the docs say it.
pub fn share_in_words() -> &'static str {
    match MAX_REMOVED_PARTS {
        2 => "half",
        3 => "a third",
        4 => "a quarter",
        _ => "a part",
    }
}

/// What an edit takes out of a pad and puts in, in code points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub removed: usize,
    pub inserted: usize,
}

impl Change {
    /// Replacing `old` with `new`: what they share at both ends stays.
    pub fn between(old: &str, new: &str) -> Change {
        let (prefix, suffix) = shared_ends(old, new);
        let kept = prefix + suffix;
        Change {
            removed: old.chars().count() - kept,
            inserted: new.chars().count() - kept,
        }
    }

    /// What an operation takes out and puts in.
    pub fn of_operation(operation: &OperationSeq) -> Change {
        operation
            .ops()
            .iter()
            .fold(Change::default(), |change, part| match part {
                Operation::Delete(n) => Change {
                    removed: change.removed + *n as usize,
                    ..change
                },
                Operation::Insert(text) => Change {
                    inserted: change.inserted + text.chars().count(),
                    ..change
                },
                Operation::Retain(_) => change,
            })
    }

    /// The same change made `times` times.
    pub fn times(self, times: usize) -> Change {
        Change {
            removed: self.removed * times,
            inserted: self.inserted * times,
        }
    }
}

impl std::ops::Add for Change {
    type Output = Change;

    fn add(self, other: Change) -> Change {
        Change {
            removed: self.removed + other.removed,
            inserted: self.inserted + other.inserted,
        }
    }
}

/// The records a removal is judged by, for one pad.
pub struct Ledger<'a> {
    pad: &'a str,
    history: Option<&'a Authorship>,
    /// Whether a connection belongs to a person at work in the pad now.
    at_work: &'a dyn Fn(u64) -> bool,
}

impl<'a> Ledger<'a> {
    /// The ledger of pad `pad`, from its history as a session folded it
    /// (None: the session did not follow it, and every removal asks).
    pub fn of(
        pad: &'a str,
        history: Option<&'a Authorship>,
        at_work: &'a dyn Fn(u64) -> bool,
    ) -> Ledger<'a> {
        Ledger {
            pad,
            history,
            at_work,
        }
    }

    /// Judges `change` on a pad of `pad_chars` characters, as it stands now.
    pub fn judge(&self, pad_chars: usize, change: Change) -> Removal {
        let tally = tally::add(&tally_key(self.pad), 0, TALLY_WINDOW_SECONDS);
        self.measure(pad_chars, change, tally)
    }

    /// The same, with what the host's tally says.
    fn measure(&self, pad_chars: usize, change: Change, tally: Option<u64>) -> Removal {
        let history = self.history.and_then(|history| self.counted(history));
        let ours = self.history.map_or(0, Authorship::ours_in_text);
        Removal {
            change,
            pad_chars: pad_chars as u64,
            history,
            tally,
            baseline: (pad_chars as u64).saturating_sub(ours)
                + history.map_or(0, |counted| counted.theirs),
        }
    }

    /// The removals that count, from the history.
    fn counted(&self, history: &Authorship) -> Option<Counted> {
        let removals = history.removals()?;
        let unmarked = history.unmarked_entries();
        let mut counted = Counted::default();
        for removal in removals.iter().rev() {
            if unmarked - removal.unmarked_through >= WINDOW_EDITS {
                break;
            }
            if history.class(removal.author) == Class::Approved || (self.at_work)(removal.author) {
                continue;
            }
            counted.all += removal.chars;
            counted.theirs += removal.chars - removal.ours;
        }
        Some(counted)
    }
}

/// Takes an unasked removal from pad `pad` into the host's tally before it
/// is made (so that one whose outcome stays unknown counts too); whether it
/// may then go ahead without asking. It may not when the tally cannot keep
/// it, or when what other calls recorded meanwhile now makes it ask.
pub fn go_unasked(pad: &str, removal: &Removal) -> bool {
    removal.go_unasked_recorded(|amount| tally::add(&tally_key(pad), amount, TALLY_WINDOW_SECONDS))
}

/// The host's tally key for a pad's unasked removals (opaque to the host).
fn tally_key(pad: &str) -> String {
    digest::digest(&["removed", pad])
}

/// Removals the history counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counted {
    all: u64,
    /// Of characters no writer of this server's had inserted.
    theirs: u64,
}

/// An edit's removals measured against the pad and the recent past.
#[derive(Debug, Clone, Copy)]
pub struct Removal {
    change: Change,
    pad_chars: u64,
    /// None: the history could not be read.
    history: Option<Counted>,
    /// This process's unasked removals, where the host keeps them; None:
    /// the host could not say.
    tally: Option<u64>,
    /// The pad as others left it (see the module's text).
    baseline: u64,
}

impl Removal {
    /// Removals counted before this edit; None when a record cannot be read.
    fn recent(&self) -> Option<u64> {
        Some(self.history?.all.max(self.tally?))
    }

    fn total(&self) -> Option<u64> {
        self.recent()
            .map(|recent| recent + self.change.removed as u64)
    }

    /// [`go_unasked`], with `record` taking the amount into the tally and
    /// returning the total (None: it cannot).
    fn go_unasked_recorded(&self, record: impl FnOnce(u64) -> Option<u64>) -> bool {
        let removed = self.change.removed as u64;
        if removed == 0 {
            return true;
        }
        let Some(total) = record(removed) else {
            return false;
        };
        let before_this = Removal {
            tally: Some(total.saturating_sub(removed)),
            ..*self
        };
        !before_this.needs_person()
    }

    /// The characters this edit removes.
    pub fn removed(&self) -> usize {
        self.change.removed
    }

    /// Whether a person must approve this edit.
    pub fn needs_person(&self) -> bool {
        if self.change.removed == 0 {
            return false;
        }
        match self.total() {
            None => true,
            Some(total) => {
                total > MAX_REMOVED_CHARS
                    || (self.baseline > 0 && total * MAX_REMOVED_PARTS > self.baseline)
            }
        }
    }

    /// What the dialog says about the removal: counts, never content.
    pub fn facts(&self) -> Vec<String> {
        let removed = self.change.removed;
        let mut facts = vec![format!(
            "This removes {removed} of the pad's {} characters.",
            self.pad_chars
        )];
        match self.total() {
            None => facts.push(
                "This server could not read what was removed from this pad lately (the pad's history is longer than it follows, or this server's count is full), so it asks."
                    .into(),
            ),
            Some(total) if total > removed as u64 || self.baseline != self.pad_chars => {
                facts.push(format!(
                    "With what was removed from the pad lately without a person's approval (by this server, or by connections that have since left it), {total} characters would be gone, of the {} that this server did not write.",
                    self.baseline
                ));
            }
            Some(_) => {}
        }
        facts
    }
}

#[cfg(test)]
mod tests;
