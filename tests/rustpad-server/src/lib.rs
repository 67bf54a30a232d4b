//! A stand-in for the upstream Rustpad server (`rustpad-server`) for end-to-end tests: the same
//! HTTP routes and WebSocket protocol, plus `/_test/...` controls for seeding pads, recording
//! client messages and switching on misbehaviour per pad.
//!
//! This file owns the router and the server's lifetime; `rustpad.rs` owns a document and the
//! faithful protocol, `misbehave.rs` the deliberate deviations, `control.rs` the test controls and
//! `typist.rs` a scripted client.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

mod control;
mod http;
pub mod misbehave;
mod ot;
pub mod person;
pub mod protocol;
mod rustpad;
pub mod tls;
pub mod typist;

pub use control::{Seed, Seeded};
pub use misbehave::Mode;
pub use rustpad::MAX_DOCUMENT_CHARS;

use control::{Controls, Recorded, lock};
use http::{Body, json, not_found, text};
use rustpad::Rustpad;

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Whether diagnostics go to stderr; set from [`ServerOptions::verbose`].
fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// Writes a diagnostic line to stderr when verbose output is on (stdout is reserved for the
/// single "listening on" line that harnesses parse).
macro_rules! note {
    ($($arg:tt)*) => {
        if $crate::verbose() {
            eprintln!("rustpad-test-server: {}", format_args!($($arg)*));
        }
    };
}
pub(crate) use note;

/// How the server runs.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Log connections, edits and errors to stderr. The switch is process-wide.
    pub verbose: bool,
    /// Serve HTTPS and WSS with this configuration (see [`tls::load`]) instead of plain HTTP.
    pub tls: Option<tls::TlsConfig>,
}

/// How long a client may take to complete the TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Statistics returned by `/api/stats`, with upstream's field names.
#[derive(Serialize)]
struct Stats {
    start_time: u64,
    num_documents: usize,
    database_size: usize,
}

/// Shared state of one running server.
struct Server {
    documents: Mutex<HashMap<String, Arc<Rustpad>>>,
    controls: Controls,
    start_time: u64,
    /// Flipped to `true` when the server stops; every task it spawned watches it.
    stop: watch::Sender<bool>,
    /// Set when connections are TLS.
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// Flips the stop signal when the accept loop ends or is dropped, so no connection outlives it.
struct StopOnDrop(Arc<Server>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.send_replace(true);
    }
}

/// Runs the server on `listener` until the returned future is dropped or the process ends.
pub async fn serve(listener: TcpListener, options: ServerOptions) -> std::io::Result<()> {
    Server::new(&options).run(listener).await
}

impl Server {
    fn new(options: &ServerOptions) -> Arc<Self> {
        if options.verbose {
            VERBOSE.store(true, Ordering::Relaxed);
        }
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        Arc::new(Self {
            documents: Mutex::default(),
            controls: Controls::default(),
            start_time,
            stop: watch::Sender::new(false),
            tls: options.tls.clone().map(tokio_rustls::TlsAcceptor::from),
        })
    }

