//! A scripted Rustpad client that types seeded random keystrokes through the same client
//! algorithm as the browser (ot.js style: one operation in flight, later ones buffered, remote
//! operations transformed past both), so tests can run real concurrent editors.
//!
//! Why this file is long: the client algorithm (one operation in flight, the
//! buffer, transforming remote operations past both) only holds as a whole,
//! and its tests sit beside it.

use std::fmt;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use operational_transform::{OTError, Operation, OperationSeq};
use ropey::Rope;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::protocol::{ClientMsg, ServerMsg, UserInfo, UserOperation};

/// Why a typist run failed.
#[derive(Debug)]
pub struct TypistError(pub(crate) String);

impl fmt::Display for TypistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TypistError {}

impl From<tungstenite::Error> for TypistError {
    fn from(e: tungstenite::Error) -> Self {
        Self(format!("websocket: {e}"))
    }
}

impl From<OTError> for TypistError {
    fn from(_: OTError) -> Self {
        Self("an operation did not fit the text it was meant for".into())
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, TypistError> {
    Err(TypistError(message.into()))
}

/// The client side of the protocol's OT state, without any I/O.
#[derive(Clone, Debug, Default)]
pub struct Client {
    /// This connection's user id.
    pub me: u64,
    /// History entries seen so far.
    pub revision: usize,
    /// The local text, including edits not yet acknowledged: a rope, as an
    /// editor's model is, so that taking in an entry costs that entry and
    /// not a copy of the whole text (a long pad's typist would otherwise
    /// spend more than the server it is measured beside).
    pub text: Rope,
    /// The edit sent and not yet acknowledged.
    outstanding: Option<OperationSeq>,
    /// Local edits made while `outstanding` was in flight, composed into one.
    buffer: Option<OperationSeq>,
}

impl Client {
    /// A client for user `me` that has seen nothing yet.
    pub fn new(me: u64) -> Self {
        Self {
            me,
            ..Self::default()
        }
    }

    /// Whether every local edit has been acknowledged.
    pub fn is_settled(&self) -> bool {
        self.outstanding.is_none() && self.buffer.is_none()
    }

    /// Applies a local edit; returns the `Edit` to send now, if nothing else is in flight.
    pub fn local_edit(&mut self, operation: OperationSeq) -> Result<Option<ClientMsg>, OTError> {
        apply(&mut self.text, &operation)?;
        if self.outstanding.is_none() {
            self.outstanding = Some(operation.clone());
            return Ok(Some(ClientMsg::Edit {
                revision: self.revision,
                operation,
            }));
        }
        self.buffer = Some(match self.buffer.take() {
            Some(buffer) => buffer.compose(&operation)?,
            None => operation,
        });
        Ok(None)
    }

    /// Takes in a `History` message; returns the buffered `Edit` to send if it held our ack.
    pub fn on_history(
        &mut self,
        start: usize,
        operations: Vec<UserOperation>,
    ) -> Result<Option<ClientMsg>, TypistError> {
        if start > self.revision {
            return fail(format!(
                "history starts at {start} but only {} entries were seen",
                self.revision
            ));
        }
        let mut to_send = None;
        for entry in operations.into_iter().skip(self.revision - start) {
            self.revision += 1;
            if entry.id == self.me {
                if self.outstanding.take().is_none() || to_send.is_some() {
                    return fail("the server acknowledged an edit that was never sent");
                }
                // The buffer goes out at the revision just after our ack; whatever follows in
                // this batch is transformed against it below, and by the server likewise.
                self.outstanding = self.buffer.take();
                to_send = self.outstanding.clone().map(|operation| ClientMsg::Edit {
                    revision: self.revision,
                    operation,
                });
                continue;
            }
            let mut remote = entry.operation;
            if let Some(outstanding) = self.outstanding.take() {
                let (outstanding, transformed) = outstanding.transform(&remote)?;
                self.outstanding = Some(outstanding);
                remote = transformed;
            }
            if let Some(buffer) = self.buffer.take() {
                let (buffer, transformed) = buffer.transform(&remote)?;
                self.buffer = Some(buffer);
                remote = transformed;
            }
            apply(&mut self.text, &remote)?;
        }
        Ok(to_send)
    }
}

/// Applies `operation` to `text` in place, as `OperationSeq::apply` does to
/// a string: refused, leaving the text as it was, unless it covers the text
/// exactly.
fn apply(text: &mut Rope, operation: &OperationSeq) -> Result<(), OTError> {
    if operation.base_len() != text.len_chars() {
        return Err(OTError);
    }
    let mut at = 0;
    for part in operation.ops() {
        match part {
            Operation::Retain(n) => at += *n as usize,
            Operation::Delete(n) => text.remove(at..at + *n as usize),
            Operation::Insert(inserted) => {
                text.insert(at, inserted);
                at += inserted.chars().count();
            }
        }
    }
    Ok(())
}

/// Settings of a typist run.
#[derive(Clone, Debug)]
pub struct TypistOptions {
    /// `ws://HOST:PORT/api/socket/ID`.
    pub url: String,
    /// Seed of the keystroke generator; equal seeds type equal strings at equal choices.
    pub seed: u64,
    /// How many keystrokes to type.
    pub count: usize,
    /// Pause between keystrokes.
    pub delay: Duration,
    /// Name sent in `ClientInfo`.
    pub name: String,
    /// After the last acknowledgement, keep listening until the server has been quiet this
    /// long, so concurrent typists end up reporting the same final text.
    pub settle: Duration,
}

impl TypistOptions {
    /// Defaults: seed 1, 20 keystrokes, 1 ms apart, name "typist", 300 ms settle.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            seed: 1,
            count: 20,
            delay: Duration::from_millis(1),
            name: "typist".into(),
            settle: Duration::from_millis(300),
        }
    }
}

