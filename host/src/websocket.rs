//! WebSocket connections for the component, through the egress policy.
//!
//! Every buffer a connection keeps is bounded, both ways:
//! - reading: message and frame sizes are checked by tungstenite while it
//!   reads the frame header, before any payload is buffered, so a peer
//!   announcing a huge frame costs nothing; frames are read only when the
//!   component asks for the next message, so nothing queues up unread;
//! - writing: what waits to be written (our messages, and the pongs
//!   tungstenite owes for every ping) is capped, and a peer that stops
//!   reading while writes stay blocked is cut off with an error, rather than
//!   left to pile pongs up in memory.
//!
//! Each connection takes what those bounds allow from the memory budget of
//! running calls when it opens, and gives it back when it closes.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::{Message, WebSocketConfig};

use crate::budget::{MemoryBudget, Reservation};
use crate::egress::{CONNECT_TIMEOUT, Egress, Stream};

pub use rustpad_mcp_rules::websocket::MAX_MESSAGE_BYTES;
use rustpad_mcp_rules::websocket::{MAX_WRITE_BUFFER_BYTES, STALL_LIMIT, STOPPED_READING};

/// What one connection may hold at once: a message being received, its copy
/// on the way to the component, and the write buffer.
pub const CONNECTION_BYTES: usize = 2 * MAX_MESSAGE_BYTES + MAX_WRITE_BUFFER_BYTES;

/// One open connection, owned by the component through a resource handle.
pub struct Connection {
    stream: WebSocketStream<Watched>,
    /// Why the connection can no longer be used, once it cannot.
    ended: Option<String>,
    _memory: Reservation,
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
        // Each frame goes out as soon as it is written; what cannot go out waits, up to the cap.
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_WRITE_BUFFER_BYTES)
}

impl Connection {
    pub async fn open(
        egress: &Egress,
        budget: &MemoryBudget,
        url: &str,
    ) -> Result<Connection, String> {
        let origin = egress.admit(url)?;
        let memory = budget.reserve(CONNECTION_BYTES)?;
        let stream = egress.connect(&origin).await.map_err(|e| e.to_string())?;
        let handshake =
            tokio_tungstenite::client_async_with_config(url, Watched::new(stream), Some(config()));
        let (stream, _) = tokio::time::timeout(CONNECT_TIMEOUT, handshake)
            .await
            .map_err(|_| "timed out during the WebSocket handshake".to_string())?
            .map_err(|e| match e {
                WsError::Http(response) => format!(
                    "the server answered the WebSocket upgrade with HTTP {}",
                    response.status().as_u16()
                ),
                other => format!("the WebSocket handshake failed ({})", describe(&other)),
            })?;
        Ok(Connection {
            stream,
            ended: None,
            _memory: memory,
        })
    }

    /// Ends the connection for good with `reason`, which every later use repeats.
    fn end(&mut self, reason: String) -> String {
        self.ended = Some(reason.clone());
        reason
    }

    pub async fn send(&mut self, text: String) -> Result<(), String> {
        if let Some(reason) = &self.ended {
            return Err(reason.clone());
        }
        match tokio::time::timeout(STALL_LIMIT, self.stream.send(Message::text(text))).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(WsError::WriteBufferFull(_))) | Err(_) => Err(self.end(STOPPED_READING.into())),
            Ok(Err(error)) => Err(self.end(describe(&error))),
        }
    }

    /// The next text message, or none when `timeout` passes first.
    pub async fn recv(&mut self, timeout: Duration) -> Result<Option<String>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(reason) = &self.ended {
                return Err(reason.clone());
            }
            if self.stream.get_ref().stalled() {
                return Err(self.end(STOPPED_READING.into()));
            }
            // Checked here, not only by the timeout below: a peer that never
            // pauses would always have a frame ready, and the timeout would never fire.
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            let next = match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Err(_) => return Ok(None),
                Ok(next) => next,
            };
            match next {
                None | Some(Ok(Message::Close(_))) => {
                    return Err(self.end("the server closed the connection".into()));
                }
                Some(Ok(Message::Text(text))) => return Ok(Some(text.to_string())),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(self.end(describe(&error))),
            }
        }
    }

    pub async fn close(&mut self) {
        if self.ended.is_none() {
            let _ = tokio::time::timeout(Duration::from_secs(1), self.stream.close(None)).await;
        }
    }
}

fn describe(error: &WsError) -> String {
    match error {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => format!(
            "the server sent a message of {size} bytes, more than the {max_size} this client accepts"
        ),
        WsError::Capacity(other) => {
            format!("the server sent more than this client accepts ({other})")
        }
        WsError::WriteBufferFull(_) => STOPPED_READING.into(),
        WsError::ConnectionClosed | WsError::AlreadyClosed => "the connection is closed".into(),
        WsError::Protocol(problem) => format!("the connection broke ({problem})"),
        WsError::Io(io) => format!("the connection broke ({io})"),
        other => format!("the connection failed ({other})"),
    }
}

/// The connection's byte stream, noting since when its writes have been
/// blocked: the sign of a peer that no longer reads.
struct Watched {
    inner: Stream,
    blocked_since: Option<Instant>,
}

impl Watched {
    fn new(inner: Stream) -> Watched {
        Watched {
            inner,
            blocked_since: None,
        }
    }

    /// Whether writes have been blocked for longer than [`STALL_LIMIT`].
    fn stalled(&self) -> bool {
        self.blocked_since
            .is_some_and(|since| since.elapsed() > STALL_LIMIT)
    }

    fn note(&mut self, written: &Poll<io::Result<usize>>) {
        match written {
            Poll::Pending => {
                self.blocked_since.get_or_insert_with(Instant::now);
            }
            Poll::Ready(Ok(n)) if *n > 0 => self.blocked_since = None,
            Poll::Ready(_) => {}
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(context, buffer)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(context, buffer);
        self.note(&written);
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
    }
}