    async fn run(self: Arc<Self>, listener: TcpListener) -> std::io::Result<()> {
        let _stop = StopOnDrop(Arc::clone(&self));
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Usually running out of file descriptors; pausing beats spinning.
                    note!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            let server = Arc::clone(&self);
            self.spawn(async move {
                match server.tls.clone() {
                    None => server.serve_http(stream, peer).await,
                    Some(acceptor) => {
                        // Handshakes run on the connection's own task, so a client that never
                        // finishes one holds up nobody else.
                        let handshake = acceptor.accept(stream);
                        match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
                            Ok(Ok(stream)) => server.serve_http(stream, peer).await,
                            Ok(Err(e)) => note!("TLS handshake with {peer} failed: {e}"),
                            Err(_) => note!("TLS handshake with {peer} timed out"),
                        }
                    }
                }
            });
        }
    }

    /// Serves HTTP/1.1 (with upgrades) on one accepted connection, plain or TLS.
    async fn serve_http<IO>(self: Arc<Self>, io: IO, peer: SocketAddr)
    where
        IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let service = service_fn(move |req| {
            let server = Arc::clone(&self);
            async move { Ok::<_, std::convert::Infallible>(server.route(req).await) }
        });
        let connection = http1::Builder::new()
            .serve_connection(TokioIo::new(io), service)
            .with_upgrades();
        if let Err(e) = connection.await {
            note!("http connection from {peer} failed: {e}");
        }
    }

    /// Spawns a task that is cancelled when the server stops.
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut stop = self.stop.subscribe();
        tokio::spawn(async move {
            tokio::select! {
                () = task => {}
                _ = stop.wait_for(|stopped| *stopped) => {}
            }
        });
    }

    async fn route(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        // The raw path: ids are compared as sent, never percent-decoded, as upstream.
        let path = req.uri().path().to_owned();
        if let Some(rest) = path.strip_prefix("/api/") {
            // Like warp's `path::end()`, one trailing slash is tolerated.
            let rest = rest.strip_suffix('/').unwrap_or(rest);
            let segments: Vec<&str> = rest.split('/').collect();
            return match segments.as_slice() {
                ["text", id] if !id.is_empty() => self.text_route(id),
                ["stats"] => self.stats_route(),
                ["socket", id] if !id.is_empty() => self.socket_route(id, req),
                _ => not_found(),
            };
        }
        if let Some(rest) = path.strip_prefix("/_test/") {
            return self.control_route(rest, req).await;
        }
        not_found()
    }

    fn text_route(&self, id: &str) -> Response<Body> {
        if let Some(response) = self.controls.mode(id).and_then(|mode| mode.text_response()) {
            return response;
        }
        let body = self.document(id).map(|pad| pad.text()).unwrap_or_default();
        text(StatusCode::OK, body)
    }

    fn stats_route(&self) -> Response<Body> {
        let stats = Stats {
            start_time: self.start_time,
            num_documents: lock(&self.documents).len(),
            database_size: 0,
        };
        json(
            StatusCode::OK,
            serde_json::to_string(&stats).expect("stats serialise"),
        )
    }

    fn socket_route(self: Arc<Self>, id: &str, mut req: Request<Incoming>) -> Response<Body> {
        let response = http::websocket_handshake(&req);
        if response.status() != StatusCode::SWITCHING_PROTOCOLS {
            return response;
        }
        // As upstream, a valid upgrade request creates the document before the upgrade itself.
        let pad = Arc::clone(lock(&self.documents).entry(id.to_owned()).or_default());
        let mode = self.controls.mode(id).filter(|mode| !mode.is_http());
        let log = self.controls.log(id);
        let upgrade = hyper::upgrade::on(&mut req);
        self.spawn(async move {
            let io = match upgrade.await {
                Ok(upgraded) => TokioIo::new(upgraded),
                Err(e) => {
                    note!("websocket upgrade failed: {e}");
                    return;
                }
            };
            match mode {
                Some(mode) if mode.wants_raw_socket() => {
                    misbehave::on_raw_connection(&pad, &mode, io).await;
                }
                mode => {
                    let socket = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                    let socket = Recorded::new(socket, log);
                    match mode {
                        Some(mode) => misbehave::on_connection(&pad, &mode, socket).await,
                        None => pad.on_connection(socket).await,
                    }
                }
            }
        });
        response
    }

    async fn control_route(&self, rest: &str, req: Request<Incoming>) -> Response<Body> {
        let Some((what, id)) = rest.split_once('/') else {
            return not_found();
        };
        if id.is_empty() || id.contains('/') {
            return not_found();
        }
        let method = req.method().clone();
        match (what, method) {
            ("seed", Method::POST) => {
                let body = match read_body(req).await {
                    Ok(body) => body,
                    Err(response) => return response,
                };
                let seed: Seed = match serde_json::from_slice(&body) {
                    Ok(seed) => seed,
                    Err(e) => return text(StatusCode::BAD_REQUEST, format!("bad seed: {e}\n")),
                };
                match self.seed(id, &seed) {
                    Ok(seeded) => json(
                        StatusCode::OK,
                        serde_json::to_string(&seeded).expect("seed reply serialises"),
                    ),
                    Err(e) => text(StatusCode::BAD_REQUEST, format!("bad seed: {e}\n")),
                }
            }
            ("mode", Method::PUT) => {
                let body = match read_body(req).await {
                    Ok(body) => body,
                    Err(response) => return response,
                };
                let Ok(body) = std::str::from_utf8(&body) else {
                    return text(StatusCode::BAD_REQUEST, "the mode must be UTF-8\n");
                };
                match parse_mode(body) {
                    Ok(mode) => {
                        let shown = mode.as_ref().map(Mode::to_string).unwrap_or_default();
                        self.controls.set_mode(id, mode);
                        text(StatusCode::OK, shown)
                    }
                    Err(e) => text(StatusCode::BAD_REQUEST, format!("{e}\n")),
                }
            }
            ("mode", Method::GET) => {
                let shown = self
                    .controls
                    .mode(id)
                    .map(|mode| mode.to_string())
                    .unwrap_or_default();
                text(StatusCode::OK, shown)
            }
            ("log", Method::GET) => json(
                StatusCode::OK,
                serde_json::to_string(&self.controls.received(id)).expect("strings serialise"),
            ),
            ("log", Method::DELETE) => {
                self.controls.clear_log(id);
                text(StatusCode::OK, "")
            }
            ("history-reads", Method::GET) => {
                let reads = self.document(id).map_or(0, |pad| pad.history_reads());
                json(StatusCode::OK, format!("{{\"reads\":{reads}}}"))
            }
            ("seed" | "mode" | "log" | "history-reads", _) => {
                text(StatusCode::METHOD_NOT_ALLOWED, "HTTP method not allowed\n")
            }
            _ => not_found(),
        }
    }

    fn document(&self, id: &str) -> Option<Arc<Rustpad>> {
        lock(&self.documents).get(id).cloned()
    }

    fn seed(&self, id: &str, seed: &Seed) -> Result<Seeded, String> {
        let (pad, seeded) = seed.build()?;
        if let Some(old) = lock(&self.documents).insert(id.to_owned(), Arc::new(pad)) {
            // Connections on the replaced document would otherwise keep editing a ghost.
            old.kill();
        }
        Ok(seeded)
    }
}