/// What a typist did and saw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypistReport {
    /// The user id the server gave it.
    pub identity: u64,
    /// The strings it inserted, in order.
    pub typed: Vec<String>,
    /// Keystrokes dropped because the predicate allowed no position.
    pub skipped: usize,
    /// Its text when it stopped, every own edit acknowledged.
    pub final_text: String,
    /// History length when it stopped.
    pub revision: usize,
}

/// Decides whether the typist may insert at a code-point position of its current text.
pub type Allowed = dyn Fn(&str, usize) -> bool + Send + Sync;

/// A typist ready to run.
pub struct Typist {
    options: TypistOptions,
    allowed: Option<Box<Allowed>>,
}

impl Typist {
    /// A typist that may type anywhere.
    pub fn new(options: TypistOptions) -> Self {
        Self {
            options,
            allowed: None,
        }
    }

    /// Restricts typing to positions where `allowed(text, position)` holds; a keystroke with no
    /// such position is skipped.
    pub fn only_where(
        mut self,
        allowed: impl Fn(&str, usize) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.allowed = Some(Box::new(allowed));
        self
    }

    /// Connects, types every keystroke, waits for all acknowledgements and a quiet spell, and
    /// closes.
    pub async fn run(self) -> Result<TypistReport, TypistError> {
        self.run_and_stay(|_| std::future::ready(())).await
    }

