//! The pad as a session knows it: everything folded from Rustpad's messages
//! so far (the identity it was given, the revision, the text or its length,
//! the language, the people in the pad and where their carets are, and what
//! the session tracks besides: a record of recent edits, who wrote what). Separate from the connection
//! ([`super::socket`]), so it can be driven, and fuzzed, with frames from
//! anywhere.
//!
//! Why this file is long: every message Rustpad sends changes this one
//! state, and the fold of each (history, identity, users, carets, language,
//! this connection's own edit) reads and writes the same fields; split, the
//! halves would share them all.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::Error;
use super::authorship::Authorship;
use super::change::OwnEdit;
use super::fold::{FoldError, Folding, Lengths, fold_history_frame, fold_lengths};
use super::heard::{self, Edit};
use super::marks::{Class, Marked};
use super::order::{Heard, Roster};
use super::ot::Document;
pub(crate) use super::ot::UserOperation;
use super::positions::{self, Placed, Positions};
use super::protocol::{CLIENT_NAME, ServerMsg};
use super::since::Since;
pub use super::track::Track;
use crate::text::{self, MAX_LABEL_CHARS};

/// People we keep track of; the rest are not listed.
const MAX_USERS: usize = 200;
/// How often the fold looks at the clock, in operations.
const DEADLINE_CHECK_EVERY: usize = 4096;

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

