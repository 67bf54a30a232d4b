//! The order of writes, in simulated interleavings: writers marking,
//! editing, leaving and stalling in every order Rustpad may relay them, with
//! the session's own mark among them.

use super::*;
use crate::rustpad::ot::Operation;

const ME: u64 = 9;

/// A session's view of a pad, taking in messages as `PadState` does.
struct Session {
    authorship: Authorship,
    roster: Roster,
    revision: u64,
    length: usize,
    /// The revision of the session's own mark, once in.
    mine: Option<u64>,
}

impl Session {
    fn new() -> Session {
        let mut session = Session {
            authorship: Authorship::new(),
            roster: Roster::new(),
            revision: 0,
            length: 0,
            mine: None,
        };
        session.roster.hear(Heard::Identity, 0);
        session
    }

    /// Joined a pad holding `abc`, whose snapshot lists `listed` and holds
    /// `entries` (author, changes the text) after the seed.
    fn joined(entries: &[(u64, bool)], listed: &[u64]) -> Session {
        let mut session = Session::new();
        session.follow(u64::MAX, true);
        for (author, edits) in entries {
            session.follow(*author, *edits);
        }
        session
            .roster
            .hear(Heard::History(session.revision), session.revision);
        for id in listed {
            session.present(*id);
        }
        session
    }

    /// An empty pad: no History in the snapshot.
    fn joined_empty() -> Session {
        let mut session = Session::new();
        session.present(ME);
        session
    }

    /// Folds one entry: a mark (keep all) or an edit (insert at the end).
    fn follow(&mut self, author: u64, edits: bool) {
        let json = if edits && self.length == 0 {
            r#"["abc"]"#.to_string()
        } else if edits {
            format!(r#"[{},"x"]"#, self.length)
        } else {
            crate::rustpad::marks::keep_all(self.length).to_string()
        };
        let operation: Operation = serde_json::from_str(&json).unwrap();
        self.length = operation.to_seq().target_len() as usize;
        self.authorship.follow(author, &operation);
        self.revision += 1;
        if author == ME {
            self.mine.get_or_insert(self.revision);
        }
    }

    /// A History frame of one entry.
    fn history(&mut self, author: u64, edits: bool) {
        self.follow(author, edits);
        self.roster
            .hear(Heard::History(self.revision), self.revision);
    }

    fn present(&mut self, id: u64) {
        self.roster.hear(Heard::Present(id), self.revision);
    }

    fn left(&mut self, id: u64) {
        self.roster.hear(Heard::Left(id), self.revision);
    }

    fn ahead(&self) -> Ahead {
        ahead_of(
            &self.authorship,
            &self.roster,
            self.mine.expect("the session's own mark is in"),
        )
    }
}

/// Nobody awaited, one of them done because Rustpad said it left.
const DONE_WITH_A_BARRIER_OWED: Ahead = Ahead {
    awaited: Vec::new(),
    left_since: true,
};

#[test]
fn a_writer_marked_first_is_awaited_until_its_edit() {
    let mut session = Session::joined(&[(1, false)], &[1, ME]);
    session.history(ME, false);
    assert_eq!(session.ahead().awaited, [1]);
    session.history(1, true);
    assert_eq!(session.ahead(), Ahead::default());
}

#[test]
fn a_second_mark_is_no_edit() {
    let mut session = Session::joined(&[(1, false), (1, false)], &[1, ME]);
    session.history(ME, false);
    assert_eq!(session.ahead().awaited, [1]);
}

#[test]
fn writers_marked_later_and_people_are_not_awaited() {
    let mut session = Session::joined(&[(4, true)], &[4, ME]);
    session.history(ME, false);
    session.present(2);
    session.history(2, false);
    session.history(4, false); // a person's connection sending a mark later is no writer
    assert!(session.ahead().done());
}

#[test]
fn a_writer_gone_before_the_snapshot_is_done_at_once() {
    // Its mark is in the snapshot and the snapshot does not list it.
    let mut session = Session::joined(&[(1, false)], &[ME]);
    session.history(ME, false);
    assert_eq!(session.ahead(), Ahead::default());
}

#[test]
fn a_writer_listed_in_the_snapshot_is_done_when_it_leaves_with_a_barrier_owed() {
    let mut session = Session::joined(&[(1, false)], &[1, ME]);
    session.history(ME, false);
    session.left(1);
    assert_eq!(session.ahead(), DONE_WITH_A_BARRIER_OWED);
}

#[test]
fn a_departure_relayed_before_the_mark_still_counts() {
    let mut session = Session::joined_empty();
    session.left(1);
    session.history(1, false);
    session.history(ME, false);
    assert_eq!(session.ahead(), DONE_WITH_A_BARRIER_OWED);
}

#[test]
fn a_nameless_mark_after_the_snapshot_is_awaited_until_it_leaves() {
    let mut session = Session::joined_empty();
    session.history(3, false);
    session.history(ME, false);
    assert_eq!(session.ahead().awaited, [3]);
    session.left(3);
    assert!(session.ahead().done());
}

#[test]
fn a_late_listing_of_a_writer_missing_from_the_snapshot_waits_for_its_departure() {
    // Rustpad relayed its ClientInfo before the snapshot and then its
    // departure; the snapshot itself no longer listed it.
    let mut session = Session::joined(&[(1, false)], &[ME]);
    session.history(ME, false);
    session.present(1);
    assert_eq!(session.ahead().awaited, [1]);
    session.left(1);
    assert!(session.ahead().done());
}

/// What one writer of this server's does after it says who it is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Marks, edits, leaves.
    Edits,
    /// Marks and leaves without an edit (it asked a person, or failed).
    Leaves,
    /// Marks and never finishes.
    Stalls,
}

