//! The byte stream under one WebSocket connection, handed to tungstenite one
//! frame at a time.
//!
//! tungstenite reads into a buffer that grows to the largest frame it ever
//! read and keeps that size for the connection's life, and it reads ahead of
//! the frame it needs. So this stream never gives it a byte past the end of
//! the frame it is reading (nor, during the handshake, past the end of the
//! HTTP head), which lets the connection:
//! - check each frame's announced size against a cap that may change while
//!   the connection is open (a look the host holds takes only live-sized
//!   frames), before any of its payload is read;
//! - take memory from the budget as frames announce it, rather than the
//!   worst case up front: the largest frame since the last [`Frames::shed`]
//!   (twice: tungstenite's buffer, and the copy on its way to the component);
//! - wrap the stream afresh between messages, when tungstenite holds nothing
//!   unread, to let go of a buffer a big frame grew ([`Frames::settled`]).
//!
//! It also notes since when writes have been blocked: the sign of a peer that
//! no longer reads.

use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::egress::policy::Stream;
use crate::limits::memory_budget::{MemoryBudget, Reservation};
use rustpad_mcp_rules::websocket::STALL_LIMIT;

/// What is read from the socket ahead of what tungstenite takes.
const AHEAD_BYTES: usize = 4 << 10;
/// What one connection holds however small its frames: the read-ahead, the
/// buffer tungstenite starts with ([`READ_BUFFER_BYTES`]), and the state of
/// the socket, the TLS session and tungstenite.
pub const BASE_BYTES: usize = AHEAD_BYTES + READ_BUFFER_BYTES + (24 << 10);
/// The buffer tungstenite starts with (it grows to the largest frame).
pub const READ_BUFFER_BYTES: usize = 4 << 10;
/// The longest header of a frame: two bytes, eight of length, four of mask.
const MAX_HEADER: usize = 14;
/// The end of an HTTP head.
const HEAD_END: &[u8] = b"\r\n\r\n";

/// Where the stream is in what it hands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The handshake's HTTP head: up to `matched` bytes of its end seen.
    Head { matched: usize },
    /// A frame header: `got` of its bytes so far.
    Header { got: usize },
    /// A frame's payload: this much still to come.
    Payload { left: u64 },
}

/// Why the stream refused a frame: too large, or no memory left for it.
#[derive(Debug)]
pub struct Refused(pub ImportError);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Refused {}

pub struct Frames<S = Stream> {
    inner: S,
    ahead: Box<[u8; AHEAD_BYTES]>,
    /// `ahead[start..end]` is read and not yet handed on.
    start: usize,
    end: usize,
    part: Part,
    header: [u8; MAX_HEADER],
    /// The payload of the data frames of the message being read so far.
    message: u64,
    /// The largest message accepted now.
    cap: u64,
    budget: Arc<MemoryBudget>,
    /// The base, and the largest message since the last shed, twice.
    reserved: Reservation,
    largest: u64,
    blocked_since: Option<Instant>,
}

impl<S> Frames<S> {
    /// `inner` before the handshake, its frames capped at `cap` bytes, the
    /// memory they take drawn from `budget` (the base at once).
    pub fn new(inner: S, cap: usize, budget: Arc<MemoryBudget>) -> Result<Frames<S>, String> {
        let reserved = budget.reserve(BASE_BYTES)?;
        Ok(Frames {
            inner,
            ahead: Box::new([0; AHEAD_BYTES]),
            start: 0,
            end: 0,
            part: Part::Head { matched: 0 },
            header: [0; MAX_HEADER],
            message: 0,
            cap: cap as u64,
            budget,
            reserved,
            largest: 0,
            blocked_since: None,
        })
    }

    /// Caps the messages accepted from now on at `cap` bytes.
    pub fn cap_at(&mut self, cap: usize) {
        self.cap = cap as u64;
    }

