//! Watching a pad for other people's changes, on an open look that records
//! from a base ([`Track::text_since`](super::socket::Track::text_since)).
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
use super::since::Since;
use super::socket::{PadSocket, writers_key};
use super::state::Event;
use crate::grants::writers;

/// How a burst of changes is waited out.
#[derive(Clone, Copy, Debug)]
pub struct Settle {
    /// Quiet after someone's last change before the watch ends.
    pub quiet: Duration,
    /// The longest the watch waits for a burst to end, from its first change.
    pub at_most: Duration,
}

/// Watches `socket`'s pad (`id`) until someone else's change has settled
/// (true), or until `deadline` without one (false). A change already in the
/// record when the watch begins ends it at once.
pub fn until_others_change(
    socket: &mut PadSocket,
    id: &str,
    deadline: Instant,
    settle: Settle,
) -> Result<bool, Error> {
    let key = writers_key(id);
    let mut checked = 0;
    if others_changed(recorded(socket), &mut checked, &key) {
        return Ok(true);
    }
    let mut first: Option<Instant> = None;
    let mut until = deadline;
    loop {
        let event = socket.next_event(until)?;
        let now = Instant::now();
        if let Some(Event::History { .. }) = event
            && others_changed(recorded(socket), &mut checked, &key)
        {
            let first = *first.get_or_insert(now);
            until = (now + settle.quiet)
                .min(first + settle.at_most)
                .min(deadline);
        }
        if event.is_none() || now >= until {
            return Ok(first.is_some());
        }
    }
}

fn recorded(socket: &PadSocket) -> &Since {
    socket
        .since()
        .expect("a watch runs on a look that records from its base")
}

/// Whether an entry after the first `checked` changes the text and is not
/// one of this process's writes; moves `checked` past them.
fn others_changed(since: &Since, checked: &mut usize, key: &str) -> bool {
    let entries = &since.entries()[*checked..];
    if entries.is_empty() {
        return false;
    }
    let now = since.end();
    // A note past the pad's revision is from before Rustpad restarted
    // (revisions and connection numbers start again): it covers nothing.
    let ours: Vec<_> = writers::noted(key)
        .into_iter()
        .filter(|(_, last)| last.is_none_or(|last| last <= now))
        .collect();
    let first_revision = since.revision() + 1 + *checked as u64;
    *checked += entries.len();
    entries
        .iter()
        .zip(first_revision..)
        .any(|(entry, revision)| {
            !entry.operation.is_noop()
                && !ours.iter().any(|&(number, last)| {
                    number == entry.author && last.is_none_or(|last| revision <= last)
                })
        })
}