/// One event at Rustpad, in the order Rustpad handled them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    Present(u64),
    Mark(u64),
    Edit(u64),
    Left(u64),
}

impl At {
    /// Edits and marks are relayed as History, the rest on the other path.
    fn is_history(self) -> bool {
        matches!(self, At::Mark(_) | At::Edit(_))
    }
}

fn script(writer: u64, outcome: Outcome) -> Vec<At> {
    let mut events = vec![At::Present(writer), At::Mark(writer)];
    match outcome {
        Outcome::Edits => events.extend([At::Edit(writer), At::Left(writer)]),
        Outcome::Leaves => events.push(At::Left(writer)),
        Outcome::Stalls => {}
    }
    events
}

/// Every order of `scripts` that keeps each one's own order.
fn interleavings(scripts: &[Vec<At>]) -> Vec<Vec<At>> {
    if scripts.iter().all(Vec::is_empty) {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for (i, script) in scripts.iter().enumerate() {
        let Some((first, rest)) = script.split_first() else {
            continue;
        };
        let mut others = scripts.to_vec();
        others[i] = rest.to_vec();
        for mut tail in interleavings(&others) {
            tail.insert(0, *first);
            all.push(tail);
        }
    }
    all
}

#[test]
fn in_every_order_the_wait_ends_only_once_every_earlier_edit_is_in_or_owed() {
    use Outcome::*;
    let mine = vec![At::Mark(ME)];
    let mut checked = 0;
    for a in [Edits, Leaves, Stalls] {
        for b in [Edits, Leaves, Stalls] {
            let scripts = [script(1, a), script(2, b), mine.clone()];
            for handled in interleavings(&scripts) {
                let history: Vec<At> = handled.iter().copied().filter(|e| e.is_history()).collect();
                let other: Vec<At> = handled
                    .iter()
                    .copied()
                    .filter(|e| !e.is_history())
                    .collect();
                // Rustpad relays the two paths independently of each other.
                for relayed in interleavings(&[history.clone(), other]) {
                    check_one_order(&history, &relayed, [(1, a), (2, b)]);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// Feeds `relayed` to a session of an empty pad and checks, at every
/// point after its own mark is in, what the wait would conclude.
fn check_one_order(history: &[At], relayed: &[At], writers: [(u64, Outcome); 2]) {
    let mark_at = history.iter().position(|e| *e == At::Mark(ME)).unwrap();
    let before_me = |writer: u64| history[..mark_at].contains(&At::Mark(writer));
    let mut session = Session::joined_empty();
    let mut delivered: Vec<At> = Vec::new();
    for event in relayed {
        match *event {
            At::Present(id) => session.present(id),
            At::Left(id) => session.left(id),
            At::Mark(id) => session.history(id, false),
            At::Edit(id) => session.history(id, true),
        }
        delivered.push(*event);
        if !delivered.contains(&At::Mark(ME)) {
            continue;
        }
        let ahead = session.ahead();
        for (writer, outcome) in writers {
            if !before_me(writer) {
                assert!(!ahead.awaited.contains(&writer), "{relayed:?}");
                continue;
            }
            let edited = delivered.contains(&At::Edit(writer));
            let left = delivered.contains(&At::Left(writer));
            if ahead.done() && outcome == Outcome::Edits && !edited {
                // Done before its edit is in: only on its departure, with the
                // barrier that brings the edit in.
                assert!(left && ahead.left_since, "{relayed:?}");
            }
            if !edited && !left {
                assert!(ahead.awaited.contains(&writer), "{relayed:?}");
            }
        }
    }
    // At the end, only a writer that stalls is still awaited.
    let stalled: Vec<u64> = writers
        .iter()
        .filter(|(writer, outcome)| *outcome == Outcome::Stalls && before_me(*writer))
        .map(|(writer, _)| *writer)
        .collect();
    assert_eq!(session.ahead().awaited, stalled, "{relayed:?}");
}
