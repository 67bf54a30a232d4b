//! WebSocket connections for the component, through the egress policy.
//!
//! Size limits are enforced by tungstenite while reading the frame header,
//! before any payload is buffered, so a peer announcing a huge frame costs
//! nothing. Frames are read only when the component asks for the next
//! message, so nothing queues up unread.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::{Message, WebSocketConfig};

use crate::egress::{CONNECT_TIMEOUT, Egress, Stream};

/// The largest message (and frame) accepted: a long-lived pad's first
/// message carries its whole edit history (about 3.7 MiB per 100k edits).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// One open connection, owned by the component through a resource handle.
pub struct Connection {
    stream: WebSocketStream<Stream>,
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

impl Connection {
    pub async fn open(egress: &Egress, url: &str) -> Result<Connection, String> {
        let origin = egress.admit(url)?;
        let stream = egress.connect(&origin).await.map_err(|e| e.to_string())?;
        let handshake = tokio_tungstenite::client_async_with_config(url, stream, Some(config()));
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
        Ok(Connection { stream })
    }

    pub async fn send(&mut self, text: String) -> Result<(), String> {
        self.stream
            .send(Message::text(text))
            .await
            .map_err(|e| describe(&e))
    }

    /// The next text message, or none when `timeout` passes first.
    pub async fn recv(&mut self, timeout: Duration) -> Result<Option<String>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let next = match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Err(_) => return Ok(None),
                Ok(next) => next,
            };
            match next {
                None | Some(Ok(Message::Close(_))) => {
                    return Err("the server closed the connection".into());
                }
                Some(Ok(Message::Text(text))) => return Ok(Some(text.to_string())),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(describe(&error)),
            }
        }
    }

    pub async fn close(&mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(1), self.stream.close(None)).await;
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
        WsError::ConnectionClosed | WsError::AlreadyClosed => "the connection is closed".into(),
        WsError::Protocol(problem) => format!("the connection broke ({problem})"),
        WsError::Io(io) => format!("the connection broke ({io})"),
        other => format!("the connection failed ({other})"),
    }
}
