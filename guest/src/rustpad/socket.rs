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
//! the pad's user list (and for an append whose connection the host may
//! keep, which must not either: see [`super::kept`]), and `ClientInfo`
//! naming us `rustpad-mcp` for other writes, so people in the pad see who
//! edits. Every History entry is folded; a write
//! is acknowledged by the entry that carries our own Identity.
//!
//! While a write is applied, people see where: its caret goes to the first
//! change (with a selection over the text it replaces) just before the edit,
//! and leaves with the connection. The host is told the connection wrote
//! (`grants::writers`), so a wait for people's edits is not woken by it.

use std::time::{Duration, Instant};

use super::Error;
pub use super::caret::{Change, first_change};
use super::marks::{self, Hold, Mark};
use super::protocol::ClientMsg;
use super::state::Event;
pub use super::state::{PadState, Track};
use super::url::RustpadUrl;
use crate::digest;
use crate::grants::HostError;
use crate::grants::websocket::Connection;
use crate::grants::writers;

/// How long the snapshot may take to arrive, from connecting.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long Rustpad may take to acknowledge an edit or a language change.
const ACK_TIMEOUT: Duration = Duration::from_secs(15);

/// What a barrier waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Barrier {
    /// Our own cursor echo: the invisible look.
    Cursor,
    /// Our own user-info echo: the announced write session.
    UserInfo,
}

/// An open session: the connection and the pad's state.
pub struct PadSocket {
    pub(super) connection: Connection,
    pub(super) state: PadState,
    /// Marking entries this connection has sent (see [`marks`]).
    pub(super) marks_sent: usize,
    /// Where to reconnect to learn an edit's outcome (see [`super::settle`]);
    /// None for a session resumed from an earlier look's connection.
    pub(super) url: Option<RustpadUrl>,
    /// When Rustpad started, as read once this session had joined.
    pub(super) started: Option<u64>,
    /// The edit was found in the history after its acknowledgement was lost.
    pub(super) acknowledgement_lost: bool,
    /// An edit went out on this session and is not known to have failed.
    pub(super) edit_sent: bool,
    /// The connection was closed to learn an edit's outcome elsewhere
    /// ([`super::settle`]): nothing more goes over it.
    pub(super) closed: bool,
    /// The connection never named itself (a look's barrier): a write on it
    /// shows no caret either, so people's editors are sent nothing but its
    /// history entries (see [`super::kept`]).
    pub(super) unseen: bool,
    /// Whether the host kept the connection between calls, and whether its
    /// history says so (see [`super::kept`]).
    pub(super) hold: Hold,
}

/// Where a write stands in the pad's order of writes once it has queued
/// (see [`super::order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Every writer marked before it is done: what they removed is in the
    /// history this session holds.
    Clear,
    /// This many were still under way when the bound passed.
    Behind { writers: usize },
}

impl std::ops::Deref for PadSocket {
    type Target = PadState;

    fn deref(&self) -> &PadState {
        &self.state
    }
}

impl PadSocket {
    /// Connects and establishes the snapshot without appearing in the pad.
    pub fn look(url: &RustpadUrl, id: &str, track: Track) -> Result<PadSocket, Error> {
        PadSocket::open(url, id, Barrier::Cursor, track)
    }

    /// Connects as the named collaborator `rustpad-mcp`, ready to write.
    pub fn join(url: &RustpadUrl, id: &str, track: Track) -> Result<PadSocket, Error> {
        PadSocket::open(url, id, Barrier::UserInfo, track)
    }

    /// Connects ready to write without a name or a caret, for a write whose
    /// connection the host may keep afterwards (see [`super::kept`]).
    pub fn join_unseen(url: &RustpadUrl, id: &str, track: Track) -> Result<PadSocket, Error> {
        PadSocket::open(url, id, Barrier::Cursor, track)
    }

    /// Goes on with the connection of an earlier look at pad `id`, which
    /// had reached `revision` with a text of `length` code points and read
    /// nothing since (what came since waits on the connection).
    pub fn resume(
        connection: Connection,
        id: &str,
        revision: u64,
        length: u64,
        track: Track,
    ) -> PadSocket {
        let state = PadState::resumed(id, revision, length, track);
        PadSocket::on(connection, state, None, true)
    }

