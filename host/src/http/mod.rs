//! MCP's Streamable HTTP transport, at `/mcp`.
//!
//! - 2026-07-28: every request stands alone. It goes to a fresh instance and
//!   its response is the HTTP body, so any replica that shares the seal key
//!   answers any request, confirmation rounds included.
//! - 2025-11-25: `initialize` opens a session (`Mcp-Session-Id`) in this
//!   process. A call that needs a person answers with an event stream that
//!   carries `elicitation/create` first; the client POSTs its answer.
//!
//! Before a message reaches the component it passes the [`gate`] (token,
//! `Host`, `Origin`), size and time limits, and a bound on concurrent tool
//! calls. Closing a response early cancels its call.

mod connections;
mod gate;
mod headers;
mod sessions;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http::header::{
    ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ALLOW,
    CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER, VARY, WWW_AUTHENTICATE,
    X_CONTENT_TYPE_OPTIONS,
};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use connections::{Connections, Place};
use gate::{Admitted, Gate, Refusal};
use headers::{Claims, PROTOCOL_VERSION, SESSION_ID};
use sessions::{Session, Sessions};

use crate::flights::Grounded;
use crate::jsonrpc::{
    DUPLICATE_ID, Envelope, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    MAX_MESSAGE_BYTES, METHOD_NOT_FOUND, MISSING_CAPABILITY, PARSE_ERROR, UNSUPPORTED_VERSION,
    error_response, key,
};
use crate::outbox::{CALL_QUEUE_BYTES, Lines, outbox};
use crate::questions::Asker;
use crate::runtime::{Elicitor, Reply, Runtime};

/// Tool calls running at once (a call waiting for a person counts); past it,
/// they get 503 and a hint to retry. RUSTPAD_MCP_HTTP_MAX_CALLS changes it.
const MAX_CONCURRENT_CALLS: usize = 64;
const MAX_CALLS_VARIABLE: &str = "RUSTPAD_MCP_HTTP_MAX_CALLS";
const MAX_CALLS_LIMIT: usize = 100_000;
/// The host settings that concern only `--http`.
pub const SETTINGS: [&str; 3] = [
    gate::TOKEN_VARIABLE,
    gate::ORIGINS_VARIABLE,
    MAX_CALLS_VARIABLE,
];
/// Request bodies being received at once, in KiB: what slow or large uploads
/// may hold in memory together before more are turned away.
const BODY_BUDGET_KIB: usize = 256 << 10;
/// Requests other than tool calls that may run at once, per tool-call place.
const QUICK_PER_CALL: usize = 4;
/// Only a tool call carries text; every other message fits in this.
const SMALL_MESSAGE_BYTES: usize = 1 << 20;
/// How long a client may take to send a request's headers, and then its body.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// An event stream waiting on a person sends a comment this often, so
/// proxies do not close it as idle.
const KEEPALIVE: Duration = Duration::from_secs(20);
/// What a browser page may send and read (CORS), for the origins the gate allows.
const CORS_REQUEST_HEADERS: &str =
    "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id";
const CORS_EXPOSED_HEADERS: &str = "mcp-session-id, www-authenticate, retry-after";

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Where to listen, as given to `--http`: `HOST:PORT` or a bare port on loopback.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let address = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => text.to_string(),
    };
    address.parse().map_err(|_| {
        format!("--http needs an address like 127.0.0.1:8080 (or just a port), not {text:?}")
    })
}

/// Who may call, and how much at once: the operator's settings for `--http`.
pub struct Limits {
    pub gate: Gate,
    max_calls: usize,
}

impl Limits {
    /// Reads the settings for a listener on `listen`; a setting that is unsafe
    /// or unreadable is an error.
    pub fn from_env(listen: SocketAddr) -> Result<Limits, String> {
        let lookup = |name: &str| std::env::var(name).ok();
        let gate = Gate::new(listen, lookup)?;
        let max_calls = crate::settings::whole_number(
            &lookup,
            MAX_CALLS_VARIABLE,
            MAX_CONCURRENT_CALLS,
            1..=MAX_CALLS_LIMIT,
        )?;
        Ok(Limits { gate, max_calls })
    }
}