    /// Like [`Typist::run`], but once settled hands the report to `stay` and keeps the
    /// connection open (still following the pad) until the future it returns completes, so a
    /// test can look at the pad while this typist is still in it.
    pub async fn run_and_stay<F: std::future::Future<Output = ()>>(
        self,
        stay: impl FnOnce(&TypistReport) -> F,
    ) -> Result<TypistReport, TypistError> {
        let Typist { options, allowed } = self;
        let (mut socket, _) = connect_async(options.url.as_str()).await?;

        let me = match next_server_msg(&mut socket).await? {
            ServerMsg::Identity(me) => me,
            other => return fail(format!("expected Identity first, got {other:?}")),
        };
        let mut client = Client::new(me);
        let mut rng = XorShift::new(options.seed);
        let info = UserInfo {
            name: options.name.clone(),
            hue: (options.seed % 360) as u32,
        };
        send(&mut socket, &ClientMsg::ClientInfo(info)).await?;

        // The echo of our own ClientInfo marks the end of the snapshot.
        loop {
            match next_server_msg(&mut socket).await? {
                ServerMsg::UserInfo { id, info: Some(_) } if id == me => break,
                msg => handle(&mut client, &mut socket, msg).await?,
            }
        }

        let mut report = TypistReport {
            identity: me,
            typed: Vec::with_capacity(options.count),
            skipped: 0,
            final_text: String::new(),
            revision: 0,
        };
        let mut next_key = Instant::now() + options.delay;
        while report.typed.len() + report.skipped < options.count || !client.is_settled() {
            let typing = report.typed.len() + report.skipped < options.count;
            tokio::select! {
                msg = next_server_msg(&mut socket) => handle(&mut client, &mut socket, msg?).await?,
                () = tokio::time::sleep_until(next_key), if typing => {
                    let len = client.text.len_chars();
                    let position = match &allowed {
                        None => Some(rng.below(len + 1)),
                        Some(allowed) => {
                            let text = client.text.to_string();
                            let choices: Vec<usize> =
                                (0..=len).filter(|&p| allowed(&text, p)).collect();
                            (!choices.is_empty()).then(|| choices[rng.below(choices.len())])
                        }
                    };
                    match position {
                        None => report.skipped += 1,
                        Some(position) => {
                            let piece = rng.keystroke();
                            let mut operation = OperationSeq::default();
                            operation.retain(position as u64);
                            operation.insert(piece);
                            operation.retain((len - position) as u64);
                            if let Some(edit) = client.local_edit(operation)? {
                                send(&mut socket, &edit).await?;
                            }
                            report.typed.push(piece.to_owned());
                        }
                    }
                    next_key = Instant::now() + options.delay;
                }
            }
        }

        while let Ok(msg) = tokio::time::timeout(options.settle, next_server_msg(&mut socket)).await
        {
            handle(&mut client, &mut socket, msg?).await?;
        }
        report.final_text = client.text.to_string();
        report.revision = client.revision;

        let staying = stay(&report);
        tokio::pin!(staying);
        loop {
            tokio::select! {
                () = &mut staying => break,
                msg = next_server_msg(&mut socket) => handle(&mut client, &mut socket, msg?).await?,
            }
        }
        socket.close(None).await.ok();
        Ok(report)
    }
}

/// Whether inserting at code-point `position` of `text` would land strictly inside an occurrence
/// of `needle` (overlapping occurrences included): some occurrence starts before `position` and
/// ends after it. Positions at either edge of an occurrence are fine. An empty needle has no
/// inside.
pub fn splits_occurrence(text: &str, position: usize, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let Some(at) = text
        .char_indices()
        .map(|(index, _)| index)
        .chain(std::iter::once(text.len()))
        .nth(position)
    else {
        return false;
    };
    // An occurrence that straddles `at` starts within the needle's length before it.
    let earliest = at.saturating_sub(needle.len() - 1);
    (earliest..at).any(|start| {
        text.is_char_boundary(start)
            && text[start..].starts_with(needle)
            && start + needle.len() > at
    })
}

pub(crate) type ClientSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) async fn send(socket: &mut ClientSocket, msg: &ClientMsg) -> Result<(), TypistError> {
    socket.send(Message::text(msg.to_json())).await?;
    Ok(())
}

/// The next application message, skipping control and binary frames.
pub(crate) async fn next_server_msg(socket: &mut ClientSocket) -> Result<ServerMsg, TypistError> {
    loop {
        match socket.next().await {
            None => return fail("the server closed the connection"),
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(&text)
                    .map_err(|e| TypistError(format!("undecodable server message {text}: {e}")));
            }
            Some(Ok(Message::Close(frame))) => {
                return fail(format!("the server closed the connection: {frame:?}"));
            }
            Some(Ok(_)) => {}
        }
    }
}

pub(crate) async fn handle(
    client: &mut Client,
    socket: &mut ClientSocket,
    msg: ServerMsg,
) -> Result<(), TypistError> {
    match msg {
        ServerMsg::History { start, operations } => {
            if let Some(edit) = client.on_history(start, operations)? {
                send(socket, &edit).await?;
            }
            Ok(())
        }
        ServerMsg::Identity(_) => fail("a second Identity arrived"),
        ServerMsg::Language(_) | ServerMsg::UserInfo { .. } | ServerMsg::UserCursor { .. } => {
            Ok(())
        }
    }
}

