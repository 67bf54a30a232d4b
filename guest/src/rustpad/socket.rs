//! A short session on a pad's collaboration socket.
//!
//! Rustpad sends a snapshot on connect (Identity, then the whole History if
//! there is one, the language, the users) with no end marker, and handles a
//! client's messages only after that snapshot is out. So the session sends one
//! message of its own and reads until the server's echo of it: everything
//! before the echo is the complete snapshot, including "no History at all".
//! No quiet-period guessing.
//!
//! Two barriers: an empty `CursorData` for a look that must not show up in
//! the pad's user list, and `ClientInfo` naming us `rustpad-mcp` for writes,
//! so people in the pad see who edits. Every History entry is folded; a write
//! is acknowledged by the entry that carries our own Identity.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::authorship::Authorship;
use super::fold::{FoldError, Lengths, fold_history_frame, fold_lengths};
use super::marks::{self, Mark};
use super::ot::{Document, Operation};
use super::since::Since;
use crate::config::RustpadUrl;
use crate::result::ToolError;
use crate::text::{self, MAX_LABEL_CHARS};
use crate::websocket::Connection;

/// How long the snapshot may take to arrive, from connecting.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long Rustpad may take to acknowledge an edit or a language change.
const ACK_TIMEOUT: Duration = Duration::from_secs(15);
/// People we keep track of; the rest are not listed.
const MAX_USERS: usize = 200;
/// How often the fold looks at the clock, in operations.
const DEADLINE_CHECK_EVERY: usize = 4096;

/// The name people in the pad see for us, and our cursor colour.
const CLIENT_NAME: &str = "rustpad-mcp";
const CLIENT_HUE: u32 = 200;

/// A server message, borrowing its text from the frame.
#[derive(Deserialize)]
enum ServerMsg<'a> {
    Identity(u64),
    History {
        start: u64,
        /// Read after the frame, the way the session needs it.
        #[serde(borrow)]
        operations: &'a RawValue,
    },
    Language(String),
    UserInfo {
        id: u64,
        info: Option<UserInfo>,
    },
    UserCursor {
        id: u64,
    },
}

/// A History entry, parsed whole (for a session that keeps the text).
#[derive(Deserialize)]
pub(crate) struct UserOperation<'a> {
    pub id: u64,
    #[serde(borrow)]
    pub operation: Operation<'a>,
}

#[derive(Deserialize)]
struct UserInfo {
    name: String,
}

/// What a message meant, once folded into the session.
pub enum Event {
    Identity,
    /// Edits were folded, `ours` of them this connection's own.
    History {
        ours: u64,
    },
    Language(String),
    UserInfo {
        id: u64,
        present: bool,
    },
    UserCursor {
        id: u64,
    },
}

/// What a session keeps of the pad besides its length.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Track {
    text: bool,
    /// The text at this revision and every edit after it (see [`Since`]).
    since: Option<u64>,
    /// Who wrote what (see [`Authorship`]), for the removal rule.
    authorship: bool,
}

impl Track {
    /// The length only.
    pub const LENGTH: Track = Track {
        text: false,
        since: None,
        authorship: false,
    };
    /// The text.
    pub const TEXT: Track = Track {
        text: true,
        since: None,
        authorship: false,
    };

    /// The text, and also the text at `revision` with every edit after it.
    pub fn text_since(revision: u64) -> Track {
        Track {
            since: Some(revision),
            ..Track::TEXT
        }
    }

    /// The same, recording from `revision` at the latest.
    pub fn since_at_most(self, revision: Option<u64>) -> Track {
        let since = match (self.since, revision) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Track {
            text: self.text || since.is_some(),
            since,
            ..self
        }
    }

    /// The same, and who wrote what.
    pub fn with_authorship(self) -> Track {
        Track {
            text: true,
            authorship: true,
            ..self
        }
    }
}

/// What a barrier waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Barrier {
    /// Our own cursor echo: the invisible look.
    Cursor,
    /// Our own user-info echo: the announced write session.
    UserInfo,
}

/// The pad as this client knows it: everything folded from Rustpad's
/// messages so far. Separate from the connection, so it can be driven (and
/// fuzzed) with frames from anywhere.
pub struct PadState {
    id: String,
    me: Option<u64>,
    revision: u64,
    document: Document,
    language: Option<String>,
    users: BTreeMap<u64, String>,
    since: Option<Since>,
    authorship: Option<Authorship>,
    /// Entries of this connection's own in the history so far.
    own_entries: u64,
}

/// An open session: the connection and the pad's state.
pub struct PadSocket {
    connection: Connection,
    state: PadState,
}

impl std::ops::Deref for PadSocket {
    type Target = PadState;