    /// A session on `connection` that knows `state` and has sent nothing.
    pub(super) fn on(
        connection: Connection,
        state: PadState,
        url: Option<RustpadUrl>,
        unseen: bool,
    ) -> PadSocket {
        PadSocket {
            connection,
            state,
            marks_sent: 0,
            url,
            started: None,
            acknowledgement_lost: false,
            edit_sent: false,
            closed: false,
            unseen,
            hold: Hold::Joined,
        }
    }

    /// Takes Rustpad's start time, read after this session joined: an edit
    /// whose acknowledgement is lost is looked for in the history only while
    /// Rustpad still has the same start time.
    pub fn know_started(&mut self, started: u64) {
        self.started = Some(started);
    }

    /// Whether the edit's acknowledgement was lost and the edit then found
    /// in the pad's history (see [`super::settle`]).
    pub fn acknowledgement_lost(&self) -> bool {
        self.acknowledgement_lost
    }

    /// Whether an edit went out on this session, unless the history showed
    /// that it was not made: a failure after it is never tried again.
    pub fn edit_sent(&self) -> bool {
        self.edit_sent
    }

    /// The connection, still open, for a later session to resume.
    pub fn into_connection(self) -> Connection {
        self.connection
    }

    fn open(
        url: &RustpadUrl,
        id: &str,
        barrier: Barrier,
        track: Track,
    ) -> Result<PadSocket, Error> {
        let deadline = Instant::now() + SNAPSHOT_TIMEOUT;
        let address = url.websocket(&format!("/api/socket/{id}"));
        let connection =
            Connection::connect(&address).map_err(|failure| Error::opening(&failure))?;
        let state = PadState::new(id, track);
        let unseen = barrier == Barrier::Cursor;
        let mut socket = PadSocket::on(connection, state, Some(url.clone()), unseen);
        if track.authorship {
            // Before the snapshot is folded: text is credited as it comes.
            socket
                .state
                .know_own_writers(writers::noted(&writers_key(id)));
        }
        let result = socket.synchronise(barrier, deadline);
        match result {
            Ok(()) => Ok(socket),
            Err(error) => {
                socket.connection.close();
                Err(error)
            }
        }
    }

