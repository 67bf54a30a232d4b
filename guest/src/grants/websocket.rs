//! The Rustpad socket of the component for WebAssembly hosts: a WebSocket
//! (tungstenite, the crate rustpad-mcp's host uses) over `wasi:sockets` TCP,
//! with the same interface as the host's `websocket` import.
//!
//! `wasi:http` 0.2 has no upgrade, so the component opens the TCP connection
//! itself: the egress rule of `rustpad_mcp_rules::egress` is applied here,
//! before any name is looked up. The address is RUSTPAD_URL's host, looked up
//! through the host (an IP is used as it is, without a lookup), or the one
//! `RUSTPAD_SOCKET_ADDRESS` names, for hosts that match outbound sockets by
//! IP and grant no name lookups (Spin); TLS still checks RUSTPAD_URL's name.
//! The bounds are the host's (`rustpad_mcp_rules::websocket`): message and
//! frame sizes checked at the frame header, a capped write buffer, and a peer
//! that stops reading while writes stay blocked cut off. Every wait is a
//! `wasi:io` poll with a deadline, so no call waits longer than it asked,
//! and closing never waits for a peer that does not read ([`super::tcp`]).
//! `wss://` runs TLS inside the component (rustls with ring, the settings of
//! `rustpad_mcp_rules::tls`), so no `wasi:tls` is needed.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConnection, StreamOwned};
use rustpad_mcp_rules::egress::{self, Origin};
use rustpad_mcp_rules::tls;
use rustpad_mcp_rules::websocket::{
    CONNECT_TIMEOUT, MAX_MESSAGE_BYTES, MAX_WRITE_BUFFER_BYTES, STALL_LIMIT, STOPPED_READING,
};
use tungstenite::handshake::HandshakeError;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

use super::tcp::Tcp;
use super::{ErrorKind, HostError};

/// One open connection.
pub struct Connection {
    socket: RefCell<Option<WebSocket<Stream>>>,
    /// Since when the write buffer has been waiting for the peer to read.
    blocked_since: RefCell<Option<Instant>>,
}

