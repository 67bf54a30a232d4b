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
//! `Host`, `Origin`), the connection budget ([`connections`]), size and
//! time limits, and bounds on what runs at once ([`post`]). Closing a
//! response early cancels its call ([`stream`]).

mod connections;
mod post;
mod replies;
mod sessions;
mod stream;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, RETRY_AFTER};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustpad_mcp_rules::headers::SESSION_ID;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use connections::{Connections, Place};
use replies::{empty, plain, preflight_answer, refused, unknown_session, with_cors};
use rustpad_mcp_rules::gate::{Gate, Refusal};
use rustpad_mcp_rules::post as rules;
use sessions::{Session, Sessions};

use crate::limits::call_places::CallPlaces;
use crate::runtime::Runtime;
use crate::settings::{HTTP_MAX_CALLS, WatchLimits};
use crate::state::client_address::ClientAddress;
use crate::state::watches::{Holds, MAX_HELD, Watchers};
use crate::transport::route::Router;

/// Tool calls running at once (a call waiting for a person counts); past it,
/// they get 503 and a hint to retry. RUSTPAD_MCP_HTTP_MAX_CALLS changes it.
const MAX_CONCURRENT_CALLS: usize = 64;
const MAX_CALLS_LIMIT: usize = 100_000;
/// Request bodies being received at once, in KiB: what slow or large uploads
/// may hold in memory together before more are turned away.
const BODY_BUDGET_KIB: usize = 256 << 10;
/// Requests handled at once, per tool-call place, so listing and discovery
/// (health checks among them) are answered however many tool calls run.
const IN_HAND_PER_CALL: usize = 4;
/// How long a client may take to send a request's headers, and then its body.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How often sessions idle past their limit are ended.
const SESSION_SWEEP: Duration = Duration::from_secs(60);

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
            HTTP_MAX_CALLS,
            MAX_CONCURRENT_CALLS,
            1..=MAX_CALLS_LIMIT,
        )?;
        Ok(Limits { gate, max_calls })
    }

    /// Tool calls served at once.
    pub fn max_calls(&self) -> usize {
        self.max_calls
    }
}

struct Server {
    runtime: Arc<Runtime>,
    router: Router,
    gate: Gate,
    sessions: Arc<Sessions>,
    /// Places for tool calls, which the component takes through `calls.enter`.
    places: Arc<CallPlaces>,
    /// Places for every request being handled.
    in_hand: Arc<Semaphore>,
    bodies: Arc<Semaphore>,
    watchers: Arc<Watchers>,
    /// Places for held requests, server-wide.
    held: Arc<Semaphore>,
    /// Held requests (listens) end only when their client goes: nothing
    /// is ever sent here.
    holds_end: (
        tokio::sync::watch::Sender<bool>,
        tokio::sync::watch::Receiver<bool>,
    ),
    trace: bool,
}

impl Server {
    /// What a call from `client` may hold open: its stream goes to `out`.
    fn holds(&self, out: crate::state::client_queue::ClientQueue, client: ClientAddress) -> Holds {
        Holds {
            watchers: self.watchers.clone(),
            out,
            ends: self.holds_end.1.clone(),
            places: self.held.clone(),
            address: Some(client),
        }
    }
}

/// Serves MCP over HTTP on `address` until the process is stopped, after
/// saying on stderr where (the port, when 0 was asked for) and how guarded.
pub async fn serve(
    runtime: Arc<Runtime>,
    address: SocketAddr,
    limits: Limits,
    router: Router,
    watch_limits: WatchLimits,
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
    let watchers = Watchers::new(runtime.clone(), watch_limits);
    let server = Arc::new(Server {
        runtime,
        router,
        gate: limits.gate,
        sessions: Arc::new(Sessions::new(Some(watchers.clone()))),
        watchers,
        holds_end: tokio::sync::watch::channel(false),
        held: Arc::new(Semaphore::new(MAX_HELD)),
        places: Arc::new(CallPlaces::new(limits.max_calls, HTTP_MAX_CALLS)),
        in_hand: Arc::new(Semaphore::new(IN_HAND_PER_CALL * limits.max_calls)),
        bodies: Arc::new(Semaphore::new(BODY_BUDGET_KIB)),
        trace,
    });
    // Sessions nobody uses any more end on their own, with what they watch.
    let sessions = server.sessions.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(SESSION_SWEEP).await;
            sessions.end_idle();
        }
    });
    let connections = Arc::new(Connections::default());
    loop {
        let (stream, client) = match listener.accept().await {
            Ok((stream, peer)) => (stream, ClientAddress::of(peer.ip())),
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
                async move { Ok::<_, Infallible>(server.respond(request, &place, client).await) }
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

impl Server {
    async fn respond(
        &self,
        request: Request<Incoming>,
        place: &Place,
        client: ClientAddress,
    ) -> Response<Body> {
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
        let response = if request.uri().path() != rules::ENDPOINT {
            plain(StatusCode::NOT_FOUND, rules::NOT_FOUND)
        } else {
            match *request.method() {
                Method::POST => self.post(request, client).await,
                Method::DELETE => self.delete(request.headers()),
                Method::GET => self.session_stream(request.headers()),
                _ => {
                    let mut response =
                        plain(StatusCode::METHOD_NOT_ALLOWED, rules::GET_NOT_ALLOWED);
                    response
                        .headers_mut()
                        .insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                    response
                }
            }
        };
        with_cors(response, &admitted)
    }

    /// GET opens a 2025-11-25 session's stream, which carries the updates
    /// of its subscriptions; a session has one at a time.
    fn session_stream(&self, headers: &HeaderMap) -> Response<Body> {
        let Some(id) = headers.get(SESSION_ID).and_then(|v| v.to_str().ok()) else {
            return plain(
                StatusCode::BAD_REQUEST,
                "Bad request: GET opens a session's stream and needs its Mcp-Session-Id header\n",
            );
        };
        let Some(session) = self.sessions.get(id) else {
            return unknown_session();
        };
        match Session::take_stream(&session) {
            Some(lines) => stream::session_stream(lines),
            None => plain(
                StatusCode::CONFLICT,
                "Conflict: this session's stream is open already (one at a time)\n",
            ),
        }
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
}
