//! Whether an approval still stands, read from the pad's own history.
//!
//! A person is asked about the pad as it stood at one revision. The approval
//! names that revision, and it is sealed together with what the proposal was
//! bound to there (a match count, a fingerprint of the content, a base and
//! what an edit removes). It may go ahead only if that binding held at every
//! revision since: the approval's first use breaks it (the write changes the
//! very thing it was bound to), so a replay finds the break in the history at
//! any process, replica or host, with no record of spent approvals at all.
//! Typing that leaves the binding as it was (a person writing elsewhere in
//! the pad while a multi-match replace waits for its answer) does not spoil
//! it.

use std::ops::ControlFlow;

use ropey::Rope;

use crate::rustpad::base::Base;
use crate::rustpad::since::Since;

/// Characters the check may look at, over every revision it visits: enough
/// for a person typing for minutes in a large pad, while a dialog is open.
pub const MAX_CHECKED_CHARS: u64 = 64 << 20;

/// What the history says of a binding since the person was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// It held at every revision since: the approval may be used.
    Held,
    /// It does not hold now: the pad changed in a way that matters.
    Changed,
    /// It holds now, but not at revision `at` in between: the approval was
    /// used (or the pad was changed and changed back) since.
    Broke { at: u64 },
    /// The history no longer has that revision as it was (Rustpad restarted
    /// or forgot the pad), or the sealed binding is not this proposal's.
    Gone,
    /// Too much happened since to check within the work bound.
    TooLong,
}

/// The pad's text at a revision, as an approval is sealed with it: the
/// proposal's state there and the base naming that text.
pub struct Sealed {
    pub state: String,
    pub base: Base,
}

impl Sealed {
    /// The state of `text` at `revision`.
    pub fn of(revision: u64, text: &Rope, state_of: &dyn Fn(&Rope) -> String) -> Sealed {
        Sealed {
            state: state_of(text),
            base: Base::of(revision, &text.to_string()),
        }
    }
}

/// Checks the binding of an approval given at revision `asked`: `matches`
/// says whether what the record holds there is what was sealed; `state_of`
/// gives the proposal's state for any text.
pub fn check(
    record: &Since,
    asked: u64,
    mut matches: impl FnMut(&Sealed) -> bool,
    state_of: &dyn Fn(&Rope) -> String,
) -> Standing {
    let mut sealed: Option<String> = None;
    let mut broke_at = None;
    let mut last_holds = true;
    let mut work = 0u64;
    let walked = record.replay(asked, |revision, text| {
        work += text.len_chars() as u64 + 1;
        if work > MAX_CHECKED_CHARS {
            return ControlFlow::Break(Standing::TooLong);
        }
        let Some(expected) = &sealed else {
            let at_asking = Sealed::of(revision, text, state_of);
            if !matches(&at_asking) {
                return ControlFlow::Break(Standing::Gone);
            }
            sealed = Some(at_asking.state);
            return ControlFlow::Continue(());
        };
        last_holds = state_of(text) == *expected;
        if !last_holds && broke_at.is_none() {
            broke_at = Some(revision);
        }
        ControlFlow::Continue(())
    });
    match walked {
        None => Standing::Gone,
        Some(ControlFlow::Break(standing)) => standing,
        Some(ControlFlow::Continue(())) => match broke_at {
            None => Standing::Held,
            Some(_) if !last_holds => Standing::Changed,
            Some(at) => Standing::Broke { at },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rustpad::ot::Operation;

    /// A record from revision 0 of `texts`' edits, each replacing the whole text.
    fn record(texts: &[&str]) -> Since {
        let mut since = Since::from(0);
        let mut text = Rope::new();
        let mut length = 0;
        since.follow(0, 0, Default::default(), None, &text);
        for (revision, new) in (1..).zip(texts) {
            let json = serde_json::json!([-(length as i64), new]).to_string();
            let json = if length == 0 {
                serde_json::json!([new]).to_string()
            } else {
                json
            };
            let operation: Operation = serde_json::from_str(&json).unwrap();
            let seq = operation.to_seq();
            crate::rustpad::ot::apply_to_rope(&mut text, &seq).unwrap();
            length = new.chars().count();
            since.follow(revision, 1, seq, None, &text);
        }
        since
    }

    fn count_of_a(text: &Rope) -> String {
        text.chars().filter(|c| *c == 'a').count().to_string()
    }

    fn standing(since: &Since, asked: u64, sealed_count: &str) -> Standing {
        check(since, asked, |s| s.state == sealed_count, &count_of_a)
    }

    #[test]
    fn typing_that_keeps_the_binding_does_not_spoil_it() {
        let since = record(&["a a", "a a b", "a a bc"]);
        assert_eq!(standing(&since, 1, "2"), Standing::Held);
    }

    #[test]
    fn a_used_approval_is_found_used_after_the_pad_is_set_back() {
        // Asked at 1 (two a's), used at 2 (none left), set back at 3.
        let since = record(&["a a", "b b", "a a"]);
        assert_eq!(standing(&since, 1, "2"), Standing::Broke { at: 2 });
        // Not set back: the binding does not hold now.
        let since = record(&["a a", "b b"]);
        assert_eq!(standing(&since, 1, "2"), Standing::Changed);
    }

    #[test]
    fn a_revision_that_is_gone_or_another_text_asks_again() {
        let since = record(&["a a"]);
        assert_eq!(standing(&since, 5, "2"), Standing::Gone);
        assert_eq!(standing(&since, 1, "1"), Standing::Gone);
    }

    #[test]
    fn too_much_history_to_check_asks_again() {
        let big = "a".repeat(200_000);
        let texts: Vec<String> = (0..400).map(|n| format!("{big}{n}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let since = record(&texts);
        assert_eq!(standing(&since, 1, &200_000.to_string()), Standing::TooLong);
    }
}
