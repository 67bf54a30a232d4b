//! The removal rule: a person is asked before an edit that would take away
//! most of a pad, counting what this process took away from the same pad
//! during the last minutes, so that several harmless-looking calls cannot
//! add up to one that would have asked.
//!
//! What an edit removes is measured in code points, per replaced piece, as
//! the old text's length minus what it shares with its replacement at the
//! start and at the end: fixing a typo removes a character or two, while
//! replacing a sentence with unrelated text removes the whole sentence.
//! (Net loss would not do: an equal-length overwrite removes nothing net.)
//!
//! The rule: an edit asks when the removals of this process in the window,
//! this edit's included, exceed [`MAX_REMOVED_CHARS`], or half of the pad's
//! characters that this process did not write itself within the window.
//! Leaving out its own recent text means that padding a pad with new text
//! first does not dilute the rule; it also means that revising a draft this
//! process has just written does not ask.
//!
//! Removals a person approved are not counted again: they were seen.
//! The counts live in the host (`tally`), shared by every call of the
//! process; they are per process, which docs/guide/approval.md spells out.

use operational_transform::{Operation, OperationSeq};

use crate::guard::seal;
use crate::tally;
use crate::text::shared_ends;

/// How long removals count toward the rule.
pub const WINDOW_SECONDS: u32 = 15 * 60;
/// Removals above this many characters always ask, whatever the pad's size.
pub const MAX_REMOVED_CHARS: u64 = 10_000;

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

/// What this process did to one pad within the window, as the host keeps it.
pub struct Ledger {
    removed: String,
    inserted: String,
}

impl Ledger {
    pub fn of(pad: &str) -> Ledger {
        Ledger {
            removed: seal::digest(&["removed", pad]),
            inserted: seal::digest(&["inserted", pad]),
        }
    }

    /// Adds `amount` under `key` and returns the window's total; None when
    /// the host could not keep it.
    fn add(key: &str, amount: usize) -> Option<u64> {
        tally::add(key, amount as u64, WINDOW_SECONDS)
    }

    /// Judges `change` on a pad of `pad_chars` characters, as it stands now.
    pub fn judge(&self, pad_chars: usize, change: Change) -> Removal {
        Removal {
            change,
            pad_chars: pad_chars as u64,
            recent_removed: Ledger::add(&self.removed, 0),
            recent_inserted: Ledger::add(&self.inserted, 0).unwrap_or(0),
        }
    }

    /// Runs `edit`, keeping count of what it did: unapproved removals before
    /// it is sent (so an edit whose outcome is unknown counts too), and
    /// insertions once `edit` reports them acknowledged.
    pub fn carry_out<T, E>(
        &self,
        change: Change,
        approved: bool,
        edit: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        if !approved && change.removed > 0 {
            Ledger::add(&self.removed, change.removed);
        }
        let outcome = edit()?;
        if change.inserted > 0 {
            Ledger::add(&self.inserted, change.inserted);
        }
        Ok(outcome)
    }
}

/// An edit's removals measured against the pad and the recent past.
#[derive(Debug, Clone, Copy)]
pub struct Removal {
    change: Change,
    pad_chars: u64,
    /// None: the host could not say (it keeps no more counts).
    recent_removed: Option<u64>,
    recent_inserted: u64,
}

impl Removal {
    /// The pad's characters this process did not write within the window,
    /// with what it removed from them put back: roughly the pad as others
    /// left it.
    fn baseline(&self) -> u64 {
        (self.pad_chars + self.recent_removed.unwrap_or(0)).saturating_sub(self.recent_inserted)
    }

    fn total(&self) -> Option<u64> {
        self.recent_removed
            .map(|recent| recent + self.change.removed as u64)
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
                let baseline = self.baseline();
                total > MAX_REMOVED_CHARS || (baseline > 0 && total * 2 > baseline)
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
                "This server could not look up what it removed from this pad recently, so it asks."
                    .into(),
            ),
            Some(total) if total > removed as u64 || self.recent_inserted > 0 => {
                facts.push(format!(
                    "With what this server removed from the pad without asking in the last {} minutes, {total} characters would be gone, of the {} it did not write itself.",
                    WINDOW_SECONDS / 60,
                    self.baseline()
                ));
            }
            Some(_) => {}
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removal(pad_chars: u64, removed: usize, recent: Option<u64>, inserted: u64) -> Removal {
        Removal {
            change: Change {
                removed,
                inserted: 0,
            },
            pad_chars,
            recent_removed: recent,
            recent_inserted: inserted,
        }
    }

    #[test]
    fn removals_do_not_count_what_stays() {
        assert_eq!(
            Change::between("ONE TWO THREE", ""),
            Change {
                removed: 13,
                inserted: 0
            }
        );
        // A typo fix removes one character.
        assert_eq!(Change::between("teh", "the").removed, 2);
        assert_eq!(Change::between("recieve", "receive").removed, 2);
        // An equal-length overwrite removes everything it overwrites.
        assert_eq!(Change::between("abcdef", "uvwxyz").removed, 6);
        assert_eq!(
            Change::between("a", "ab"),
            Change {
                removed: 0,
                inserted: 1
            }
        );
        assert_eq!(Change::between("ab", "b").times(3).removed, 3);
    }

    #[test]
    fn more_than_half_or_ten_thousand_asks() {
        assert!(removal(13, 13, Some(0), 0).needs_person());
        assert!(!removal(30, 15, Some(0), 0).needs_person());
        assert!(removal(30, 16, Some(0), 0).needs_person());
        assert!(!removal(100_000, 10_000, Some(0), 0).needs_person());
        assert!(removal(100_000, 10_001, Some(0), 0).needs_person());
        // Nothing removed never asks, even on an empty pad.
        assert!(!removal(0, 0, Some(0), 0).needs_person());
    }

    #[test]
    fn recent_removals_count_with_the_call_at_hand() {
        // 40 of 100 removed, then 24 of the 60 left: 64 of 100.
        assert!(!removal(100, 40, Some(0), 0).needs_person());
        assert!(removal(60, 24, Some(40), 0).needs_person());
        // Unknown history asks.
        assert!(removal(1000, 1, None, 0).needs_person());
        assert!(removal(10_000, 9_000, Some(1_001), 0).needs_person());
    }

    #[test]
    fn text_this_process_wrote_does_not_dilute_the_rule() {
        // 100 characters of a person's, 9,900 appended by this process: taking
        // the person's 100 is all of theirs.
        assert!(removal(10_000, 100, Some(0), 9_900).needs_person());
        assert!(!removal(10_000, 50, Some(0), 9_900).needs_person());
        // A pad holding only what this process just wrote: revising it does not ask.
        assert!(!removal(500, 300, Some(0), 500).needs_person());
        assert!(removal(50_000, 10_001, Some(0), 50_000).needs_person());
    }

    #[test]
    fn the_dialog_gives_counts_only() {
        assert_eq!(
            removal(13, 13, Some(0), 0).facts(),
            ["This removes 13 of the pad's 13 characters."]
        );
        let facts = removal(60, 24, Some(40), 0).facts();
        assert!(
            facts[1].contains("64 characters would be gone, of the 100"),
            "{facts:?}"
        );
    }
}