    /// Whether tungstenite holds nothing unread and no message is half
    /// read: the stream may then be wrapped afresh.
    pub fn between_messages(&self) -> bool {
        self.part == Part::Header { got: 0 } && self.message == 0
    }

    /// Whether a message since the last shed was bigger than `bytes`.
    pub fn grown_past(&self, bytes: u64) -> bool {
        self.largest > bytes
    }

    /// Gives back what the messages since the last shed took, once the
    /// buffers they grew are gone (the stream was wrapped afresh).
    pub fn shed(&mut self) {
        self.largest = 0;
        let _ = self.budget.resize(&mut self.reserved, BASE_BYTES);
    }

    /// Whether writes have been blocked for longer than [`STALL_LIMIT`].
    pub fn stalled(&self) -> bool {
        self.blocked_since
            .is_some_and(|since| since.elapsed() > STALL_LIMIT)
    }

    fn note_write(&mut self, written: &Poll<io::Result<usize>>) {
        match written {
            Poll::Pending => {
                self.blocked_since.get_or_insert_with(Instant::now);
            }
            Poll::Ready(Ok(n)) if *n > 0 => self.blocked_since = None,
            Poll::Ready(_) => {}
        }
    }

    /// How many of the bytes read ahead may be handed on now.
    fn allowed(&self) -> usize {
        let waiting = &self.ahead[self.start..self.end];
        match self.part {
            Part::Head { matched } => head_end(waiting, matched).unwrap_or(waiting.len()),
            Part::Header { got } => header_len(&self.header[..got]) - got,
            Part::Payload { left } => usize::try_from(left).unwrap_or(usize::MAX),
        }
    }

    /// Moves past `handed` bytes just given to tungstenite.
    fn advance(&mut self, handed: usize) -> io::Result<()> {
        let bytes = &self.ahead[self.start..self.start + handed];
        match self.part {
            Part::Head { matched } => {
                let ended = head_end(bytes, matched);
                self.part = match ended {
                    Some(_) => Part::Header { got: 0 },
                    None => Part::Head {
                        matched: matched_after(bytes, matched),
                    },
                };
            }
            Part::Header { got } => {
                self.header[got..got + handed].copy_from_slice(bytes);
                let got = got + handed;
                if got == header_len(&self.header[..got]) {
                    self.frame_announced()?;
                } else {
                    self.part = Part::Header { got };
                }
            }
            Part::Payload { left } => {
                let left = left - handed as u64;
                self.part = if left == 0 {
                    Part::Header { got: 0 }
                } else {
                    Part::Payload { left }
                };
            }
        }
        self.start += handed;
        Ok(())
    }

    /// A whole header is in: checks the frame against the cap and takes its
    /// memory, before any of its payload is read.
    fn frame_announced(&mut self) -> io::Result<()> {
        let (fin, control, length) = parse_header(&self.header);
        if !control {
            self.message = self.message.saturating_add(length);
            if self.message > self.cap {
                return Err(io::Error::other(Refused(ImportError::new(
                    ErrorKind::TooLarge,
                    format!(
                        "the server sent a message of {} bytes, more than the {} this client accepts",
                        self.message, self.cap
                    ),
                ))));
            }
            if self.message > self.largest {
                let bytes = BASE_BYTES.saturating_add(2 * self.message as usize);
                self.budget
                    .resize(&mut self.reserved, bytes)
                    .map_err(|reason| {
                        io::Error::other(Refused(ImportError::new(ErrorKind::Busy, reason)))
                    })?;
                self.largest = self.message;
            }
            if fin {
                self.message = 0;
            }
        }
        self.part = if length == 0 {
            Part::Header { got: 0 }
        } else {
            Part::Payload { left: length }
        };
        Ok(())
    }
}

/// Where the HTTP head ends in `bytes`, given that the `matched` bytes
/// before them matched its start: the count of bytes up to and including it.
fn head_end(bytes: &[u8], mut matched: usize) -> Option<usize> {
    for (index, &byte) in bytes.iter().enumerate() {
        matched = next_match(matched, byte);
        if matched == HEAD_END.len() {
            return Some(index + 1);
        }
    }
    None
}

