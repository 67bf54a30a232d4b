//! MCP's stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! The host knows framing, not meaning ([`crate::transport::route`]): a response goes
//! to the call waiting for it, `notifications/cancelled` stops the named
//! request's call (nothing more is written for it), and everything else is a
//! call ([`crate::transport::call`]) on a task of its own, so a call waiting minutes for
//! a person blocks nothing. A reply that carries a session becomes the
//! session every later call gets; a call that may open one is finished
//! before the next line is read, so the messages after it see its session.
//!
//! The connection is one session: its subscriptions last until stdin
//! closes, when every held listen ends with its result.
//!
//! Bounds: a tool call takes one of `max_calls` places through the
//! component (`RUSTPAD_MCP_MAX_CALLS`), and is refused at once past them;
//! every message waits for one of a few places of its own before more of
//! stdin is read; and what waits to be written is bounded in bytes, stdin not
//! being read while it is full. So a client that stops reading stdout cannot
//! make the process grow.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustpad_mcp_rules::codes::{INVALID_REQUEST, PARSE_ERROR};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::limits::call_places::CallPlaces;
use crate::runtime::{Elicitor, Grants, Runtime};
use crate::settings::{MAX_CALLS, WatchLimits};
use crate::state::client_queue::{Lines, STDIO_QUEUE_BYTES, outbox};
use crate::state::recently_used::RecentlyUsed;
use crate::state::watches::{Holds, MAX_HELD, Watchers, Watching};
use crate::sync::lock;
use crate::transport::call::{Ended, Launch, launch};
use crate::transport::jsonrpc::{MAX_MESSAGE_BYTES, error_response, key};
use crate::transport::questions::{Asker, Questions};
use crate::transport::route::{Route, Router, SessionUse};
use crate::transport::running_calls::RunningCalls;

/// Messages handled at once, per tool-call place.
const IN_HAND_PER_CALL: usize = 4;

/// After stdin closes, how long running calls may take to finish.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// Serves MCP on stdin/stdout until stdin closes, running at most
/// `max_calls` tool calls at once. With `trace`, each call's cost goes to
/// stderr as a JSON line.
pub async fn serve(
    runtime: Arc<Runtime>,
    max_calls: usize,
    watch_limits: WatchLimits,
    router: Router,
    trace: bool,
) -> anyhow::Result<()> {
    let (out, lines) = outbox(STDIO_QUEUE_BYTES);
    // The connection is the 2025-11-25 session; held listens end with stdin.
    let watchers = Watchers::new(runtime.clone(), watch_limits);
    let (end_holds, ends) = tokio::sync::watch::channel(false);
    let watching = Watching {
        session: Some(Arc::new(watchers.scope(
            watch_limits.per_session,
            out.clone(),
            None,
        ))),
        holds: Some(Holds {
            watchers,
            out: out.clone(),
            ends,
            places: Arc::new(Semaphore::new(MAX_HELD)),
            address: None,
        }),
    };
    // What this client used lately: the connection is its one session.
    let recent = RecentlyUsed::new(out.clone());
    let writer = tokio::spawn(write_lines(lines));
    let places = Arc::new(CallPlaces::new(max_calls, MAX_CALLS));
    let in_hand = Arc::new(Semaphore::new(IN_HAND_PER_CALL * max_calls));
    let questions = Arc::new(Questions::default());
    let session: Arc<Mutex<Option<String>>> = Arc::default();
    let running_calls = Arc::new(RunningCalls::default());
    let mut tasks = JoinSet::new();
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut buffer = Vec::new();
    loop {
        // Keeping pace with a client that reads slowly, or not at all.
        if out.room().await.is_err() {
            break;
        }
        let Ok(place) = in_hand.clone().acquire_owned().await else {
            break;
        };
        match read_message(&mut stdin, &mut buffer).await? {
            Line::End => break,
            Line::TooLong => {
                let refusal = "the message is larger than this server accepts";
                let _ = out
                    .send(error_response(&Value::Null, INVALID_REQUEST, refusal))
                    .await;
                continue;
            }
            Line::Message => {}
        }
        let Ok(text) = std::str::from_utf8(&buffer) else {
            let refusal = "Parse error: the message is not UTF-8";
            let _ = out
                .send(error_response(&Value::Null, PARSE_ERROR, refusal))
                .await;
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let (id, method, opens_session) = match router.route(text) {
            Route::Answer { id, answer } => {
                if !questions.resolve(&key(&id), answer) {
                    eprintln!("rustpad-mcp: ignored a response to no question of ours");
                }
                continue;
            }
            Route::Cancel { request, .. } => {
                if let Some(target) = request {
                    running_calls.cancel(&target);
                }
                continue;
            }
            Route::Call {
                id,
                method,
                session,
            } => (id, method, session == SessionUse::Opens),
        };
        let asker: Arc<dyn Elicitor> = Arc::new(Asker {
            questions: questions.clone(),
            out: out.clone(),
        });
        let call = Launch {
            message: text.to_string(),
            id: id.clone(),
            method,
            headers: None,
            session: lock(&session).clone(),
            grants: Grants {
                elicitor: Some(asker),
                places: Some(places.clone()),
                watching: watching.clone(),
                recent: Some(recent.clone()),
            },
            running_calls: Some(running_calls.clone()),
            place: Some(place),
        };
        let running = launch(&runtime, call, trace);
        let (out, session) = (out.clone(), session.clone());
        let finished = tasks.spawn(async move {
            let ended = match (running, &id) {
                (Ok(running), _) => running.await,
                (Err(_), Some(id)) => Some(Ended::duplicate(id)),
                (Err(_), None) => None,
            };
            let Some(ended) = ended else {
                return;
            };
            if let Some(opened) = ended.session {
                *lock(&session) = Some(opened);
            }
            if let Some(response) = ended.response {
                let _ = out.send(response).await;
            }
        });
        if opens_session {
            let opener = finished.id();
            while let Some(done) = tasks.join_next_with_id().await {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(stopped) => stopped.id(),
                };
                if id == opener {
                    break;
                }
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    questions.fail_all("the client closed stdin");
    let _ = end_holds.send(true);
    drop(watching);
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    // Whatever is still running is stopped, so the writer sees the end of its queue.
    running_calls.close();
    drop(tasks);
    drop(out);
    drop(recent);
    let _ = writer.await;
    Ok(())
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