    fn synchronise(&mut self, barrier: Barrier, deadline: Instant) -> Result<(), Error> {
        let message = match barrier {
            Barrier::Cursor => ClientMsg::NO_CURSOR,
            Barrier::UserInfo => ClientMsg::ANNOUNCE,
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

    /// Takes this write's place in the pad's order of writes: sends its
    /// writer's mark (the first entry of any [`Mark`]), waits for Rustpad
    /// to record it, then until every writer marked before it has made its
    /// edit or left, for `bound` at most (see [`super::order`]). For a
    /// session that follows who wrote what, before any edit of its own.
    pub fn queue(&mut self, bound: Duration) -> Result<Queue, Error> {
        let me = self.identity()?;
        debug_assert_eq!(self.marks_sent, 0, "a write queues once, first");
        writers::note(&writers_key(&self.state.id), me, None);
        self.send_mark()?;
        let deadline = Instant::now() + ACK_TIMEOUT;
        while self.own_entries == 0 {
            self.receive(
                deadline,
                "its record of this write's place in the pad's order",
            )?;
        }
        let give_up = Instant::now() + bound;
        let mut barrier_owed = false;
        loop {
            let ahead = self.state.ahead().ok_or_else(|| {
                Error::new("internal error: the session does not follow who wrote what")
            })?;
            barrier_owed |= ahead.left_since;
            if ahead.done() {
                break;
            }
            if self.next_event(give_up)?.is_none() {
                return Ok(Queue::Behind {
                    writers: ahead.awaited.len(),
                });
            }
        }
        // A writer that left may have edited just before: its edit is in
        // once Rustpad has echoed a message sent after its departure.
        if barrier_owed && !self.barrier(give_up)? {
            return Ok(Queue::Behind { writers: 1 });
        }
        Ok(Queue::Clear)
    }

    /// Sends a barrier and reads until Rustpad echoes it, or until `until`
    /// (false): once it is back, every edit Rustpad held when it took the
    /// barrier has come, including those of a connection that left before.
    pub(super) fn barrier(&mut self, until: Instant) -> Result<bool, Error> {
        let me = self.identity()?;
        self.send(&ClientMsg::NO_CURSOR)?;
        loop {
            match self.next_event(until)? {
                Some(Event::UserCursor { id }) if id == me => return Ok(true),
                Some(_) => {}
                None => return Ok(false),
            }
        }
    }

    fn identity(&self) -> Result<u64, Error> {
        self.me
            .ok_or_else(|| Error::new("Rustpad never told this client its identity"))
    }

    /// Sends one marking entry: keep the whole text, at the current revision.
    fn send_mark(&mut self) -> Result<(), Error> {
        let keep_all = marks::keep_all(self.document.len());
        self.send(&ClientMsg::Edit {
            revision: self.revision,
            operation: &keep_all,
        })?;
        self.marks_sent += 1;
        Ok(())
    }

    /// Sends one whole-document edit at the current revision, after `mark`,
    /// and waits for Rustpad to acknowledge it, folding everyone else's edits
    /// meanwhile.
    pub fn edit(&mut self, mark: Mark, operation: serde_json::Value) -> Result<(), Error> {
        let shown = first_change(&operation);
        self.edit_at(mark, self.revision, operation, shown)
    }

    /// Sends an edit built against the text at `revision` (at most the
    /// current one), after the entries of `mark` (see [`marks`]) that
    /// [`PadSocket::queue`] did not send already, which must be this
    /// connection's first (on a connection the host held, the mark it
    /// needs there: [`PadSocket::mark_for`]): Rustpad transforms the edit over every
    /// edit since, as it does for any client whose edit crossed others in
    /// flight, and the marks change nothing it transforms over. `shown` is
    /// where people see this server's caret meanwhile, in the current text
    /// (see [`first_change`]).
    pub fn edit_at(
        &mut self,
        mark: Mark,
        revision: u64,
        operation: serde_json::Value,
        shown: Option<Change>,
    ) -> Result<(), Error> {
        let me = self.identity()?;
        debug_assert!(revision <= self.revision);
        debug_assert_eq!(
            self.own_entries, self.marks_sent as u64,
            "a mark goes first"
        );
        // Noted before anything is sent, so a wait that sees the entries
        // first already knows them; noted again, however the write ends,
        // with the revision of its last entry (or, unacknowledged, the
        // revision reached: a late entry past it only wakes a wait), so a
        // note never covers more than the write.
        let writers_key = writers_key(&self.state.id);
        writers::note(&writers_key, me, None);
        let mark = self.mark_for(mark, &operation);
        let outcome = self
            .send_mark_and_caret(mark, shown)
            .and_then(|owed| self.send_and_confirm(revision, &operation, owed));
        if outcome.is_ok() && mark == Some(Mark::Holding) {
            self.hold = Hold::Held;
        }
        let last = self.state.last_own_revision().unwrap_or(self.revision);
        writers::note(&writers_key, me, Some(last));
        outcome
    }

    /// Sends `mark`'s entries not sent yet (returning how many), then the caret `shown`.
    fn send_mark_and_caret(
        &mut self,
        mark: Option<Mark>,
        shown: Option<Change>,
    ) -> Result<usize, Error> {
        let owed = mark
            .map_or(0, Mark::entries)
            .saturating_sub(self.marks_sent);
        for _ in 0..owed {
            // Pipelined: each is a whole-text keep at the current revision.
            self.send_mark()?;
        }
        // The caret after the mark: Rustpad records the mark before it
        // relays the caret, so whoever sees the caret and then reads the
        // history finds this connection marked as a writer, not a person
        // who took the name. None on a connection without a name, and none
        // while another write of ours is under way:
        // each caret is one more message in the small queue Rustpad relays
        // to every editor, which many writes at once can overflow.
        let shown = shown.filter(|_| !self.unseen && !self.state.another_write_under_way());
        if let Some(Change { at, replaced }) = shown {
            let selections: &[[u64; 2]] = if replaced > 0 {
                &[[at, at + replaced]]
            } else {
                &[]
            };
            self.send(&ClientMsg::CursorData {
                cursors: &[at],
                selections,
            })?;
        }
        Ok(owed)
    }

    /// Sends the edit and waits until it and the `owed` marks are
    /// acknowledged. When the connection fails first, the edit's outcome is
    /// learnt from the history on a new connection (see [`super::settle`]).
    fn send_and_confirm(
        &mut self,
        revision: u64,
        operation: &serde_json::Value,
        owed: usize,
    ) -> Result<(), Error> {
        let sent = self.sent();
        let acknowledged = self.own_entries + owed as u64 + 1;
        let deadline = Instant::now() + ACK_TIMEOUT;
        self.edit_sent = true;
        let mut confirmed = self.send(&ClientMsg::Edit {
            revision,
            operation,
        });
        while confirmed.is_ok() && self.own_entries < acknowledged {
            confirmed = self
                .receive(deadline, "an acknowledgement of the edit")
                .map(|_| ());
        }
        match (confirmed, sent) {
            (Ok(()), _) => Ok(()),
            (Err(error), Some(sent)) => self.settle(error, &sent, operation),
            (Err(error), None) => Err(error.unacknowledged(None)),
        }
    }

    /// Reads and folds what Rustpad sends next, waiting until `until` at
    /// most: the event, or None when nothing came in time.
    pub fn next_event(&mut self, until: Instant) -> Result<Option<Event>, Error> {
        match self.frame(until) {
            // Folding what came gets its own time, however near `until` is.
            Ok(Some(frame)) => self
                .state
                .absorb(&frame, Instant::now() + SNAPSHOT_TIMEOUT)
                .map(Some),
            Ok(None) => Ok(None),
            Err(failure) => Err(Error::from_host("the collaboration socket ended", &failure)),
        }
    }

    /// Sets the language and waits until Rustpad relays it back to us.
    pub fn set_language(&mut self, language: &str) -> Result<(), Error> {
        self.send(&ClientMsg::SetLanguage(language))?;
        let deadline = Instant::now() + ACK_TIMEOUT;
        loop {
            match self.receive(deadline, "the language change") {
                Ok(Event::Language(echo)) if echo == language => return Ok(()),
                Ok(_) => {}
                Err(error) => {
                    return Err(Error::Failed(format!(
                        "{error}. The change was sent, so the language may or may not be set now; setting it again is safe"
                    )));
                }
            }
        }
    }

    /// Forgets the edits heard: from now on, those after the current revision.
    pub fn hear_from_here(&mut self) {
        self.state.hear_from_here();
    }

    /// Starts keeping the text as it stands now and every edit after it.
    pub fn record_from_here(&mut self) -> Result<(), Error> {
        self.state.record_from_here()
    }

    pub fn close(self) {
        self.connection.close();
    }

    /// Ready once Rustpad has sent something more (see
    /// [`Connection::readable`]), for a loop over several sockets.
    #[cfg(feature = "wasm-host")]
    pub fn readable(&self) -> Option<wasip2::io::poll::Pollable> {
        self.connection.readable()
    }

    fn send(&self, message: &ClientMsg) -> Result<(), Error> {
        self.connection
            .send(&message.frame())
            .map_err(|failure| Error::from_host("could not send to Rustpad", &failure))
    }

    /// Reads one message and folds it into the session state.
    fn receive(&mut self, deadline: Instant, awaiting: &str) -> Result<Event, Error> {
        let frame = match self.frame(deadline) {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                return Err(Error::Interrupted(format!(
                    "Rustpad did not send {awaiting} in time"
                )));
            }
            Err(failure) => {
                let what = format!("the collaboration socket ended while waiting for {awaiting}");
                return Err(Error::from_host(what, &failure));
            }
        };
        self.state.absorb(&frame, deadline)
    }

    /// The next frame, or None if none came before `deadline`.
    fn frame(&self, deadline: Instant) -> Result<Option<String>, HostError> {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up, so that a wait never ends before its deadline.
        let timeout_ms = left.as_nanos().div_ceil(1_000_000).min(u32::MAX as u128) as u32;
        self.connection.recv(timeout_ms)
    }
}

/// The key the host files this process's writers to pad `id` under.
pub fn writers_key(id: &str) -> String {
    digest::digest(&["writers", id])
}

#[cfg(test)]
mod tests;
