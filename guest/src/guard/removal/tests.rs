//! The removal rule, case by case, each judged on a pad's history replayed
//! entry by entry ([`History`]).
//!
//! Why this file is long: every case goes through that one harness, which
//! stands in for a session folding Rustpad's history, so the cases and the
//! harness they share stay together.

use super::*;
use crate::rustpad::ot::Operation;

/// A pad's history, entry by entry, as a session folds it.
struct History {
    authorship: Authorship,
    length: usize,
    /// Entries followed.
    entries: u64,
    /// People at work in the pad now.
    present: Vec<u64>,
}

impl History {
    fn new() -> History {
        History {
            authorship: Authorship::new(),
            length: 0,
            entries: 0,
            present: Vec::new(),
        }
    }

    fn entry(&mut self, author: u64, json: serde_json::Value) -> &mut History {
        let wire = json.to_string();
        let operation: Operation = serde_json::from_str(&wire).unwrap();
        self.length = operation.to_seq().target_len() as usize;
        self.authorship.follow(author, &operation);
        self.entries += 1;
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

    /// Someone types a character at the end and takes it out again,
    /// `count` times: two entries and two characters changed each time.
    fn retyping(&mut self, connection: u64, count: u64) -> &mut History {
        for _ in 0..count {
            let at = self.length;
            self.entry(connection, serde_json::json!([at, "t"]));
            self.entry(connection, serde_json::json!([at, -1]));
        }
        self
    }

    /// The same, as a write this process's host noted (its last entry is
    /// the edit).
    fn write_own(
        &mut self,
        connection: u64,
        approved: bool,
        edit: serde_json::Value,
    ) -> &mut History {
        let last = self.entries + Mark::of(approved).entries() as u64 + 1;
        self.authorship.know_own_writers([(connection, Some(last))]);
        self.write(connection, approved, edit)
    }

    /// Removing the first `removed` characters of the pad, with nothing in
    /// the host's tally.
    fn judge(&self, removed: usize) -> Removal {
        self.judge_with(removed, &[])
    }

    /// Removing the first `removed` characters of the pad, with what the
    /// host's tally holds, noted as made over Rustpad instance 7.
    fn judge_with(&self, removed: usize, tallied: &[Amount]) -> Removal {
        self.judge_at(0, removed, tallied)
    }

    /// Removing `removed` characters from `at` on.
    fn judge_at(&self, at: usize, removed: usize, tallied: &[Amount]) -> Removal {
        let at_work = |author: u64| self.present.contains(&author);
        let mut operation = OperationSeq::default();
        operation.retain(at as u64);
        operation.delete(removed as u64);
        operation.retain((self.length - at - removed) as u64);
        let credit = self.authorship.removed_by(&operation).unwrap();
        let change = Change {
            removed,
            inserted: 0,
        };
        Ledger::of("pad", Some(&self.authorship), &at_work)
            .made_over(7, 99)
            .measure(self.length, change, credit, Some(tallied), None)
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
    // Past a 32-bit count it stays at the top rather than wrap round to a small one.
    let long = Change {
        removed: 1,
        inserted: 1 << 16,
    };
    assert_eq!(long.times(usize::MAX).inserted, usize::MAX);
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

/// A connection the host holds: its first write, the write that says it
/// is held, then `appends` appends of `text` with no mark before them.
fn held_appends(history: &mut History, connection: u64, appends: usize, text: &str) {
    let at = history.length;
    history.write(connection, false, serde_json::json!([at, text]));
    for _ in 0..Mark::Holding.entries() {
        let keep = crate::rustpad::marks::keep_all(history.length);
        history.entry(connection, keep);
    }
    for _ in 0..appends {
        let at = history.length;
        history.entry(connection, serde_json::json!([at, text]));
    }
}

#[test]
fn a_held_connections_appends_neither_move_the_window_nor_dilute_the_rule() {
    // 40 of 100 removed, then many appends on a held connection, unmarked
    // each: as marked as the writes before them, so the window stays.
    let mut history = History::seeded(100);
    history.write(1, false, cut(40, 100));
    held_appends(&mut history, 2, 2 * WINDOW_EDITS as usize, "x");
    let removal = history.judge(24);
    assert!(removal.needs_person(), "{:?}", removal.facts());
    // 3,000 characters appended so do not count as people's text.
    let mut history = History::seeded(1_520);
    held_appends(&mut history, 2, 2, &"j".repeat(1_000));
    assert!(history.judge(1_520).needs_person());
    assert!(!history.judge(700).needs_person());
    // The same appends on a connection that did not say it is held are a
    // person's typing after a write's edit, and do dilute it: the run of
    // five is what tells them apart.
    let mut history = History::seeded(1_520);
    let at = history.length;
    history.write(2, false, serde_json::json!([at, "j".repeat(1_000)]));
    for _ in 0..2 {
        let at = history.length;
        history.entry(2, serde_json::json!([at, "j".repeat(1_000)]));
    }
    assert!(!history.judge(1_520).needs_person());
}

#[test]
fn a_person_typing_a_little_keeps_the_count_and_a_page_ends_it() {
    let mut history = History::seeded(100);
    history.write(1, false, cut(40, 100));
    history.present.extend([2, 3, 4]);
    history.retyping(2, 5);
    assert!(history.judge(30).needs_person());
    // A thousand edits of a character each are not yet a page.
    history.retyping(3, WINDOW_EDITS / 2);
    assert!(history.judge(30).needs_person());
    history.retyping(4, WINDOW_CHARS / 2);
    assert!(!history.judge(30).needs_person());
}

#[test]
fn one_big_paste_is_not_a_thousand_edits() {
    let mut history = History::seeded(100);
    history.write(1, false, cut(40, 100));
    history.present.push(2);
    let at = history.length;
    let page = WINDOW_CHARS as usize;
    history.entry(2, serde_json::json!([at, "p".repeat(page)]));
    history.entry(2, serde_json::json!([at, -(page as i64)]));
    assert!(history.judge(30).needs_person());
}

#[test]
fn entries_that_change_nothing_do_not_move_the_window() {
    let mut history = History::seeded(100);
    history.write(1, false, cut(40, 100));
    // A connection's real edit, then entries that keep everything (a mark
    // that no edit ends).
    let at = history.length;
    history.entry(2, serde_json::json!([at, "x"]));
    for _ in 0..WINDOW_CHARS {
        let keep = crate::rustpad::marks::keep_all(history.length);
        history.entry(2, keep);
    }
    assert!(history.judge(30).needs_person());
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
fn an_approval_on_a_connection_covers_only_the_edit_it_was_given_for() {
    // One connection carries two writes, an approved removal of 1,500
    // characters and then a plain one of 400 (as a socket held between
    // calls would), judged as if each had its own connection.
    let two_writes = |first: u64, second: u64, approved: bool| {
        let mut history = History::seeded(4_000);
        let length = history.length;
        history.write(first, approved, cut(1_500, length));
        let length = history.length;
        history.write(second, false, cut(400, length));
        history
    };
    let one_connection = two_writes(7, 7, true);
    let as_it_should = two_writes(7, 8, true);
    let neither_approved = two_writes(7, 8, false);
    let mut told_apart = false;
    for removed in (50..2_000).step_by(50) {
        let asks = one_connection.judge(removed).needs_person();
        assert_eq!(
            asks,
            as_it_should.judge(removed).needs_person(),
            "{removed}"
        );
        told_apart |= asks != neither_approved.judge(removed).needs_person();
    }
    assert!(told_apart, "the approved removal must make a difference");
}

#[test]
fn a_persons_colliding_edits_never_make_their_removals_approved() {
    // A person's connection: typing, then two edits that collided with
    // others' (stored as entries that keep everything), then a removal.
    // It began by changing the text, so it is no writer: the removal counts.
    let mut history = History::seeded(1_000);
    let length = history.length;
    history.entry(3, serde_json::json!([length, "x"]));
    let length = history.length;
    for _ in 0..2 {
        history.entry(3, crate::rustpad::marks::keep_all(length));
    }
    history.entry(3, cut(600, length));
    assert!(history.judge(10).needs_person());
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
fn a_draft_of_this_processs_beside_a_persons_text_can_be_removed() {
    // 1,700 characters of a person's, then a 3,000-character draft.
    let mut history = History::seeded(1_700);
    history.write_own(1, false, serde_json::json!([1_700, "d".repeat(3_000)]));
    let draft = history.judge_at(1_700, 3_000, &[]);
    assert!(!draft.needs_person(), "{:?}", draft.facts());
    // Of the person's text, half is still the most.
    assert!(!history.judge_at(850, 3_850, &[]).needs_person());
    assert!(history.judge_at(849, 3_851, &[]).needs_person());
    // Past ten thousand, whoever wrote it, it asks.
    let mut history = History::seeded(1_700);
    history.write_own(1, false, serde_json::json!([1_700, "d".repeat(20_000)]));
    assert!(history.judge_at(1_700, 10_001, &[]).needs_person());
}

#[test]
fn text_this_process_wrote_can_be_revised() {
    let mut history = History::new();
    history.write_own(1, false, serde_json::json!(["d".repeat(500)]));
    assert!(!history.judge(300).needs_person());
    history.write_own(2, false, cut(300, 500));
    assert!(!history.judge(100).needs_person());
    // Past ten thousand it asks all the same.
    let mut history = History::new();
    history.write_own(1, false, serde_json::json!(["d".repeat(50_000)]));
    assert!(history.judge(10_001).needs_person());
}

#[test]
fn another_writers_draft_counts_as_its_authors() {
    // A 4,000-character draft by a writer this process has no record of
    // (another deployment), then a person's 100 characters.
    let mut history = History::new();
    history.write(1, false, serde_json::json!(["d".repeat(4_000)]));
    history.entry(u64::MAX, serde_json::json!([4_000, "p".repeat(100)]));
    let whole = history.judge(4_000);
    assert!(whole.needs_person(), "{:?}", whole.facts());
    assert!(
        whole.facts()[1].contains("4000 are text another writer of rustpad-mcp's put there"),
        "{:?}",
        whole.facts()
    );
    assert!(
        whole.facts()[2].contains("Of the 4000 characters that writers of rustpad-mcp's other than this server put in the pad lately, 4000 would be gone."),
        "{:?}",
        whole.facts()
    );
    // Half of it, in two calls, goes unasked; a character more asks.
    assert!(!history.judge(1_500).needs_person());
    history.write(2, false, cut(1_500, 4_100));
    assert!(!history.judge(500).needs_person());
    assert!(history.judge(501).needs_person());
    // It does not pad the people's share: half of the person's text is the most.
    assert!(!history.judge_at(2_500, 50, &[]).needs_person());
    assert!(history.judge_at(2_500, 51, &[]).needs_person());
}

#[test]
fn a_writer_noted_by_this_process_at_another_revision_is_another_writer() {
    // The same connection number after Rustpad restarted: not the write
    // this process made.
    let mut history = History::new();
    history.authorship.know_own_writers([(1, Some(9))]);
    history.write(1, false, serde_json::json!(["d".repeat(1_000)]));
    assert!(history.judge(600).needs_person());
    assert!(!history.judge(500).needs_person());
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

const ONE_REMOVED: Change = Change {
    removed: 1,
    inserted: 0,
};

#[test]
fn a_record_that_cannot_be_read_asks() {
    let history = History::seeded(1_000);
    let at_work = |_: u64| false;
    let change = ONE_REMOVED;
    let none = Credit::default();
    let unread = Ledger::of("pad", None, &at_work).measure(1_000, change, none, Some(&[]), None);
    assert!(unread.needs_person());
    let full = Ledger::of("pad", Some(&history.authorship), &at_work)
        .measure(1_000, change, none, None, None);
    assert!(full.needs_person());
    assert!(
        full.facts()[1].contains("could not read"),
        "{:?}",
        full.facts()
    );
}

#[test]
fn earlier_writes_still_under_way_make_it_ask() {
    let history = History::seeded(1_000);
    let at_work = |_: u64| false;
    let change = ONE_REMOVED;
    let behind = Ledger::of("pad", Some(&history.authorship), &at_work)
        .queued(Queue::Behind { writers: 2 })
        .measure(1_000, change, Credit::default(), Some(&[]), None);
    assert!(behind.needs_person());
    assert!(
        behind.facts()[1].starts_with("2 other writes of this server's"),
        "{:?}",
        behind.facts()
    );
    // Removing nothing goes ahead whatever is under way.
    let nothing = Ledger::of("pad", Some(&history.authorship), &at_work)
        .queued(Queue::Behind { writers: 2 })
        .measure(1_000, Change::default(), Credit::default(), Some(&[]), None);
    assert!(!nothing.needs_person());
}

fn noted(value: u64, made_at: &str) -> Amount {
    Amount {
        value,
        made_at: made_at.into(),
    }
}

#[test]
fn the_tally_adds_what_the_history_does_not_show_once() {
    // Connection 1 removed 40 of 100, and this process noted it.
    let mut history = History::seeded(100);
    history.write(1, false, cut(40, 100));
    let shown = [noted(40, "7/1")];
    // The history shows it: counted once (40 + 9 = 49 of 100).
    assert!(!history.judge_with(9, &shown).needs_person());
    assert!(history.judge_with(11, &shown).needs_person());
    // Noted over another Rustpad instance, or with no note: the history cannot be showing it.
    assert!(history.judge_with(9, &[noted(40, "6/1")]).needs_person());
    assert!(history.judge_with(9, &[noted(40, "")]).needs_person());
    // A removal the tally holds whose connection the history does not show counts too, but
    // is not put back into the pad's size, which may still hold it (40 + 10 + 1 > 100 / 2).
    let both = [noted(40, "7/1"), noted(10, "7/5")];
    assert!(history.judge_with(1, &both).needs_person());
    assert!(!history.judge_with(1, &both[..1]).needs_person());
    // Once the window has moved past connection 1's removal, the tally still counts it.
    history.present.push(2);
    history.retyping(2, WINDOW_CHARS / 2);
    let forgotten = history.judge(30);
    assert!(!forgotten.needs_person());
    assert_eq!(forgotten.facts().len(), 1, "{:?}", forgotten.facts());
    let remembered = history.judge_with(30, &shown);
    assert!(remembered.needs_person(), "{:?}", remembered.facts());
    assert!(
        remembered.facts()[1].contains("70 characters would be gone, of the 60"),
        "{:?}",
        remembered.facts()
    );
}

#[test]
fn the_dialog_gives_counts_only() {
    assert_eq!(
        History::seeded(13).judge(13).facts(),
        ["This removes 13 of the pad's 13 characters."]
    );
}
