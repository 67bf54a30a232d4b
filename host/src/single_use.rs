//! Ids spent once: the memory behind one-time approvals, shared by every
//! instance in the process (each call runs in a fresh instance that keeps
//! nothing).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// More live ids than any honest use produces; past it, spends fail closed.
const MAX_LIVE_IDS: usize = 100_000;

#[derive(Default)]
pub struct SpentIds {
    spent: Mutex<HashMap<String, Instant>>,
}

impl SpentIds {
    /// True the first time `id` is spent within `ttl`; false while it is spent.
    pub fn spend(&self, id: String, ttl: Duration) -> bool {
        let now = Instant::now();
        let mut spent = self
            .spent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if spent.get(&id).is_some_and(|expiry| *expiry > now) {
            return false;
        }
        if spent.len() >= MAX_LIVE_IDS {
            spent.retain(|_, expiry| *expiry > now);
            if spent.len() >= MAX_LIVE_IDS {
                return false;
            }
        }
        spent.insert(id, now + ttl);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_spent_once_until_it_expires() {
        let ids = SpentIds::default();
        assert!(ids.spend("a".into(), Duration::from_secs(60)));
        assert!(!ids.spend("a".into(), Duration::from_secs(60)));
        assert!(ids.spend("b".into(), Duration::ZERO));
        assert!(ids.spend("b".into(), Duration::from_secs(60)));
    }
}