    fn deref(&self) -> &PadState {
        &self.state
    }
}

impl PadSocket {
    /// Connects and establishes the snapshot without appearing in the pad.
    pub fn look(url: &RustpadUrl, id: &str, track: Track) -> Result<PadSocket, ToolError> {
        PadSocket::open(url, id, Barrier::Cursor, track)
    }

    /// Connects as the named collaborator `rustpad-mcp`, ready to write.
    pub fn join(url: &RustpadUrl, id: &str, track: Track) -> Result<PadSocket, ToolError> {
        PadSocket::open(url, id, Barrier::UserInfo, track)
    }

    fn open(
        url: &RustpadUrl,
        id: &str,
        barrier: Barrier,
        track: Track,
    ) -> Result<PadSocket, ToolError> {
        let deadline = Instant::now() + SNAPSHOT_TIMEOUT;
        let address = url.websocket(&format!("/api/socket/{id}"));
        let connection = Connection::connect(&address).map_err(|reason| {
            // An HTTP answer to the upgrade is the signature of a proxy that does not pass WebSockets.
            let hint = if reason.contains("WebSocket upgrade with HTTP") {
                " If reads work but this fails, a proxy in front of Rustpad may not forward WebSocket upgrades on /api/socket/."
            } else if reason.starts_with("connection refused") {
                " Check RUSTPAD_URL and that the instance is running."
            } else {
                ""
            };
            ToolError::new(format!("could not open Rustpad's collaboration socket: {reason}.{hint}"))
        })?;
        let mut socket = PadSocket {
            connection,
            state: PadState::new(id, track),
        };
        let result = socket.synchronise(barrier, deadline);
        match result {
            Ok(()) => Ok(socket),
            Err(error) => {
                socket.connection.close();
                Err(error)
            }
        }
    }

    fn synchronise(&mut self, barrier: Barrier, deadline: Instant) -> Result<(), ToolError> {
        let message = match barrier {
            Barrier::Cursor => json!({ "CursorData": { "cursors": [], "selections": [] } }),
            Barrier::UserInfo => {
                json!({ "ClientInfo": { "name": CLIENT_NAME, "hue": CLIENT_HUE } })
            }
        };
        self.send(&message)?;
        loop {
            let echoed = match self.receive(deadline, "its snapshot of the pad")? {
                Event::UserCursor { id } => barrier == Barrier::Cursor && Some(id) == self.me,
                Event::UserInfo { id, present: true } => {
                    barrier == Barrier::UserInfo && Some(id) == self.me
                }
                _ => false,
            };
            if echoed {
                return Ok(());
            }
        }
    }

    /// Sends one whole-document edit at the current revision, after `mark`,
    /// and waits for Rustpad to acknowledge it, folding everyone else's edits
    /// meanwhile.
    pub fn edit(&mut self, mark: Mark, operation: serde_json::Value) -> Result<(), ToolError> {
        self.edit_at(mark, self.revision, operation)
    }

    /// Sends an edit built against the text at `revision` (at most the
    /// current one), after the entries of `mark` (see [`marks`]), which must
    /// be this connection's first: Rustpad transforms the edit over every
    /// edit since, as it does for any client whose edit crossed others in
    /// flight, and the marks change nothing it transforms over.
    pub fn edit_at(
        &mut self,
        mark: Mark,
        revision: u64,
        operation: serde_json::Value,
    ) -> Result<(), ToolError> {
        if self.me.is_none() {
            return Err(ToolError::new(
                "Rustpad never told this client its identity",
            ));
        }
        debug_assert!(revision <= self.revision);
        debug_assert_eq!(self.own_entries, 0, "a mark goes first");
        let keep_all = marks::keep_all(self.document.len());
        for _ in 0..mark.entries() {
            // Pipelined: each is a whole-text keep at the current revision.
            self.send(&json!({ "Edit": { "revision": self.revision, "operation": keep_all } }))?;
        }
        let sent = self.send(&json!({ "Edit": { "revision": revision, "operation": operation } }));
        if let Err(error) = sent {
            return Err(unknown_outcome(error));
        }
        let acknowledged = self.own_entries + mark.entries() as u64 + 1;
        let deadline = Instant::now() + ACK_TIMEOUT;
        while self.own_entries < acknowledged {
            if let Err(error) = self.receive(deadline, "an acknowledgement of the edit") {
                return Err(unknown_outcome(error));
            }
        }
        Ok(())
    }

