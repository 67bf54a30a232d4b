//! Which of Rustpad's connections this process wrote over, per pad: what a
//! call that waits for people to change a pad consults so that this
//! server's own writes do not wake it. Shared by every instance in the
//! process; the keys are the component's and mean nothing here.
//!
//! One note per write: a connection the host keeps between calls
//! (`held_writes`) carries many writes, each noted in flight and then with
//! the revision of its last entry, and the removal rule credits this process
//! with an entry only where a note names its connection and revision.
//!
//! Bounded three ways: a few dozen writes per pad (the newest kept), a
//! number of pads (the one noted longest ago goes first), and a time (a note
//! older than [`KEPT_FOR`] is forgotten). Forgetting only lets one of our own
//! old writes end a wait, or count as anyone's text, never hides a person's
//! edit.
//!
//! Behind the WIT interface `writers` (runtime::imports::writers).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Writes kept per pad.
const PER_PAD: usize = 64;
/// Pads kept at once.
const PADS: usize = 10_000;
/// How long a note is kept.
pub const KEPT_FOR: Duration = Duration::from_secs(60 * 60);

/// One write: its connection, and the revision of its last entry once
/// acknowledged.
type Note = (u64, Option<u64>);

#[derive(Default)]
pub struct OwnWrites {
    pads: Mutex<HashMap<String, (Instant, VecDeque<Note>)>>,
}

impl OwnWrites {
    pub fn note(&self, key: String, number: u64, last_revision: Option<u64>) {
        let now = Instant::now();
        let mut pads = crate::sync::lock(&self.pads);
        if !pads.contains_key(&key) && pads.len() >= PADS {
            pads.retain(|_, (noted, _)| now.duration_since(*noted) < KEPT_FOR);
            if pads.len() >= PADS
                && let Some(oldest) = pads
                    .iter()
                    .min_by_key(|(_, (noted, _))| *noted)
                    .map(|(key, _)| key.clone())
            {
                pads.remove(&oldest);
            }
        }
        let (noted, notes) = pads.entry(key).or_insert_with(|| (now, VecDeque::new()));
        *noted = now;
        // A write of this connection's in flight is the one now confirmed
        // (or noted in flight again); otherwise this is a new write: the
        // connection's next one, or (after Rustpad restarted and numbered
        // anew) another connection's of the same number.
        // A write confirmed at a revision no later one of the same number
        // can have reached before it: those notes are from before Rustpad
        // restarted and numbered anew, and must not name entries now.
        if let Some(revision) = last_revision {
            notes.retain(|(n, last)| *n != number || last.is_none_or(|last| last < revision));
        }
        match notes
            .iter_mut()
            .rev()
            .find(|(n, last)| *n == number && last.is_none())
        {
            Some(in_flight) => in_flight.1 = last_revision,
            None => {
                if notes.len() >= PER_PAD {
                    notes.pop_front();
                }
                notes.push_back((number, last_revision));
            }
        }
    }

    pub fn noted(&self, key: &str) -> Vec<Note> {
        let now = Instant::now();
        let pads = crate::sync::lock(&self.pads);
        match pads.get(key) {
            Some((noted, notes)) if now.duration_since(*noted) < KEPT_FOR => {
                notes.iter().copied().collect()
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_noted_in_flight_then_with_its_revision() {
        let writers = OwnWrites::default();
        writers.note("p".into(), 7, None);
        assert_eq!(writers.noted("p"), [(7, None)]);
        writers.note("p".into(), 7, Some(12));
        writers.note("p".into(), 9, None);
        assert_eq!(writers.noted("p"), [(7, Some(12)), (9, None)]);
        assert!(writers.noted("q").is_empty());
    }

    #[test]
    fn a_connection_that_writes_again_has_a_note_per_write() {
        let writers = OwnWrites::default();
        writers.note("p".into(), 7, None);
        writers.note("p".into(), 7, Some(12));
        writers.note("p".into(), 7, None);
        assert_eq!(writers.noted("p"), [(7, Some(12)), (7, None)]);
        writers.note("p".into(), 7, Some(14));
        assert_eq!(writers.noted("p"), [(7, Some(12)), (7, Some(14))]);
    }

    #[test]
    fn a_confirmation_drops_notes_of_its_number_from_before_a_restart() {
        let writers = OwnWrites::default();
        writers.note("p".into(), 3, None);
        writers.note("p".into(), 3, Some(40));
        // Rustpad restarted: connection 3 again, and a write confirmed at revision 12.
        writers.note("p".into(), 3, None);
        writers.note("p".into(), 3, Some(12));
        assert_eq!(writers.noted("p"), [(3, Some(12))]);
    }

    #[test]
    fn only_the_newest_connections_of_a_pad_are_kept() {
        let writers = OwnWrites::default();
        for number in 0..PER_PAD as u64 + 50 {
            writers.note("p".into(), number, Some(number));
        }
        let noted = writers.noted("p");
        assert_eq!(noted.len(), PER_PAD);
        assert_eq!(noted.first(), Some(&(50, Some(50))));
    }

    #[test]
    fn a_full_record_forgets_the_pad_noted_longest_ago() {
        let writers = OwnWrites::default();
        for pad in 0..=PADS {
            writers.note(pad.to_string(), 1, None);
        }
        assert!(writers.noted("0").is_empty());
        assert_eq!(writers.noted(&PADS.to_string()), [(1, None)]);
    }
}
