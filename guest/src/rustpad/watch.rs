//! Watching a pad for other people's changes, on an open look that hears
//! who made each edit from a revision ([`Track::edits_after`]: a
//! subscriber's look keeps lengths only, so a later round can resume it; a
//! tool's wait also keeps the text, to show what changed).
//!
//! "Other people" are any connection this process's writes were not given:
//! the host notes each write's connection ([`crate::grants::writers`]), and
//! an entry of a noted connection up to its write's last revision is ours.
//! A name decides nothing (anyone can call themselves `rustpad-mcp`). Where
//! the host keeps nothing between calls nothing is noted, and this server's
//! own writes count as anyone's. Entries that change nothing (the marks of
//! this server's writes) never count.
//!
//! One burst of typing is one change: after the first change by someone
//! else, the watch goes on until the pad has been quiet for a while
//! ([`Settle`]), within limits.

use std::time::{Duration, Instant};

use super::Error;
use super::socket::{PadSocket, Track, writers_key};
use super::state::Event;
use super::url::RustpadUrl;
use crate::grants::websocket::Connection;
use crate::grants::writers;

/// How a burst of changes is waited out.
#[derive(Clone, Copy, Debug)]
pub struct Settle {
    /// Quiet after someone's last change before the watch ends.
    pub quiet: Duration,
    /// The longest the watch waits for a burst to end, from its first change.
    pub at_most: Duration,
}

/// Whose changes end a watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose {
    /// Everyone's but this process's own writes (a model waiting for people).
    Others,
    /// Everyone's, this process's writes included (the pad view, which shows
    /// the model's edits as they land too).
    Anyone,
}

/// Watches `socket`'s pad (`id`) until a change by `whose` has settled
/// (true), or until `deadline` without one (false). A change already in the
/// record when the watch begins ends it at once.
pub fn until_changed(
    socket: &mut PadSocket,
    id: &str,
    whose: Whose,
    deadline: Instant,
    settle: Settle,
) -> Result<bool, Error> {
    until_changed_within(socket, id, whose, deadline, settle, usize::MAX, Drain::No)
}

/// Whether a watch waits up to its deadline for someone's change, or takes
/// only what has come already.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Drain {
    No,
    /// Reads until nothing more waits (a change among it is still waited
    /// out, within the deadline): the connection then holds nothing unread,
    /// so a poll on its socket, or a host holding it, waits only for what is
    /// still to come.
    UntilNothingWaits,
}

/// [`until_changed`], failing once more than `events` messages came in: a
/// pad that sends without pause (carets, say) is not watched for ever.
fn until_changed_within(
    socket: &mut PadSocket,
    id: &str,
    whose: Whose,
    deadline: Instant,
    settle: Settle,
    events: usize,
    drain: Drain,
) -> Result<bool, Error> {
    let mut received = 0usize;
    // Anyone's change counts when no write is taken for ours.
    let key = (whose == Whose::Others).then(|| writers_key(id));
    let mut checked = 0;
    if changed_by(socket, &mut checked, key.as_deref()) {
        return Ok(true);
    }
    let mut first: Option<Instant> = None;
    // Draining waits for nothing new until a change comes; `deadline` then
    // only bounds how long that change is waited out.
    let mut until = match drain {
        Drain::No => deadline,
        Drain::UntilNothingWaits => Instant::now(),
    };
    loop {
        let event = socket.next_event(until)?;
        received += usize::from(event.is_some());
        if received > events {
            return Err(Error::new(format!(
                "the pad sent more than {events} messages within one watch without a change by anyone else"
            )));
        }
        let now = Instant::now();
        if let Some(Event::History { .. }) = event
            && changed_by(socket, &mut checked, key.as_deref())
        {
            let first = *first.get_or_insert(now);
            until = (now + settle.quiet)
                .min(first + settle.at_most)
                .min(deadline);
        }
        if event.is_none() || (now >= until && drain == Drain::No) {
            return Ok(first.is_some());
        }
    }
}

/// Whether an edit after the first `checked` changes the text and is not
/// one of this process's writes noted under `ours` (any, without it); moves
/// `checked` past them.
fn changed_by(socket: &PadSocket, checked: &mut usize, ours: Option<&str>) -> bool {
    let heard = socket
        .heard()
        .expect("a watch runs on a look that hears its edits");
    let edits = &heard.edits()[*checked..];
    if edits.is_empty() {
        return false;
    }
    let now = socket.revision();
    // A note past the pad's revision is from before Rustpad restarted
    // (revisions and connection numbers start again): it covers nothing.
    let ours: Vec<_> = ours
        .map(writers::noted)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, last)| last.is_none_or(|last| last <= now))
        .collect();
    *checked += edits.len();
    edits.iter().any(|edit| {
        edit.changes_text
            && !ours.iter().any(|&(number, last)| {
                number == edit.author && last.is_none_or(|last| edit.revision <= last)
            })
    })
}

