//! 2025-11-25 sessions over HTTP: what `initialize` negotiated, the session's
//! open questions, and its running calls, under a random `Mcp-Session-Id`.
//!
//! Sessions live in this process; a client of the 2025-11-25 revision must
//! reach the same replica for the life of its session (2026-07-28 clients
//! have no session and may reach any replica).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::task::AbortHandle;

use crate::questions::Questions;

/// Open sessions one process keeps; past it, `initialize` is refused.
const MAX_SESSIONS: usize = 10_000;
/// A session nobody used for this long is forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(60 * 60);

pub struct Session {
    /// The component's record of the negotiation, handed back with each message.
    pub negotiated: String,
    /// The protocol revision agreed, which `MCP-Protocol-Version` must repeat.
    pub version: String,
    pub questions: Arc<Questions>,
    calls: Mutex<HashMap<String, AbortHandle>>,
    last_used: Mutex<Instant>,
}

impl Session {
    /// Remembers a running call, so `notifications/cancelled` can stop it.
    pub fn track(&self, request: String, call: AbortHandle) {
        lock(&self.calls).insert(request, call);
    }

    pub fn untrack(&self, request: &str) {
        lock(&self.calls).remove(request);
    }

    /// Stops the call working on `request`, if it still runs.
    pub fn cancel(&self, request: &str) {
        if let Some(call) = lock(&self.calls).remove(request) {
            call.abort();
        }
    }

    fn end(&self, reason: &str) {
        self.questions.fail_all(reason);
        for (_, call) in lock(&self.calls).drain() {
            call.abort();
        }
    }
}

#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    /// Opens a session for `negotiated` and returns its id, or `None` when
    /// this process holds as many sessions as it will.
    pub fn open(&self, negotiated: String, version: String) -> Option<String> {
        let mut open = lock(&self.open);
        if open.len() >= MAX_SESSIONS {
            open.retain(|_, session| lock(&session.last_used).elapsed() < IDLE_LIMIT);
            if open.len() >= MAX_SESSIONS {
                return None;
            }
        }
        let id = random_id()?;
        open.insert(
            id.clone(),
            Arc::new(Session {
                negotiated,
                version,
                questions: Arc::default(),
                calls: Mutex::default(),
                last_used: Mutex::new(Instant::now()),
            }),
        );
        Some(id)
    }

    /// The session `id` names, if it is open.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut open = lock(&self.open);
        let session = open.get(id)?.clone();
        if lock(&session.last_used).elapsed() >= IDLE_LIMIT {
            open.remove(id);
            drop(open);
            session.end("the session expired");
            return None;
        }
        *lock(&session.last_used) = Instant::now();
        Some(session)
    }

    /// Ends session `id`: its questions fail and its calls stop. False if it
    /// was not open.
    pub fn close(&self, id: &str) -> bool {
        let Some(session) = lock(&self.open).remove(id) else {
            return false;
        };
        session.end("the client ended the session");
        true
    }
}

/// 128 random bits in hex: visible ASCII, as the transport requires.
fn random_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_session_is_gone_and_its_questions_fail() {
        let sessions = Sessions::default();
        let id = sessions.open("{}".into(), "2025-11-25".into()).unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(sessions.get(&id).is_some());
        assert!(sessions.close(&id));
        assert!(sessions.get(&id).is_none());
        assert!(!sessions.close(&id));
        assert_ne!(sessions.open("{}".into(), "2025-11-25".into()).unwrap(), id);
    }
}