struct Server {
    runtime: Arc<Runtime>,
    /// The protocol revisions the component speaks, as its `server/discover`
    /// says: what `MCP-Protocol-Version` may name.
    revisions: Vec<String>,
    gate: Gate,
    sessions: Sessions,
    calls: Arc<Semaphore>,
    /// Places for everything but tool calls: quick, but each an instance.
    quick: Arc<Semaphore>,
    bodies: Arc<Semaphore>,
    trace: bool,
}

/// Serves MCP over HTTP on `address` until the process is stopped, after
/// saying on stderr where (the port, when 0 was asked for) and how guarded.
pub async fn serve(
    runtime: Arc<Runtime>,
    address: SocketAddr,
    limits: Limits,
    trace: bool,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|error| anyhow::anyhow!("cannot listen on {address}: {error}"))?;
    let protection = if limits.gate.requires_token() {
        "bearer token required"
    } else {
        "loopback only, no token"
    };
    eprintln!(
        "rustpad-mcp: serving MCP at http://{}/mcp ({protection})",
        listener.local_addr()?
    );
    let revisions = supported_revisions(&runtime).await;
    let server = Arc::new(Server {
        runtime,
        revisions,
        gate: limits.gate,
        sessions: Sessions::default(),
        calls: Arc::new(Semaphore::new(limits.max_calls)),
        quick: Arc::new(Semaphore::new(QUICK_PER_CALL * limits.max_calls)),
        bodies: Arc::new(Semaphore::new(BODY_BUDGET_KIB)),
        trace,
    });
    let connections = Arc::new(Connections::default());
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors, say: wait rather than spin.
                eprintln!("rustpad-mcp: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let server = server.clone();
        // The connection starts once it has its place, so a newcomer pushed
        // out at once never runs without one.
        let (seat, seated) = tokio::sync::oneshot::channel::<Place>();
        let task = tokio::spawn(async move {
            let Ok(place) = seated.await else {
                return;
            };
            let place = Arc::new(place);
            let for_requests = place.clone();
            let service = service_fn(move |request| {
                let (server, place) = (server.clone(), for_requests.clone());
                async move { Ok::<_, Infallible>(server.respond(request, &place).await) }
            });
            let serving = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = serving => {}
                () = place.stranger_deadline() => {}
            }
        });
        let _ = seat.send(connections.arrive(task.abort_handle()));
    }
}