fn parse_mode(text: &str) -> Result<Option<Mode>, String> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        text.parse().map(Some)
    }
}

async fn read_body(req: Request<Incoming>) -> Result<Bytes, Response<Body>> {
    match req.into_body().collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => Err(text(
            StatusCode::BAD_REQUEST,
            format!("could not read the body: {e}\n"),
        )),
    }
}

/// A server running in the background of a test, stopped when dropped.
pub struct TestServer {
    addr: SocketAddr,
    server: Arc<Server>,
    task: JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub async fn start(options: ServerOptions) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        Self::start_on(listener, options)
    }

    /// Starts a server on a listener the caller bound.
    pub fn start_on(listener: TcpListener, options: ServerOptions) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let server = Server::new(&options);
        let task = tokio::spawn(Arc::clone(&server).run(listener));
        Ok(Self { addr, server, task })
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT` (`https://` with TLS), without a trailing slash.
    pub fn url(&self) -> String {
        let scheme = if self.server.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// `ws://HOST:PORT/api/socket/{pad}` (`wss://` with TLS).
    pub fn socket_url(&self, pad: &str) -> String {
        let scheme = if self.server.tls.is_some() {
            "wss"
        } else {
            "ws"
        };
        format!("{scheme}://{}/api/socket/{pad}", self.addr)
    }

    /// Seeds a pad as `POST /_test/seed/{pad}` does.
    pub fn seed(&self, pad: &str, seed: &Seed) -> Result<Seeded, String> {
        self.server.seed(pad, seed)
    }

    /// Sets (or with `""` clears) a pad's mode as `PUT /_test/mode/{pad}` does.
    pub fn set_mode(&self, pad: &str, mode: &str) -> Result<(), String> {
        let mode = parse_mode(mode)?;
        self.server.controls.set_mode(pad, mode);
        Ok(())
    }

    /// Every client message received on the pad so far, as `GET /_test/log/{pad}` returns.
    pub fn received(&self, pad: &str) -> Vec<String> {
        self.server.controls.received(pad)
    }

    /// The pad's current text, as `/api/text/{pad}` returns without a mode.
    pub fn text(&self, pad: &str) -> String {
        self.server
            .document(pad)
            .map(|pad| pad.text())
            .unwrap_or_default()
    }

    /// The pad's history length, or `None` if no such document exists.
    pub fn revision(&self, pad: &str) -> Option<usize> {
        self.server.document(pad).map(|pad| pad.revision())
    }

    /// When this server started, as `/api/stats` says (Unix seconds).
    pub fn start_time(&self) -> u64 {
        self.server.start_time
    }

    /// Stops accepting and closes every connection.
    pub fn stop(self) {}
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Aborting drops the accept loop, whose guard then stops every spawned task.
        self.task.abort();
        self.server.stop.send_replace(true);
    }
}
