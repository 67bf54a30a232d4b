//! Running totals that outlive a call: the memory behind rules about what
//! several calls did together (how much one process removed from a pad in
//! the last minutes), shared by every instance in the process. The keys are
//! the component's and mean nothing here.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// More live keys than any honest use produces; past it, new keys are
/// refused and the component treats their totals as unknown.
const MAX_KEYS: usize = 100_000;
/// Amounts kept per key; past it, the two oldest are merged (keeping the
/// later time, so an amount is never forgotten early).
const MAX_AMOUNTS_PER_KEY: usize = 256;

#[derive(Default)]
pub struct Tallies {
    keys: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
}

impl Tallies {
    /// Adds `amount` under `key` for `window` and returns the total added
    /// within `window`; None when the key cannot be kept.
    pub fn add(&self, key: String, amount: u64, window: Duration) -> Option<u64> {
        let now = Instant::now();
        let mut keys = crate::lock(&self.keys);
        if !keys.contains_key(&key) {
            if amount == 0 {
                return Some(0);
            }
            if keys.len() >= MAX_KEYS {
                keys.retain(|_, amounts| amounts.iter().any(|(expiry, _)| *expiry > now));
                if keys.len() >= MAX_KEYS {
                    return None;
                }
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
        let tallies = Tallies::default();
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
    fn many_amounts_under_one_key_are_merged_not_lost() {
        let tallies = Tallies::default();
        let minute = Duration::from_secs(60);
        for n in 1..=1000u64 {
            assert_eq!(tallies.add("k".into(), 1, minute), Some(n));
        }
        assert!(crate::lock(&tallies.keys)["k"].len() <= MAX_AMOUNTS_PER_KEY);
    }
}
