//! The `server` world's other imports, as a component in a WebAssembly host
//! has them: every request runs in a fresh instance and nothing outlives it,
//! and nothing can reach the client but the response.

/// Places for tool calls: the WebAssembly host bounds its own instances.
pub mod calls {
    pub fn enter() -> Result<(), String> {
        Ok(())
    }
}

/// Questions pushed to the client mid-call: impossible without sessions.
/// The guard never asks here (see `grants::PUSHES_QUESTIONS`); this answer
/// only keeps a call that somehow did from waiting.
pub mod elicitation {
    pub fn ask(_params: &str) -> Result<String, String> {
        Err("this server runs in a WebAssembly host without sessions, so it cannot ask the client mid-call".into())
    }
}

/// Running totals: no record survives a request, so each total is the
/// amount at hand (the removal rule reads the pad's history instead).
pub mod tally {
    pub fn add(_key: &str, amount: u64, _window_seconds: u32) -> Option<u64> {
        Some(amount)
    }
}
