//! Learning a write's outcome when its connection broke after the edit went
//! out and before Rustpad acknowledged it.
//!
//! Rustpad's history names the connection behind every entry, so the write
//! reconnects, as an invisible look, and reads the history from the
//! revision it held when it sent the edit:
//! - an entry of the old connection's that changes the text and inserts
//!   what the edit inserted (Rustpad's transform over concurrent edits keeps
//!   insertions whole): the edit landed, once. The session takes the
//!   entries it missed and goes on as if acknowledged.
//! - no such entry, and Rustpad shows the old connection gone: not among
//!   the people of the look's snapshot (which Rustpad takes with the history
//!   under one lock), or its departure heard and a barrier echoed after it.
//!   Rustpad handles a connection's messages only while it is open, so the
//!   edit was not made and never will be: nothing was written.
//! - otherwise the history cannot tell, and the outcome stays unknown:
//!   Rustpad restarted (its start time changed), or it no longer holds the
//!   history the edit was made on (shorter, or another text at that
//!   revision: connection numbers start again with a pad, so an entry of the
//!   same number would prove nothing); the old connection was still open at
//!   the deadline (a half-open connection can still deliver the edit); or
//!   Rustpad could not be reached again in time.
//!
//! Nothing here is kept outside the session: it works the same in every
//! host, including those that keep nothing between calls.

use std::time::{Duration, Instant};

use ropey::Rope;
use serde::Serialize;
use serde_json::Value;

use super::Error;
use super::since::Since;
use super::socket::{PadSocket, Track};
use super::state::Event;
use super::stats;
use super::url::RustpadUrl;

/// How long a write may spend learning its edit's outcome.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(20);
/// The pause before reconnecting again after a failed attempt; doubled each time.
const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// What a write sent, as the session held the pad then.
pub(super) struct Sent {
    url: RustpadUrl,
    connection: u64,
    /// The revision the session held: Rustpad put the edit after it.
    revision: u64,
    text: Rope,
    started: Option<u64>,
}

/// What the history said of an edit.
enum Settled {
    /// It landed: the look that found it, whose record starts at the
    /// revision the edit was sent at.
    Landed(Box<PadSocket>),
    NotWritten,
    /// The history cannot tell, for this reason.
    Unknown(&'static str),
}

/// One history entry as Rustpad's wire has it, to fold again.
#[derive(Serialize)]
struct WireEntry<'a> {
    id: u64,
    operation: &'a operational_transform::OperationSeq,
}

impl PadSocket {
    /// What to look for should an edit sent now go unacknowledged; None
    /// when this session cannot reconnect or does not keep the text.
    pub(super) fn sent(&self) -> Option<Sent> {
        Some(Sent {
            url: self.url.clone()?,
            connection: self.me()?,
            revision: self.revision(),
            text: self.document().rope()?.clone(),
            started: self.started,
        })
    }

    /// Learns the outcome of the edit `operation`, `sent` as
    /// [`PadSocket::sent`] says, after `error` broke the wait for its
    /// acknowledgement: Ok once it is found in the history,
    /// [`Error::Interrupted`] when it was surely not made, else
    /// [`Error::Unacknowledged`] with the reason the history cannot tell.
    pub(super) fn settle(
        &mut self,
        error: Error,
        sent: &Sent,
        operation: &Value,
    ) -> Result<(), Error> {
        // Our end goes first, so Rustpad lets the old connection go.
        self.connection.close();
        self.closed = true;
        match settle(&self.state.id, sent, &inserted(operation)) {
            Settled::Landed(look) => {
                self.catch_up(*look)?;
                self.acknowledgement_lost = true;
                Ok(())
            }
            Settled::NotWritten => {
                self.edit_sent = false;
                Err(Error::Interrupted(format!(
                    "{error}. This server reconnected and found that Rustpad closed that connection without making the edit"
                )))
            }
            Settled::Unknown(why) => Err(error.unacknowledged(Some(why))),
        }
    }

