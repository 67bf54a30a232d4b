//! Messages on their way to the client, bounded in bytes.
//!
//! A client that stops reading must not make the server grow: every line
//! waits for room before it is queued, and room comes back only once the line
//! has been written. Readers of the client's messages wait for room too, so a
//! client that keeps sending without reading is slowed to the pace at which it
//! reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// How much may wait for a stdio client, in bytes.
pub const STDIO_QUEUE_BYTES: usize = 16 << 20;
/// How much may wait on one HTTP call's event stream: the questions the call
/// asks, or the opening and updates of a listen it holds.
pub const CALL_QUEUE_BYTES: usize = 1 << 20;

const UNIT_BYTES: usize = 1024;

/// The sending side; clones share the same room.
#[derive(Clone)]
pub struct ClientQueue {
    lines: mpsc::UnboundedSender<Queued>,
    room: Arc<Semaphore>,
    capacity: u32,
}

/// A line in the queue, holding its room until it is dropped (written).
pub struct Queued {
    pub line: String,
    _room: OwnedSemaphorePermit,
    _written: Option<Written>,
}

/// Clears a flag once its line has been written (or dropped unwritten).
struct Written(Arc<AtomicBool>);

impl Drop for Written {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The receiving side: the writer.
pub struct Lines {
    lines: mpsc::UnboundedReceiver<Queued>,
    room: Arc<Semaphore>,
}

/// The client's side of the queue is gone.
#[derive(Debug)]
pub struct Closed;

/// A queue holding at most `capacity_bytes` of lines (a longer line waits for
/// the queue to empty, then goes alone).
pub fn outbox(capacity_bytes: usize) -> (ClientQueue, Lines) {
    let capacity = u32::try_from(capacity_bytes.div_ceil(UNIT_BYTES)).unwrap_or(u32::MAX);
    let room = Arc::new(Semaphore::new(capacity as usize));
    let (sender, receiver) = mpsc::unbounded_channel();
    (
        ClientQueue {
            lines: sender,
            room: room.clone(),
            capacity,
        },
        Lines {
            lines: receiver,
            room,
        },
    )
}

impl ClientQueue {
    /// Queues `line` once there is room for it.
    pub async fn send(&self, line: String) -> Result<(), Closed> {
        self.send_marked(line, None).await
    }

    /// Queues `line` from a task of its own, unless a line marked by
    /// `on_its_way` is still waiting to be written: for lines that say "look
    /// again", of which one on its way is as good as many. The mark clears
    /// once the line is written (or the client is gone).
    pub fn send_unless_on_its_way(&self, line: String, on_its_way: &Arc<AtomicBool>) {
        if on_its_way.swap(true, Ordering::AcqRel) {
            return;
        }
        let out = self.clone();
        let pending = Some(on_its_way.clone());
        tokio::spawn(async move {
            let _ = out.send_marked(line, pending).await;
        });
    }

    /// Queues `line` like [`ClientQueue::send`]; `pending` is cleared once the
    /// line has been written.
    async fn send_marked(
        &self,
        line: String,
        pending: Option<Arc<AtomicBool>>,
    ) -> Result<(), Closed> {
        let written = pending.map(Written);
        let units = u32::try_from(line.len().div_ceil(UNIT_BYTES))
            .unwrap_or(u32::MAX)
            .clamp(1, self.capacity);
        let room = self
            .room
            .clone()
            .acquire_many_owned(units)
            .await
            .map_err(|_| Closed)?;
        self.lines
            .send(Queued {
                line,
                _room: room,
                _written: written,
            })
            .map_err(|_| Closed)
    }

    /// Queues `line` without waiting: at once when there is room, else as
    /// soon as there is (from a task of its own).
    pub fn send_soon(&self, line: String) {
        let units = u32::try_from(line.len().div_ceil(UNIT_BYTES))
            .unwrap_or(u32::MAX)
            .clamp(1, self.capacity);
        match self.room.clone().try_acquire_many_owned(units) {
            Ok(room) => {
                let _ = self.lines.send(Queued {
                    line,
                    _room: room,
                    _written: None,
                });
            }
            Err(_) => {
                let out = self.clone();
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        let _ = out.send(line).await;
                    });
                }
            }
        }
    }

    /// Waits until the queue has room again (for a reader to keep pace).
    pub async fn room(&self) -> Result<(), Closed> {
        self.room.acquire().await.map(drop).map_err(|_| Closed)
    }
}

impl Lines {
    pub async fn next(&mut self) -> Option<Queued> {
        self.lines.recv().await
    }

    /// The next line if one is queued now.
    pub fn ready(&mut self) -> Option<Queued> {
        self.lines.try_recv().ok()
    }
}

impl Drop for Lines {
    /// Senders waiting for room learn that nobody will make any.
    fn drop(&mut self) {
        self.room.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_full_queue_waits_until_a_line_is_written() {
        let (out, mut lines) = outbox(2 * UNIT_BYTES);
        out.send("a".repeat(UNIT_BYTES)).await.unwrap();
        out.send("b".repeat(UNIT_BYTES)).await.unwrap();
        let third = tokio::time::timeout(Duration::from_millis(50), out.send("c".into())).await;
        assert!(third.is_err(), "queued past the bound");
        let first = lines.next().await.unwrap();
        assert!(first.line.starts_with('a'));
        drop(first);
        out.send("c".into()).await.unwrap();
        // A line longer than the whole queue goes once the queue is empty.
        let waiting = tokio::spawn({
            let out = out.clone();
            async move { out.send("d".repeat(10 * UNIT_BYTES)).await }
        });
        drop(lines.next().await);
        drop(lines.next().await);
        waiting.await.unwrap().unwrap();
        assert_eq!(lines.next().await.unwrap().line.len(), 10 * UNIT_BYTES);
        drop(lines);
        assert!(out.send("e".into()).await.is_err());
    }
}