/// The pad as this client knows it: everything folded from Rustpad's
/// messages so far. Separate from the connection, so it can be driven (and
/// fuzzed) with frames from anywhere.
pub struct PadState {
    pub(super) id: String,
    pub(super) me: Option<u64>,
    pub(super) revision: u64,
    pub(super) document: Document,
    pub(super) language: Option<String>,
    pub(super) users: BTreeMap<u64, String>,
    /// Connections Rustpad relayed a caret for and no name: there too,
    /// unseen (a look's barrier, a write socket that is to stay unseen).
    pub(super) unnamed: BTreeSet<u64>,
    /// More connections were named or listed by caret than this session
    /// keeps, at some point: one it did not keep may still be there.
    pub(super) crowded: bool,
    /// Carets and selections of other connections, at `revision`.
    pub(super) positions: BTreeMap<u64, Positions>,
    pub(super) since: Option<Since>,
    pub(super) authorship: Option<Authorship>,
    /// Which connections are writers of rustpad-mcp's, for a session that
    /// reports people and does not follow who wrote what (which knows).
    pub(super) marked: Option<Marked>,
    pub(super) heard: Option<heard::Heard>,
    /// Who was at the pad, for telling when earlier writes are done (kept
    /// with the authorship).
    pub(super) roster: Option<Roster>,
    /// Entries of this connection's own in the history so far.
    pub(super) own_entries: u64,
    /// The revision of the last of them.
    pub(super) last_own_revision: Option<u64>,
    /// This connection's last entry that changed the text, with the text
    /// before and after it, for a session that keeps the text.
    pub(super) own_edit: Option<OwnEdit>,
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
            unnamed: BTreeSet::new(),
            crowded: false,
            positions: BTreeMap::new(),
            since: track.since.map(Since::from),
            authorship: track.authorship.then(Authorship::new),
            marked: ((track.people || track.text) && !track.authorship).then(Marked::default),
            heard: track.heard.map(heard::Heard::after),
            roster: track.authorship.then(Roster::new),
            own_entries: 0,
            last_own_revision: None,
            own_edit: None,
        }
    }

    pub fn document(&self) -> &Document {
        &self.document
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The revision of this connection's last entry in the history, if any.
    pub fn last_own_revision(&self) -> Option<u64> {
        self.last_own_revision
    }

    /// This connection's last edit that changed the text, for a session
    /// that keeps the text.
    pub fn own_edit(&self) -> Option<&OwnEdit> {
        self.own_edit.as_ref()
    }

    /// Rustpad's number for this connection, once it has said.
    pub fn me(&self) -> Option<u64> {
        self.me
    }

    /// The text, for a session that keeps it.
    pub fn text(&self) -> Result<&ropey::Rope, Error> {
        self.document
            .rope()
            .ok_or_else(|| Error::new("internal error: the session did not keep the pad's text"))
    }

    /// The base text and what followed it, for a session that records them.
    pub fn since(&self) -> Option<&Since> {
        self.since.as_ref()
    }

    /// A pad known only by its revision and length, as an earlier session
    /// left it, for a session that goes on with that session's connection.
    pub fn resumed(id: &str, revision: u64, length: u64, track: Track) -> PadState {
        debug_assert!(!track.text, "the text is not known");
        let mut state = PadState::new(id, track);
        state.revision = revision;
        state.document.set_length(length as usize);
        state
    }

    /// The edits heard after a revision, for a session that hears them.
    pub fn heard(&self) -> Option<&heard::Heard> {
        self.heard.as_ref()
    }

    /// Forgets the edits heard: from now on, those after the current revision.
    pub fn hear_from_here(&mut self) {
        if let Some(heard) = &mut self.heard {
            heard.restart(self.revision);
        }
    }

    /// Tells the record of who wrote what which connections the host noted
    /// this process wrote over (see [`Authorship::know_own_writers`]).
    pub(super) fn know_own_writers(&mut self, noted: Vec<(u64, Option<u64>)>) {
        if let Some(authorship) = &mut self.authorship {
            authorship.know_own_writers(noted);
        }
    }

    /// Who wrote what, for a session that follows it.
    pub fn authorship(&self) -> Option<&Authorship> {
        self.authorship.as_ref()
    }

    /// The writers marked before this connection's write under way, as far
    /// as they are done (see [`super::order`]); None for a session that
    /// does not follow authorship, or before its mark is in.
    pub fn ahead(&self) -> Option<super::order::Ahead> {
        let authorship = self.authorship.as_ref()?;
        // Where this write's own mark began, not the connection's first
        // entry: a connection may carry many writes, each placed anew.
        let mark = authorship.under_way_since(self.me?)?;
        Some(super::order::ahead_of(
            authorship,
            self.roster.as_ref()?,
            mark,
        ))
    }

    /// Whether connection `id` may have the pad open: listed among the
    /// people or by a caret alone, or any may be, once more were listed
    /// than this session keeps (for good: one it dropped may still be open
    /// when some it kept have left).
    pub fn may_be_present(&self, id: u64) -> bool {
        self.users.contains_key(&id) || self.unnamed.contains(&id) || self.crowded
    }

    /// Whether connection `id` is a person at work in the pad now: open,
    /// and named by a name that is not this server's.
    pub fn at_work(&self, id: u64) -> bool {
        Some(id) != self.me && self.users.get(&id).is_some_and(|name| name != CLIENT_NAME)
    }

    /// Starts recording at the text as it stands now.
    pub(super) fn record_from_here(&mut self) -> Result<(), Error> {
        let since = Since::here(self.revision, self.text()?);
        self.since = Some(since);
        Ok(())
    }

    /// The language, if anyone ever set one.
    pub fn language(&self) -> Option<&str> {
        self.language.as_deref()
    }

    /// The name of connection `id`, while it has the pad open and has said
    /// who it is, unless it is a write of this server's that has finished.
    pub fn user_name(&self, id: u64) -> Option<&str> {
        let name = self.users.get(&id)?;
        (!self.finished_writer(id, name)).then_some(name.as_str())
    }

    /// Whether connection `id`, named `name`, is a write of this server's
    /// that made its edit: it leaves right after, so the people a report
    /// lists leave it out even before Rustpad says it left.
    fn finished_writer(&self, id: u64, name: &str) -> bool {
        name == CLIENT_NAME
            && match (&self.authorship, &self.marked) {
                (Some(authorship), _) => authorship.finished(id),
                (None, Some(marked)) => marked.finished(id),
                (None, None) => false,
            }
    }

    /// Whether another write of this server's (of any process or host) is
    /// under way in the pad now: a connection named like ours, other than
    /// this one, that has not made its edit. People then see text arrive
    /// from several writers at once, and a caret per write would add only
    /// messages to the queue Rustpad relays to everyone.
    pub fn another_write_under_way(&self) -> bool {
        self.users.iter().any(|(id, name)| {
            Some(*id) != self.me && name == CLIENT_NAME && !self.finished_writer(*id, name)
        })
    }

    /// The connections in the pad now that gave the name `name`, in order.
    pub fn connections_named(&self, name: &str) -> Vec<u64> {
        let me = self.me;
        self.users
            .iter()
            .filter(|(id, given)| Some(**id) != me && given.as_str() == name)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The names of everyone else who has the pad open and said who they are.
    pub fn other_users(&self) -> Vec<String> {
        self.users
            .iter()
            .filter(|(id, name)| Some(**id) != self.me && !self.finished_writer(**id, name))
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// Where the others who have the pad open and said who they are have
    /// their carets and selections, in connection order.
    pub fn people_positions(&self) -> Vec<Placed<'_>> {
        self.positions
            .iter()
            .filter_map(|(id, positions)| {
                Some(Placed {
                    name: self.user_name(*id)?,
                    positions,
                    writer: self.is_writer(*id),
                })
            })
            .collect()
    }

    /// Whether connection `id` marked its entries as a writer of
    /// rustpad-mcp's, as far as the history this session folded shows (a
    /// session that follows neither who wrote what nor people cannot say).
    pub fn is_writer(&self, id: u64) -> bool {
        match (&self.authorship, &self.marked) {
            (Some(authorship), _) => authorship.class(id) != Class::Unmarked,
            (None, Some(marked)) => marked.is_marked(id),
            (None, None) => false,
        }
    }

    /// Parses one frame from Rustpad and folds it in.
    pub fn absorb(&mut self, frame: &str, deadline: Instant) -> Result<Event, Error> {
        // A long History, when only lengths are kept, is folded as it is read.
        if !self.document.keeps_text() {
            let (from, by) = (self.lengths(), self.folding(deadline));
            if let Some(folded) = fold_history_frame(frame, from, by, self.marked.as_mut()) {
                let folded = folded.map_err(|problem| self.refusal(problem))?;
                let ours = self.take_lengths(folded);
                self.own_entries += ours;
                self.hear_frame(frame)?;
                return Ok(Event::History { ours });
            }
        }
        let message: ServerMsg = serde_json::from_str(frame).map_err(|error| {
            Error::new(format!(
                "Rustpad sent a message this client does not understand ({}); the pad state cannot be trusted",
                super::wire_problem(&error)
            ))
        })?;
        let event = self.fold(message, deadline)?;
        if matches!(event, Event::History { .. }) && !self.document.keeps_text() {
            self.hear_frame(frame)?;
        }
        Ok(event)
    }

    /// Hears the edits of a History frame folded into lengths (a session
    /// that keeps the text hears each as it folds it).
    fn hear_frame(&mut self, frame: &str) -> Result<(), Error> {
        let Some(heard) = &mut self.heard else {
            return Ok(());
        };
        heard
            .hear_frame(frame, self.revision)
            .map_err(|problem| self.refusal(FoldError::NotUnderstood(problem)))
    }

    fn fold(&mut self, message: ServerMsg, deadline: Instant) -> Result<Event, Error> {
        let event = self.fold_message(message, deadline)?;
        if let Some(roster) = &mut self.roster {
            let heard = match &event {
                Event::Identity => Heard::Identity,
                Event::History { .. } => Heard::History(self.revision),
                // A caret, even an empty one, is kept by Rustpad only while
                // its connection is open: a nameless connection that sent
                // one (a look, a held write socket) is there too.
                Event::UserInfo { id, present: true } | Event::UserCursor { id } => {
                    Heard::Present(*id)
                }
                Event::UserInfo { id, present: false } => Heard::Left(*id),
                Event::Language(_) => Heard::Other,
            };
            roster.hear(heard, self.revision);
        }
        Ok(event)
    }

    fn fold_message(&mut self, message: ServerMsg, deadline: Instant) -> Result<Event, Error> {
        Ok(match message {
            ServerMsg::Identity(id) => {
                self.me = Some(id);
                Event::Identity
            }
            ServerMsg::History { start, operations } => {
                if start > self.revision {
                    return Err(Error::new(format!(
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
                } else {
                    self.crowded = true;
                }
                self.unnamed.remove(&id);
                Event::UserInfo { id, present: true }
            }
            ServerMsg::UserInfo { id, info: None } => {
                self.users.remove(&id);
                self.unnamed.remove(&id);
                self.positions.remove(&id);
                Event::UserInfo { id, present: false }
            }
            ServerMsg::UserCursor { id, data } => {
                let named = self.users.contains_key(&id);
                if !named && Some(id) != self.me && !self.unnamed.contains(&id) {
                    if self.unnamed.len() < MAX_USERS {
                        self.unnamed.insert(id);
                    } else {
                        self.crowded = true;
                    }
                }
                // Kept for the people this session lists (named, bounded),
                // so nameless connections cannot crowd them out.
                if data.is_empty() || Some(id) == self.me || !named {
                    self.positions.remove(&id);
                } else {
                    self.positions.insert(id, data);
                }
                Event::UserCursor { id }
            }
        })
    }
}

impl PadState {
    /// Folds a History's entries into the text, each parsed whole; returns
    /// how many were ours.
    fn fold_text(&mut self, entries: &str, skip: u64, deadline: Instant) -> Result<u64, FoldError> {
        let entries: Vec<UserOperation> = serde_json::from_str(entries)
            .map_err(|error| FoldError::NotUnderstood(super::wire_problem(&error)))?;
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
            let own_change = mine && !entry.operation.changes_nothing();
            let text_before = own_change.then(|| self.document.rope().cloned()).flatten();
            let hashed_before = own_change
                .then(|| self.document.hashed_until(entry.operation.kept_first()))
                .flatten();
            let before = text_before.clone().filter(|_| recorded);
            self.document
                .apply(&entry.operation)
                .map_err(FoldError::CannotApply)?;
            if !self.positions.is_empty() {
                positions::carry_all(self.positions.values_mut(), &entry.operation);
            }
            self.revision += 1;
            if let (Some(before), Some(after)) = (text_before, self.document.rope()) {
                self.own_edit = Some(OwnEdit {
                    revision: self.revision,
                    before,
                    after: after.clone(),
                    kept_first: entry.operation.kept_first(),
                    hashed_before,
                });
            }
            if mine {
                ours += 1;
                self.last_own_revision = Some(self.revision);
            }
            if let Some(authorship) = &mut self.authorship {
                authorship.follow(entry.id, &entry.operation);
            }
            if let Some(marked) = &mut self.marked {
                let keeps_everything = entry.operation.changes_nothing();
                marked.follow(entry.id, keeps_everything);
            }
            if let Some(heard) = &mut self.heard {
                heard.hear(Edit {
                    revision: self.revision,
                    author: entry.id,
                    changes_text: !entry.operation.changes_nothing(),
                });
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

    /// How this connection folds a History that must be done by `deadline`.
    fn folding(&self, deadline: Instant) -> Folding {
        Folding {
            me: self.me,
            deadline,
            check_every: DEADLINE_CHECK_EVERY as u64,
        }
    }

    /// Folds a History's entries into lengths, straight from the frame.
    fn fold_lengths(
        &mut self,
        entries: &str,
        skip: u64,
        deadline: Instant,
    ) -> Result<u64, FoldError> {
        let (from, by) = (self.lengths(), self.folding(deadline));
        let folded = fold_lengths(entries, from, skip, by, self.marked.as_mut())?;
        Ok(self.take_lengths(folded))
    }

    /// Where a fold of lengths starts: the pad as this client holds it,
    /// none of the edits to come counted as ours yet.
    fn lengths(&self) -> Lengths {
        Lengths {
            length: self.document.len() as u64,
            revision: self.revision,
            ours: 0,
            last_ours: None,
        }
    }

    /// Takes the lengths a fold reached as the pad's, and says how many of
    /// the edits folded were ours.
    fn take_lengths(&mut self, folded: Lengths) -> u64 {
        self.document.set_length(folded.length as usize);
        if folded.revision != self.revision {
            // Positions cannot be carried over edits not kept.
            self.positions.clear();
        }
        self.revision = folded.revision;
        self.last_own_revision = folded.last_ours.or(self.last_own_revision);
        folded.ours
    }

    fn refusal(&self, problem: FoldError) -> Error {
        Error::new(match problem {
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

#[cfg(test)]
mod tests;
