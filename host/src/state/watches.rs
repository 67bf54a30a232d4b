//! Watching for subscribers: one watcher per subject however many
//! subscribe, running the component's `watch` export round after round, and
//! the scopes that subscriptions belong to (a 2025-11-25 session, or a held
//! request), which let go of everything they hold when they end. Behind the
//! WIT interface `watches` (runtime::imports::watches).
//!
//! Subjects, cursors and update lines are the component's and opaque here:
//! the host only keeps them, counts them against the caps
//! ([`crate::settings::WatchLimits`]: in all, per scope, and over HTTP per
//! [`ClientAddress`], since sessions cost nothing to open and one client could
//! otherwise take every place), and sends each subscriber its own line
//! when its subject changed. Bounds:
//! - at most one update per subject per [`COALESCE`] (the pace every watch
//!   loop keeps, ours and the component's own in a WebAssembly host);
//! - a subscriber has at most one update on its way per subject (updates
//!   are level triggers: "read it again"), so a client that stops reading
//!   makes nothing grow;
//! - a subject that cannot be watched is told of once, then tried again
//!   after a pause that doubles up to [`RETRY_MOST`];
//! - each round is a fresh instance, within the memory budget of calls;
//! - between rounds no instance runs: the host holds the connection a round
//!   handed back, taking messages of at most [`LIVE_MESSAGE_BYTES`], reads
//!   it (dropping what the component said is not worth a round) and starts
//!   the next round when one is, or when the connection ends.

use rounds::watch_rounds;
use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinHandle;

use rustpad_mcp_rules::watching::COALESCE;

use crate::egress::websocket::{Connection, LIVE_MESSAGE_BYTES, Woken};
use crate::settings::WatchLimits;
use crate::state::client_address::ClientAddress;
use crate::state::client_queue::ClientQueue;
use crate::sync::lock;

/// Where the next round goes on from (the component's `resume`): its
/// cursor, and the connection to hold until a message that begins with one
/// of `wake` comes.
pub struct Resume {
    pub cursor: String,
    pub look: Option<Connection>,
    pub wake: Vec<String>,
}

impl Resume {
    /// From `cursor` alone: the next round opens its own connection.
    fn at(cursor: String) -> Resume {
        Resume {
            cursor,
            look: None,
            wake: Vec::new(),
        }
    }
}

/// How one round of watching a subject ended (the component's `watched`).
pub enum Round {
    /// It changed: tell the subscribers, then go on from here.
    Changed(Resume),
    /// Nothing happened: go on from here.
    Quiet(Resume),
    /// It cannot be watched for now, and why.
    Lost(String),
}

/// One subject to watch for a scope: the line to send when it changes, and
/// the cursor a new watcher starts from (none: from its first round).
pub struct Watch {
    pub subject: String,
    pub update: String,
    pub cursor: Option<String>,
}

/// Who runs a round: the runtime, in a fresh instance each time.
pub trait Rounds: Send + Sync + 'static {
    fn round<'a>(
        &'a self,
        subject: &'a str,
        last: Option<Resume>,
    ) -> Pin<Box<dyn Future<Output = Round> + Send + 'a>>;
}

/// The first pause before a lost subject is tried again, and the longest.
const RETRY_FIRST: Duration = Duration::from_secs(1);
pub const RETRY_MOST: Duration = Duration::from_secs(30);
/// Listens one stdio connection, or one HTTP server, holds open at once.
pub const MAX_HELD: usize = 256;

/// Every subject watched in this process.
pub struct Watchers {
    rounds: Arc<dyn Rounds>,
    limits: WatchLimits,
    subjects: Mutex<HashMap<String, Subject>>,
    /// For each address, how many of its scopes watch each subject. Locked
    /// after `subjects`, never before.
    by_address: Mutex<HashMap<ClientAddress, HashMap<String, usize>>>,
    next_scope: AtomicU64,
}

/// One watched subject: its watcher, and who hears of it.
struct Subject {
    subscribers: HashMap<u64, Subscriber>,
    watcher: JoinHandle<()>,
}

impl Drop for Subject {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

#[derive(Clone)]
struct Subscriber {
    update: Arc<str>,
    out: ClientQueue,
    /// An update is on its way (queued for the client, not yet written).
    on_its_way: Arc<AtomicBool>,
}

impl Watchers {
    pub fn new(rounds: Arc<dyn Rounds>, limits: WatchLimits) -> Arc<Watchers> {
        Arc::new(Watchers {
            rounds,
            limits,
            subjects: Mutex::default(),
            by_address: Mutex::default(),
            next_scope: AtomicU64::new(1),
        })
    }

