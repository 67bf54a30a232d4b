//! A POST to `/mcp`: one JSON-RPC message, read within the size, memory and
//! time limits, then routed on its JSON-RPC framing alone ([`crate::transport::route`]).
//! A response goes to the session question it answers,
//! `notifications/cancelled` stops a session's call, and everything else is
//! a call ([`crate::transport::call`]) whose outcome travels back on this POST
//! ([`super::stream`]). The component checks the standard headers against
//! the body, and says what MCP means.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::header::CONTENT_LENGTH;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use rustpad_mcp_rules::codes::{INVALID_REQUEST, PARSE_ERROR};
use rustpad_mcp_rules::headers::SESSION_ID;
use rustpad_mcp_rules::post::{self, MAX_MESSAGE_BYTES};
use rustpad_mcp_rules::status;
use serde_json::Value;

use super::replies::{busy, empty, json_response, plain, rpc_error, too_large, unknown_session};
use super::sessions::Session;
use super::{BODY_TIMEOUT, Body, Server, stream};
use crate::runtime::{Elicitor, Grants, HttpHeaders};
use crate::state::client_address::ClientAddress;
use crate::state::client_queue::{CALL_QUEUE_BYTES, outbox};
use crate::state::watches::Watching;
use crate::transport::call::{Launch, launch};
use crate::transport::jsonrpc::{DUPLICATE_ID, key};
use crate::transport::questions::Asker;
use crate::transport::route::{Route, SessionUse};
use crate::transport::running_calls::NotLaunched;

impl Server {
    pub(super) async fn post(
        &self,
        request: Request<Incoming>,
        client: ClientAddress,
    ) -> Response<Body> {
        let (parts, body) = request.into_parts();
        if let Some((status, explanation)) = post::unacceptable(&parts.headers) {
            return plain(status, explanation);
        }
        let headers = match standard_headers(&parts.headers) {
            Ok(headers) => headers,
            Err(repeated) => {
                let (status, explanation) = post::repeated_header(repeated);
                return plain(status, &explanation);
            }
        };
        let text = match self.read(&parts.headers, body).await {
            Ok(text) => text,
            Err(refusal) => return refusal,
        };
        let (id, method, session_use) = match self.router.route(&text) {
            Route::Answer { id, answer } => {
                let session = match self.named_session(&parts.headers) {
                    Ok(session) => session,
                    Err(UnknownSession) => return unknown_session(),
                };
                return self.answer(session.as_deref(), answer, &id);
            }
            Route::Cancel { request, session } => {
                let session = match self.session(session, &parts.headers) {
                    Ok(session) => session,
                    Err(UnknownSession) => return unknown_session(),
                };
                return self
                    .cancel(&text, &headers, session.as_deref(), request)
                    .await;
            }
            Route::Call {
                id,
                method,
                session,
            } => (id, method, session),
        };
        let session = match self.session(session_use, &parts.headers) {
            Ok(session) => session,
            Err(UnknownSession) => return unknown_session(),
        };
        let Ok(place) = self.in_hand.clone().try_acquire_owned() else {
            return busy(
                &id.unwrap_or_default(),
                "Server busy: too many requests are running; retry shortly",
            );
        };
        // The call's event stream: its questions, or a held listen's lines.
        let (out, events) = outbox(CALL_QUEUE_BYTES);
        let watching = Watching {
            session: session.as_ref().and_then(|session| session.scope.clone()),
            holds: post::accepts_event_streams(&parts.headers)
                .then(|| self.holds(out.clone(), client)),
        };
        // Questions travel on the response's event stream, which only a
        // session's client can answer, and only if it takes event streams.
        let elicitor = session.as_ref().map(|session| -> Arc<dyn Elicitor> {
            if post::accepts_event_streams(&parts.headers) {
                Arc::new(Asker {
                    questions: session.questions.clone(),
                    out,
                })
            } else {
                Arc::new(NoEventStream)
            }
        });
        let call = Launch {
            message: text,
            id: id.clone(),
            method,
            headers: Some(headers),
            session: session.as_ref().map(|session| session.negotiated.clone()),
            grants: Grants {
                elicitor,
                places: Some(self.places.clone()),
                watching,
                recent: session.as_ref().map(|session| session.recent.clone()),
            },
            running_calls: session
                .as_ref()
                .map(|session| session.running_calls.clone()),
            place: Some(place),
        };
        match launch(&self.runtime, call, self.trace) {
            Ok(running) => {
                stream::respond(running, events, session.is_some(), &self.sessions, client).await
            }
            Err(NotLaunched::Duplicate) => rpc_error(
                StatusCode::BAD_REQUEST,
                &id.unwrap_or_default(),
                INVALID_REQUEST,
                DUPLICATE_ID,
            ),
            Err(NotLaunched::Closed) => unknown_session(),
        }
    }

    /// The session a message uses: the one its `Mcp-Session-Id` names,
    /// unless it stands alone or opens a session of its own.
    fn session(
        &self,
        using: SessionUse,
        headers: &HeaderMap,
    ) -> Result<Option<Arc<Session>>, UnknownSession> {
        match using {
            SessionUse::None | SessionUse::Opens => Ok(None),
            SessionUse::Continues => self.named_session(headers),
        }
    }

