//! Removals sent at the same moment, judged one after the other.
//!
//! Rustpad puts every edit in one order. Each write of this server's marks
//! its connection with entries that change nothing right before its edit
//! ([`marks`](super::marks)), so the history says where every write under
//! way stands in that order (an append on a connection held between calls
//! sends none: it removes nothing, so no removal waits for it). A write that may remove text takes its place
//! first: it sends its mark, and once Rustpad has recorded it, waits until
//! every writer marked before it has made its edit or left the pad
//! (`PadSocket::queue`). Their removals are then in the history the removal
//! rule counts, so calls removing text at the same moment are judged one
//! after the other, in Rustpad's order, whichever process, replica or host
//! each runs in; a writer marked later waits for this one in turn. Nothing
//! here keeps state outside the session: it is read off the pad.
//!
//! When a writer counts as done:
//! - its edit is in the history (an entry of its own that changes the text,
//!   after the mark);
//! - Rustpad said it left (`UserInfo` with no info, which Rustpad sends for
//!   every connection, named or not). An edit it made before it left may
//!   still be on its way to this session, since Rustpad relays edits and
//!   departures on separate paths; one more barrier (a message of ours
//!   echoed back) brings it in, because Rustpad sends a connection every
//!   edit it holds before it relays anything that connection sent after;
//! - its mark was in the snapshot and the snapshot listed it neither by name
//!   nor by caret (Rustpad keeps both only while a connection is open): it
//!   had left before this session joined, and every edit it made came
//!   before this session's own mark.
//!
//! A connection with neither name nor caret and a mark but no edit is
//! waited for only once it marked after the snapshot (before it, this
//! session cannot tell it is there); this server's writers always say who
//! they are first, by name or, where they are to stay unseen, by an empty
//! caret. A writer
//! that never finishes (a call that crashed and left no trace, a mark sent
//! by someone else) holds the wait until the caller's bound, and the caller
//! then asks a person.

use std::collections::HashSet;

use super::authorship::Authorship;

/// Connections the roster remembers of each kind; past it, the roster
/// stops concluding anything from them (so writers are waited for).
const MAX_REMEMBERED: usize = 100_000;

/// Who was at the pad, as far as this session heard.
#[derive(Debug, Default)]
pub struct Roster {
    /// Connections listed as present at any point (`UserInfo` with info,
    /// or a caret).
    listed: HashSet<u64>,
    /// Connections Rustpad said have left.
    left: HashSet<u64>,
    /// More connections than [`MAX_REMEMBERED`] of either kind.
    overflowed: bool,
    /// Where the snapshot's History ended; None until the snapshot is past
    /// the place its History would be.
    snapshot_revision: Option<u64>,
    identified: bool,
}

/// What a message told the roster.
pub enum Heard {
    Identity,
    /// A History frame, folded up to this revision.
    History(u64),
    Present(u64),
    Left(u64),
    Other,
}

impl Roster {
    pub fn new() -> Roster {
        Roster::default()
    }

    /// Takes in one message, after the session folded it. `revision` is the
    /// revision the session holds.
    pub fn hear(&mut self, heard: Heard, revision: u64) {
        if self.identified && self.snapshot_revision.is_none() {
            // The message after Identity: the snapshot's History, if the
            // pad has any history at all.
            self.snapshot_revision = Some(match heard {
                Heard::History(reached) => reached,
                _ => revision,
            });
        }
        match heard {
            Heard::Identity => self.identified = true,
            Heard::Present(id) => remember(&mut self.listed, id, &mut self.overflowed),
            Heard::Left(id) => remember(&mut self.left, id, &mut self.overflowed),
            Heard::History(_) | Heard::Other => {}
        }
    }
}

fn remember(set: &mut HashSet<u64>, id: u64, overflowed: &mut bool) {
    if set.len() < MAX_REMEMBERED || set.contains(&id) {
        set.insert(id);
    } else {
        *overflowed = true;
    }
}

/// The writers marked before a write, as far as they are done.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ahead {
    /// Connections still awaited, in connection order.
    pub awaited: Vec<u64>,
    /// Some writer counts as done because Rustpad said it left: a barrier
    /// is owed before its edits are surely in.
    pub left_since: bool,
}

impl Ahead {
    pub fn done(&self) -> bool {
        self.awaited.is_empty()
    }
}

/// The writers whose mark Rustpad recorded before revision `mark` (this
/// write's own mark), and which of them are still awaited.
pub fn ahead_of(authorship: &Authorship, roster: &Roster, mark: u64) -> Ahead {
    let mut ahead = Ahead::default();
    for (writer, marked) in authorship.unfinished_writers() {
        if marked >= mark {
            continue;
        }
        if roster.left.contains(&writer) {
            ahead.left_since = true;
        } else if !gone_before_joining(roster, writer, marked) {
            ahead.awaited.push(writer);
        }
    }
    ahead
}

/// Whether writer `writer`, marked at `marked`, had left before this
/// session's snapshot was taken.
fn gone_before_joining(roster: &Roster, writer: u64, marked: u64) -> bool {
    !roster.overflowed
        && roster
            .snapshot_revision
            .is_some_and(|snapshot| marked <= snapshot)
        && !roster.listed.contains(&writer)
}

#[cfg(test)]
mod tests;
