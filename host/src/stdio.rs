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
//!
//! Bounds: at most `max_calls` tool calls run at once (more are refused at
//! once, `RUSTPAD_MCP_MAX_CALLS`); other messages wait for one of a few places
//! of their own before stdin is read further; and what waits to be written is
//! bounded in bytes, stdin not being read while it is full. So a client that
//! stops reading stdout cannot make the process grow.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinSet;

use crate::flights::Flights;
use crate::jsonrpc::{
    DUPLICATE_ID, Envelope, INTERNAL_ERROR, INVALID_REQUEST, MAX_MESSAGE_BYTES, PARSE_ERROR,
    error_response, key,
};
use crate::lock;
use crate::outbox::{Lines, STDIO_QUEUE_BYTES, outbox};
use crate::questions::{Asker, Questions};
use crate::runtime::{Elicitor, Runtime};

/// Messages other than tool calls handled at once, per tool-call place.
const QUICK_PER_CALL: usize = 4;

/// After stdin closes, how long running calls may take to finish.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// Serves MCP on stdin/stdout until stdin closes, running at most
/// `max_calls` tool calls at once. With `trace`, each call's cost goes to
/// stderr as a JSON line.
pub async fn serve(runtime: Arc<Runtime>, max_calls: usize, trace: bool) -> anyhow::Result<()> {
    let (out, lines) = outbox(STDIO_QUEUE_BYTES);
    let writer = tokio::spawn(write_lines(lines));
    let calls = Arc::new(Semaphore::new(max_calls));
    let quick = Arc::new(Semaphore::new(QUICK_PER_CALL * max_calls));
    let questions = Arc::new(Questions::default());
    let session: Arc<Mutex<Option<String>>> = Arc::default();
    let flights = Arc::new(Flights::default());
    let mut tasks = JoinSet::new();
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut buffer = Vec::new();
    loop {
        // Keeping pace with a client that reads slowly, or not at all.
        if out.room().await.is_err() {
            break;
        }
        match read_message(&mut stdin, &mut buffer).await? {
            Line::End => break,
            Line::TooLong => {
                let _ = out
                    .send(error_response(
                        &Value::Null,
                        INVALID_REQUEST,
                        "the message is larger than this server accepts",
                    ))
                    .await;
                continue;
            }
            Line::Message => {}
        }
        let Ok(text) = std::str::from_utf8(&buffer) else {
            let _ = out
                .send(error_response(
                    &Value::Null,
                    PARSE_ERROR,
                    "Parse error: the message is not UTF-8",
                ))
                .await;
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        // Only what routing needs; the component reads the message itself.
        let envelope = Envelope::read(text);
        let method = envelope.method.as_deref();
        let id = envelope.id();
        let id = id.as_ref();
        match (method, id) {
            (None, Some(id)) if envelope.is_response() => {
                if !questions.resolve(&key(id), envelope.answer()) {
                    eprintln!("rustpad-mcp: ignored a response to no question of ours");
                }
            }
            (Some("notifications/cancelled"), _) => {
                if let Some(target) = envelope.cancelled_request() {
                    flights.cancel(&target);
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
                            let _ = out.send(response).await;
                        }
                    }
                    Err(failure) => {
                        if let Some(id) = id {
                            let _ = out
                                .send(error_response(id, INTERNAL_ERROR, &failure.0))
                                .await;
                        }
                    }
                }
            }
            _ => {
                // A tool call takes one of the call places; past them it is refused at once.
                let place = if method == Some("tools/call") {
                    match calls.clone().try_acquire_owned() {
                        Ok(place) => Some(place),
                        Err(_) => {
                            if let Some(id) = id {
                                let _ = out
                                    .send(error_response(id, INTERNAL_ERROR, &busy(max_calls)))
                                    .await;
                            }
                            continue;
                        }
                    }
                } else {
                    // Anything else is quick: wait for a place rather than refuse.
                    match quick.clone().acquire_owned().await {
                        Ok(place) => Some(place),
                        Err(_) => break,
                    }
                };
                let runtime = runtime.clone();
                let asker = Asker {
                    questions: questions.clone(),
                    out: out.clone(),
                };
                let out_for_task = out.clone();
                let current = lock(&session).clone();
                let message = text.to_string();
                let id = id.cloned();
                let flight = id.as_ref().map(key);
                let (flight_for_task, flights_for_task) = (flight.clone(), flights.clone());
                let method = method.unwrap_or_default().to_string();
                // A call starts once it is registered, so it cannot end (and
                // unregister) before it was ever registered.
                let (cleared, clearance) = oneshot::channel::<()>();
                let call_id = id.clone();
                let handle = tasks.spawn(async move {
                    // The call's place is held for as long as its work runs.
                    let _place = place;
                    if clearance.await.is_err() {
                        return;
                    }
                    // Unregisters the call however it ends, a panic included.
                    let _landing = flight_for_task.map(|flight| Landing {
                        flights: flights_for_task,
                        flight,
                    });
                    let elicitor: Arc<dyn Elicitor> = Arc::new(asker);
                    let outcome = runtime
                        .handle(&message, current.as_deref(), Some(elicitor))
                        .await;
                    if let (Ok(reply), true) = (&outcome, trace) {
                        reply.cost.trace(&method, call_id.as_ref());
                    }
                    match outcome {
                        Ok(reply) => {
                            if let Some(response) = reply.response {
                                let _ = out_for_task.send(response).await;
                            }
                        }
                        Err(failure) => {
                            eprintln!("rustpad-mcp: {}", failure.0);
                            if let Some(id) = &call_id {
                                let _ = out_for_task
                                    .send(error_response(id, INTERNAL_ERROR, &failure.0))
                                    .await;
                            }
                        }
                    }
                });
                match (flight, &id) {
                    (Some(flight), Some(id)) => match flights.start(flight, handle) {
                        Ok(()) => {
                            let _ = cleared.send(());
                        }
                        Err(_) => {
                            let _ = out
                                .send(error_response(id, INVALID_REQUEST, DUPLICATE_ID))
                                .await;
                        }
                    },
                    _ => {
                        let _ = cleared.send(());
                    }
                }
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    questions.fail_all("the client closed stdin");
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    // Whatever is still running is stopped, so the writer sees the end of its queue.
    drop(tasks);
    drop(out);
    let _ = writer.await;
    Ok(())
}

/// A running call's registration, given up when the call ends.
struct Landing {
    flights: Arc<Flights>,
    flight: String,
}

impl Drop for Landing {
    fn drop(&mut self) {
        if let Some(call) = tokio::task::try_id() {
            self.flights.finish(&self.flight, call);
        }
    }
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

/// What a tool call past the limit is told.
fn busy(max_calls: usize) -> String {
    format!(
        "Server busy: {max_calls} tool calls are already running, as many as this server runs at once (RUSTPAD_MCP_MAX_CALLS); retry when one has finished"
    )
}

async fn write_lines(mut lines: Lines) {
    let mut stdout = tokio::io::stdout();
    while let Some(queued) = lines.next().await {
        let line = &queued.line;
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