/// Asks the component which revisions it speaks. The host keeps no list of
/// its own, so a component that speaks another set is served as it says.
async fn supported_revisions(runtime: &Runtime) -> Vec<String> {
    let discover = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let response = runtime
        .handle(&discover.to_string(), None, None)
        .await
        .ok()
        .and_then(|reply| reply.response)
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    response
        .as_ref()
        .and_then(|r| r["result"]["supportedVersions"].as_array())
        .map(|versions| {
            versions
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A request that passed the gate, read and parsed.
struct Message {
    text: String,
    envelope_id: Option<Value>,
    method: Option<String>,
    claims: Claims,
    /// For a response: the client's answer, as the question's caller gets it.
    answer: Option<crate::questions::Answer>,
    /// For `notifications/cancelled`: the request to stop.
    cancels: Option<String>,
}

impl Server {
    async fn respond(&self, request: Request<Incoming>, place: &Place) -> Response<Body> {
        if request.method() == Method::OPTIONS {
            return match self.gate.preflight(request.uri(), request.headers()) {
                Ok(admitted) => with_cors(preflight_answer(), &admitted),
                Err(refusal) => refused(refusal),
            };
        }
        let admitted = match self.gate.admit(request.uri(), request.headers()) {
            Ok(admitted) => admitted,
            // A page at a listed origin must be able to read the 401 to know
            // it needs a token.
            Err(Refusal::Unauthorized) => {
                let refusal = refused(Refusal::Unauthorized);
                return match self.gate.preflight(request.uri(), request.headers()) {
                    Ok(admitted) => with_cors(refusal, &admitted),
                    Err(_) => refusal,
                };
            }
            Err(refusal) => return refused(refusal),
        };
        if place.admit().is_err() {
            let mut response = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "Server busy: every connection this server keeps is taken; reuse an open one, or retry shortly\n",
            );
            let headers = response.headers_mut();
            headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
            headers.insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        let response = if request.uri().path() != "/mcp" {
            plain(StatusCode::NOT_FOUND, "Not found: MCP is served at /mcp\n")
        } else {
            match *request.method() {
                Method::POST => self.post(request).await,
                Method::DELETE => self.delete(request.headers()),
                _ => {
                    let mut response = plain(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "Method not allowed: send MCP messages with POST (this server opens no GET stream)\n",
                    );
                    response
                        .headers_mut()
                        .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
                    response
                }
            }
        };
        with_cors(response, &admitted)
    }

    /// DELETE ends a 2025-11-25 session.
    fn delete(&self, headers: &HeaderMap) -> Response<Body> {
        match headers.get(SESSION_ID).and_then(|v| v.to_str().ok()) {
            None => plain(
                StatusCode::BAD_REQUEST,
                "Bad request: DELETE ends a session and needs its Mcp-Session-Id header\n",
            ),
            Some(id) if self.sessions.close(id) => empty(StatusCode::NO_CONTENT),
            Some(_) => unknown_session(),
        }
    }

    /// Reads a POST's body within the size, memory and time limits, and
    /// parses it once: the parts the host routes on come from that one parse.
    async fn read(&self, headers: &HeaderMap, body: Incoming) -> Result<Message, Response<Body>> {
        if let Some(refusal) = unacceptable(headers) {
            return Err(refusal);
        }
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|length| length > MAX_MESSAGE_BYTES as u64) {
            return Err(too_large());
        }
        let text = match tokio::time::timeout(BODY_TIMEOUT, self.receive(body)).await {
            Err(_) => {
                return Err(plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request timeout: the body did not arrive within 30 seconds\n",
                ));
            }
            Ok(received) => received?,
        };
        // What the message claims is read once, the way the component will
        // read it, keeping only the parts the host routes on. A body that
        // cannot be read this way (an unpaired surrogate escape in a routed
        // field, or a routed key given twice) is refused rather than routed on
        // a guess, since its headers could not be checked against it.
        let claims = Claims::read(&text).map_err(|error| {
            let (code, message) = if text.trim_start().starts_with('[') {
                (
                    INVALID_REQUEST,
                    "Invalid request: batches are not part of MCP; send one message per request"
                        .to_string(),
                )
            } else if error.is_data() {
                (INVALID_REQUEST, format!("Invalid request: {error}"))
            } else {
                (PARSE_ERROR, format!("Parse error: {error}"))
            };
            rpc_error(StatusCode::BAD_REQUEST, &Value::Null, code, &message)
        })?;
        if claims.method().is_some_and(|m| m != "tools/call") && text.len() > SMALL_MESSAGE_BYTES {
            return Err(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "Payload too large: only tools/call may exceed {SMALL_MESSAGE_BYTES} bytes\n"
                ),
            ));
        }
        let envelope = Envelope::read(&text);
        let (envelope_id, method) = (envelope.id(), envelope.method.clone());
        let answer = envelope.is_response().then(|| envelope.answer());
        let cancels = (method.as_deref() == Some("notifications/cancelled"))
            .then(|| envelope.cancelled_request())
            .flatten();
        drop(envelope);
        if method.is_none() && answer.is_none() {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: expected one JSON-RPC request, notification or response",
            ));
        }
        Ok(Message {
            envelope_id,
            method,
            claims,
            answer,
            cancels,
            text,
        })
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

    async fn post(&self, request: Request<Incoming>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let message = match self.read(&parts.headers, body).await {
            Ok(message) => message,
            Err(refusal) => return refusal,
        };
        let method = message.method.as_deref().unwrap_or_default();
        // 2026-07-28 has no sessions, and initialize starts a new one.
        let session = if message.claims.is_modern() || method == "initialize" {
            None
        } else {
            match parts.headers.get(SESSION_ID).map(|v| v.to_str()) {
                None => None,
                Some(Ok(name)) => match self.sessions.get(name) {
                    Some(session) => Some(session),
                    None => return unknown_session(),
                },
                Some(Err(_)) => return unknown_session(),
            }
        };
        let id = message.envelope_id.clone();
        if let Some(problem) = self.revision_problem(&parts.headers, session.as_deref(), &message) {
            let id = id.unwrap_or_default();
            return rpc_error(StatusCode::BAD_REQUEST, &id, INVALID_REQUEST, &problem);
        }
        if message.method.is_some()
            && let Err(mismatch) = message.claims.check(&parts.headers)
        {
            let id = id.unwrap_or_default();
            return rpc_error(StatusCode::BAD_REQUEST, &id, HEADER_MISMATCH, &mismatch);
        }
        let Some(id) = id else {
            return self.take(session.as_deref(), &message);
        };
        if let Some(answer) = message.answer {
            return self.answer(session.as_deref(), answer, &id);
        }
        // Tool calls can be long (a dialog) and heavy; everything else is
        // quick and has places of its own, so listing and discovery (health
        // checks among them) are answered however many tool calls run.
        let places = if method == "tools/call" {
            &self.calls
        } else {
            &self.quick
        };
        let Ok(permit) = places.clone().try_acquire_owned() else {
            return busy(
                &id,
                "Server busy: too many requests are running; retry shortly",
            );
        };
        if method == "initialize" {
            let answer = self.initialize(&message.text, &id).await;
            drop(permit);
            return answer;
        }
        let dialogs = session.as_ref().map(|session| {
            if accepts_event_streams(&parts.headers) {
                Dialogs::Stream(session.questions.clone())
            } else {
                Dialogs::Refused
            }
        });
        let method = method.to_string();
        let stateless = session.is_none();
        match self.start(
            message.text,
            id.clone(),
            method,
            session,
            dialogs,
            Some(permit),
        ) {
            Ok(call) => call.respond(stateless).await,
            Err(Grounded::Duplicate) => {
                rpc_error(StatusCode::BAD_REQUEST, &id, INVALID_REQUEST, DUPLICATE_ID)
            }
            Err(Grounded::Closed) => unknown_session(),
        }
    }

    /// What is wrong with the request's `MCP-Protocol-Version`, if anything.
    /// In a session it must name the revision agreed; outside one it must
    /// name a revision the component speaks. (A 2026-07-28 request's header
    /// is checked against its `_meta` instead.)
    fn revision_problem(
        &self,
        headers: &HeaderMap,
        session: Option<&Session>,
        message: &Message,
    ) -> Option<String> {
        let named = headers.get(PROTOCOL_VERSION)?;
        let named = named.to_str().unwrap_or_default().trim();
        match session {
            Some(session) if named != session.version => Some(format!(
                "Bad request: MCP-Protocol-Version must be {}, the revision this session agreed on",
                session.version
            )),
            Some(_) => None,
            None if message.claims.is_modern()
                || self.revisions.is_empty()
                || self.revisions.iter().any(|r| r == named) =>
            {
                None
            }
            None => Some(format!(
                "Bad request: MCP-Protocol-Version {named:?} is not a revision this server speaks ({})",
                self.revisions.join(", ")
            )),
        }
    }

    /// A notification: only cancellation means anything to us.
    fn take(&self, session: Option<&Session>, message: &Message) -> Response<Body> {
        if let (Some(session), Some(request)) = (session, &message.cancels) {
            session.flights.cancel(request);
        }
        empty(StatusCode::ACCEPTED)
    }

    /// A client's answer to one of the session's questions.
    fn answer(
        &self,
        session: Option<&Session>,
        answer: crate::questions::Answer,
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

    async fn initialize(&self, text: &str, id: &Value) -> Response<Body> {
        let reply = self.runtime.handle(text, None, None).await;
        let session = match &reply {
            Ok(Reply {
                session: Some(negotiated),
                response: Some(response),
                ..
            }) => match self
                .sessions
                .open(negotiated.clone(), agreed_version(response))
            {
                Ok(session) => Some(session),
                Err(reason) => return busy(id, &format!("Server busy: {reason}")),
            },
            _ => None,
        };
        let reply = reply.map_err(|failure| failure.0);
        let mut response = finished(id, reply, session.is_none());
        if let Some(session) = session
            && let Ok(value) = HeaderValue::from_str(&session)
        {
            response.headers_mut().insert(SESSION_ID, value);
        }
        response
    }

    /// Starts a call on its own task: a client that goes away cancels it.
    fn start(
        &self,
        message: String,
        id: Value,
        method: String,
        session: Option<Arc<Session>>,
        dialogs: Option<Dialogs>,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Result<Call, Grounded> {
        let (out, questions) = outbox(CALL_QUEUE_BYTES);
        let elicitor: Option<Arc<dyn Elicitor>> = dialogs.map(|dialogs| match dialogs {
            Dialogs::Stream(questions) => Arc::new(Asker { questions, out }) as Arc<dyn Elicitor>,
            Dialogs::Refused => Arc::new(NoEventStream),
        });
        let runtime = self.runtime.clone();
        let negotiated = session.as_ref().map(|s| s.negotiated.clone());
        let trace = self.trace;
        let traced_id = id.clone();
        let task = tokio::spawn(async move {
            // The call's place among the concurrent tool calls is held as long
            // as the work runs, and given back when it ends or is stopped.
            let _permit = permit;
            let outcome = runtime
                .handle(&message, negotiated.as_deref(), elicitor)
                .await;
            if let (Ok(reply), true) = (&outcome, trace) {
                reply.cost.trace(&method, Some(&traced_id));
            }
            outcome.map_err(|failure| failure.0)
        });
        let flight = key(&id);
        if let Some(session) = &session {
            session.flights.start(flight.clone(), task.abort_handle())?;
        }
        Ok(Call {
            id,
            task,
            questions,
            session,
            flight,
        })
    }
}

/// How a session call may ask its questions.
enum Dialogs {
    /// On its response's event stream, answered through the session.
    Stream(Arc<crate::questions::Questions>),
    /// Not at all: the client accepts no event stream.
    Refused,
}

/// The elicitor of a call whose client accepts no event stream.
struct NoEventStream;

impl Elicitor for NoEventStream {
    fn ask(&self, _: String) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> {
        Box::pin(async {
            Err("the request's Accept header allows no text/event-stream, which is where the question would travel".into())
        })
    }
}

/// A call in progress, and what it needs to answer: its task, the questions
/// it may ask, and its place in the session.
struct Call {
    id: Value,
    task: JoinHandle<Result<Reply, String>>,
    questions: Lines,
    session: Option<Arc<Session>>,
    flight: String,
}

impl Drop for Call {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(session) = &self.session {
            session.flights.finish(&self.flight, self.task.id());
        }
    }
}