    /// Sets the language and waits until Rustpad relays it back to us.
    pub fn set_language(&mut self, language: &str) -> Result<(), ToolError> {
        self.send(&json!({ "SetLanguage": language }))?;
        let deadline = Instant::now() + ACK_TIMEOUT;
        loop {
            if let Event::Language(echo) = self.receive(deadline, "the language change")?
                && echo == language
            {
                return Ok(());
            }
        }
    }

    /// Starts keeping the text as it stands now and every edit after it.
    pub fn record_from_here(&mut self) -> Result<(), ToolError> {
        self.state.record_from_here()
    }

    pub fn close(self) {
        self.connection.close();
    }

    fn send(&self, message: &serde_json::Value) -> Result<(), ToolError> {
        self.connection
            .send(&message.to_string())
            .map_err(|reason| ToolError::new(format!("could not send to Rustpad: {reason}")))
    }

    /// Reads one message and folds it into the session state.
    fn receive(&mut self, deadline: Instant, awaiting: &str) -> Result<Event, ToolError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout_ms = left.as_millis().min(u32::MAX as u128) as u32;
        let frame = match self.connection.recv(timeout_ms) {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                return Err(ToolError::new(format!(
                    "Rustpad did not send {awaiting} in time"
                )));
            }
            Err(reason) => {
                return Err(ToolError::new(format!(
                    "the collaboration socket ended while waiting for {awaiting}: {reason}"
                )));
            }
        };
        self.state.absorb(&frame, deadline)
    }
}

impl PadState {
    pub fn new(id: &str, track: Track) -> PadState {
        PadState {
            id: id.to_string(),
            me: None,
            revision: 0,
            document: if track.text {
                Document::with_text()
            } else {
                Document::lengths_only()
            },
            language: None,
            users: BTreeMap::new(),
            since: track.since.map(Since::from),
            authorship: track.authorship.then(Authorship::new),
            own_entries: 0,
        }
    }

