//! Taking chosen changes back out of a pad's history while keeping every
//! other one: selective undo by operational transform.
//!
//! The walk starts at a base with an undo that changes nothing and goes
//! through every entry after it, in history order:
//!
//! - a chosen entry is inverted against the text it was made on (what it
//!   inserted is deleted, what it deleted comes back) and that inverse goes
//!   ahead of the undo so far;
//! - any other entry stays: the undo is carried over it (`transform`), as
//!   Rustpad carries a late edit over the ones that landed first.
//!
//! At the end the undo applies to the pad's text now and removes exactly the
//! chosen changes: what people typed later, even inside text being taken
//! back, stays. Those places are kept to report them.

use operational_transform::{Operation, OperationSeq};
use ropey::Rope;

use super::ot::apply_to_rope;
use super::rebase::{Lean, position_after};
use super::since::Since;

/// The chosen changes taken back, as one operation on the latest text.
#[derive(Debug)]
pub struct Undo {
    /// Applies to the text at the end of the record.
    pub operation: OperationSeq,
    /// Entries taken back that had changed the text.
    pub entries: usize,
    /// Places in the latest text where someone typed inside text being
    /// taken back, after it was written: their characters stay there.
    pub kept_inside: Vec<u64>,
}

/// Why the history cannot be walked: it does not fit together.
#[derive(Debug, PartialEq, Eq)]
pub struct Untangled;

/// Takes back every entry of `since` for which `chosen(revision, author)`
/// holds (`revision` is the one the entry made).
pub fn take_back(since: &Since, chosen: impl Fn(u64, u64) -> bool) -> Result<Undo, Untangled> {
    let mut text = since.text().ok_or(Untangled)?.clone();
    let mut undo = OperationSeq::default();
    undo.retain(text.len_chars() as u64);
    let mut entries = 0;
    let mut kept_inside = Vec::new();
    for (revision, entry) in (since.revision() + 1..).zip(since.entries()) {
        let operation = &entry.operation;
        if operation.is_noop() {
            continue;
        }
        for place in &mut kept_inside {
            *place = position_after(operation, *place, Lean::Start);
        }
        if chosen(revision, entry.author) {
            let inverse = invert(operation, &text);
            undo = inverse.compose(&undo).map_err(|_| Untangled)?;
            entries += 1;
        } else {
            kept_inside.extend(inserts_inside_deletions(&undo, operation));
            undo = undo.transform(operation).map_err(|_| Untangled)?.0;
        }
        apply_to_rope(&mut text, operation).map_err(|_| Untangled)?;
    }
    kept_inside.sort_unstable();
    kept_inside.dedup();
    Ok(Undo {
        operation: undo,
        entries,
        kept_inside,
    })
}

/// Earlier reverts weighed by [`take_back_once`], at most (the latest).
pub const MAX_REVERTS_WEIGHED: usize = 16;

/// Takes back what `chosen` picks, together with each earlier revert
/// (connections in `reverts`, in history order) that took some of the same
/// changes back already: its change counts as taken back too, so running a
/// revert again puts nothing back twice. A revert is counted so when adding
/// it leaves less of the text to change (an undo of an undo cancels out).
/// `entries` counts the changes `chosen` picked.
pub fn take_back_once(
    since: &Since,
    chosen: impl Fn(u64, u64) -> bool,
    reverts: &[u64],
) -> Result<Undo, Untangled> {
    let mut now = since.text().ok_or(Untangled)?.clone();
    for entry in since.entries() {
        apply_to_rope(&mut now, &entry.operation).map_err(|_| Untangled)?;
    }
    let now = now.to_string();
    let mut with: Vec<u64> = Vec::new();
    let mut best = take_back(since, &chosen)?;
    let mut best_size = net_change(&now, &best)?;
    let skip = reverts.len().saturating_sub(MAX_REVERTS_WEIGHED);
    for revert in &reverts[skip..] {
        if best_size == 0 {
            break;
        }
        let trial = take_back(since, |revision, author| {
            chosen(revision, author) || author == *revert || with.contains(&author)
        })?;
        let size = net_change(&now, &trial)?;
        if size < best_size {
            with.push(*revert);
            best = Undo {
                entries: best.entries,
                ..trial
            };
            best_size = size;
        }
    }
    Ok(best)
}

/// How many characters `undo` would really change in `now`: what it
/// removes and puts back between the ends the texts share.
fn net_change(now: &str, undo: &Undo) -> Result<usize, Untangled> {
    let after = undo.operation.apply(now).map_err(|_| Untangled)?;
    let (prefix, suffix) = crate::text::shared_ends(now, &after);
    let (a, b) = (now.chars().count(), after.chars().count());
    Ok((a - prefix - suffix) + (b - prefix - suffix))
}

/// The operation that takes `operation` back, on the text it produced from
/// `before` (the crate's `invert` wants the text as a `String`).
fn invert(operation: &OperationSeq, before: &Rope) -> OperationSeq {
    let mut inverse = OperationSeq::default();
    let mut at = 0usize;
    for part in operation.ops() {
        match part {
            Operation::Retain(n) => {
                inverse.retain(*n);
                at += *n as usize;
            }
            Operation::Insert(text) => inverse.delete(text.chars().count() as u64),
            Operation::Delete(n) => {
                let end = at + *n as usize;
                inverse.insert(&before.slice(at..end).to_string());
                at = end;
            }
        }
    }
    inverse
}

/// Where `later` inserts text strictly inside a run that `undo` deletes
/// (both on the same text), in the text after `later`.
fn inserts_inside_deletions(undo: &OperationSeq, later: &OperationSeq) -> Vec<u64> {
    let deleted = deleted_runs(undo);
    if deleted.is_empty() {
        return Vec::new();
    }
    let (mut old, mut new) = (0u64, 0u64);
    let mut inside = Vec::new();
    for part in later.ops() {
        match part {
            Operation::Retain(n) => {
                old += n;
                new += n;
            }
            Operation::Delete(n) => old += n,
            Operation::Insert(text) => {
                if deleted
                    .iter()
                    .any(|(start, end)| *start < old && old < *end)
                {
                    inside.push(new);
                }
                new += text.chars().count() as u64;
            }
        }
    }
    inside
}

/// The ranges of its input text that `operation` deletes.
fn deleted_runs(operation: &OperationSeq) -> Vec<(u64, u64)> {
    let mut at = 0u64;
    let mut runs = Vec::new();
    for part in operation.ops() {
        match part {
            Operation::Retain(n) => at += n,
            Operation::Delete(n) => {
                runs.push((at, at + n));
                at += n;
            }
            Operation::Insert(_) => {}
        }
    }
    runs
}

#[cfg(test)]
mod tests;
