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

use crate::guard::seal;
use crate::rustpad::authorship::Authorship;
use crate::rustpad::marks::Class;
use crate::tally;
use crate::text::shared_ends;

/// Entries of unmarked connections that the window spans (see above).
pub const WINDOW_EDITS: u64 = 1_000;
/// How long the host's tally keeps a removal, where there is one.
pub const TALLY_WINDOW_SECONDS: u32 = 15 * 60;
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
    seal::digest(&["removed", pad])
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
                total > MAX_REMOVED_CHARS || (self.baseline > 0 && total * 2 > self.baseline)
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
mod tests {
    use super::*;
    use crate::rustpad::ot::Operation;

    /// A pad's history, entry by entry, as a session folds it.
    struct History {
        authorship: Authorship,
        length: usize,
        /// People at work in the pad now.
        present: Vec<u64>,
    }

    impl History {
        fn new() -> History {
            History {
                authorship: Authorship::new(),
                length: 0,
                present: Vec::new(),
            }
        }

        fn entry(&mut self, author: u64, json: serde_json::Value) -> &mut History {
            let wire = json.to_string();
            let operation: Operation = serde_json::from_str(&wire).unwrap();
            self.length = operation.to_seq().target_len() as usize;
            self.authorship.follow(author, &operation);
            self
        }

        /// Text loaded from storage, or typed by someone who left.
        fn seeded(text_chars: usize) -> History {
            let mut history = History::new();
            history.entry(u64::MAX, serde_json::json!(["p".repeat(text_chars)]));
            history
        }

        /// A write of this server's on a fresh connection: its mark, then `edit`.
        fn write(
            &mut self,
            connection: u64,
            approved: bool,
            edit: serde_json::Value,
        ) -> &mut History {
            for _ in 0..Mark::of(approved).entries() {
                let keep = crate::rustpad::marks::keep_all(self.length);
                self.entry(connection, keep);
            }
            self.entry(connection, edit)
        }

        /// Someone types `count` characters at the end, one entry each.
        fn typing(&mut self, connection: u64, count: usize) -> &mut History {
            for _ in 0..count {
                let at = self.length;
                self.entry(connection, serde_json::json!([at, "t"]));
            }
            self
        }

        fn judge(&self, removed: usize) -> Removal {
            let at_work = |author: u64| self.present.contains(&author);
            let change = Change {
                removed,
                inserted: 0,
            };
            Ledger::of("pad", Some(&self.authorship), &at_work).measure(
                self.length,
                change,
                Some(0),
            )
        }
    }

    use crate::rustpad::marks::Mark;

    /// Removes `n` characters at the start of the pad.
    fn cut(n: usize, length: usize) -> serde_json::Value {
        serde_json::json!([-(n as i64), length - n])
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
        assert!(History::seeded(13).judge(13).needs_person());
        assert!(!History::seeded(30).judge(15).needs_person());
        assert!(History::seeded(30).judge(16).needs_person());
        assert!(!History::seeded(100_000).judge(10_000).needs_person());
        assert!(History::seeded(100_000).judge(10_001).needs_person());
        // Nothing removed never asks, even on an empty pad.
        assert!(!History::new().judge(0).needs_person());
    }

    #[test]
    fn removals_split_over_calls_add_up() {
        // 40 of 100 removed, then 24 of the 60 left: 64 of 100.
        let mut history = History::seeded(100);
        assert!(!history.judge(40).needs_person());
        history.write(1, false, cut(40, 100));
        let second = history.judge(24);
        assert!(second.needs_person());
        assert!(
            second.facts()[1].contains("64 characters would be gone, of the 100"),
            "{:?}",
            second.facts()
        );
    }

    #[test]
    fn the_models_own_writes_cannot_shrink_the_count() {
        let mut history = History::seeded(100);
        history.write(1, false, cut(40, 100));
        // Many tiny writes through this server: marked, so the window stays.
        for connection in 2..2 + 2 * WINDOW_EDITS {
            let at = history.length;
            history.write(connection, false, serde_json::json!([at, "x"]));
        }
        // Adding text and removing it again.
        let at = history.length;
        history.write(5000, false, serde_json::json!([at, "y".repeat(500)]));
        let at = history.length;
        history.write(5001, false, serde_json::json!([at - 500, -500]));
        let removal = history.judge(24);
        assert!(removal.needs_person(), "{:?}", removal.facts());
    }