    /// Takes the entries this session missed from the look that found its
    /// edit, as if they had come on its own connection, then the look's
    /// connection to close in the end.
    fn catch_up(&mut self, look: PadSocket) -> Result<(), Error> {
        let record = look
            .since()
            .ok_or_else(|| Error::new("internal error: the look kept no record"))?;
        let missed = self.revision() - record.revision();
        let entries: Vec<WireEntry> = record
            .entries()
            .iter()
            .skip(missed as usize)
            .map(|entry| WireEntry {
                id: entry.author,
                operation: &entry.operation,
            })
            .collect();
        let frame = serde_json::json!({
            "History": { "start": self.revision(), "operations": entries }
        });
        self.state
            .absorb(&frame.to_string(), Instant::now() + SETTLE_TIMEOUT)?;
        let PadSocket { connection, .. } = look;
        self.connection = connection;
        Ok(())
    }

    /// Reads until Rustpad says connection `who` left, then until a barrier
    /// sent after that comes back; false when `until` passes first.
    fn await_departure(&mut self, who: u64, until: Instant) -> Result<bool, Error> {
        loop {
            match self.next_event(until)? {
                Some(Event::UserInfo { id, present: false }) if id == who => {
                    return self.barrier(until);
                }
                Some(_) => {}
                None => return Ok(false),
            }
        }
    }
}

/// Reconnects until the history tells, or the deadline passes.
fn settle(id: &str, sent: &Sent, inserted: &str) -> Settled {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    let mut pause = FIRST_PAUSE;
    loop {
        match look_for(id, sent, inserted, deadline) {
            Ok(settled) => return settled,
            Err(_) if Instant::now() + pause < deadline => {
                std::thread::sleep(pause);
                pause *= 2;
            }
            Err(_) => {
                return Settled::Unknown(
                    "This server could not reach Rustpad again in time to read the pad's history",
                );
            }
        }
    }
}

/// One look at the history, on a new connection, for an edit that inserted
/// `inserted`.
fn look_for(id: &str, sent: &Sent, inserted: &str, deadline: Instant) -> Result<Settled, Error> {
    if let Some(started) = sent.started
        && stats::start_time(&sent.url)? != started
    {
        return Ok(Settled::Unknown(
            "Rustpad restarted meanwhile, and a restarted Rustpad keeps no history of before",
        ));
    }
    let mut look = PadSocket::look(&sent.url, id, Track::text_since(sent.revision))?;
    let mut departed = false;
    loop {
        let record = look
            .since()
            .ok_or_else(|| Error::new("internal error: the look kept no record"))?;
        if record.text() != Some(&sent.text) {
            look.close();
            return Ok(Settled::Unknown(
                "Rustpad no longer holds the history this edit was made on (it restarted or let the pad go)",
            ));
        }
        match found(record, sent.connection, inserted) {
            Some(true) => return Ok(Settled::Landed(Box::new(look))),
            Some(false) => {
                look.close();
                return Ok(Settled::Unknown(
                    "The history holds an edit of that connection's that is not the one sent",
                ));
            }
            None if departed || !look.may_be_present(sent.connection) => {
                look.close();
                return Ok(Settled::NotWritten);
            }
            None => {}
        }
        // Still listed: it may yet deliver the edit. Once Rustpad says it
        // left, a barrier brings in every edit it made before.
        departed = look.await_departure(sent.connection, deadline)?;
        if !departed {
            look.close();
            return Ok(Settled::Unknown(
                "Rustpad still held the old connection open at the deadline, so the edit could still arrive",
            ));
        }
    }
}

/// Whether the record holds an edit of connection `connection`'s: Some(true)
/// when it inserts `sent_inserted`, Some(false) when it is another.
fn found(record: &Since, connection: u64, sent_inserted: &str) -> Option<bool> {
    let entry = record
        .entries()
        .iter()
        .find(|entry| entry.author == connection && !entry.operation.is_noop())?;
    let inserted: String = entry
        .operation
        .ops()
        .iter()
        .filter_map(|part| match part {
            operational_transform::Operation::Insert(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Some(inserted == sent_inserted)
}

/// Everything an operation in Rustpad's wire form inserts, in order.
fn inserted(operation: &Value) -> String {
    operation
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_operation_inserts_is_its_strings_in_order() {
        let operation = serde_json::json!([3, "ab", -2, 4, "c"]);
        assert_eq!(inserted(&operation), "abc");
        assert_eq!(inserted(&serde_json::json!([5])), "");
    }
}