fn matched_after(bytes: &[u8], matched: usize) -> usize {
    bytes
        .iter()
        .fold(matched, |matched, &byte| next_match(matched, byte))
}

/// `\r\n\r\n` has no inner repeat but `\r`, so a mismatch restarts at 0 or 1.
fn next_match(matched: usize, byte: u8) -> usize {
    if byte == HEAD_END[matched] {
        matched + 1
    } else {
        usize::from(byte == b'\r')
    }
}

/// How long the header that starts with `got` is, as far as it can tell
/// (two bytes until it has them).
fn header_len(got: &[u8]) -> usize {
    let Some(&second) = got.get(1) else {
        return 2;
    };
    let extended = match second & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if second & 0x80 != 0 { 4 } else { 0 };
    2 + extended + mask
}

/// A whole header: whether it ends a message, whether it is a control
/// frame, and its payload's length.
fn parse_header(header: &[u8]) -> (bool, bool, u64) {
    let fin = header[0] & 0x80 != 0;
    let control = header[0] & 0x08 != 0;
    let length = match header[1] & 0x7f {
        126 => u64::from(u16::from_be_bytes([header[2], header[3]])),
        127 => u64::from_be_bytes(header[2..10].try_into().expect("eight bytes")),
        short => u64::from(short),
    };
    (fin, control, length)
}