    #[test]
    fn a_person_typing_a_little_keeps_the_count_and_a_lot_ends_it() {
        let mut history = History::seeded(100);
        history.write(1, false, cut(40, 100));
        history.typing(2, 5);
        assert!(history.judge(30).needs_person());
        history.typing(3, WINDOW_EDITS as usize);
        assert!(!history.judge(30).needs_person());
    }

    #[test]
    fn small_fixes_never_ask_and_an_approval_does_not_make_them() {
        // Fifty one-word fixes in a 2,000-character pad.
        let mut history = History::seeded(2_000);
        for connection in 1..=50 {
            let removal = history.judge(4);
            assert!(
                !removal.needs_person(),
                "fix {connection}: {:?}",
                removal.facts()
            );
            let length = history.length;
            history.write(
                connection,
                false,
                serde_json::json!([10, -4, "word", length - 14]),
            );
        }
        // A person approved removing 1,500 characters: later fixes still go unasked.
        let length = history.length;
        history.write(100, true, cut(1_500, length));
        assert!(!history.judge(4).needs_person());
    }

    #[test]
    fn added_text_removed_with_approval_takes_its_credit_with_it() {
        // 1,520 characters of a person's; 3,000 of junk appended, their
        // removal approved; then the person's text, all of it.
        let mut history = History::seeded(1_520);
        history.write(1, false, serde_json::json!([1_520, "j".repeat(3_000)]));
        history.write(2, true, serde_json::json!([1_520, -3_000]));
        assert!(history.judge(1_520).needs_person());
        // And while the junk is in the pad it does not dilute the rule.
        let mut history = History::seeded(1_520);
        history.write(1, false, serde_json::json!([1_520, "j".repeat(3_000)]));
        assert!(history.judge(1_520).needs_person());
        assert!(!history.judge(700).needs_person());
    }

    #[test]
    fn text_this_server_wrote_can_be_revised() {
        let mut history = History::new();
        history.write(1, false, serde_json::json!(["d".repeat(500)]));
        assert!(!history.judge(300).needs_person());
        history.write(2, false, cut(300, 500));
        assert!(!history.judge(100).needs_person());
        // Past ten thousand it asks all the same.
        let mut history = History::new();
        history.write(1, false, serde_json::json!(["d".repeat(50_000)]));
        assert!(history.judge(10_001).needs_person());
    }

    #[test]
    fn someone_elses_removals_can_make_the_model_ask_never_the_reverse() {
        // Someone who has left removed 60 of 100: the model's next 1 asks.
        let mut history = History::seeded(100);
        history.entry(7, cut(60, 100));
        assert!(history.judge(1).needs_person());
        // A person still at work (by another name) is not counted.
        history.present.push(7);
        assert!(!history.judge(1).needs_person());
        // A copied approval mark exempts only its own connection's removals.
        let mut history = History::seeded(100);
        history.write(8, true, cut(10, 100));
        history.write(9, false, cut(40, 90));
        assert!(history.judge(11).needs_person());
        assert!(!history.judge(5).needs_person());
    }

    #[test]
    fn a_record_that_cannot_be_read_asks() {
        let history = History::seeded(1_000);
        let at_work = |_: u64| false;
        let change = Change {
            removed: 1,
            inserted: 0,
        };
        let unread = Ledger::of("pad", None, &at_work).measure(1_000, change, Some(0));
        assert!(unread.needs_person());
        let full =
            Ledger::of("pad", Some(&history.authorship), &at_work).measure(1_000, change, None);
        assert!(full.needs_person());
        assert!(
            full.facts()[1].contains("could not read"),
            "{:?}",
            full.facts()
        );
        // A removal the tally cannot record is not made unasked; nor one that removals other
        // calls recorded meanwhile make ask.
        let fine = History::seeded(1_000).judge(100);
        assert!(!fine.needs_person());
        assert!(!fine.go_unasked_recorded(|_| None));
        assert!(!fine.go_unasked_recorded(|amount| Some(amount + 450)));
        assert!(fine.go_unasked_recorded(Some));
        // The host's tally adds what the history window forgot.
        let tallied = Ledger::of("pad", Some(&history.authorship), &at_work).measure(
            1_000,
            change,
            Some(500),
        );
        assert!(tallied.needs_person());
    }

    #[test]
    fn the_dialog_gives_counts_only() {
        assert_eq!(
            History::seeded(13).judge(13).facts(),
            ["This removes 13 of the pad's 13 characters."]
        );
    }
}
