//! Reading a connection the host keeps between two writes
//! ([`crate::state::held_writes`]): everything Rustpad sends meanwhile is
//! kept, in order, for the next writer's `recv`, within a cap, and counted
//! in the memory budget as it comes.

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::protocol::Message;

use super::{Connection, closed_by_peer, describe, stopped_reading, unread_cost};

/// Why a kept connection can no longer be kept.
#[derive(Debug)]
pub enum Unkept {
    /// It ended (closed, broke, or stopped reading).
    Ended,
    /// More came than the host keeps for a connection between writes.
    TooMuch,
}

impl Connection {
    /// Reads one frame, and a text message into what the next reader gets
    /// first, keeping messages that cost at most `cap` bytes in all (each
    /// counted with what keeping it costs besides its text). Safe to cancel while it waits: a message is
    /// taken off the stream and kept in one step, with no wait between, so
    /// a caller may race it against being taken ([`tokio::select!`]).
    pub async fn keep_next(&mut self, cap: usize) -> Result<(), Unkept> {
        if self.ended.is_some() {
            return Err(Unkept::Ended);
        }
        if self.stream().get_ref().stalled() {
            self.end(stopped_reading());
            return Err(Unkept::Ended);
        }
        // `next` keeps its state in the stream: dropping it loses nothing.
        let next = self.stream().next().await;
        self.heard = std::time::Instant::now();
        match next {
            None | Some(Ok(Message::Close(_))) => {
                self.end(closed_by_peer());
                Err(Unkept::Ended)
            }
            Some(Ok(Message::Text(text))) => {
                let kept = self.unread_cost + unread_cost(&text);
                if kept > cap || self.budget.resize(&mut self.unread_held, kept).is_err() {
                    return Err(Unkept::TooMuch);
                }
                self.unread_cost = kept;
                self.unread.push_back(text.to_string());
                Ok(())
            }
            // Pings are answered by the stream itself as it reads.
            Some(Ok(_)) => Ok(()),
            Some(Err(error)) => {
                self.end(describe(&error));
                Err(Unkept::Ended)
            }
        }
    }

    /// Whether the connection was seen to end.
    pub fn has_ended(&self) -> bool {
        self.ended.is_some()
    }
}
