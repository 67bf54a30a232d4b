//! WebSocket connections for the component, through the egress policy.
//!
//! Every buffer a connection keeps is bounded, both ways:
//! - reading: each message's size is checked at its frame header, before any
//!   payload is buffered ([`frames`]), so a peer announcing a huge frame costs
//!   nothing; frames are read only when someone asks for the next
//!   message, so nothing queues up unread;
//! - writing: what waits to be written (our messages, and the pong
//!   tungstenite owes for a ping) is capped, and a peer that stops reading
//!   while writes stay blocked is cut off with an error, rather than left to
//!   pile pongs up in memory.
//!
//! Memory is counted as it is held: a connection takes a small base from the
//! budget of running calls when it opens, each message what its header
//! announces, and a message being sent its size while it goes out. A buffer
//! a big message grew is let go once it is read ([`Connection::recv`]), so a
//! look that read a long history and is then held open between watch rounds
//! holds only what its live messages need, within [`LIVE_MESSAGE_BYTES`].
//!
//! Behind the WIT interface `websocket` (runtime::imports::websocket).

pub mod frames;
pub mod kept;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::{Message, Role, WebSocketConfig};

use crate::egress::policy::{CONNECT_TIMEOUT, ConnectError, Egress};
use crate::egress::websocket::frames::{Frames, READ_BUFFER_BYTES, Refused};
use crate::limits::memory_budget::{MemoryBudget, Reservation};

use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};
use rustpad_mcp_rules::watching::{MAX_MESSAGES_PER_ROUND, ROUND};
pub use rustpad_mcp_rules::websocket::MAX_MESSAGE_BYTES;
use rustpad_mcp_rules::websocket::{MAX_WRITE_BUFFER_BYTES, STALL_LIMIT, STOPPED_READING};

/// The largest message a connection the host holds between watch rounds
/// accepts: far more than typing or an ordinary paste brings. A bigger one
/// ends the connection, and the component joins the pad again on a new one,
/// which takes up to [`MAX_MESSAGE_BYTES`].
pub const LIVE_MESSAGE_BYTES: usize = 256 << 10;
/// How long a held connection may stay quiet before it is pinged, and how
/// long it then has to answer.
const QUIET_BEFORE_PING: Duration = Duration::from_secs(60);
const ANSWER_WITHIN: Duration = Duration::from_secs(30);
/// Messages bigger than this grow tungstenite's read buffer enough that it
/// is let go once they are read.
const SHED_ABOVE: u64 = 64 << 10;

/// Why [`Connection::wait_for`] returned.
pub enum Woken {
    /// A message worth a round came.
    Wake,
    /// The connection ended: the next reader hears why.
    Ended,
    /// It sent too many messages not worth a round, and why that is too many.
    Flooded(String),
}

/// One open connection, owned by the component through a resource handle.
pub struct Connection {
    /// Always there but while it is wrapped afresh ([`Connection::shed`]).
    stream: Option<WebSocketStream<Frames>>,
    /// Why the connection can no longer be used, once it cannot.
    ended: Option<ImportError>,
    budget: Arc<MemoryBudget>,
    /// When anything last came (a pong included).
    heard: Instant,
    /// Messages read for the next reader, in order: the one that ended a
    /// [`Connection::wait_for`], or what came while the host kept the
    /// connection between writes ([`kept`]).
    unread: VecDeque<String>,
    /// What `unread` costs ([`unread_cost`]), taken from the budget.
    unread_held: Reservation,
    unread_cost: usize,
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
        .read_buffer_size(READ_BUFFER_BYTES)
        // Each frame goes out as soon as it is written; what cannot go out waits, up to the cap.
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_WRITE_BUFFER_BYTES)
}

