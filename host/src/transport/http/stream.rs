//! How a call's outcome travels back on the POST that carried it: plain JSON
//! when it finishes without streaming anything, or an event stream that starts
//! with its first line (a question it asks, or the opening of a listen it
//! holds) and ends with its response. A question withdrawn
//! because the call ended without its answer goes out on the stream before
//! it closes. A call stopped by the client gets nothing more.

use rustpad_mcp_rules::status::ReplyError;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use rustpad_mcp_rules::headers::SESSION_ID;
use rustpad_mcp_rules::watching::{KEEPALIVE, KEEPALIVE_COMMENT};

use super::Body;
use super::replies::{busy_headers, empty, json_response};
use super::sessions::{SessionStream, Sessions};
use crate::state::client_address::ClientAddress;
use crate::state::client_queue::Lines;
use crate::transport::call::{Ended, Running};

/// The answer to a POST whose call is `running`, with what it streams (its
/// questions, or a held listen's opening and updates) arriving on `events`. `in_session`: the request came in a session,
/// where every JSON-RPC answer is a 200.
pub(super) async fn respond(
    mut running: Running,
    mut events: Lines,
    in_session: bool,
    sessions: &Arc<Sessions>,
    client: ClientAddress,
) -> Response<Body> {
    tokio::select! {
        biased;
        ended = &mut running => match ended {
            Some(ended) => finished(ended, in_session, sessions, client),
            // Stopped before it asked anything: nothing more is said about it.
            None => event_stream(stream::empty()),
        },
        Some(first) = events.next() => {
            let first = stream::iter([Ok(event(&first.line))]);
            event_stream(first.chain(rest(running, events)))
        }
    }
}

/// The response of a call that ended without asking, and the session its
/// reply opened for its client at `client` (the answer to `initialize`).
fn finished(
    ended: Ended,
    in_session: bool,
    sessions: &Sessions,
    client: ClientAddress,
) -> Response<Body> {
    let opened = match &ended.session {
        Some(negotiated) => match sessions.open(negotiated.clone(), client) {
            Ok(id) => Some(id),
            Err(reason) => {
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    crate::transport::jsonrpc::error_response(
                        &serde_json::Value::Null,
                        rustpad_mcp_rules::codes::INTERNAL_ERROR,
                        &format!("Server busy: {reason}"),
                    ),
                );
                busy_headers(&mut response);
                return response;
            }
        },
        None => None,
    };
    let error = ended.error_kind();
    let Some(body) = ended.response else {
        return empty(StatusCode::ACCEPTED);
    };
    let in_session = in_session || opened.is_some();
    let code = rustpad_mcp_rules::status::of_reply(error, in_session);
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, body);
    if error == Some(ReplyError::Busy) {
        busy_headers(&mut response);
    }
    if let Some(id) = opened
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}

/// The events after the first: more of them, keepalives, then whatever was
/// still queued when the call ended (a withdrawn question, a last update),
/// and the response.
fn rest(
    running: Running,
    events: Lines,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send {
    stream::unfold(Some((running, events)), |state| async move {
        let (mut running, mut events) = state?;
        tokio::select! {
            biased;
            ended = &mut running => {
                let mut last: Vec<Result<Frame<Bytes>, Infallible>> = Vec::new();
                while let Some(queued) = events.ready() {
                    last.push(Ok(event(&queued.line)));
                }
                if let Some(response) = ended.and_then(|ended| ended.response) {
                    last.push(Ok(event(&response)));
                }
                Some((stream::iter(last).left_stream(), None))
            }
            Some(next) = events.next() => {
                Some((stream::iter([Ok(event(&next.line))]).right_stream(), Some((running, events))))
            }
            () = tokio::time::sleep(KEEPALIVE) => {
                let keepalive = Ok(Frame::data(Bytes::from_static(KEEPALIVE_COMMENT)));
                Some((stream::iter([keepalive]).right_stream(), Some((running, events))))
            }
        }
    })
    .flatten()
}

/// A session's stream (GET): the updates of its subscriptions as they come,
/// a keepalive comment while there are none, until the client closes it or
/// the session ends.
pub(super) fn session_stream(stream: SessionStream) -> Response<Body> {
    event_stream(stream::unfold(stream, |mut stream| async move {
        if stream.ended() {
            return None;
        }
        tokio::select! {
            queued = stream.lines().next() => {
                let queued = queued?;
                Some((Ok(event(&queued.line)), stream))
            }
            () = tokio::time::sleep(KEEPALIVE) => {
                let keepalive = Ok(Frame::data(Bytes::from_static(KEEPALIVE_COMMENT)));
                Some((keepalive, stream))
            }
        }
    }))
}

pub(super) fn event_stream(
    frames: impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static,
) -> Response<Body> {
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// One server-sent event carrying `message`, a line of `data:` per line of
/// it (the built-in component writes one line; another component may not).
fn event(message: &str) -> Frame<Bytes> {
    let mut event = String::from("event: message\n");
    for line in message.lines() {
        event.push_str("data: ");
        event.push_str(line);
        event.push('\n');
    }
    event.push('\n');
    Frame::data(Bytes::from(event))
}
