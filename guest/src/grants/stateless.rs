//! The `server` world's other imports, as a component in a WebAssembly host
//! has them: every request runs in a fresh instance and nothing outlives it,
//! and nothing can reach the client but the response.

/// Places for tool calls: the WebAssembly host bounds its own instances.
pub mod calls {
    use crate::grants::HostError;

    pub fn enter() -> Result<(), HostError> {
        Ok(())
    }

    pub fn enter_wait() -> Result<(), HostError> {
        Ok(())
    }
}

/// The record of this process's writers: none survives a request, so a
/// wait cannot tell this server's own writes from anyone's.
pub mod writers {
    pub fn note(_key: &str, _number: u64, _last_revision: Option<u64>) {}

    pub fn noted(_key: &str) -> Vec<(u64, Option<u64>)> {
        Vec::new()
    }
}

/// Write connections kept between calls: none outlives a request, so every
/// write joins its pad afresh.
pub mod held_writes {
    use crate::grants::websocket::Connection;

    /// A kept connection and its cursor (see the `held-writes` interface).
    pub struct Held {
        pub connection: Connection,
        pub cursor: String,
    }

    pub fn take(_key: &str) -> Option<Held> {
        None
    }

    pub fn give(_key: &str, connection: Connection, _cursor: &str) {
        connection.close();
    }
}

/// Questions pushed to the client mid-call: impossible without sessions.
/// The guard never asks here (see `grants::PUSHES_QUESTIONS`); this answer
/// only keeps a call that somehow did from waiting.
pub mod elicitation {
    use crate::grants::{ErrorKind, HostError};

    pub fn ask(_params: &str) -> Result<String, HostError> {
        Err(HostError::new(
            ErrorKind::Unsupported,
            "this server runs in a WebAssembly host without sessions, so it cannot ask the client mid-call",
        ))
    }
}

/// Running totals: no record survives a request, so each total is the
/// amount at hand (the removal rule reads the pad's history instead, and
/// the history's order of writes stands in for turns).
pub mod tally {
    /// One amount and where it was made (see the `tally` interface).
    #[derive(Clone, Debug)]
    pub struct Amount {
        pub value: u64,
        pub made_at: String,
    }

    /// A turn nothing else can hold: this instance is the only one here.
    #[derive(Debug)]
    pub struct Turn;

    pub fn add(_key: &str, amount: &Amount, _window_seconds: u32) -> Option<Vec<Amount>> {
        Some(if amount.value > 0 {
            vec![amount.clone()]
        } else {
            Vec::new()
        })
    }

    pub fn take_turn(_key: &str, _wait_ms: u32) -> Option<Turn> {
        Some(Turn)
    }
}

/// Subscriptions: a session's cannot be kept where nothing outlives a
/// request; a held request comes back in the dispatch's reply, for the
/// component's own handler to stream ([`crate::wasi_http`]) within the one
/// response it has.
pub mod watches {
    use crate::grants::{ErrorKind, HostError};

    /// One subject to watch, and the line to send when it changes.
    #[derive(Clone, Debug)]
    pub struct Watch {
        pub subject: String,
        pub update: String,
        pub cursor: Option<String>,
    }

    pub fn start(_watch: &Watch) -> Result<(), HostError> {
        Err(HostError::new(
            ErrorKind::Unsupported,
            "this server runs in a WebAssembly host that keeps no sessions, so it cannot keep a subscription between requests; use subscriptions/listen (2026-07-28), which holds one request open",
        ))
    }

    pub fn stop(_subject: &str) -> bool {
        false
    }
}

/// What a session used lately: there is no session to keep it for.
pub mod recent {
    pub fn note(_item: &str, _changed: Option<&str>) {}

    pub fn items() -> Vec<String> {
        Vec::new()
    }
}