impl Connection {
    pub async fn open(
        egress: &Egress,
        budget: &Arc<MemoryBudget>,
        url: &str,
    ) -> Result<Connection, ImportError> {
        let origin = egress.admit(url)?;
        let stream = egress
            .connect(&origin)
            .await
            .map_err(ConnectError::failure)?;
        let wire = Frames::new(stream, MAX_MESSAGE_BYTES, budget.clone())
            .map_err(|reason| ImportError::new(ErrorKind::Busy, reason))?;
        let handshake = tokio_tungstenite::client_async_with_config(url, wire, Some(config()));
        let (stream, _) = tokio::time::timeout(CONNECT_TIMEOUT, handshake)
            .await
            .map_err(|_| {
                ImportError::new(
                    ErrorKind::TimedOut,
                    "timed out during the WebSocket handshake",
                )
            })?
            .map_err(|e| match e {
                WsError::Http(response) => ImportError::new(
                    ErrorKind::NotWebsocket,
                    format!(
                        "the server answered the WebSocket upgrade with HTTP {}",
                        response.status().as_u16()
                    ),
                ),
                other => {
                    let failure = describe(&other);
                    ImportError::new(
                        failure.kind,
                        format!("the WebSocket handshake failed ({})", failure.message),
                    )
                }
            })?;
        Ok(Connection {
            stream: Some(stream),
            ended: None,
            budget: budget.clone(),
            heard: Instant::now(),
            unread: VecDeque::new(),
            unread_held: budget
                .reserve(0)
                .map_err(|reason| ImportError::new(ErrorKind::Busy, reason))?,
            unread_cost: 0,
        })
    }

    fn stream(&mut self) -> &mut WebSocketStream<Frames> {
        self.stream
            .as_mut()
            .expect("a connection has its stream but while it is wrapped afresh")
    }

    /// Ends the connection for good with `reason`, which every later use repeats.
    fn end(&mut self, reason: ImportError) -> ImportError {
        self.ended = Some(reason.clone());
        reason
    }

