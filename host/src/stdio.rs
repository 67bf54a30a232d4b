//! MCP's stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! The host knows framing, not meaning. It routes three kinds of lines:
//! - responses to its own `elicitation/create` requests go to the call that
//!   is waiting for them;
//! - `notifications/cancelled` stops the named request's instance, and
//!   nothing more is written for it;
//! - everything else goes to a fresh instance of the component, each on its
//!   own task, so a call waiting minutes for a person blocks nothing.
//!
//! `initialize` is the one message handled in line: its reply carries the
//! connection's session, which every later message needs.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};

use crate::runtime::{Cost, Elicitor, Runtime};

/// The largest message accepted on stdin (a whole pad is at most a few MiB of JSON).
const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// How long a person may take to answer a dialog.
const ELICITATION_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// After stdin closes, how long running calls may take to finish.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

type Answer = Result<String, String>;

/// The parts of a JSON-RPC message the transport routes on, kept raw: a
/// client's text (even one with unpaired surrogate escapes) never stops
/// routing, and the component gets the message as it was sent.
#[derive(Deserialize, Default)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<String>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Cancelled {
    #[serde(rename = "requestId")]
    request_id: Value,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: String,
}

/// The client at the other end of stdio: our writer and our open questions.
struct ClientLink {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    next_id: AtomicU64,
}

impl ClientLink {
    fn write(&self, message: String) {
        let _ = self.out.send(message);
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Delivers a client's response to the question it answers, if any.
    fn resolve(&self, id: &str, message: &Envelope) -> bool {
        let Some(waiting) = self.pending().remove(id) else {
            return false;
        };
        // The result goes to the component as the client wrote it: judging it is not our job.
        let answer = match (message.result, message.error) {
            (Some(result), _) => Ok(result.get().to_string()),
            (None, Some(error)) => Err(format!(
                "the client answered with an error: {}",
                serde_json::from_str::<ErrorBody>(error.get())
                    .map_or_else(|_| "(unreadable)".to_string(), |e| e.message)
            )),
            (None, None) => Err("the client's answer was empty".into()),
        };
        let _ = waiting.send(answer);
        true
    }

    fn fail_all(&self, reason: &str) {
        for (_, waiting) in self.pending().drain() {
            let _ = waiting.send(Err(reason.to_string()));
        }
    }
}

/// Removes an unanswered question when the call that asked goes away.
struct Question<'a> {
    link: &'a ClientLink,
    id: String,
}

impl Drop for Question<'_> {
    fn drop(&mut self) {
        self.link.pending().remove(&self.id);
    }
}

/// The elicitor handed to each call: a shared handle on the client link.
struct ArcLink(Arc<ClientLink>);

impl Elicitor for ArcLink {
    fn ask(&self, params: String) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let link = self.0.clone();
        Box::pin(async move {
            let params: Value = serde_json::from_str(&params)
                .map_err(|_| "the question was not valid JSON".to_string())?;
            let id = format!(
                "rustpad-mcp-{}",
                link.next_id.fetch_add(1, Ordering::Relaxed)
            );
            let id = json!(id);
            let (sender, receiver) = oneshot::channel();
            link.pending().insert(key(&id), sender);
            let question = Question {
                link: &link,
                id: key(&id),
            };
            link.write(json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}).to_string());
            let answer = match tokio::time::timeout(ELICITATION_TIMEOUT, receiver).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => Err("the connection to the client ended".into()),
                Err(_) => Err("nobody answered the question in time".into()),
            };
            drop(question);
            answer
        })
    }
}

/// One JSON line per call on stderr: where its time went (never any content).
fn trace_call(method: &str, id: Option<&Value>, cost: &Cost) {
    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    eprintln!(
        "{}",
        json!({
            "event": "call",
            "method": method,
            "id": id,
            "total_us": micros(cost.total),
            "instantiate_us": micros(cost.instantiate),
            "waiting_us": micros(cost.waiting),
            "fuel": cost.fuel,
            "memory_bytes": cost.memory,
        })
    );
}

