//! What an edit takes out of a pad and puts in, the measure the removal
//! rule counts in: per replaced piece, the old text's length minus what it
//! shares with its replacement at both ends.

use operational_transform::{Operation, OperationSeq};

use crate::text::shared_ends;

/// What an edit takes out of a pad and puts in, in code points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub removed: usize,
    pub inserted: usize,
}

impl Change {
    /// Replacing `old` with `new`: what they share at both ends stays.
    pub fn between(old: &str, new: &str) -> Change {
        let (prefix, suffix) = shared_ends(old, new);
        let kept = prefix + suffix;
        Change {
            removed: old.chars().count() - kept,
            inserted: new.chars().count() - kept,
        }
    }

    /// What an operation takes out and puts in.
    pub fn of_operation(operation: &OperationSeq) -> Change {
        operation
            .ops()
            .iter()
            .fold(Change::default(), |change, part| match part {
                Operation::Delete(n) => Change {
                    removed: change.removed + *n as usize,
                    ..change
                },
                Operation::Insert(text) => Change {
                    inserted: change.inserted + text.chars().count(),
                    ..change
                },
                Operation::Retain(_) => change,
            })
    }

    /// The same change made `times` times. Saturating: on wasm32 a `usize`
    /// is 32 bits, which a long replacement of a short, frequent search can
    /// pass, and a count wrapped round would look small.
    pub fn times(self, times: usize) -> Change {
        Change {
            removed: self.removed.saturating_mul(times),
            inserted: self.inserted.saturating_mul(times),
        }
    }
}

impl std::ops::Add for Change {
    type Output = Change;

    fn add(self, other: Change) -> Change {
        Change {
            removed: self.removed + other.removed,
            inserted: self.inserted + other.inserted,
        }
    }
}
