//! The bounds every WebSocket connection to Rustpad keeps, whichever side
//! opens it (the host's `websocket` import, or the component's own socket in
//! a WebAssembly host), and the deadlines it keeps to.

use std::time::Duration;

/// The largest message (and frame) accepted: a long-lived pad's first
/// message carries its whole edit history (about 3.7 MiB per 100k edits).
/// Checked at the frame header, before any payload is buffered.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// What may wait to be written: more than the largest message the component
/// sends (an edit replacing a whole pad, every character escaped).
pub const MAX_WRITE_BUFFER_BYTES: usize = 2 << 20;
/// How long writes may stay blocked before the peer counts as not reading.
pub const STALL_LIMIT: Duration = Duration::from_secs(5);
/// How long connecting (TCP, TLS and the handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub const STOPPED_READING: &str = "Rustpad stopped reading what this client sends (writes stayed blocked while it kept sending), so the connection was ended";