/// Serves MCP on stdin/stdout until stdin closes. With `trace`, each call's
/// cost goes to stderr as a JSON line.
pub async fn serve(runtime: Arc<Runtime>, trace: bool) -> anyhow::Result<()> {
    let (out, lines) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_lines(lines));
    let link = Arc::new(ClientLink {
        out,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
    });
    let session: Arc<Mutex<Option<String>>> = Arc::default();
    let in_flight: Arc<Mutex<HashMap<String, AbortHandle>>> = Arc::default();
    let mut tasks = JoinSet::new();
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut buffer = Vec::new();
    loop {
        match read_message(&mut stdin, &mut buffer).await? {
            Line::End => break,
            Line::TooLong => {
                link.write(error_response(
                    &Value::Null,
                    -32600,
                    "the message is larger than this server accepts",
                ));
                continue;
            }
            Line::Message => {}
        }
        let Ok(text) = std::str::from_utf8(&buffer) else {
            link.write(error_response(
                &Value::Null,
                -32700,
                "Parse error: the message is not UTF-8",
            ));
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        // Only what routing needs; the component reads the message itself.
        let envelope: Envelope = serde_json::from_str(text).unwrap_or_default();
        let method = envelope.method.as_deref();
        let id = envelope
            .id
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .filter(|id| !id.is_null());
        let id = id.as_ref();
        match (method, id) {
            (None, Some(id)) if envelope.result.is_some() || envelope.error.is_some() => {
                if !link.resolve(&key(id), &envelope) {
                    eprintln!("rustpad-mcp: ignored a response to no question of ours");
                }
            }
            (Some("notifications/cancelled"), _) => {
                let target = envelope
                    .params
                    .and_then(|raw| serde_json::from_str::<Cancelled>(raw.get()).ok())
                    .map(|cancelled| key(&cancelled.request_id));
                let handle = target.and_then(|target| lock(&in_flight).remove(&target));
                if let Some(handle) = handle {
                    handle.abort();
                }
            }
            (Some("initialize"), _) => {
                let current = lock(&session).clone();
                match runtime.handle(text, current.as_deref(), None).await {
                    Ok(reply) => {
                        if let Some(new_session) = reply.session {
                            *lock(&session) = Some(new_session);
                        }
                        if let Some(response) = reply.response {
                            link.write(response);
                        }
                    }
                    Err(failure) => {
                        if let Some(id) = id {
                            link.write(error_response(id, -32603, &failure.0));
                        }
                    }
                }
            }
            _ => {
                let runtime = runtime.clone();
                let link = link.clone();
                let current = lock(&session).clone();
                let message = text.to_string();
                let flight_key = id.map(key);
                let id = id.cloned();
                let in_flight_for_task = in_flight.clone();
                let task_key = flight_key.clone();
                let method = method.unwrap_or_default().to_string();
                // Held until the task is registered, so a quick task cannot
                // unregister itself first and leave a stale entry behind.
                let mut flights = lock(&in_flight);
                let handle = tasks.spawn(async move {
                    let elicitor: Arc<dyn Elicitor> = Arc::new(ArcLink(link.clone()));
                    let outcome = runtime
                        .handle(&message, current.as_deref(), Some(elicitor))
                        .await;
                    if let (Ok(reply), true) = (&outcome, trace) {
                        trace_call(&method, id.as_ref(), &reply.cost);
                    }
                    if let Some(task_key) = &task_key {
                        lock(&in_flight_for_task).remove(task_key);
                    }
                    match outcome {
                        Ok(reply) => {
                            if let Some(response) = reply.response {
                                link.write(response);
                            }
                        }
                        Err(failure) => {
                            eprintln!("rustpad-mcp: {}", failure.0);
                            if let Some(id) = &id {
                                link.write(error_response(id, -32603, &failure.0));
                            }
                        }
                    }
                });
                if let Some(flight_key) = flight_key {
                    flights.insert(flight_key, handle);
                }
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    link.fail_all("the client closed stdin");
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    drop(link);
    let _ = writer.await;
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A request id as a map key: its JSON text, so 1 and "1" stay distinct.
fn key(id: &Value) -> String {
    id.to_string()
}

fn error_response(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

enum Line {
    Message,
    TooLong,
    End,
}

/// Reads one newline-terminated message into `buffer`, never holding more
/// than [`MAX_MESSAGE_BYTES`] of it.
async fn read_message(
    reader: &mut (impl AsyncBufRead + Unpin),
    buffer: &mut Vec<u8>,
) -> std::io::Result<Line> {
    buffer.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, buffer.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Message,
            });
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        if buffer.len() + chunk.len() > MAX_MESSAGE_BYTES {
            too_long = true;
            buffer.clear();
        } else if !too_long {
            buffer.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(found);
        reader.consume(used);
        if found {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Message
            });
        }
    }
}

async fn write_lines(mut lines: mpsc::UnboundedReceiver<String>) {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.recv().await {
        let written = async {
            stdout.write_all(line.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
            stdout.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
}
