//! Write connections kept between calls: a write hands its connection back
//! with the component's cursor, and the next write to the same pad takes it
//! and goes on from there, instead of joining the pad again and being sent
//! its whole history. The keys are the component's and mean nothing here.
//!
//! Bounded every way a kept connection costs:
//! - at most [`PER_KEY`] connections per key and [`IN_ALL`] in the process
//!   (each an open socket, counted in the open-files limit at startup); one
//!   given past either is closed;
//! - each is let go after [`QUIET_FOR`] without a write;
//! - while kept, no instance runs: a task reads the connection, keeping
//!   what comes for the next writer's `recv`, at most [`KEPT_BYTES`] and
//!   [`KEPT_FRAMES`]; past either, or when it ends, the connection is
//!   closed and the next write joins afresh;
//! - the cursor and what is kept are counted in the memory budget of
//!   running calls (a connection the budget cannot hold is closed);
//! - a message bigger than [`LIVE_MESSAGE_BYTES`] ends it too, as for a
//!   watch's held look.
//!
//! Behind the WIT interface `held-writes` (runtime::imports::held_writes).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::egress::websocket::{Connection, LIVE_MESSAGE_BYTES, MAX_MESSAGE_BYTES};
use crate::limits::memory_budget::{MemoryBudget, Reservation};
use crate::sync::lock;

/// Connections kept per key: one for each write to a pad at the same moment.
pub const PER_KEY: usize = 8;
/// Connections kept in all.
pub const IN_ALL: usize = 64;
/// How long a connection is kept without a write.
pub const QUIET_FOR: Duration = Duration::from_secs(30);
/// What a kept connection may bring before it is let go: its messages'
/// cost, and its frames of any kind (a ping is read and answered, and
/// counts too).
pub const KEPT_BYTES: usize = 1 << 20;
pub const KEPT_FRAMES: usize = 10_000;

/// A connection taken back, and the cursor it was given with.
pub struct Taken {
    pub connection: Connection,
    pub cursor: String,
}

/// One kept connection, as the pool sees it: how to ask its keeper for it.
struct Keeper {
    number: u64,
    ask: oneshot::Sender<oneshot::Sender<Taken>>,
}

pub struct HeldWrites {
    keys: Mutex<HashMap<String, Vec<Keeper>>>,
    numbers: AtomicU64,
    /// How long a connection is kept without a write ([`QUIET_FOR`]).
    quiet_for: Duration,
}

impl Default for HeldWrites {
    fn default() -> HeldWrites {
        HeldWrites::quiet_for(QUIET_FOR)
    }
}

impl HeldWrites {
    fn quiet_for(quiet_for: Duration) -> HeldWrites {
        HeldWrites {
            keys: Mutex::default(),
            numbers: AtomicU64::new(0),
            quiet_for,
        }
    }

    /// Keeps `connection` for the next write under `key`, unless the pool is
    /// full or `budget` cannot hold the cursor (then it is closed).
    pub fn give(
        self: &Arc<Self>,
        key: String,
        mut connection: Connection,
        cursor: String,
        budget: &MemoryBudget,
    ) {
        if connection.has_ended() {
            return;
        }
        let Ok(cursor_held) = budget.reserve(cursor.len()) else {
            tokio::spawn(async move { connection.close().await });
            return;
        };
        let (ask, asked) = oneshot::channel();
        let number = self.numbers.fetch_add(1, Ordering::Relaxed);
        {
            let mut keys = lock(&self.keys);
            let in_all: usize = keys.values().map(Vec::len).sum();
            let kept = keys.entry(key.clone()).or_default();
            if kept.len() >= PER_KEY || in_all >= IN_ALL {
                if kept.is_empty() {
                    keys.remove(&key);
                }
                drop(keys);
                tokio::spawn(async move { connection.close().await });
                return;
            }
            kept.push(Keeper { number, ask });
        }
        connection.cap_at(LIVE_MESSAGE_BYTES);
        let pool = Arc::downgrade(self);
        let quiet = tokio::time::sleep(self.quiet_for);
        let taken = Taken { connection, cursor };
        tokio::spawn(keep(pool, key, number, (taken, cursor_held), asked, quiet));
    }

    /// A connection kept for `key`, the one given last; none when none is.
    pub async fn take(&self, key: &str) -> Option<Taken> {
        loop {
            let keeper = {
                let mut keys = lock(&self.keys);
                let kept = keys.get_mut(key)?;
                let keeper = kept.pop();
                if kept.is_empty() {
                    keys.remove(key);
                }
                keeper?
            };
            let (reply, answer) = oneshot::channel();
            if keeper.ask.send(reply).is_err() {
                continue;
            }
            // A keeper that was letting go as it was asked drops the reply.
            if let Ok(mut taken) = answer.await {
                taken.connection.cap_at(MAX_MESSAGE_BYTES);
                return Some(taken);
            }
        }
    }

    fn forget(&self, key: &str, number: u64) {
        let mut keys = lock(&self.keys);
        if let Some(kept) = keys.get_mut(key) {
            kept.retain(|keeper| keeper.number != number);
            if kept.is_empty() {
                keys.remove(key);
            }
        }
    }
}

/// Reads a kept connection until it is asked for, `quiet` is over, or it
/// cannot be kept: then it leaves the pool and closes.
async fn keep(
    pool: Weak<HeldWrites>,
    key: String,
    number: u64,
    (mut taken, cursor_held): (Taken, Reservation),
    mut asked: oneshot::Receiver<oneshot::Sender<Taken>>,
    quiet: tokio::time::Sleep,
) {
    tokio::pin!(quiet);
    let mut frames = 0;
    loop {
        tokio::select! {
            biased;
            reply = &mut asked => {
                // The taker's instance holds the cursor from now on, within its own memory.
                drop(cursor_held);
                if let Ok(reply) = reply {
                    // Refused only when the taker gave up: the connection then closes as it drops.
                    let _ = reply.send(taken);
                }
                return;
            }
            _ = &mut quiet => break,
            read = taken.connection.keep_next(KEPT_BYTES) => {
                frames += 1;
                if read.is_err() || frames > KEPT_FRAMES {
                    break;
                }
            }
        }
    }
    if let Some(pool) = pool.upgrade() {
        pool.forget(&key, number);
    }
    // Asked for just now: the taker hears nothing and joins afresh.
    drop(asked);
    taken.connection.close().await;
}

#[cfg(test)]
mod tests;
