//! 2025-11-25 sessions over HTTP: what `initialize` negotiated, the session's
//! open questions, its running calls, its subscriptions and the stream
//! (GET) their updates travel on, under a random `Mcp-Session-Id`.
//!
//! Sessions live in this process; a client of the 2025-11-25 revision must
//! reach the same replica for the life of its session (2026-07-28 clients
//! have no session and may reach any replica).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::state::client_address::ClientAddress;
use crate::state::client_queue::{CALL_QUEUE_BYTES, Lines, outbox};
use crate::state::recently_used::RecentlyUsed;
use crate::state::watches::{Scope, Watchers};
use crate::sync::lock;
use crate::transport::questions::Questions;
use crate::transport::running_calls::RunningCalls;

/// Open sessions one process keeps; past it, the least recently used ends.
const MAX_SESSIONS: usize = 10_000;
/// A session nobody used for this long is over (longer than a dialog may
/// stay open, so a session waiting on a person is never cut short).
const IDLE_LIMIT: Duration = Duration::from_secs(30 * 60);

pub struct Session {
    /// The component's record of the negotiation, handed back with each message.
    pub negotiated: String,
    pub questions: Arc<Questions>,
    pub running_calls: Arc<RunningCalls>,
    /// Its subscriptions; none where nothing can be watched.
    pub scope: Option<Arc<Scope>>,
    /// What the session used lately.
    pub recent: Arc<RecentlyUsed>,
    /// Where their updates wait for the session's stream; taken while a
    /// GET has it open.
    stream: Mutex<Option<Lines>>,
    ended: std::sync::atomic::AtomicBool,
    last_used: Mutex<Instant>,
}

impl Session {
    /// Idle time; a session whose stream is open is in use.
    fn idle(&self) -> Duration {
        if lock(&self.stream).is_none() {
            return Duration::ZERO;
        }
        lock(&self.last_used).elapsed()
    }

    fn end(&self, reason: &str) {
        self.ended.store(true, std::sync::atomic::Ordering::Release);
        self.running_calls.close();
        self.questions.fail_all(reason);
        if let Some(scope) = &self.scope {
            scope.stop_all();
        }
        // An open stream ends with its queue.
        lock(&self.stream).take();
    }

    /// The session's stream, unless a GET has it already; it comes back
    /// when that GET's response is dropped.
    pub fn take_stream(session: &Arc<Session>) -> Option<SessionStream> {
        let lines = lock(&session.stream).take()?;
        Some(SessionStream {
            lines: Some(lines),
            session: Arc::downgrade(session),
        })
    }
}

/// A session's stream while a GET has it.
pub struct SessionStream {
    lines: Option<Lines>,
    session: std::sync::Weak<Session>,
}

impl SessionStream {
    pub fn lines(&mut self) -> &mut Lines {
        self.lines.as_mut().expect("held until dropped")
    }

    /// The session ended (or is gone): the stream should close.
    pub fn ended(&self) -> bool {
        self.session
            .upgrade()
            .is_none_or(|session| session.ended.load(std::sync::atomic::Ordering::Acquire))
    }
}

impl Drop for SessionStream {
    fn drop(&mut self) {
        if let Some(session) = self.session.upgrade() {
            *lock(&session.last_used) = Instant::now();
            *lock(&session.stream) = self.lines.take();
        }
    }
}

#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, Arc<Session>>>,
    watchers: Option<Arc<Watchers>>,
}

impl Sessions {
    /// Sessions whose subscriptions `watchers` watch.
    pub fn new(watchers: Option<Arc<Watchers>>) -> Sessions {
        Sessions {
            open: Mutex::default(),
            watchers,
        }
    }