const LETTERS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s",
    "t", "u", "v", "w", "x", "y", "z", "A", "B", "C", "Q", "X", "Z", " ", "\n",
];
const ACCENTED: &[&str] = &["é", "ü", "ñ", "Å", "ç", "ø", "ß", "e\u{301}"];
const CJK: &[&str] = &["漢", "字", "中文", "日本語", "한", "ア"];
const EMOJI: &[&str] = &["🎉", "😀", "🚀", "🦀", "𝄞"];
const ZWJ_SEQUENCES: &[&str] = &["👨‍👩‍👧", "👩‍💻", "🏳️‍🌈", "👨‍👨‍👦‍👦"];

/// A xorshift64* generator: tiny, seedable and plenty for picking keystrokes
/// (and, in tests/host-tests/tests/edit_oracle.rs, for planning random trials).
pub struct XorShift(u64);

impl XorShift {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point; mixing the seed also spreads nearby seeds apart.
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with a chance of `percent` in 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick(&mut self, from: &'static [&'static str]) -> &'static str {
        from[self.below(from.len())]
    }

    fn keystroke(&mut self) -> &'static str {
        match self.below(10) {
            0..=3 => self.pick(LETTERS),
            4 | 5 => self.pick(ACCENTED),
            6 | 7 => self.pick(CJK),
            8 => self.pick(EMOJI),
            _ => self.pick(ZWJ_SEQUENCES),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert_at(text_len: usize, at: usize, s: &str) -> OperationSeq {
        let mut op = OperationSeq::default();
        op.retain(at as u64);
        op.insert(s);
        op.retain((text_len - at) as u64);
        op
    }

    #[test]
    fn buffered_edits_go_out_after_the_ack_and_remote_edits_are_transformed() {
        let mut client = Client::new(7);
        let first = client.local_edit(insert_at(0, 0, "ab")).unwrap();
        assert!(matches!(first, Some(ClientMsg::Edit { revision: 0, .. })));
        assert_eq!(client.local_edit(insert_at(2, 2, "c")).unwrap(), None);

        // Someone else's insert lands first; ours is acknowledged after it.
        let remote = UserOperation {
            id: 1,
            operation: insert_at(0, 0, "XY"),
        };
        assert_eq!(client.on_history(0, vec![remote]).unwrap(), None);
        assert_eq!(client.text, "abcXY");
        let ack = UserOperation {
            id: 7,
            operation: insert_at(2, 0, "ab"),
        };
        let next = client.on_history(1, vec![ack]).unwrap();
        match next {
            Some(ClientMsg::Edit {
                revision,
                operation,
            }) => {
                assert_eq!(revision, 2);
                assert_eq!(operation, insert_at(4, 2, "c"));
            }
            other => panic!("expected the buffered edit, got {other:?}"),
        }
        assert!(!client.is_settled());
    }

    #[test]
    fn splits_occurrence_allows_only_the_edges() {
        let text = "ab<%>c🎉<%>";
        // Code points: a0 b1 <2 %3 >4 c5 🎉6 <7 %8 >9, length 10.
        let inside: Vec<usize> = (0..=10)
            .filter(|&p| splits_occurrence(text, p, "<%>"))
            .collect();
        assert_eq!(inside, vec![3, 4, 8, 9]);
        assert!(!splits_occurrence(text, 3, ""));
        assert!(!splits_occurrence(text, 11, "<%>"));
        // Overlapping occurrences count too.
        let inside: Vec<usize> = (0..=4)
            .filter(|&p| splits_occurrence("aaaa", p, "aa"))
            .collect();
        assert_eq!(inside, vec![1, 2, 3]);
        // Multi-byte needles are matched on character boundaries only.
        let inside: Vec<usize> = (0..=4)
            .filter(|&p| splits_occurrence("x🎉🎉y", p, "🎉🎉"))
            .collect();
        assert_eq!(inside, vec![2]);
    }

    #[test]
    fn the_generator_is_deterministic() {
        let a: Vec<_> = {
            let mut rng = XorShift::new(42);
            (0..50).map(|_| rng.keystroke()).collect()
        };
        let mut rng = XorShift::new(42);
        let b: Vec<_> = (0..50).map(|_| rng.keystroke()).collect();
        assert_eq!(a, b);
    }
}
