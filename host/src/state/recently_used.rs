//! What one session used lately: a short list of opaque items, newest
//! first, and the line to send its client when the list changes (behind the
//! WIT interface `recent`, runtime::imports::recent). One per stdio connection and per 2025-11-25 HTTP
//! session; a transport without sessions has none, so nothing is kept.
//!
//! Bounds: [`MAX_ITEMS`] items of at most [`MAX_ITEM_BYTES`] each per
//! session, and at most one "changed" line on its way to the client at a
//! time (it says "list again", so one is as good as many).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::state::client_queue::ClientQueue;
use crate::sync::lock;

/// Items one session's list holds.
pub const MAX_ITEMS: usize = 20;
/// The longest item kept, in bytes.
pub const MAX_ITEM_BYTES: usize = 256;

/// One session's list.
pub struct RecentlyUsed {
    items: std::sync::Mutex<VecDeque<String>>,
    out: ClientQueue,
    /// A "changed" line is queued and not yet written.
    on_its_way: Arc<AtomicBool>,
}

impl RecentlyUsed {
    /// An empty list whose changes are told to `out`.
    pub fn new(out: ClientQueue) -> Arc<RecentlyUsed> {
        Arc::new(RecentlyUsed {
            items: Default::default(),
            out,
            on_its_way: Arc::default(),
        })
    }

    /// Makes `item` the newest, letting the oldest go past [`MAX_ITEMS`];
    /// sends `changed` when the items held are not the same as before.
    pub fn note(&self, item: String, changed: Option<String>) {
        if item.len() > MAX_ITEM_BYTES {
            return;
        }
        let new = {
            let mut items = lock(&self.items);
            let known = items.iter().position(|held| *held == item);
            if let Some(at) = known {
                items.remove(at);
            }
            items.push_front(item);
            items.truncate(MAX_ITEMS);
            known.is_none()
        };
        if let Some(line) = changed.filter(|_| new) {
            self.out.send_unless_on_its_way(line, &self.on_its_way);
        }
    }

    /// The items, newest first.
    pub fn list(&self) -> Vec<String> {
        lock(&self.items).iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::client_queue::outbox;

    #[tokio::test]
    async fn newest_first_bounded_and_told_once_per_change() {
        let (out, mut lines) = outbox(1 << 16);
        let recent = RecentlyUsed::new(out);
        recent.note("a".into(), Some("changed".into()));
        assert_eq!(lines.next().await.unwrap().line, "changed");
        recent.note("b".into(), Some("changed".into()));
        // "a" again only moves it: the same items, so nothing is told.
        recent.note("a".into(), Some("changed".into()));
        assert_eq!(recent.list(), ["a", "b"]);
        assert_eq!(lines.next().await.unwrap().line, "changed");
        for n in 0..MAX_ITEMS {
            recent.note(format!("item {n}"), None);
        }
        let list = recent.list();
        assert_eq!(list.len(), MAX_ITEMS);
        assert_eq!(list[0], format!("item {}", MAX_ITEMS - 1));
        assert!(!list.contains(&"a".to_string()));
        recent.note("x".repeat(MAX_ITEM_BYTES + 1), Some("changed".into()));
        assert!(
            recent
                .list()
                .iter()
                .all(|item| item.len() <= MAX_ITEM_BYTES)
        );
        drop(recent);
        assert!(lines.next().await.is_none(), "nothing else was told");
    }
}