    /// Opens a session for `negotiated` and returns its id, or why it could
    /// not. A full table first lets go of expired sessions, then of the least
    /// recently used one that has nothing running (a session waiting on a
    /// person is never cut off to make room).
    pub fn open(&self, negotiated: String, client: ClientAddress) -> Result<String, &'static str> {
        let id = random_id().ok_or("the system gave no randomness for a session id")?;
        let mut open = lock(&self.open);
        if open.len() >= MAX_SESSIONS {
            end_idle(&mut open);
        }
        if open.len() >= MAX_SESSIONS {
            let oldest_idle = open
                .iter()
                .filter(|(_, session)| {
                    session.running_calls.is_empty() && session.questions.is_empty()
                })
                .min_by_key(|(_, session)| *lock(&session.last_used))
                .map(|(id, _)| id.clone());
            let session = oldest_idle
                .and_then(|oldest| open.remove(&oldest))
                .ok_or("too many sessions are busy; retry later")?;
            session.end("the server needed room for a newer session");
        }
        let (out, lines) = outbox(CALL_QUEUE_BYTES);
        let recent = RecentlyUsed::new(out.clone());
        let scope = self.watchers.as_ref().map(|watchers| {
            Arc::new(watchers.scope(watchers.limits().per_session, out, Some(client)))
        });
        open.insert(
            id.clone(),
            Arc::new(Session {
                negotiated,
                questions: Arc::default(),
                running_calls: Arc::default(),
                scope,
                recent,
                stream: Mutex::new(Some(lines)),
                ended: Default::default(),
                last_used: Mutex::new(Instant::now()),
            }),
        );
        Ok(id)
    }

    /// Ends every session idle past its limit (its subscriptions with it).
    pub fn end_idle(&self) {
        end_idle(&mut lock(&self.open));
    }

    /// The session `id` names, if it is open.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut open = lock(&self.open);
        let session = open.get(id)?.clone();
        if session.idle() >= IDLE_LIMIT {
            open.remove(id);
            drop(open);
            session.end("the session expired");
            return None;
        }
        *lock(&session.last_used) = Instant::now();
        Some(session)
    }

    /// Ends session `id`: its questions fail and its calls stop, including
    /// any that were just starting. False if it was not open.
    pub fn close(&self, id: &str) -> bool {
        let Some(session) = lock(&self.open).remove(id) else {
            return false;
        };
        session.end("the client ended the session");
        true
    }
}

fn end_idle(open: &mut HashMap<String, Arc<Session>>) {
    open.retain(|_, session| {
        let keep = session.idle() < IDLE_LIMIT;
        if !keep {
            session.end("the session expired");
        }
        keep
    });
}

/// 128 random bits in hex: visible ASCII, as the transport requires.
fn random_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> ClientAddress {
        ClientAddress::of(std::net::Ipv4Addr::LOCALHOST.into())
    }

    #[test]
    fn a_closed_session_is_gone() {
        let sessions = Sessions::default();
        let id = sessions.open("{}".into(), here()).unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(sessions.get(&id).is_some());
        assert!(sessions.close(&id));
        assert!(sessions.get(&id).is_none());
        assert!(!sessions.close(&id));
        assert_ne!(sessions.open("{}".into(), here()).unwrap(), id);
    }

    #[tokio::test]
    async fn a_full_table_makes_room_by_ending_the_least_recently_used_idle_session() {
        let sessions = Sessions::default();
        let first = sessions.open("{}".into(), here()).unwrap();
        let ids: Vec<String> = (1..MAX_SESSIONS)
            .map(|_| sessions.open("{}".into(), here()).unwrap())
            .collect();
        // Using the first session makes ids[0] the least recently used; a call
        // running in it makes ids[1] the one to go.
        assert!(sessions.get(&first).is_some());
        let waiting = tokio::spawn(std::future::pending::<()>());
        let busy = sessions.get(&ids[0]).unwrap();
        busy.running_calls
            .start("1".into(), waiting.abort_handle())
            .unwrap();
        let newest = sessions.open("{}".into(), here()).unwrap();
        assert!(sessions.get(&first).is_some());
        assert!(sessions.get(&newest).is_some());
        let evicted: Vec<&String> = ids.iter().filter(|id| sessions.get(id).is_none()).collect();
        assert_eq!(evicted, [&ids[1]]);
        waiting.abort();
    }
}
