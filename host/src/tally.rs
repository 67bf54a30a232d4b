//! Running totals that outlive a call: the memory behind a rule about what
//! several calls did together (what this process removed from a pad in the
//! last minutes, which the removal rule adds to what the pad's history
//! shows), shared by every instance in the process. The keys are the
//! component's and mean nothing here.
//!
//! The tally holds a bounded number of keys. Once full it refuses new ones,
//! and it then answers "unknown" even to a read of a key it does not hold:
//! it cannot tell a key it never held from one it had to refuse. Filling it
//! can therefore only make the component ask more, never less.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Amounts kept per key; past it, the two oldest are merged (keeping the
/// later time, so an amount is never forgotten early).
const MAX_AMOUNTS_PER_KEY: usize = 256;

pub struct Tallies {
    keys: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
    /// Live keys kept at most.
    capacity: usize,
}

impl Tallies {
    /// A tally keeping at most `capacity` live keys.
    pub fn with_capacity(capacity: usize) -> Tallies {
        Tallies {
            keys: Mutex::default(),
            capacity,
        }
    }

    /// Adds `amount` under `key` for `window` and returns the total added
    /// within `window`; None when the tally cannot say (see above).
    pub fn add(&self, key: String, amount: u64, window: Duration) -> Option<u64> {
        let now = Instant::now();
        let mut keys = crate::lock(&self.keys);
        if !keys.contains_key(&key) {
            if keys.len() >= self.capacity {
                keys.retain(|_, amounts| amounts.iter().any(|(expiry, _)| *expiry > now));
                if keys.len() >= self.capacity {
                    return None;
                }
            }
            if amount == 0 {
                return Some(0);
            }
        }
        let amounts = keys.entry(key).or_default();
        amounts.retain(|(expiry, _)| *expiry > now);
        if amount > 0 {
            // The oldest amount joins the next one, which expires later.
            if amounts.len() >= MAX_AMOUNTS_PER_KEY
                && let Some((_, oldest)) = amounts.pop_front()
                && let Some((_, next)) = amounts.front_mut()
            {
                *next = next.saturating_add(oldest);
            }
            amounts.push_back((now + window, amount));
        }
        Some(
            amounts
                .iter()
                .fold(0u64, |sum, (_, n)| sum.saturating_add(*n)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_up_within_the_window_and_expire() {
        let tallies = Tallies::with_capacity(10);
        let minute = Duration::from_secs(60);
        assert_eq!(tallies.add("a".into(), 0, minute), Some(0));
        assert_eq!(tallies.add("a".into(), 5, minute), Some(5));
        assert_eq!(tallies.add("a".into(), 7, minute), Some(12));
        assert_eq!(tallies.add("b".into(), 1, minute), Some(1));
        assert_eq!(tallies.add("a".into(), 0, minute), Some(12));
        assert_eq!(tallies.add("c".into(), 3, Duration::ZERO), Some(3));
        assert_eq!(tallies.add("c".into(), 0, minute), Some(0));
    }

    #[test]
    fn a_full_tally_cannot_say_and_keeps_what_it_has() {
        let tallies = Tallies::with_capacity(2);
        let minute = Duration::from_secs(60);
        assert_eq!(tallies.add("a".into(), 1, minute), Some(1));
        assert_eq!(tallies.add("b".into(), 1, minute), Some(1));
        // A new key cannot be kept, and an unknown one cannot be read.
        assert_eq!(tallies.add("c".into(), 1, minute), None);
        assert_eq!(tallies.add("c".into(), 0, minute), None);
        // Keys it holds still count.
        assert_eq!(tallies.add("a".into(), 2, minute), Some(3));
        assert_eq!(tallies.add("b".into(), 0, minute), Some(1));
    }

    #[test]
    fn many_amounts_under_one_key_are_merged_not_lost() {
        let tallies = Tallies::with_capacity(10);
        let minute = Duration::from_secs(60);
        for n in 1..=1000u64 {
            assert_eq!(tallies.add("k".into(), 1, minute), Some(n));
        }
        assert!(crate::lock(&tallies.keys)["k"].len() <= MAX_AMOUNTS_PER_KEY);
    }
}