impl Call {
    /// Answers with plain JSON when the call finishes without asking anything,
    /// or with an event stream that starts with its first question. A call
    /// cancelled before it asked gets an empty event stream: nothing more is
    /// said about a cancelled request.
    async fn respond(mut self, stateless: bool) -> Response<Body> {
        tokio::select! {
            biased;
            outcome = &mut self.task => match outcome {
                Ok(outcome) => finished(&self.id, outcome, stateless),
                Err(stopped) if stopped.is_cancelled() => event_stream(stream::empty()),
                Err(_) => finished(&self.id, Err("the call failed inside the host".into()), stateless),
            },
            Some(question) = self.questions.next() => self.stream(question.line),
        }
    }

    fn stream(self, first: String) -> Response<Body> {
        let first = stream::iter([Ok(event(&first))]);
        let rest = stream::unfold(Some(self), |call| async move {
            let mut call = call?;
            tokio::select! {
                biased;
                outcome = &mut call.task => {
                    let response = match outcome {
                        Ok(Ok(reply)) => reply.response?,
                        Ok(Err(failure)) => error_response(&call.id, INTERNAL_ERROR, &failure),
                        // Cancelled by the client: nothing more is said about it.
                        Err(stopped) if stopped.is_cancelled() => return None,
                        Err(_) => {
                            eprintln!("rustpad-mcp: a call failed inside the host");
                            error_response(&call.id, INTERNAL_ERROR, "the call failed inside the host")
                        }
                    };
                    Some((Ok(event(&response)), None))
                }
                Some(question) = call.questions.next() => Some((Ok(event(&question.line)), Some(call))),
                () = tokio::time::sleep(KEEPALIVE) => Some((Ok(Frame::data(Bytes::from_static(b": keepalive\n\n"))), Some(call))),
            }
        });
        event_stream(first.chain(rest))
    }
}