    /// The session the request's `Mcp-Session-Id` names, if it names one;
    /// naming one this process does not have is refused.
    fn named_session(&self, headers: &HeaderMap) -> Result<Option<Arc<Session>>, UnknownSession> {
        let Some(name) = headers.get(SESSION_ID) else {
            return Ok(None);
        };
        match name.to_str().ok().and_then(|name| self.sessions.get(name)) {
            Some(session) => Ok(Some(session)),
            None => Err(UnknownSession),
        }
    }

    /// `notifications/cancelled`: its headers must agree with its body as
    /// any message's must (the component checks them, and answers nothing
    /// when they do); then the session's call it names is stopped.
    async fn cancel(
        &self,
        text: &str,
        headers: &HttpHeaders,
        session: Option<&Session>,
        request: Option<String>,
    ) -> Response<Body> {
        let negotiated = session.map(|session| session.negotiated.as_str());
        match self
            .runtime
            .handle(text, Some(headers), negotiated, Grants::default())
            .await
        {
            Ok(replied) if replied.reply.response.is_some() => {
                let reply = replied.reply;
                let code = status::of_reply(reply.error_kind(), session.is_some());
                let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
                return json_response(status, reply.response.unwrap_or_default());
            }
            Ok(_) => {}
            Err(failure) => return plain(StatusCode::INTERNAL_SERVER_ERROR, &failure.0),
        }
        if let (Some(session), Some(request)) = (session, request) {
            session.running_calls.cancel(&request);
        }
        empty(StatusCode::ACCEPTED)
    }

    /// Reads a POST's body within the size, memory and time limits.
    async fn read(&self, headers: &HeaderMap, body: Incoming) -> Result<String, Response<Body>> {
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|length| length > MAX_MESSAGE_BYTES as u64) {
            return Err(too_large());
        }
        match tokio::time::timeout(BODY_TIMEOUT, self.receive(body)).await {
            Err(_) => Err(plain(
                StatusCode::REQUEST_TIMEOUT,
                "Request timeout: the body did not arrive within 30 seconds\n",
            )),
            Ok(received) => received,
        }
    }

    /// Receives a body, taking its share of the memory budget as its bytes
    /// arrive, so that a slow sender holds only what it has sent.
    async fn receive(&self, mut body: Incoming) -> Result<String, Response<Body>> {
        let mut received = Vec::new();
        let mut budget = Vec::new();
        let mut reserved_kib = 0;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return Err(plain(
                    StatusCode::BAD_REQUEST,
                    "Bad request: the body was cut short\n",
                ));
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if received.len() + data.len() > MAX_MESSAGE_BYTES {
                return Err(too_large());
            }
            received.extend_from_slice(&data);
            let needed_kib = received.len().div_ceil(1024);
            if needed_kib > reserved_kib {
                let more = u32::try_from(needed_kib - reserved_kib).unwrap_or(u32::MAX);
                match self.bodies.clone().try_acquire_many_owned(more) {
                    Ok(permit) => budget.push(permit),
                    Err(_) => {
                        return Err(busy(
                            &Value::Null,
                            "Server busy: too many requests are being received; retry shortly",
                        ));
                    }
                }
                reserved_kib = needed_kib;
            }
        }
        String::from_utf8(received).map_err(|_| {
            rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                PARSE_ERROR,
                "Parse error: the message is not UTF-8",
            )
        })
    }

    /// A client's answer to one of the session's questions.
    fn answer(
        &self,
        session: Option<&Session>,
        answer: Result<String, String>,
        id: &Value,
    ) -> Response<Body> {
        match session {
            Some(session) if session.questions.resolve(&key(id), answer) => {
                empty(StatusCode::ACCEPTED)
            }
            Some(_) => plain(
                StatusCode::BAD_REQUEST,
                "Bad request: no open question of this session has that id (answered already, or timed out)\n",
            ),
            None => plain(
                StatusCode::BAD_REQUEST,
                "Bad request: an answer needs the Mcp-Session-Id of the session that asked\n",
            ),
        }
    }
}

/// The standard headers, each at most once, in the shape the runtime passes on.
fn standard_headers(headers: &HeaderMap) -> Result<HttpHeaders, &'static str> {
    let standard = post::standard_headers(headers)?;
    Ok(HttpHeaders {
        protocol_version: standard.protocol_version,
        method: standard.method,
        name: standard.name,
    })
}

/// A request named a session this process does not have (404).
struct UnknownSession;

/// The elicitor of a call whose client accepts no event stream.
struct NoEventStream;

impl Elicitor for NoEventStream {
    fn ask(
        &self,
        _: String,
    ) -> Pin<Box<dyn Future<Output = crate::transport::questions::Answer> + Send>> {
        Box::pin(async {
            Err(rustpad_mcp_rules::errors::Error::new(
                rustpad_mcp_rules::errors::ErrorKind::Unsupported,
                "the request's Accept header allows no text/event-stream, which is where the question would travel",
            ))
        })
    }
}