impl<S: AsyncRead + Unpin> AsyncRead for Frames<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.start == this.end {
            let mut ahead = ReadBuf::new(&mut this.ahead[..]);
            ready!(Pin::new(&mut this.inner).poll_read(context, &mut ahead))?;
            (this.start, this.end) = (0, ahead.filled().len());
            if this.end == 0 {
                return Poll::Ready(Ok(()));
            }
        }
        let handed = this
            .allowed()
            .min(this.end - this.start)
            .min(buffer.remaining());
        buffer.put_slice(&this.ahead[this.start..this.start + handed]);
        this.advance(handed)?;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Frames<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(context, buffer);
        self.note_write(&written);
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server frame: unmasked, `FIN` as given, text or continuation.
    fn frame(fin: bool, payload: &[u8]) -> Vec<u8> {
        let mut bytes = vec![if fin { 0x81 } else { 0x01 }];
        match payload.len() {
            n if n < 126 => bytes.push(n as u8),
            n if n < 65536 => {
                bytes.push(126);
                bytes.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                bytes.push(127);
                bytes.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        bytes.extend_from_slice(payload);
        bytes
    }

    /// What one read of `wire` hands on, into a buffer of `room` bytes.
    async fn read<S: AsyncRead + Unpin>(wire: &mut Frames<S>, room: usize) -> io::Result<Vec<u8>> {
        let mut buffer = vec![0; room];
        let n = wire.read(&mut buffer).await?;
        buffer.truncate(n);
        Ok(buffer)
    }

    #[tokio::test]
    async fn no_read_hands_on_a_byte_past_the_head_or_the_frame_it_is_in() {
        let budget = Arc::new(MemoryBudget::new(64));
        let (mut server, client) = tokio::io::duplex(1 << 16);
        let head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
        let first = frame(true, b"{\"Identity\":1}");
        let second = frame(true, &[b'x'; 300]);
        // Everything arrives at once, as one segment would bring it.
        server
            .write_all(&[&head[..], &first, &second].concat())
            .await
            .unwrap();
        let mut wire = Frames::new(client, 1 << 20, budget.clone()).unwrap();
        assert_eq!(read(&mut wire, 4096).await.unwrap(), head);
        assert!(wire.between_messages());
        // The header alone, then exactly the payload, then the next header.
        assert_eq!(read(&mut wire, 4096).await.unwrap(), first[..2]);
        assert_eq!(read(&mut wire, 4096).await.unwrap(), first[2..]);
        assert!(wire.between_messages());
        assert_eq!(read(&mut wire, 4096).await.unwrap(), second[..2]);
        assert_eq!(read(&mut wire, 4096).await.unwrap(), second[2..4]);
        assert!(!wire.between_messages());
        assert_eq!(read(&mut wire, 100).await.unwrap(), second[4..104]);
        assert_eq!(read(&mut wire, 4096).await.unwrap(), second[104..]);
        assert!(wire.between_messages());
        assert!(!wire.grown_past(300) && wire.grown_past(299));
    }

    #[tokio::test]
    async fn a_message_past_the_cap_or_the_budget_is_refused_at_its_header() {
        let (mut server, client) = tokio::io::duplex(1 << 16);
        server.write_all(b"HTTP/1.1 101 OK\r\n\r\n").await.unwrap();
        // Two frames of one message: each under the cap, together past it.
        server.write_all(&frame(false, &[b'a'; 600])).await.unwrap();
        server.write_all(&frame(true, &[b'b'; 600])).await.unwrap();
        let budget = Arc::new(MemoryBudget::new(64));
        let mut wire = Frames::new(client, 1000, budget).unwrap();
        // The head; the first frame's two header bytes, its length, its payload; the second's two.
        for _ in 0..5 {
            read(&mut wire, 4096).await.unwrap();
        }
        let refused = read(&mut wire, 4096).await.unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("a message of 1200 bytes, more than the 1000"),
            "{refused}"
        );
        // A header announcing more than the budget holds takes nothing and is refused.
        let (mut server, client) = tokio::io::duplex(1 << 16);
        server.write_all(b"HTTP/1.1 101 OK\r\n\r\n").await.unwrap();
        server.write_all(&[0x81, 127]).await.unwrap();
        server
            .write_all(&(40u64 << 20).to_be_bytes())
            .await
            .unwrap();
        let budget = Arc::new(MemoryBudget::new(64));
        let mut wire = Frames::new(client, 64 << 20, budget.clone()).unwrap();
        read(&mut wire, 4096).await.unwrap();
        read(&mut wire, 4096).await.unwrap();
        let refused = read(&mut wire, 4096).await.unwrap_err();
        assert!(
            refused.to_string().contains("RUSTPAD_MCP_MAX_MEMORY"),
            "{refused}"
        );
        drop(wire);
        assert!(budget.reserve(64 << 20).is_ok(), "everything came back");
    }

    #[test]
    fn the_head_ends_at_the_blank_line_across_reads() {
        assert_eq!(
            head_end(b"HTTP/1.1 101\r\nA: b\r\n\r\n\x81\x02hi", 0),
            Some(22)
        );
        assert_eq!(head_end(b"HTTP/1.1 101\r\n\r", 0), None);
        let matched = matched_after(b"HTTP/1.1 101\r\n\r", 0);
        assert_eq!(head_end(b"\n\x81", matched), Some(1));
        // A lone carriage return restarts the match where it stands.
        assert_eq!(head_end(b"\r\r\n\r\n", 0), Some(5));
        assert_eq!(head_end(b"\r\n\rx\r\n", 0), None);
    }

    #[test]
    fn headers_say_their_length_and_kind() {
        assert_eq!(header_len(&[0x81]), 2);
        assert_eq!(header_len(&[0x81, 5]), 2);
        assert_eq!(header_len(&[0x81, 126]), 4);
        assert_eq!(header_len(&[0x81, 127]), 10);
        assert_eq!(header_len(&[0x81, 0x80 | 127]), 14);
        assert_eq!(parse_header(&[0x81, 5]), (true, false, 5));
        assert_eq!(parse_header(&[0x01, 126, 1, 0]), (false, false, 256));
        assert_eq!(
            parse_header(&[0x89, 127, 0, 0, 0, 1, 0, 0, 0, 0]),
            (true, true, 1 << 32)
        );
    }
}