fn event_stream(
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

/// The revision an `initialize` response agreed on.
fn agreed_version(response: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Initialized {
        result: Agreed,
    }
    #[derive(serde::Deserialize)]
    struct Agreed {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    serde_json::from_str::<Initialized>(response)
        .map(|initialized| initialized.result.protocol_version)
        .unwrap_or_default()
}

/// The HTTP response for a finished call. Outside a session (2026-07-28, or
/// a legacy request that forgot its session), protocol errors carry their
/// HTTP status too, as that revision asks; inside one, every JSON-RPC answer
/// is a 200, which is what 2025-11-25 clients read.
fn finished(id: &Value, outcome: Result<Reply, String>, stateless: bool) -> Response<Body> {
    match outcome {
        Ok(Reply {
            response: Some(response),
            ..
        }) => {
            let status = if stateless {
                status_of(&response)
            } else {
                StatusCode::OK
            };
            json_response(status, response)
        }
        Ok(_) => empty(StatusCode::ACCEPTED),
        Err(failure) => {
            eprintln!("rustpad-mcp: {failure}");
            let status = if stateless {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::OK
            };
            rpc_error(status, id, INTERNAL_ERROR, &failure)
        }
    }
}

/// The HTTP status a stateless JSON-RPC response travels with.
fn status_of(response: &str) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Shape {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    let code = serde_json::from_str::<Shape>(response)
        .ok()
        .and_then(|shape| shape.error)
        .map(|error| error.code);
    match code {
        None => StatusCode::OK,
        Some(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH | MISSING_CAPABILITY
            | UNSUPPORTED_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The media types listed in `Accept`, lower-cased, without parameters.
fn accepted(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            item.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .collect()
}

fn accepts_event_streams(headers: &HeaderMap) -> bool {
    let accepted = accepted(headers);
    accepted.is_empty()
        || accepted
            .iter()
            .any(|t| matches!(t.as_str(), "text/event-stream" | "text/*" | "*/*"))
}

/// A request we cannot answer in a form the client takes, or a body that is not JSON.
fn unacceptable(headers: &HeaderMap) -> Option<Response<Body>> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Some(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported media type: POST a JSON-RPC message as application/json\n",
        ));
    }
    let accepted = accepted(headers);
    let takes_json = accepted.is_empty()
        || accepted
            .iter()
            .any(|t| matches!(t.as_str(), "application/json" | "application/*" | "*/*"));
    if !takes_json {
        return Some(plain(
            StatusCode::NOT_ACCEPTABLE,
            "Not acceptable: answers are application/json (or text/event-stream while a question is open); list both in Accept\n",
        ));
    }
    None
}

fn refused(refusal: Refusal) -> Response<Body> {
    match refusal {
        Refusal::Unauthorized => {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send Authorization: Bearer <the server's RUSTPAD_MCP_HTTP_TOKEN>\n",
            );
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"rustpad-mcp\""),
            );
            response
        }
        Refusal::Origin(origin) => plain(
            StatusCode::FORBIDDEN,
            &format!(
                "Forbidden: requests from origin {origin:?} are not allowed (list it in RUSTPAD_MCP_HTTP_ORIGINS)\n"
            ),
        ),
        Refusal::Host(host) => plain(
            StatusCode::FORBIDDEN,
            &format!(
                "Forbidden: this server listens on loopback and answers only to localhost, not to Host {host:?}\n"
            ),
        ),
        Refusal::SeveralOrigins => plain(
            StatusCode::FORBIDDEN,
            "Forbidden: the request carries more than one Origin header\n",
        ),
        Refusal::Target(problem) => plain(
            StatusCode::BAD_REQUEST,
            &format!("Bad request: {problem}\n"),
        ),
        Refusal::Proxied => plain(
            StatusCode::FORBIDDEN,
            "Forbidden: this request came through a proxy, and this server has no token, so it would serve anyone the proxy serves; set RUSTPAD_MCP_HTTP_TOKEN (see docs/deployment.md)\n",
        ),
    }
}

