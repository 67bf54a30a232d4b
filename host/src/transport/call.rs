//! The life of a call, the same on every transport: it takes its message's
//! share of the memory budget, registers under its request id so that
//! `notifications/cancelled` can stop it, runs in a fresh instance with what
//! the transport grants (a way to ask the client, the places for tool
//! calls, watches), is traced, turns a failure into an error for the client,
//! and unregisters however it ends. A request the component held open
//! (a listen) lets go of its places and waits until the transport ends it. A question it left open is withdrawn by the
//! questions themselves ([`crate::transport::questions`]).

use rustpad_mcp_rules::status::ReplyError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustpad_mcp_rules::codes::{INTERNAL_ERROR, INVALID_REQUEST};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio::task::JoinHandle;

use crate::runtime::{Grants, HttpHeaders, Runtime};
use crate::transport::jsonrpc::{DUPLICATE_ID, error_response, key};
use crate::transport::running_calls::{NotLaunched, RunningCalls};

/// One message to run, with everything its transport gives it.
pub struct Launch {
    pub message: String,
    /// Its request id, from the envelope; none for a notification.
    pub id: Option<Value>,
    /// Its method as sent, for trace lines only.
    pub method: String,
    pub headers: Option<HttpHeaders>,
    pub session: Option<String>,
    pub grants: Grants,
    /// Where it can be cancelled by id: its connection's or session's.
    pub running_calls: Option<Arc<RunningCalls>>,
    /// A place the transport took for it, held while it runs.
    pub place: Option<OwnedSemaphorePermit>,
}

/// How a call ended: the component's reply, or the error the host wrote
/// in its place.
pub use crate::runtime::Reply as Ended;

impl Ended {
    fn error(id: Option<&Value>, error: ReplyError, message: &str) -> Ended {
        Ended {
            response: id.map(|id| error_response(id, error.code(), message)),
            session: None,
            error: Some(error.into()),
        }
    }

    /// The answer to a request whose id is already taken by a running call.
    pub fn duplicate(id: &Value) -> Ended {
        Ended::error(Some(id), ReplyError::Code(INVALID_REQUEST), DUPLICATE_ID)
    }
}

/// A call on its way; awaiting it gives how it ended, or none when it was
/// stopped (cancelled, or its session ended).
pub struct Running {
    task: JoinHandle<Ended>,
}

/// Dropping a call stops it: a client that went away gets nothing more.
impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Future for Running {
    type Output = Option<Ended>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Ended>> {
        Pin::new(&mut self.task)
            .poll(context)
            .map(|joined| match joined {
                Ok(ended) => Some(ended),
                Err(stopped) if stopped.is_cancelled() => None,
                Err(_) => {
                    eprintln!("rustpad-mcp: a call failed inside the host");
                    Some(Ended::default())
                }
            })
    }
}

/// Starts `launch` on a task of its own. Refused (and never started) when
/// its id is taken by a running call, or its connection or session ended.
pub fn launch(runtime: &Arc<Runtime>, launch: Launch, trace: bool) -> Result<Running, NotLaunched> {
    let Launch {
        message,
        id,
        method,
        headers,
        session,
        grants,
        running_calls,
        place,
    } = launch;
    let runtime = runtime.clone();
    let request = id.as_ref().map(key);
    let registration = running_calls.clone().zip(request.clone());
    // The call starts once it is registered, so it cannot end (and
    // unregister) before it was ever registered.
    let (cleared, clearance) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let place = place;
        if clearance.await.is_err() {
            return Ended::default();
        }
        // Unregisters the call however it ends, a panic included.
        let _registered = registration.map(|(running_calls, request)| Registration {
            running_calls,
            request,
        });
        let bytes = match runtime.reserve(message.len()) {
            Ok(bytes) => bytes,
            Err(reason) => {
                return Ended::error(
                    id.as_ref(),
                    ReplyError::Busy,
                    &format!("Server busy: {reason}"),
                );
            }
        };
        let outcome = runtime
            .handle(&message, headers.as_ref(), session.as_deref(), grants)
            .await;
        match outcome {
            Ok(replied) => {
                if trace {
                    replied.cost.trace(&method, id.as_ref());
                }
                let Some(held) = replied.held else {
                    return replied.reply;
                };
                // A held request waits on its own: it takes no place and
                // none of the message budget meanwhile.
                drop((place, bytes));
                Ended {
                    response: Some(held.until_ended().await),
                    ..Ended::default()
                }
            }
            Err(failure) => {
                eprintln!("rustpad-mcp: {}", failure.0);
                Ended::error(id.as_ref(), ReplyError::Code(INTERNAL_ERROR), &failure.0)
            }
        }
    });
    if let (Some(running_calls), Some(request)) = (running_calls, request) {
        running_calls.start(request, task.abort_handle())?;
    }
    let _ = cleared.send(());
    Ok(Running { task })
}

/// A running call's registration, given up when the call ends.
struct Registration {
    running_calls: Arc<RunningCalls>,
    request: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(call) = tokio::task::try_id() {
            self.running_calls.finish(&self.request, call);
        }
    }
}