/// How a burst is waited out before subscribers hear of it: shorter than a
/// tool's wait, since the host also lets at most one update per pad through
/// in each of its coalescing intervals.
pub const FOR_SUBSCRIBERS: Settle = Settle {
    quiet: Duration::from_millis(300),
    at_most: Duration::from_secs(2),
};

/// The most messages one stretch of a look takes in.
pub const MAX_EVENTS_PER_LOOK: usize = rustpad_mcp_rules::watching::MAX_MESSAGES_PER_ROUND;

/// What one stretch of watching saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Someone else changed the pad (or it was forgotten and begun again).
    Changed,
    /// Nothing but this process's own writes, or nothing at all.
    Quiet,
}

/// Where a look stands: its revision and the length of its text, all a
/// later round needs to go on with its connection. As text (a round's
/// cursor): `revision`, or `revision:length`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    pub revision: u64,
    /// None: only the revision is known (a subscription's starting point).
    pub length: Option<u64>,
}

impl std::fmt::Display for Reached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.length {
            Some(length) => write!(f, "{}:{length}", self.revision),
            None => write!(f, "{}", self.revision),
        }
    }
}

impl std::str::FromStr for Reached {
    type Err = ();

    fn from_str(text: &str) -> Result<Reached, ()> {
        let number = |text: &str| text.parse::<u64>().map_err(|_| ());
        Ok(match text.split_once(':') {
            Some((revision, length)) => Reached {
                revision: number(revision)?,
                length: Some(number(length)?),
            },
            None => Reached {
                revision: number(text)?,
                length: None,
            },
        })
    }
}

/// An open, invisible look at a pad for its subscribers, from a revision.
pub struct Look {
    socket: PadSocket,
    id: String,
    /// The pad holds fewer revisions than the cursor it was opened from:
    /// Rustpad restarted or forgot it, which is a change to report.
    begun_again: bool,
}

impl Look {
    /// Opens a look at pad `id` recording from `cursor` (a revision an
    /// earlier look reached; none: from now).
    pub fn open(url: &RustpadUrl, id: &str, cursor: Option<u64>) -> Result<Look, Error> {
        let track = Track::edits_after(cursor.unwrap_or(u64::MAX));
        let mut socket = PadSocket::look(url, id, track)?;
        let begun_again = cursor.is_some_and(|cursor| socket.revision() < cursor);
        if cursor.is_none() || begun_again {
            socket.hear_from_here();
        }
        Ok(Look {
            socket,
            id: id.to_string(),
            begun_again,
        })
    }

    /// Goes on with the connection of an earlier look at pad `id`, which
    /// stood at `revision` with a text of `length` code points.
    pub fn resume(connection: Connection, id: &str, revision: u64, length: u64) -> Look {
        Look {
            socket: PadSocket::resume(
                connection,
                id,
                revision,
                length,
                Track::edits_after(revision),
            ),
            id: id.to_string(),
            begun_again: false,
        }
    }

    /// Where the look stands, for a later round to go on with its connection.
    pub fn reached(&self) -> Reached {
        Reached {
            revision: self.socket.revision(),
            length: Some(self.socket.document().len() as u64),
        }
    }

    /// The connection, still open, for a later round to resume.
    pub fn into_connection(self) -> Connection {
        self.socket.into_connection()
    }

    /// Watches until someone else's change has settled, or `until`; what
    /// was seen is then forgotten, so the next call sees only what follows.
    pub fn next_change(&mut self, until: Instant) -> Result<Seen, Error> {
        self.watch(until, Drain::No)
    }

    /// What came already, without waiting for more (unless a change came,
    /// which is waited out as [`Look::next_change`] does): afterwards the
    /// connection holds nothing unread, so [`Look::readable`] may be polled,
    /// or a host may hold the connection until more comes.
    pub fn what_came(&mut self) -> Result<Seen, Error> {
        let settled = Instant::now() + FOR_SUBSCRIBERS.at_most;
        self.watch(settled, Drain::UntilNothingWaits)
    }

    fn watch(&mut self, until: Instant, drain: Drain) -> Result<Seen, Error> {
        let changed = std::mem::take(&mut self.begun_again)
            || until_changed_within(
                &mut self.socket,
                &self.id,
                Whose::Others,
                until,
                FOR_SUBSCRIBERS,
                MAX_EVENTS_PER_LOOK,
                drain,
            )?;
        self.socket.hear_from_here();
        Ok(if changed { Seen::Changed } else { Seen::Quiet })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The revision the look has reached: a cursor to watch on from.
    pub fn revision(&self) -> u64 {
        self.socket.revision()
    }

    pub fn close(self) {
        self.socket.close();
    }

    /// Ready once Rustpad has sent something more: wait on it only after
    /// [`Look::next_change`] took what had come (see `PadSocket::readable`).
    #[cfg(feature = "wasm-host")]
    pub fn readable(&self) -> Option<wasip2::io::poll::Pollable> {
        self.socket.readable()
    }
}