    pub async fn send(&mut self, text: String) -> Result<(), ImportError> {
        if let Some(reason) = &self.ended {
            return Err(reason.clone());
        }
        // What waits to be written is held only while it is sent.
        let _writing = self.budget.reserve(text.len()).map_err(|reason| {
            ImportError::new(ErrorKind::Busy, format!("could not send: {reason}"))
        })?;
        match tokio::time::timeout(STALL_LIMIT, self.stream().send(Message::text(text))).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(WsError::WriteBufferFull(_))) | Err(_) => Err(self.end(stopped_reading())),
            Ok(Err(error)) => Err(self.end(describe(&error))),
        }
    }

    /// The next text message, or none when `timeout` passes first.
    ///
    /// A message that has come already is returned even with no time left
    /// (the timeout polls the read first), so a reader can take what waits
    /// with a timeout of 0.
    pub async fn recv(&mut self, timeout: Duration) -> Result<Option<String>, ImportError> {
        if let Some(text) = self.unread.pop_front() {
            self.unread_cost -= unread_cost(&text);
            // Giving back never fails.
            let _ = self.budget.resize(&mut self.unread_held, self.unread_cost);
            return Ok(Some(text));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(reason) = &self.ended {
                return Err(reason.clone());
            }
            if self.stream().get_ref().stalled() {
                return Err(self.end(stopped_reading()));
            }
            let next = match tokio::time::timeout_at(deadline, self.stream().next()).await {
                Err(_) => return Ok(None),
                Ok(next) => next,
            };
            self.heard = Instant::now();
            match next {
                None | Some(Ok(Message::Close(_))) => return Err(self.end(closed_by_peer())),
                Some(Ok(Message::Text(text))) => {
                    let text = text.to_string();
                    self.shed_if_grown().await;
                    return Ok(Some(text));
                }
                // Checked here, not only by the timeout above: a peer that never
                // pauses would always have a frame ready, and the timeout would never fire.
                Some(Ok(_)) if Instant::now() >= deadline.into_std() => return Ok(None),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(self.end(describe(&error))),
            }
        }
    }

    /// Reads, dropping what comes, until a text message that begins with
    /// one of `wake` comes (kept for the next [`Connection::recv`]), the
    /// connection ends, or it floods: more than [`MAX_MESSAGES_PER_ROUND`]
    /// dropped within a [`ROUND`]. A connection quiet for
    /// [`QUIET_BEFORE_PING`] is pinged, and ended if nothing at all comes
    /// within [`ANSWER_WITHIN`]: one whose peer vanished without a word
    /// would otherwise be held for ever.
    pub async fn wait_for(&mut self, wake: &[String]) -> Woken {
        self.wait_for_pinging(wake, QUIET_BEFORE_PING, ANSWER_WITHIN)
            .await
    }

    /// [`Connection::wait_for`], pinging after `quiet` and waiting `answer`.
    async fn wait_for_pinging(
        &mut self,
        wake: &[String],
        quiet: Duration,
        answer: Duration,
    ) -> Woken {
        let mut pinged: Option<Instant> = None;
        let mut dropped = 0usize;
        let mut counting_since = Instant::now();
        loop {
            let quiet_until = match pinged {
                Some(at) => at + answer,
                None => self.heard + quiet,
            };
            let heard = self.heard;
            match self
                .recv(quiet_until.saturating_duration_since(Instant::now()))
                .await
            {
                Ok(Some(text)) => {
                    if wake.iter().any(|start| text.starts_with(start.as_str())) {
                        self.unread_cost += unread_cost(&text);
                        self.unread.push_back(text);
                        return Woken::Wake;
                    }
                    if counting_since.elapsed() > ROUND {
                        (dropped, counting_since) = (0, Instant::now());
                    }
                    dropped += 1;
                    if dropped > MAX_MESSAGES_PER_ROUND {
                        return Woken::Flooded(format!(
                            "the server sent more than {MAX_MESSAGES_PER_ROUND} messages within {} s, none worth a round",
                            ROUND.as_secs()
                        ));
                    }
                }
                Ok(None) if self.heard > heard => {}
                Ok(None) if pinged.is_some() => {
                    self.end(ImportError::new(
                        ErrorKind::TimedOut,
                        format!(
                            "the server answered nothing for {} ms, not even a ping",
                            answer.as_millis()
                        ),
                    ));
                    return Woken::Ended;
                }
                Ok(None) => {
                    let ping = tokio::time::timeout(
                        STALL_LIMIT,
                        self.stream().send(Message::Ping(Default::default())),
                    )
                    .await;
                    if !matches!(ping, Ok(Ok(()))) {
                        self.end(stopped_reading());
                        return Woken::Ended;
                    }
                    pinged = Some(Instant::now());
                }
                Err(_) => return Woken::Ended,
            }
            if self.heard > heard {
                pinged = None;
            }
        }
    }

    pub async fn close(&mut self) {
        if self.ended.is_none() {
            let _ = tokio::time::timeout(Duration::from_secs(1), self.stream().close(None)).await;
        }
    }

    /// Accepts messages of at most `bytes` from now on.
    pub fn cap_at(&mut self, bytes: usize) {
        self.stream().get_mut().cap_at(bytes);
    }

    /// Lets go of the buffer a big message grew: the stream is wrapped
    /// afresh, which loses nothing, since tungstenite holds nothing unread
    /// between messages ([`Frames`]) and what it owed to write went out first.
    async fn shed_if_grown(&mut self) {
        let wire = self.stream().get_ref();
        if !wire.grown_past(SHED_ABOVE) || !wire.between_messages() {
            return;
        }
        let flushed = tokio::time::timeout(STALL_LIMIT, self.stream().flush()).await;
        if !matches!(flushed, Ok(Ok(()))) {
            return;
        }
        let Some(stream) = self.stream.take() else {
            return;
        };
        let mut wire = stream.into_inner();
        wire.shed();
        self.stream =
            Some(WebSocketStream::from_raw_socket(wire, Role::Client, Some(config())).await);
    }
}

/// What one unread message is counted as: its text, and what keeping it
/// costs besides (so that many empty messages still add up).
fn unread_cost(text: &str) -> usize {
    text.len() + 64
}

/// The peer closed the connection (or the stream ended).
fn closed_by_peer() -> ImportError {
    ImportError::new(ErrorKind::Closed, "the server closed the connection")
}

/// A peer that stopped reading is cut off: the connection is finished.
fn stopped_reading() -> ImportError {
    ImportError::new(ErrorKind::TimedOut, STOPPED_READING)
}