    pub fn limits(&self) -> WatchLimits {
        self.limits
    }

    /// A scope whose subscriptions go to `out`, at most `limit` of them,
    /// counted with every other scope from its `address` (None: the transport
    /// has one client, stdio).
    pub fn scope(
        self: &Arc<Self>,
        limit: usize,
        out: ClientQueue,
        address: Option<ClientAddress>,
    ) -> Scope {
        Scope {
            id: self.next_scope.fetch_add(1, Ordering::Relaxed),
            watchers: self.clone(),
            limit,
            out,
            address,
            subjects: Mutex::default(),
        }
    }

    /// Sends every subscriber of `subject` its update.
    fn tell(&self, subject: &str) {
        let subscribers: Vec<Subscriber> = match lock(&self.subjects).get(subject) {
            Some(watched) => watched.subscribers.values().cloned().collect(),
            None => return,
        };
        for subscriber in subscribers {
            subscriber
                .out
                .send_unless_on_its_way(subscriber.update.to_string(), &subscriber.on_its_way);
        }
    }

    fn release(&self, scope: u64, address: Option<ClientAddress>, subject: &str) {
        let mut subjects = lock(&self.subjects);
        if let Some(watched) = subjects.get_mut(subject) {
            watched.subscribers.remove(&scope);
            if watched.subscribers.is_empty() {
                subjects.remove(subject);
            }
        }
        let Some(address) = address else {
            return;
        };
        let mut by_address = lock(&self.by_address);
        if let Some(held) = by_address.get_mut(&address) {
            match held.get_mut(subject) {
                Some(scopes) if *scopes > 1 => *scopes -= 1,
                _ => {
                    held.remove(subject);
                }
            }
            if held.is_empty() {
                by_address.remove(&address);
            }
        }
    }
}

/// Where subscriptions belong: a session, or one held request. Dropping it
/// ends them all, and a watcher nobody else needs stops with its socket.
pub struct Scope {
    id: u64,
    watchers: Arc<Watchers>,
    limit: usize,
    out: ClientQueue,
    address: Option<ClientAddress>,
    subjects: Mutex<HashSet<String>>,
}

impl Scope {
    /// Watches each `(subject, update)` for this scope, all or none: an
    /// error says which cap stood in the way. A subject the scope watches
    /// already gets the new update line.
    pub fn watch_all(&self, watches: Vec<Watch>) -> Result<(), ImportError> {
        self.add(watches, false)
    }

    /// [`Scope::watch_all`], with updates `held` back until [`Scope::open`].
    fn add(&self, watches: Vec<Watch>, held: bool) -> Result<(), ImportError> {
        let mut mine = lock(&self.subjects);
        let new: HashSet<&str> = watches
            .iter()
            .map(|watch| watch.subject.as_str())
            .filter(|subject| !mine.contains(*subject))
            .collect();
        if mine.len() + new.len() > self.limit {
            // More than one subscriber may ever have, however long it waits.
            return Err(ImportError::new(
                ErrorKind::TooLarge,
                format!(
                    "one subscriber may watch at most {} pads here, and this would make {}",
                    self.limit,
                    mine.len() + new.len()
                ),
            ));
        }
        let mut subjects = lock(&self.watchers.subjects);
        let mut by_address = lock(&self.watchers.by_address);
        if let Some(address) = self.address {
            let held = by_address.get(&address);
            let held_count = held.map_or(0, HashMap::len);
            let fresh = new
                .iter()
                .filter(|s| !held.is_some_and(|held| held.contains_key(**s)))
                .count();
            let cap = self.watchers.limits.per_address;
            if held_count + fresh > cap {
                return Err(busy(format!(
                    "the clients of one address ({address}) may have at most {cap} pads watched here at once, and this would make {}; end some subscriptions first",
                    held_count + fresh
                )));
            }
        }
        let unwatched = new.iter().filter(|s| !subjects.contains_key(**s)).count();
        let cap = self.watchers.limits.pads;
        if subjects.len() + unwatched > cap {
            return Err(busy(format!(
                "this server watches at most {cap} pads at once, and is watching {}; retry when fewer are watched",
                subjects.len()
            )));
        }
        if let Some(address) = self.address {
            let held = by_address.entry(address).or_default();
            for subject in &new {
                *held.entry((*subject).to_string()).or_default() += 1;
            }
        }
        drop(by_address);
        for Watch {
            subject,
            update,
            cursor,
        } in watches
        {
            let watched = subjects.entry(subject.clone()).or_insert_with(|| Subject {
                subscribers: HashMap::new(),
                watcher: tokio::spawn(watch_rounds(
                    Arc::downgrade(&self.watchers),
                    subject.clone(),
                    cursor,
                )),
            });
            match watched.subscribers.get_mut(&self.id) {
                // Watched again: the new line, and the update on its way stays the one.
                Some(subscriber) => subscriber.update = update.into(),
                None => {
                    let subscriber = Subscriber {
                        update: update.into(),
                        out: self.out.clone(),
                        on_its_way: Arc::new(AtomicBool::new(held)),
                    };
                    watched.subscribers.insert(self.id, subscriber);
                }
            }
            mine.insert(subject);
        }
        Ok(())
    }

