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
    fn write(&mut self, connection: u64, approved: bool, edit: serde_json::Value) -> &mut History {
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
        Ledger::of("pad", Some(&self.authorship), &at_work).measure(self.length, change, Some(0))
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
    let full = Ledger::of("pad", Some(&history.authorship), &at_work).measure(1_000, change, None);
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
    let tallied =
        Ledger::of("pad", Some(&history.authorship), &at_work).measure(1_000, change, Some(500));
    assert!(tallied.needs_person());
}

#[test]
fn the_dialog_gives_counts_only() {
    assert_eq!(
        History::seeded(13).judge(13).facts(),
        ["This removes 13 of the pad's 13 characters."]
    );
}
