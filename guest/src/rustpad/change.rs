//! A change: one write's edit in a pad's history, and the handle a write
//! result gives out so that `revert_changes` can take exactly that edit back.
//!
//! A handle names the write's connection, the base just before its edit, and
//! when Rustpad started. All three are needed: revisions and connection
//! numbers both start again when Rustpad does, and the text before an edit
//! (an empty pad's, say) can come back after a restart. A handle is not a
//! secret: it names a change anyone could read in the history.

use std::fmt;

use ropey::Rope;

use super::base::{Base, plain_number};
use crate::digest::HashedStart;

/// A write's own edit as the history holds it.
#[derive(Clone)]
pub struct OwnEdit {
    /// The revision the edit made.
    pub revision: u64,
    pub before: Rope,
    pub after: Rope,
    /// Code points at the start that the edit kept as they were.
    pub kept_first: usize,
    /// The hashing of `before`'s start, where the session had one.
    pub hashed_before: Option<HashedStart>,
}

impl OwnEdit {
    /// The bases just before the edit and just after it.
    pub fn bases(&self) -> (Base, Base) {
        Base::of_edit(
            self.revision - 1,
            &self.before,
            &self.after,
            self.kept_first,
            self.hashed_before.as_ref(),
        )
    }
}

/// The name of one write's change: `<base before>:c<connection>:t<started>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handle {
    pub before: Base,
    pub connection: u64,
    /// Rustpad's start time (`/api/stats`) when the change was made.
    pub started: u64,
}

impl Handle {
    /// Reads a handle as [`fmt::Display`] writes it.
    pub fn parse(text: &str) -> Option<Handle> {
        let mut parts = text.split(':');
        let before = Base::parse(parts.next()?)?;
        // Any u64: twenty digits at most, and one past u64::MAX does not parse.
        let connection = plain_number(parts.next()?.strip_prefix('c')?, 20)?;
        let started = plain_number(parts.next()?.strip_prefix('t')?, 20)?;
        if parts.next().is_some() {
            return None;
        }
        Some(Handle {
            before,
            connection,
            started,
        })
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:c{}:t{}", self.before, self.connection, self.started)
    }
}

/// The JSON Schema pattern of a handle, for input schemas.
pub const PATTERN: &str =
    "^r(0|[1-9][0-9]{0,18})\\.[0-9a-f]{16}:c(0|[1-9][0-9]{0,19}):t(0|[1-9][0-9]{0,19})$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_round_trips_and_only_its_form_reads() {
        let handle = Handle {
            before: Base::of(41, "text\n"),
            connection: 7,
            started: 1_733_356_800,
        };
        let written = handle.to_string();
        assert_eq!(Handle::parse(&written), Some(handle.clone()));
        let base = handle.before.to_string();
        for bad in [
            base.clone(),
            format!("{base}:c7"),
            format!("{base}:c07:t1"),
            format!("{base}:c7:t1:x"),
            format!("{base}:t1:c7"),
            format!("{base}:c-7:t1"),
            format!("{base}:c7:t99999999999999999999999"),
        ] {
            assert_eq!(Handle::parse(&bad), None, "{bad}");
        }
    }
}
