//! A write's connection kept between calls, where the host keeps one
//! (`grants::held_writes`): the next write to the pad goes on from it
//! instead of joining again, so it is not sent the pad's whole history and
//! costs its own change. In a host that keeps nothing every write joins
//! afresh, as it always may.
//!
//! What keeps the guard whole on a connection that carries many writes
//! (argued in docs/security.md, "Writes on a held socket"):
//! - the first write on a kept connection says, with a run of five marks,
//!   that the connection is held; after that its appends send no mark, and
//!   the history still reads each as a write of ours (`marks`). An append
//!   removes nothing, so the order of removals (`order`) has nothing to
//!   wait for it for; a write that may remove text would send its own
//!   mark, though only appends are kept;
//! - a connection is kept only when its last entry in the history changed
//!   the text: a mark left without its edit, or an edit Rustpad stored as a
//!   keep after a collision, would run into the next write's mark;
//! - it never has a name or shows a caret (joined with a look's barrier),
//!   so people's editors draw nothing between writes, and the order still
//!   sees it listed by its empty caret;
//! - only sessions that keep the text and follow nobody's authorship are
//!   kept (appends): a removal joins afresh, so the guard judges it on the
//!   whole history, as in every host.
//!
//! The cursor is what such a session knows: a line of JSON (the
//! connection's number, the revision, the language, Rustpad's start time
//! and how far the text's fingerprint is hashed), then the text as it is,
//! unescaped, since it is most of the cursor and a write should not pay to
//! encode and decode it. What came while the host held the connection is
//! read first, before the write builds its edit.

use std::borrow::Cow;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::marks::{Hold, Mark, removes_nothing};
use super::socket::{PadSocket, writers_key};
use super::state::PadState;
use super::track::Track;
use super::url::RustpadUrl;
use crate::digest::HashedStart;
use crate::grants::held_writes;

/// The cursor's form; a cursor of another form is not used.
const FORM: u32 = 2;
/// Messages a taken session reads before it writes, at most.
const CATCH_UP_AT_MOST: usize = 10_000;

/// What a kept write session knew when it was handed to the host, but its
/// text (which follows the line this makes).
#[derive(Serialize, Deserialize)]
struct Cursor<'a> {
    form: u32,
    pad: Cow<'a, str>,
    connection: u64,
    revision: u64,
    language: Option<Cow<'a, str>>,
    started: Option<u64>,
    /// The text's fingerprint hashed nearly to its end
    /// ([`HashedStart::save`]), so the next write's bases cost only what
    /// lies after that.
    #[serde(default)]
    hashed: Option<Cow<'a, str>>,
    /// The connection's history says it is held ([`Mark::Holding`]).
    #[serde(default)]
    held: bool,
}

impl PadSocket {
    /// A write session on a connection the host kept for pad `id`, caught up
    /// with what came while it was kept; none when the host keeps none, or
    /// the one it kept has ended (it is closed, and the write joins afresh).
    pub fn take_kept(url: &RustpadUrl, id: &str) -> Option<PadSocket> {
        let held = held_writes::take(&writers_key(id))?;
        let (line, text) = held.cursor.split_once('\n').unwrap_or_default();
        let cursor = match serde_json::from_str::<Cursor>(line) {
            Ok(cursor) if cursor.form == FORM && cursor.pad == id => cursor,
            _ => {
                held.connection.close();
                return None;
            }
        };
        let mut state = PadState::new(id, Track::TEXT);
        state.me = Some(cursor.connection);
        state.revision = cursor.revision;
        state.document = super::ot::Document::of_text(text);
        if let Some(hashed) = cursor.hashed.as_deref().and_then(HashedStart::restore) {
            state.document.set_hashed(hashed);
        }
        state.language = cursor.language.map(Cow::into_owned);
        // Which connections are writers is read from whole histories only.
        state.marked = None;
        let mut socket = PadSocket::on(held.connection, state, Some(url.clone()), true);
        socket.started = cursor.started;
        socket.hold = if cursor.held { Hold::Held } else { Hold::Kept };
        // What waits is read; what keeps coming after that is read as the
        // write waits for its acknowledgement (Rustpad transforms the edit
        // over it, as over any edit made while one is in flight).
        for _ in 0..CATCH_UP_AT_MOST {
            match socket.next_event(Instant::now()) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    socket.close();
                    return None;
                }
            }
        }
        Some(socket)
    }

    /// The mark a write of class `mark` sends before `operation` on this
    /// connection, if any. On a connection the host kept, a plain write that
    /// removes nothing says once that the connection is held, and sends no
    /// mark from then on; every other write sends its own.
    pub(super) fn mark_for(&self, mark: Mark, operation: &serde_json::Value) -> Option<Mark> {
        let plain = mark == Mark::Writer && removes_nothing(operation);
        match self.hold {
            Hold::Held if plain => None,
            Hold::Kept if plain => Some(Mark::Holding),
            _ => Some(mark),
        }
    }

    /// When Rustpad started, as this session knows it.
    pub fn started(&self) -> Option<u64> {
        self.started
    }

    /// Hands the connection to the host for the next write to this pad when
    /// it may carry one (see the module's notes), else closes it: when this
    /// session's edit is the connection's last entry and changed the text,
    /// or when the session sent nothing (a write refused before it began,
    /// such as one past Rustpad's size limit, leaves the connection as it
    /// found it: joined afresh with no entries, or kept after an edit).
    pub fn keep_or_close(mut self) {
        let edit = self.own_edit().map(|edit| edit.revision);
        let nothing_sent = self.marks_sent == 0 && !self.edit_sent;
        let edit_ended_it = self.edit_sent && edit.is_some() && edit == self.last_own_revision();
        // A session that learnt its edit's outcome elsewhere closed its
        // connection, though it may have sent nothing the history shows (a
        // held append has no mark).
        let keepable = self.unseen
            && !self.closed
            && !self.acknowledgement_lost
            && self.authorship().is_none()
            && (nothing_sent || edit_ended_it);
        let (true, Some(connection)) = (keepable, self.me()) else {
            return self.close();
        };
        let length = self.document().len();
        let hashed = self.state.document.hashed_until(length);
        let (Some(hashed), Some(text)) = (hashed, self.state.document.rope()) else {
            return self.close();
        };
        let cursor = Cursor {
            form: FORM,
            pad: Cow::Borrowed(&self.state.id),
            connection,
            revision: self.revision(),
            language: self.state.language.as_deref().map(Cow::Borrowed),
            started: self.started,
            hashed: Some(Cow::Owned(hashed.save())),
            held: self.hold == Hold::Held,
        };
        match serde_json::to_string(&cursor) {
            // JSON escapes every line break, so the first one ends the line.
            Ok(mut line) => {
                line.reserve(1 + text.len_bytes());
                line.push('\n');
                text.chunks().for_each(|chunk| line.push_str(chunk));
                let key = writers_key(&self.state.id);
                held_writes::give(&key, self.connection, &line);
            }
            Err(_) => self.close(),
        }
    }
}