/// The answer to a CORS preflight the gate let through.
fn preflight_answer() -> Response<Body> {
    let mut response = empty(StatusCode::NO_CONTENT);
    let headers = response.headers_mut();
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(CORS_REQUEST_HEADERS),
    );
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

/// Names the browser origin the gate allowed, so its page may read the answer.
fn with_cors(mut response: Response<Body>, admitted: &Admitted) -> Response<Body> {
    if let Some(origin) = &admitted.origin {
        let headers = response.headers_mut();
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        headers.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(CORS_EXPOSED_HEADERS),
        );
        headers.append(VARY, HeaderValue::from_static("Origin"));
    }
    response
}

fn busy(id: &Value, message: &str) -> Response<Body> {
    let mut response = rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, INTERNAL_ERROR, message);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn too_large() -> Response<Body> {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("Payload too large: a message may be at most {MAX_MESSAGE_BYTES} bytes\n"),
    )
}

fn unknown_session() -> Response<Body> {
    plain(
        StatusCode::NOT_FOUND,
        "Not found: no such session (it ended or expired); send initialize again\n",
    )
}

fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response<Body> {
    json_response(status, error_response(id, code, message))
}

fn json_response(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A plain-text refusal. Some echo what the client sent, so browsers are told
/// not to guess another type.
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())).boxed_unsync());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_default_to_loopback() {
        assert_eq!(parse_listen("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(
            parse_listen("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(parse_listen("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert_eq!(parse_listen("0.0.0.0:0").unwrap().to_string(), "0.0.0.0:0");
        for bad in ["", "host", "example.net:80", "127.0.0.1:70000", "localhost"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn protocol_errors_travel_with_their_http_status() {
        let error = |code: i64| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#)
        };
        assert_eq!(
            status_of(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
        assert_eq!(status_of(&error(-32601)), StatusCode::NOT_FOUND);
        for code in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(status_of(&error(code)), StatusCode::BAD_REQUEST, "{code}");
        }
        assert_eq!(status_of(&error(-32603)), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn a_post_must_be_json_and_accept_json() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, HeaderValue::from_static(value));
            }
            map
        };
        let status = |pairs| unacceptable(&headers(pairs)).map(|r| r.status());
        assert_eq!(status(&[("content-type", "application/json")]), None);
        assert_eq!(
            status(&[
                ("content-type", "Application/JSON; charset=utf-8"),
                ("accept", "text/event-stream, application/json")
            ]),
            None
        );
        assert_eq!(
            status(&[("content-type", "application/json"), ("accept", "*/*")]),
            None
        );
        assert_eq!(status(&[]), Some(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        assert_eq!(
            status(&[("content-type", "text/plain")]),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            status(&[
                ("content-type", "application/json"),
                ("accept", "text/event-stream")
            ]),
            Some(StatusCode::NOT_ACCEPTABLE)
        );
    }
}
