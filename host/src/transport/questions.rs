//! Questions the server asks the client (`elicitation/create`), and the calls
//! waiting for their answers.
//!
//! One [`Questions`] per client connection (stdio) or session (HTTP); an
//! [`Asker`] is the elicitor a call gets, writing its question wherever that
//! call's messages go. A question whose call ends without its answer
//! (cancelled, timed out, failed) is withdrawn with `notifications/cancelled`,
//! so the person's dialog does not stay open for an answer nobody will read.
//!
//! Behind the WIT interface `elicitation` (runtime::imports::elicitation).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};

use crate::runtime::Elicitor;
use crate::state::client_queue::ClientQueue;
use crate::transport::jsonrpc::key;

/// How long a person may take to answer a dialog.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The client's answer (its `ElicitResult` as JSON), or why there is none.
pub type Answer = Result<String, ImportError>;

/// The open questions of one client, by request id.
#[derive(Default)]
pub struct Questions {
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    next_id: AtomicU64,
}

impl Questions {
    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        crate::sync::lock(&self.pending)
    }

    /// Hands the client's answer (its result, or the error it sent) to the
    /// call that asked; false when no open question has this id (a late
    /// answer, or one to a question never asked).
    pub fn resolve(&self, id: &str, answer: Result<String, String>) -> bool {
        match self.pending().remove(id) {
            Some(waiting) => {
                let _ = waiting
                    .send(answer.map_err(|error| ImportError::new(ErrorKind::Rejected, error)));
                true
            }
            None => false,
        }
    }

    /// Whether no question is waiting for an answer.
    pub fn is_empty(&self) -> bool {
        self.pending().is_empty()
    }

    /// Ends every open question with `reason` (the client went away).
    pub fn fail_all(&self, reason: &str) {
        for (_, waiting) in self.pending().drain() {
            let _ = waiting.send(Err(ImportError::new(ErrorKind::Cancelled, reason)));
        }
    }

    async fn ask(&self, params: String, out: &ClientQueue) -> Answer {
        let params: Value = serde_json::from_str(&params)
            .map_err(|_| ImportError::new(ErrorKind::Invalid, "the question was not valid JSON"))?;
        let id = json!(format!(
            "rustpad-mcp-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let (sender, receiver) = oneshot::channel();
        self.pending().insert(key(&id), sender);
        // Removes the question however this call ends, cancelled included,
        // and withdraws it from the client if it is still open.
        let _open = Open {
            questions: self,
            id: id.clone(),
            out,
        };
        let question =
            json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params});
        // Delivering the question counts toward the person's time: a client
        // that stops reading cannot hold the call longer than one that never answers.
        let asked = async {
            let client_gone =
                || ImportError::new(ErrorKind::Cancelled, "the connection to the client ended");
            if out.send(question.to_string()).await.is_err() {
                return Err(client_gone());
            }
            receiver.await.unwrap_or_else(|_| Err(client_gone()))
        };
        match tokio::time::timeout(ANSWER_TIMEOUT, asked).await {
            Ok(answer) => answer,
            Err(_) => Err(ImportError::new(
                ErrorKind::TimedOut,
                "nobody answered the question in time",
            )),
        }
    }
}

struct Open<'a> {
    questions: &'a Questions,
    id: Value,
    out: &'a ClientQueue,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // Gone from the table already when its answer came.
        if self.questions.pending().remove(&key(&self.id)).is_none() {
            return;
        }
        let withdrawal = json!({
            "jsonrpc": "2.0",
            "method": crate::transport::jsonrpc::CANCELLED,
            "params": {
                "requestId": self.id,
                "reason": "the call that asked this has ended without an answer",
            },
        });
        self.out.send_soon(withdrawal.to_string());
    }
}

/// The elicitor one call gets: its questions go out on `out` and are
/// answered through `questions`.
pub struct Asker {
    pub questions: Arc<Questions>,
    pub out: ClientQueue,
}

impl Elicitor for Asker {
    fn ask(&self, params: String) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let questions = self.questions.clone();
        let out = self.out.clone();
        Box::pin(async move { questions.ask(params, &out).await })
    }
}