impl Connection {
    /// Opens a connection to `url` (`ws://` on the origin of `RUSTPAD_URL`).
    pub fn connect(url: &str) -> Result<Connection, HostError> {
        let allowed = super::setting("RUSTPAD_URL").and_then(|configured| Origin::of(&configured));
        let origin = egress::admit(allowed.as_ref(), url)?;
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        let tcp = Tcp::connect(&origin, deadline)?;
        let stream = if origin.secure {
            let host = origin.host.trim_start_matches('[').trim_end_matches(']');
            let name = ServerName::try_from(host.to_string()).map_err(|_| {
                HostError::new(ErrorKind::Invalid, "the host name is not valid for TLS")
            })?;
            // The same meaning as in rustpad-mcp's host: exactly "true" relaxes this connection.
            let insecure =
                super::setting("RUSTPAD_INSECURE_TLS").is_some_and(|v| v.trim() == "true");
            let session =
                ClientConnection::new(tls::client_config(insecure), name).map_err(|error| {
                    HostError::new(ErrorKind::Invalid, format!("TLS could not start ({error})"))
                })?;
            Stream::Tls(Box::new(StreamOwned::new(session, tcp)))
        } else {
            Stream::Plain(tcp)
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES))
            .write_buffer_size(0)
            .max_write_buffer_size(MAX_WRITE_BUFFER_BYTES);
        let mut attempt = tungstenite::client::client_with_config(url, stream, Some(config));
        let socket = loop {
            match attempt {
                Ok((socket, _response)) => break socket,
                Err(HandshakeError::Interrupted(pending)) => {
                    if !pending.get_ref().get_ref().wait(deadline) {
                        return Err(HostError::new(
                            ErrorKind::TimedOut,
                            "the WebSocket handshake with Rustpad timed out",
                        ));
                    }
                    attempt = pending.handshake();
                }
                Err(HandshakeError::Failure(tungstenite::Error::Io(error)))
                    if tls::is_certificate_error(&error) =>
                {
                    return Err(HostError::new(
                        ErrorKind::Refused,
                        tls::certificate_refused(&error),
                    ));
                }
                Err(HandshakeError::Failure(tungstenite::Error::Http(response))) => {
                    return Err(HostError::new(
                        ErrorKind::NotWebsocket,
                        format!(
                            "the server answered the WebSocket upgrade with HTTP {}",
                            response.status().as_u16()
                        ),
                    ));
                }
                Err(HandshakeError::Failure(error)) => {
                    return Err(HostError::new(
                        ErrorKind::Closed,
                        format!("WebSocket handshake failed: {error}"),
                    ));
                }
            }
        };
        Ok(Connection {
            socket: RefCell::new(Some(socket)),
            blocked_since: RefCell::new(None),
        })
    }

    /// Sends one text message, waiting while the peer reads it, up to the stall limit.
    pub fn send(&self, text: &str) -> Result<(), HostError> {
        let mut guard = self.socket.borrow_mut();
        let socket = guard.as_mut().ok_or_else(closed)?;
        match socket.write(Message::text(text)) {
            // A frame the socket could not take at once is queued: the flush below sends it.
            Ok(()) => {}
            Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => {}
            Err(tungstenite::Error::WriteBufferFull(_)) => return Err(stopped_reading()),
            Err(error) => return Err(describe(error)),
        }
        let deadline = Instant::now() + STALL_LIMIT;
        loop {
            match self.flush(socket)? {
                true => return Ok(()),
                false if Instant::now() >= deadline => return Err(stopped_reading()),
                false => {
                    socket.get_ref().wait(deadline);
                }
            }
        }
    }

    /// Waits at most `timeout_ms` for the next text message; None when the time ran out.
    pub fn recv(&self, timeout_ms: u32) -> Result<Option<String>, HostError> {
        let deadline = Instant::now() + Duration::from_millis(u64::from(timeout_ms));
        let mut guard = self.socket.borrow_mut();
        let socket = guard.as_mut().ok_or_else(closed)?;
        loop {
            // Pongs tungstenite owes go out first; a peer that never reads is cut off.
            self.flush(socket)?;
            match socket.read() {
                Ok(Message::Text(text)) => return Ok(Some(text.to_string())),
                Ok(Message::Close(_)) => {
                    return Err(HostError::new(
                        ErrorKind::Closed,
                        "Rustpad closed the connection",
                    ));
                }
                // Pings, pongs and binary frames are not delivered, and do not extend the wait.
                Ok(_) => {}
                Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => {
                    socket.get_ref().wait(deadline);
                }
                Err(error) => return Err(describe(error)),
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Ready once the peer has sent something more, for a loop that waits
    /// on several connections in one poll. It sees only the socket: call it
    /// after [`Connection::recv`] has taken what TLS and the WebSocket had
    /// read already (it returned `None`), or the poll may wait on data that
    /// is here. None once the connection is closed.
    pub fn readable(&self) -> Option<wasip2::io::poll::Pollable> {
        let guard = self.socket.borrow();
        guard
            .as_ref()
            .map(|socket| socket.get_ref().tcp().readable())
    }

    /// Closes the connection, sending a close frame when the peer takes it at once.
    pub fn close(&self) {
        if let Some(mut socket) = self.socket.borrow_mut().take() {
            let _ = socket.close(None);
            let _ = socket.flush();
        }
    }

    /// Writes what waits to be written; false while the peer is not taking it.
    fn flush(&self, socket: &mut WebSocket<Stream>) -> Result<bool, HostError> {
        match socket.flush() {
            Ok(()) => {
                self.blocked_since.replace(None);
                Ok(true)
            }
            Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => {
                let since = *self
                    .blocked_since
                    .borrow_mut()
                    .get_or_insert_with(Instant::now);
                if since.elapsed() >= STALL_LIMIT {
                    return Err(stopped_reading());
                }
                Ok(false)
            }
            Err(error) => Err(describe(error)),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

fn describe(error: tungstenite::Error) -> HostError {
    match error {
        tungstenite::Error::Capacity(problem) => HostError::new(
            ErrorKind::TooLarge,
            format!("Rustpad sent more than this client accepts ({problem})"),
        ),
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => closed(),
        other => HostError::new(ErrorKind::Closed, other.to_string()),
    }
}

fn closed() -> HostError {
    HostError::new(ErrorKind::Closed, "the connection is closed")
}

/// A peer that stopped reading is cut off: the connection is finished.
fn stopped_reading() -> HostError {
    HostError::new(ErrorKind::TimedOut, STOPPED_READING)
}

/// The connection under the WebSocket: plain TCP, or TLS over it.
enum Stream {
    Plain(Tcp),
    Tls(Box<StreamOwned<ClientConnection, Tcp>>),
}

impl Stream {
    fn tcp(&self) -> &Tcp {
        match self {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => &tls.sock,
        }
    }

    /// Waits until the peer sent something, or takes what is waiting to be
    /// written (only then is writability watched: an idle socket is always
    /// writable, and watching it would make the wait return at once), or the
    /// deadline passes; false when it passed.
    fn wait(&self, deadline: Instant) -> bool {
        let tls_pending = match self {
            Stream::Plain(_) => false,
            Stream::Tls(tls) => tls.conn.wants_write(),
        };
        let tcp = self.tcp();
        tcp.wait(true, tcp.write_blocked.get() || tls_pending, deadline)
    }
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buffer),
            Stream::Tls(tls) => tls.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(bytes),
            Stream::Tls(tls) => tls.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}