fn describe(error: &WsError) -> ImportError {
    let refused = match error {
        WsError::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<Refused>()),
        _ => None,
    };
    if let Some(Refused(failure)) = refused {
        return failure.clone();
    }
    let (kind, message) = match error {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => (
            ErrorKind::TooLarge,
            format!(
                "the server sent a message of {size} bytes, more than the {max_size} this client accepts"
            ),
        ),
        WsError::Capacity(other) => (
            ErrorKind::TooLarge,
            format!("the server sent more than this client accepts ({other})"),
        ),
        WsError::WriteBufferFull(_) => return stopped_reading(),
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            (ErrorKind::Closed, "the connection is closed".into())
        }
        WsError::Protocol(problem) => (
            ErrorKind::Closed,
            format!("the connection broke ({problem})"),
        ),
        WsError::Io(io) => (ErrorKind::Closed, format!("the connection broke ({io})")),
        other => (
            ErrorKind::Closed,
            format!("the connection failed ({other})"),
        ),
    };
    ImportError::new(kind, message)
}

#[cfg(test)]
pub(crate) mod tests {
    use tokio::net::TcpListener;

    use super::*;

    const WAKE: &str = "{\"History\":";

    /// A held connection to a WebSocket server on loopback that `serve`s it.
    pub(crate) async fn held<F, Fut>(serve: F) -> Connection
    where
        F: FnOnce(WebSocketStream<tokio::net::TcpStream>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            serve(tokio_tungstenite::accept_async(tcp).await.unwrap()).await;
        });
        let egress = Egress::new(Some(&origin), false);
        let budget = Arc::new(MemoryBudget::new(64));
        let url = origin.replace("http://", "ws://") + "/api/socket/pad";
        let mut connection = Connection::open(&egress, &budget, &url).await.unwrap();
        connection.cap_at(LIVE_MESSAGE_BYTES);
        connection
    }

    fn wake() -> Vec<String> {
        vec![WAKE.to_string()]
    }

    #[tokio::test]
    async fn a_held_connection_drops_what_is_not_worth_a_round_and_keeps_what_is() {
        let mut connection = held(|mut socket| async move {
            for n in 0..50 {
                let caret = format!("{{\"UserCursor\":{{\"id\":{n},\"data\":{{}}}}}}");
                socket.send(Message::text(caret)).await.unwrap();
            }
            socket
                .send(Message::text("{\"History\":{}}"))
                .await
                .unwrap();
            socket.send(Message::text("next")).await.unwrap();
            let _ = socket.next().await;
        })
        .await;
        assert!(matches!(connection.wait_for(&wake()).await, Woken::Wake));
        let first = connection.recv(Duration::ZERO).await.unwrap();
        assert_eq!(first.as_deref(), Some("{\"History\":{}}"));
        // What came after it waits for the next reader, even with no time to wait.
        let next = connection.recv(Duration::from_secs(5)).await.unwrap();
        assert_eq!(next.as_deref(), Some("next"));
    }

    #[tokio::test]
    async fn a_peer_that_answers_no_ping_is_ended_and_one_that_does_is_held() {
        // Never reads, so never answers (tungstenite answers pings as it reads).
        let mut silent = held(|socket| async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(socket);
        })
        .await;
        let quiet = Duration::from_millis(100);
        let answer = Duration::from_millis(200);
        let woken = silent.wait_for_pinging(&wake(), quiet, answer).await;
        assert!(matches!(woken, Woken::Ended));
        let reason = silent.recv(Duration::ZERO).await.unwrap_err();
        assert!(
            reason.message.contains("answered nothing for 200 ms"),
            "{reason}"
        );
        assert_eq!(reason.kind, ErrorKind::TimedOut);
        let mut answering =
            held(|mut socket| async move { while let Some(Ok(_)) = socket.next().await {} }).await;
        let prefixes = wake();
        let waiting = answering.wait_for_pinging(&prefixes, quiet, answer);
        assert!(
            tokio::time::timeout(Duration::from_millis(1500), waiting)
                .await
                .is_err(),
            "a peer that answers pings stays held"
        );
    }

    #[tokio::test]
    async fn a_held_connection_that_floods_says_so() {
        let mut connection = held(|mut socket| async move {
            for _ in 0..=MAX_MESSAGES_PER_ROUND {
                if socket
                    .send(Message::text("{\"UserCursor\":{}}"))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = socket.next().await;
        })
        .await;
        match connection.wait_for(&wake()).await {
            Woken::Flooded(reason) => {
                assert!(reason.contains("more than 20000 messages"), "{reason}")
            }
            _ => panic!("expected a flood"),
        }
    }
}
