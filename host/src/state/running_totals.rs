//! Running totals that outlive a call, and turns: the memory behind a rule
//! about what several calls did together (what this process removed from a
//! pad in the last minutes, which the removal rule adds to what the pad's
//! history shows), shared by every instance in the process, and a turn per
//! key so that calls deciding under one key decide one at a time. The keys
//! and the notes on amounts are the component's and mean nothing here.
//!
//! The tally holds a bounded number of keys. Once full it refuses new ones,
//! and it then answers "unknown" even to a read of a key it does not hold:
//! it cannot tell a key it never held from one it had to refuse. Filling it
//! can therefore only make the component ask more, never less. Turns are
//! bounded the same way: past the bound no new key gets one, and a call
//! that cannot have its turn asks.
//!
//! Behind the WIT interface `tally` (runtime::imports::tally).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OwnedMutexGuard;

/// Amounts kept per key; past it, the two oldest are merged (keeping the
/// later time, so an amount is never forgotten early, and no note, since
/// the merged amount was made in two places).
const MAX_AMOUNTS_PER_KEY: usize = 256;
/// The longest note an amount may carry.
pub const MAX_NOTE_BYTES: usize = 256;

/// One amount and the component's note of where it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amount {
    pub value: u64,
    pub made_at: String,
}

struct Kept {
    expires: Instant,
    amount: Amount,
}

pub struct RunningTotals {
    keys: Mutex<HashMap<String, VecDeque<Kept>>>,
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Live keys kept at most, of amounts and of turns each.
    capacity: usize,
    /// The longest an amount is kept, whatever window it is added for.
    longest: Duration,
}

