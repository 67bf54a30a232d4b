//! Calls in progress, by request id: what `notifications/cancelled` stops.
//!
//! One [`RunningCalls`] per stdio connection or HTTP session. Ending the
//! connection or session closes it: every call still running stops, and a
//! call that arrives afterwards is stopped at once.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio::task::{AbortHandle, Id};

#[derive(Default)]
pub struct RunningCalls {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: HashMap<String, AbortHandle>,
    closed: bool,
}

/// Why a call was not launched.
#[derive(Debug, PartialEq)]
pub enum NotLaunched {
    /// A call with the same request id is still running.
    Duplicate,
    /// The connection or session has ended.
    Closed,
}

impl RunningCalls {
    fn state(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// Records a running call under its request id. When that is refused,
    /// the call is stopped.
    pub fn start(&self, request: String, call: AbortHandle) -> Result<(), NotLaunched> {
        let mut state = self.state();
        let refused = if state.closed {
            Some(NotLaunched::Closed)
        } else if state.running.contains_key(&request) {
            Some(NotLaunched::Duplicate)
        } else {
            None
        };
        match refused {
            Some(reason) => {
                call.abort();
                Err(reason)
            }
            None => {
                state.running.insert(request, call);
                Ok(())
            }
        }
    }

    /// Forgets a call that ended; only that call, should its id have been
    /// reused since.
    pub fn finish(&self, request: &str, call: Id) {
        let mut state = self.state();
        if state
            .running
            .get(request)
            .is_some_and(|running| running.id() == call)
        {
            state.running.remove(request);
        }
    }

    /// Whether no call is running.
    pub fn is_empty(&self) -> bool {
        self.state().running.is_empty()
    }

    /// Stops the call working on `request`, if it still runs.
    pub fn cancel(&self, request: &str) {
        if let Some(call) = self.state().running.remove(request) {
            call.abort();
        }
    }

    /// Stops every call, now and to come.
    pub fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        for (_, call) in state.running.drain() {
            call.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_id_runs_once_and_closed_calls_stop_newcomers() {
        let running_calls = RunningCalls::default();
        let first = tokio::spawn(std::future::pending::<()>());
        let second = tokio::spawn(std::future::pending::<()>());
        assert_eq!(
            running_calls.start("1".into(), first.abort_handle()),
            Ok(())
        );
        assert_eq!(
            running_calls.start("1".into(), second.abort_handle()),
            Err(NotLaunched::Duplicate)
        );
        assert!(second.await.unwrap_err().is_cancelled());
        // Only the call that registered can unregister itself.
        let other = tokio::spawn(std::future::pending::<()>());
        running_calls.finish("1", other.id());
        running_calls.cancel("1");
        assert!(first.await.unwrap_err().is_cancelled());
        running_calls.close();
        assert_eq!(
            running_calls.start("2".into(), other.abort_handle()),
            Err(NotLaunched::Closed)
        );
        assert!(other.await.unwrap_err().is_cancelled());
    }
}
