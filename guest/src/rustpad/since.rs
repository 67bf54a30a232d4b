//! What a session keeps to place an edit stated against an older text: the
//! text at that revision, and every edit the history holds after it.
//!
//! A session records this only when asked (a windowed read, `edit_document`).
//! The text at the base is a clone of the session's rope, which shares its
//! pieces with the live text, so keeping it costs what changed since rather
//! than a second copy of the pad. The edits after the base are what the
//! history frames carried, which the connection's budget already bounds.

use std::ops::ControlFlow;

use operational_transform::{Operation, OperationSeq};
use ropey::Rope;

use super::ot::apply_to_rope;

/// One history entry after the base.
pub struct Entry {
    /// Rustpad's id for the connection that made it.
    pub author: u64,
    pub operation: OperationSeq,
    /// The text just before this entry; kept for the session's own edit only.
    pub before: Option<Rope>,
}

/// The text at one revision and everything after it.
pub struct Since {
    revision: u64,
    text: Option<Rope>,
    entries: Vec<Entry>,
}

impl Since {
    /// Starts waiting for `revision`; an empty pad's revision 0 is there at once.
    pub fn from(revision: u64) -> Since {
        Since {
            revision,
            text: (revision == 0).then(Rope::new),
            entries: Vec::new(),
        }
    }

    /// Starts at the text a session holds now.
    pub fn here(revision: u64, text: &Rope) -> Since {
        Since {
            revision,
            text: Some(text.clone()),
            entries: Vec::new(),
        }
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The text at the base revision; None when the history never reached it.
    pub fn text(&self) -> Option<&Rope> {
        self.text.as_ref()
    }

    /// Every entry after the base, in history order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The revision after the last entry.
    pub fn end(&self) -> u64 {
        self.revision + self.entries.len() as u64
    }

    /// Walks the record from revision `from` (where it starts or later) to
    /// the end: `visit` sees each revision and its text, first `from`'s and
    /// then every revision an entry changed (entries that change nothing are
    /// passed over), until it breaks. None when the record does not reach
    /// `from` or its entries do not fit its text.
    pub fn replay<B>(
        &self,
        from: u64,
        mut visit: impl FnMut(u64, &Rope) -> ControlFlow<B>,
    ) -> Option<ControlFlow<B>> {
        let mut text = self.text.clone()?;
        let skip = from.checked_sub(self.revision)?;
        if skip > self.entries.len() as u64 {
            return None;
        }
        let (before, after) = self.entries.split_at(skip as usize);
        for entry in before {
            apply_to_rope(&mut text, &entry.operation).ok()?;
        }
        if let ControlFlow::Break(stop) = visit(from, &text) {
            return Some(ControlFlow::Break(stop));
        }
        for (revision, entry) in (from + 1..).zip(after) {
            if entry
                .operation
                .ops()
                .iter()
                .all(|part| matches!(part, Operation::Retain(_)))
            {
                continue;
            }
            apply_to_rope(&mut text, &entry.operation).ok()?;
            if let ControlFlow::Break(stop) = visit(revision, &text) {
                return Some(ControlFlow::Break(stop));
            }
        }
        Some(ControlFlow::Continue(()))
    }

    /// Follows one history entry that took the pad to `revision` and left
    /// `text`. `before` is the text ahead of it, for the session's own edit.
    pub(crate) fn follow(
        &mut self,
        revision: u64,
        author: u64,
        operation: OperationSeq,
        before: Option<Rope>,
        text: &Rope,
    ) {
        if revision == self.revision {
            self.text = Some(text.clone());
        } else if revision > self.revision && self.text.is_some() {
            self.entries.push(Entry {
                author,
                operation,
                before,
            });
        }
    }

    /// Whether following an entry that ends at `revision` needs its operation.
    pub(crate) fn wants(&self, revision: u64) -> bool {
        revision > self.revision && self.text.is_some()
    }
}