/// A key's turn, held until dropped.
pub struct Turn(#[allow(dead_code)] OwnedMutexGuard<()>);

impl RunningTotals {
    /// A tally keeping at most `capacity` live keys, each amount for at
    /// most `longest`.
    pub fn new(capacity: usize, longest: Duration) -> RunningTotals {
        RunningTotals {
            keys: Mutex::default(),
            turns: Mutex::default(),
            capacity,
            longest,
        }
    }

    /// Adds `amount` under `key` for `window` and returns every amount
    /// added within `window`, oldest first; None when the tally cannot say
    /// (see above) or the note is longer than [`MAX_NOTE_BYTES`].
    pub fn add(&self, key: String, amount: Amount, window: Duration) -> Option<Vec<Amount>> {
        if amount.made_at.len() > MAX_NOTE_BYTES {
            return None;
        }
        let now = Instant::now();
        let window = window.min(self.longest);
        let mut keys = crate::sync::lock(&self.keys);
        if !keys.contains_key(&key) {
            if keys.len() >= self.capacity {
                keys.retain(|_, amounts| amounts.iter().any(|kept| kept.expires > now));
                if keys.len() >= self.capacity {
                    return None;
                }
            }
            if amount.value == 0 {
                return Some(Vec::new());
            }
        }
        let amounts = keys.entry(key).or_default();
        amounts.retain(|kept| kept.expires > now);
        if amount.value > 0 {
            // The oldest amount joins the next one, which expires later.
            if amounts.len() >= MAX_AMOUNTS_PER_KEY
                && let Some(oldest) = amounts.pop_front()
                && let Some(next) = amounts.front_mut()
            {
                next.amount = Amount {
                    value: next.amount.value.saturating_add(oldest.amount.value),
                    made_at: String::new(),
                };
            }
            amounts.push_back(Kept {
                expires: now + window,
                amount,
            });
        }
        Some(amounts.iter().map(|kept| kept.amount.clone()).collect())
    }

    /// Waits at most `wait` for `key`'s turn; None when it did not come in
    /// time or no more keys can have turns.
    pub async fn take_turn(&self, key: String, wait: Duration) -> Option<Turn> {
        let lock = {
            let mut turns = crate::sync::lock(&self.turns);
            if !turns.contains_key(&key) && turns.len() >= self.capacity {
                // A key nobody holds or waits for has only this map's handle.
                turns.retain(|_, lock| Arc::strong_count(lock) > 1);
                if turns.len() >= self.capacity {
                    return None;
                }
            }
            turns.entry(key).or_default().clone()
        };
        let guard = tokio::time::timeout(wait, lock.lock_owned()).await.ok()?;
        Some(Turn(guard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn nothing_is_kept_longer_than_the_longest() {
        let tallies = RunningTotals::new(10, Duration::ZERO);
        assert!(tallies.add("a".into(), amount(5, ""), DAY).is_some());
        assert_eq!(tallies.add("a".into(), amount(0, ""), DAY), Some(vec![]));
    }

    fn amount(value: u64, made_at: &str) -> Amount {
        Amount {
            value,
            made_at: made_at.into(),
        }
    }

    fn values(amounts: Option<Vec<Amount>>) -> Option<Vec<u64>> {
        amounts.map(|amounts| amounts.iter().map(|a| a.value).collect())
    }

    #[test]
    fn amounts_add_up_within_the_window_and_expire() {
        let tallies = RunningTotals::new(10, DAY);
        let minute = Duration::from_secs(60);
        assert_eq!(tallies.add("a".into(), amount(0, ""), minute), Some(vec![]));
        assert_eq!(
            tallies.add("a".into(), amount(5, "x/1"), minute),
            Some(vec![amount(5, "x/1")])
        );
        assert_eq!(
            tallies.add("a".into(), amount(7, "x/2"), minute),
            Some(vec![amount(5, "x/1"), amount(7, "x/2")])
        );
        assert_eq!(
            values(tallies.add("b".into(), amount(1, ""), minute)),
            Some(vec![1])
        );
        assert_eq!(
            values(tallies.add("a".into(), amount(0, ""), minute)),
            Some(vec![5, 7])
        );
        assert_eq!(
            values(tallies.add("c".into(), amount(3, ""), Duration::ZERO)),
            Some(vec![3])
        );
        assert_eq!(
            values(tallies.add("c".into(), amount(0, ""), minute)),
            Some(vec![])
        );
        assert_eq!(
            tallies.add(
                "a".into(),
                amount(1, &"n".repeat(MAX_NOTE_BYTES + 1)),
                minute
            ),
            None
        );
    }

    #[test]
    fn a_full_tally_cannot_say_and_keeps_what_it_has() {
        let tallies = RunningTotals::new(2, DAY);
        let minute = Duration::from_secs(60);
        assert!(tallies.add("a".into(), amount(1, ""), minute).is_some());
        assert!(tallies.add("b".into(), amount(1, ""), minute).is_some());
        // A new key cannot be kept, and an unknown one cannot be read.
        assert_eq!(tallies.add("c".into(), amount(1, ""), minute), None);
        assert_eq!(tallies.add("c".into(), amount(0, ""), minute), None);
        // Keys it holds still count.
        assert_eq!(
            values(tallies.add("a".into(), amount(2, ""), minute)),
            Some(vec![1, 2])
        );
        assert_eq!(
            values(tallies.add("b".into(), amount(0, ""), minute)),
            Some(vec![1])
        );
    }

    #[test]
    fn many_amounts_under_one_key_are_merged_not_lost_and_lose_their_note() {
        let tallies = RunningTotals::new(10, DAY);
        let minute = Duration::from_secs(60);
        let mut last = None;
        for n in 1..=1000u64 {
            last = tallies.add("k".into(), amount(1, &format!("s/{n}")), minute);
        }
        let last = last.unwrap();
        assert!(last.len() <= MAX_AMOUNTS_PER_KEY);
        assert_eq!(last.iter().map(|a| a.value).sum::<u64>(), 1000);
        assert_eq!(last[0].made_at, "");
        assert_eq!(last.last().unwrap().made_at, "s/1000");
    }

    #[tokio::test]
    async fn one_turn_per_key_at_a_time() {
        let tallies = Arc::new(RunningTotals::new(2, DAY));
        let short = Duration::from_millis(50);
        let held = tallies.take_turn("a".into(), short).await.unwrap();
        // The same key waits, and gives up after its wait; another key does not.
        assert!(tallies.take_turn("a".into(), short).await.is_none());
        let other = tallies.take_turn("b".into(), short).await.unwrap();
        // Full: a third key has no turn while both are held.
        assert!(tallies.take_turn("c".into(), short).await.is_none());
        let waiting = {
            let tallies = tallies.clone();
            tokio::spawn(async move { tallies.take_turn("a".into(), Duration::from_secs(5)).await })
        };
        tokio::time::sleep(short).await;
        drop(held);
        assert!(waiting.await.unwrap().is_some());
        drop(other);
        // Turns nobody holds make room.
        assert!(tallies.take_turn("c".into(), short).await.is_some());
    }
}
