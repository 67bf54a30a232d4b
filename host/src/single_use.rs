//! Ids spent once: the memory behind one-time approvals, shared by every
//! instance in the process (each call runs in a fresh instance that keeps
//! nothing), and on stdio by every process of the user (see
//! [`crate::user_state`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::user_state::{MAX_LIVE_IDS, SpentFile};

pub enum SpentIds {
    /// This process's own record.
    InMemory(Mutex<HashMap<String, Instant>>),
    /// The record every process of this user keeps, in a file.
    Shared(SpentFile),
}

impl Default for SpentIds {
    fn default() -> SpentIds {
        SpentIds::InMemory(Mutex::default())
    }
}

impl SpentIds {
    /// True the first time `id` is spent within `ttl`; false while it is spent.
    pub fn spend(&self, id: String, ttl: Duration) -> bool {
        let spent = match self {
            SpentIds::Shared(file) => return file.spend(&id, ttl),
            SpentIds::InMemory(spent) => spent,
        };
        let now = Instant::now();
        let mut spent = crate::lock(spent);
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
