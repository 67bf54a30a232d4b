//! Who holds the connections. Every connection starts as a stranger: none of
//! its requests has passed the gate yet. Strangers get a bounded share of the
//! connection budget and a short time to pass; when their share is full, a
//! new connection pushes out the oldest stranger instead of waiting behind
//! it, so clients that never pass the gate (slow senders, 401s left open)
//! cannot keep out a client that can. A connection on which a request passes
//! the gate becomes a member and leaves the strangers' share.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::sync::lock;

/// Connections served at once, strangers and members together.
pub const MAX_CONNECTIONS: usize = 512;
/// The strangers' share of them.
pub const MAX_STRANGERS: usize = 128;
/// How long a new connection has to get a request through the gate.
pub const STRANGER_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Connections {
    state: Mutex<State>,
    /// How long a stranger may stay one.
    stranger_timeout: Duration,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            state: Mutex::default(),
            stranger_timeout: STRANGER_TIMEOUT,
        }
    }
}

#[derive(Default)]
struct State {
    /// By order of arrival: the first is the oldest.
    strangers: BTreeMap<u64, AbortHandle>,
    members: usize,
    arrivals: u64,
}

/// One connection's place. Dropped when the connection ends.
pub struct Place {
    number: u64,
    connections: Arc<Connections>,
    member: watch::Sender<bool>,
}

/// Members hold every place there is.
#[derive(Debug)]
pub struct Full;

impl Connections {
    /// Takes in a connection whose task is `task`, as a stranger, pushing
    /// out the oldest stranger if their share is full.
    pub fn arrive(self: &Arc<Self>, task: AbortHandle) -> Place {
        let mut state = lock(&self.state);
        let pushed_out = if state.strangers.len() >= MAX_STRANGERS {
            state.strangers.pop_first().map(|(_, oldest)| oldest)
        } else {
            None
        };
        state.arrivals += 1;
        let number = state.arrivals;
        state.strangers.insert(number, task);
        drop(state);
        // Outside the lock: ending a connection drops its place, which takes it.
        if let Some(oldest) = pushed_out {
            oldest.abort();
        }
        Place {
            number,
            connections: self.clone(),
            member: watch::Sender::new(false),
        }
    }
}

impl Place {
    /// Makes the connection a member, now that a request on it passed the
    /// gate; an error when members already hold every place.
    pub fn admit(&self) -> Result<(), Full> {
        if *self.member.borrow() {
            return Ok(());
        }
        let mut state = lock(&self.connections.state);
        if state.members >= MAX_CONNECTIONS - MAX_STRANGERS {
            return Err(Full);
        }
        state.strangers.remove(&self.number);
        state.members += 1;
        self.member.send_replace(true);
        Ok(())
    }

    /// Finishes once the connection has been a stranger for too long; never
    /// for a member.
    pub async fn stranger_deadline(&self) {
        let mut member = self.member.subscribe();
        let timeout = self.connections.stranger_timeout;
        let admitted = tokio::time::timeout(timeout, member.wait_for(|m| *m))
            .await
            .is_ok_and(|seen| seen.is_ok());
        if admitted {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut state = lock(&self.connections.state);
        if *self.member.borrow() {
            state.members -= 1;
        } else {
            state.strangers.remove(&self.number);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_share_of_strangers_makes_room_by_ending_the_oldest() {
        let connections = Arc::new(Connections::default());
        let mut tasks = Vec::new();
        let mut places = Vec::new();
        for _ in 0..MAX_STRANGERS {
            let task = tokio::spawn(std::future::pending::<()>());
            places.push(connections.arrive(task.abort_handle()));
            tasks.push(task);
        }
        // The first one passes the gate: it is no longer a stranger, and stays.
        places[0].admit().unwrap();
        let (filler, newcomer) = (tokio::spawn(async {}), tokio::spawn(async {}));
        let _filling = connections.arrive(filler.abort_handle());
        let _newest = connections.arrive(newcomer.abort_handle());
        assert!(!tasks[0].is_finished());
        let second = tasks.remove(1);
        assert!(second.await.unwrap_err().is_cancelled());
        assert_eq!(lock(&connections.state).strangers.len(), MAX_STRANGERS);
        drop(places);
        let state = lock(&connections.state);
        assert_eq!((state.members, state.strangers.len()), (0, 2));
    }

    #[tokio::test]
    async fn a_stranger_has_a_deadline_and_a_member_has_none() {
        let connections = Arc::new(Connections {
            stranger_timeout: Duration::from_millis(20),
            ..Connections::default()
        });
        let task = tokio::spawn(std::future::pending::<()>());
        let stranger = connections.arrive(task.abort_handle());
        stranger.stranger_deadline().await;
        let member = connections.arrive(task.abort_handle());
        member.admit().unwrap();
        let waited =
            tokio::time::timeout(Duration::from_millis(200), member.stranger_deadline()).await;
        assert!(waited.is_err(), "a member's deadline passed");
    }
}