    pub fn document(&self) -> &Document {
        &self.document
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Rustpad's number for this connection, once it has said.
    pub fn me(&self) -> Option<u64> {
        self.me
    }

    /// The text, for a session that keeps it.
    pub fn text(&self) -> Result<&ropey::Rope, ToolError> {
        self.document.rope().ok_or_else(|| {
            ToolError::new("internal error: the session did not keep the pad's text")
        })
    }

    /// The base text and what followed it, for a session that records them.
    pub fn since(&self) -> Option<&Since> {
        self.since.as_ref()
    }

    /// Who wrote what, for a session that follows it.
    pub fn authorship(&self) -> Option<&Authorship> {
        self.authorship.as_ref()
    }

    /// Whether connection `id` is a person at work in the pad now: open,
    /// and named by a name that is not this server's.
    pub fn at_work(&self, id: u64) -> bool {
        Some(id) != self.me && self.users.get(&id).is_some_and(|name| name != CLIENT_NAME)
    }

    /// Starts recording at the text as it stands now.
    fn record_from_here(&mut self) -> Result<(), ToolError> {
        let since = Since::here(self.revision, self.text()?);
        self.since = Some(since);
        Ok(())
    }

    /// The language, if anyone ever set one.
    pub fn language(&self) -> Option<&str> {
        self.language.as_deref()
    }

    /// The name of connection `id`, while it has the pad open and has said who it is.
    pub fn user_name(&self, id: u64) -> Option<&str> {
        self.users.get(&id).map(String::as_str)
    }

    /// The names of everyone else who has the pad open and said who they are.
    pub fn other_users(&self) -> Vec<String> {
        self.users
            .iter()
            .filter(|(id, _)| Some(**id) != self.me)
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// Parses one frame from Rustpad and folds it in.
    pub fn absorb(&mut self, frame: &str, deadline: Instant) -> Result<Event, ToolError> {
        // A long History, when only lengths are kept, is folded as it is read.
        if !self.document.keeps_text() {
            let from = Lengths {
                length: self.document.len() as u64,
                revision: self.revision,
                ours: 0,
            };
            let check_every = DEADLINE_CHECK_EVERY as u64;
            if let Some(folded) = fold_history_frame(frame, from, self.me, deadline, check_every) {
                let folded = folded.map_err(|problem| self.refusal(problem))?;
                self.document.set_length(folded.length as usize);
                self.revision = folded.revision;
                self.own_entries += folded.ours;
                return Ok(Event::History { ours: folded.ours });
            }
        }
        let message: ServerMsg = serde_json::from_str(frame).map_err(|error| {
            ToolError::new(format!(
                "Rustpad sent a message this client does not understand ({}); the pad state cannot be trusted",
                text::clean_line(&error.to_string(), 200)
            ))
        })?;
        self.fold(message, deadline)
    }

    fn fold(&mut self, message: ServerMsg, deadline: Instant) -> Result<Event, ToolError> {
        Ok(match message {
            ServerMsg::Identity(id) => {
                self.me = Some(id);
                Event::Identity
            }
            ServerMsg::History { start, operations } => {
                if start > self.revision {
                    return Err(ToolError::new(format!(
                        "Rustpad sent history starting at revision {start} while this client holds revision {}; the pad state cannot be trusted",
                        self.revision
                    )));
                }
                let skip = self.revision - start;
                let ours = if self.document.keeps_text() {
                    self.fold_text(operations.get(), skip, deadline)
                } else {
                    self.fold_lengths(operations.get(), skip, deadline)
                }
                .map_err(|problem| self.refusal(problem))?;
                self.own_entries += ours;
                Event::History { ours }
            }
            ServerMsg::Language(language) => {
                self.language = Some(text::clean_line(&language, MAX_LABEL_CHARS));
                Event::Language(language)
            }
            ServerMsg::UserInfo {
                id,
                info: Some(info),
            } => {
                if self.users.len() < MAX_USERS || self.users.contains_key(&id) {
                    self.users
                        .insert(id, text::clean_line(&info.name, MAX_LABEL_CHARS));
                }
                Event::UserInfo { id, present: true }
            }
            ServerMsg::UserInfo { id, info: None } => {
                self.users.remove(&id);
                Event::UserInfo { id, present: false }
            }
            ServerMsg::UserCursor { id } => Event::UserCursor { id },
        })
    }
}

impl PadState {
    /// Folds a History's entries into the text, each parsed whole; returns
    /// how many were ours.
    fn fold_text(&mut self, entries: &str, skip: u64, deadline: Instant) -> Result<u64, FoldError> {
        let entries: Vec<UserOperation> = serde_json::from_str(entries)
            .map_err(|error| FoldError::NotUnderstood(error.to_string()))?;
        let mut ours = 0;
        for (index, entry) in entries.iter().enumerate().skip(skip as usize) {
            if index % DEADLINE_CHECK_EVERY == 0 && Instant::now() > deadline {
                return Err(FoldError::Deadline);
            }
            let mine = Some(entry.id) == self.me;
            let recorded = self
                .since
                .as_ref()
                .is_some_and(|s| s.wants(self.revision + 1));
            let before = (recorded && mine && !marks::changes_nothing(&entry.operation))
                .then(|| self.document.rope().cloned())
                .flatten();
            self.document
                .apply(&entry.operation)
                .map_err(FoldError::CannotApply)?;
            self.revision += 1;
            if mine {
                ours += 1;
            }
            if let Some(authorship) = &mut self.authorship {
                authorship.follow(entry.id, &entry.operation);
            }
            if let (Some(since), Some(text)) = (&mut self.since, self.document.rope()) {
                let operation = if recorded {
                    entry.operation.to_seq()
                } else {
                    Default::default()
                };
                since.follow(self.revision, entry.id, operation, before, text);
            }
        }
        Ok(ours)
    }

    /// Folds a History's entries into lengths, straight from the frame.
    fn fold_lengths(
        &mut self,
        entries: &str,
        skip: u64,
        deadline: Instant,
    ) -> Result<u64, FoldError> {
        let from = Lengths {
            length: self.document.len() as u64,
            revision: self.revision,
            ours: 0,
        };
        let folded = fold_lengths(
            entries,
            from,
            skip,
            self.me,
            deadline,
            DEADLINE_CHECK_EVERY as u64,
        )?;
        self.document.set_length(folded.length as usize);
        self.revision = folded.revision;
        Ok(folded.ours)
    }

    fn refusal(&self, problem: FoldError) -> ToolError {
        ToolError::new(match problem {
            FoldError::NotUnderstood(error) => format!(
                "Rustpad sent a message this client does not understand ({}); the pad state cannot be trusted",
                text::clean_line(&error, 200)
            ),
            FoldError::CannotApply(reason) => format!(
                "Rustpad sent an edit this client cannot apply ({reason}); the pad state cannot be trusted"
            ),
            FoldError::Deadline => format!(
                "pad \"{}\" has more history than this server could fold before its deadline",
                self.id
            ),
        })
    }
}

/// Once an edit is sent, a failure no longer means "nothing happened".
fn unknown_outcome(error: ToolError) -> ToolError {
    ToolError::new(format!(
        "{}. Rustpad did not acknowledge the edit, so whether it was applied is unknown. Check before deciding what to do: read the pad with get_document, or call get_changes with the base you read. Repeating edit_document with the same base is safe (a batch that landed is refused, not made twice); repeating any other write is not: if the first one landed, its change would be made twice (append_to_document would add its text again).",
        error.message()
    ))
}