    /// Lets the updates held back by [`Scope::add`] through.
    fn open(&self) {
        let mine = lock(&self.subjects);
        let subjects = lock(&self.watchers.subjects);
        for subject in mine.iter() {
            if let Some(subscriber) = subjects
                .get(subject)
                .and_then(|watched| watched.subscribers.get(&self.id))
            {
                subscriber.on_its_way.store(false, Ordering::Release);
            }
        }
    }

    /// Stops watching `subject` for this scope; false if it was not.
    pub fn stop(&self, subject: &str) -> bool {
        // Held across the release, as `add` holds it, so that a watch
        // started meanwhile is never released with the old one.
        let mut mine = lock(&self.subjects);
        let was = mine.remove(subject);
        if was {
            self.watchers.release(self.id, self.address, subject);
        }
        was
    }

    /// Stops every watch of this scope.
    pub fn stop_all(&self) {
        let mut mine = lock(&self.subjects);
        for subject in mine.drain() {
            self.watchers.release(self.id, self.address, &subject);
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// A request held open by the component (`watches.hold`): its own scope,
/// and the response to send if the host ends it.
pub struct Held {
    pub scope: Scope,
    pub closing: String,
    ends: watch::Receiver<bool>,
    _place: OwnedSemaphorePermit,
}

impl Held {
    /// Waits until the transport ends every held request (its shutdown);
    /// then the response to send. A client that goes away first stops the
    /// call instead, and gets nothing.
    pub async fn until_ended(mut self) -> String {
        let _ = self.ends.wait_for(|ended| *ended).await;
        self.scope.stop_all();
        self.closing
    }
}

/// What a transport lets calls hold: where their streams go, and when it
/// ends them all.
#[derive(Clone)]
pub struct Holds {
    pub watchers: Arc<Watchers>,
    pub out: ClientQueue,
    pub ends: watch::Receiver<bool>,
    /// Requests that may be held at once (each holds a task and a scope).
    pub places: Arc<Semaphore>,
    /// Where the request came from (None on stdio, which has one client).
    pub address: Option<ClientAddress>,
}

impl Holds {
    /// A held request's scope, watching `watches` (all or none), its
    /// opening on its way ahead of any update.
    pub async fn hold(
        &self,
        opening: String,
        closing: String,
        watches: Vec<Watch>,
    ) -> Result<Held, ImportError> {
        let place = self.places.clone().try_acquire_owned().map_err(|_| {
            busy(format!(
                "this server holds at most {MAX_HELD} listens at once here; end one first"
            ))
        })?;
        let scope = self.watchers.scope(
            self.watchers.limits.per_listen,
            self.out.clone(),
            self.address,
        );
        // Nothing may reach the client ahead of the opening.
        scope.add(watches, true)?;
        self.out
            .send(opening)
            .await
            .map_err(|_| ImportError::new(ErrorKind::Cancelled, "the client went away"))?;
        scope.open();
        Ok(Held {
            scope,
            closing,
            ends: self.ends.clone(),
            _place: place,
        })
    }
}

/// What a call may do about watches: keep them in its session's scope, and
/// hold its request open.
#[derive(Clone, Default)]
pub struct Watching {
    /// The session's scope (2025-11-25); none: the transport keeps no
    /// session for this call.
    pub session: Option<Arc<Scope>>,
    /// None: the transport cannot hold a request open.
    pub holds: Option<Holds>,
}

mod rounds;
#[cfg(test)]
mod tests;

/// A cap reached that frees up as watches end: worth retrying later.
fn busy(message: String) -> ImportError {
    ImportError::new(ErrorKind::Busy, message)
}
