//! What a watch needs to know of each edit after a revision, and nothing
//! more: who made it, and whether it changed the text.
//!
//! A watch that kept the text would have to read the pad's whole history
//! when it joins, and could not go on with a connection a later round is
//! handed (the text is not in the cursor). Kept this way, a session folds
//! lengths only ([`super::fold`]), a round that resumes a look starts from a
//! revision and a length, and an update costs the entries since the last one.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::ot::UserOperation;

/// One edit after the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub revision: u64,
    /// Rustpad's number for the connection that made it.
    pub author: u64,
    pub changes_text: bool,
}

/// The edits after a revision, as far as they have been heard.
pub struct Heard {
    /// The revision the edits follow.
    after: u64,
    edits: Vec<Edit>,
}

impl Heard {
    /// Hears edits after `revision` (`u64::MAX`: none yet, see [`Heard::restart`]).
    pub fn after(revision: u64) -> Heard {
        Heard {
            after: revision,
            edits: Vec::new(),
        }
    }

    /// The revision after the last edit heard.
    fn end(&self) -> u64 {
        self.after.saturating_add(self.edits.len() as u64)
    }

    /// Forgets what was heard: from now on, edits after `revision`.
    pub fn restart(&mut self, revision: u64) {
        self.after = revision;
        self.edits.clear();
    }

    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// Takes in the entries of a History frame, already folded into a pad
    /// that now stands at `revision`, that come after what was heard.
    pub(super) fn hear_frame(&mut self, frame: &str, revision: u64) -> Result<(), String> {
        if revision <= self.end() {
            return Ok(());
        }
        #[derive(Deserialize)]
        enum Frame<'a> {
            History {
                start: u64,
                #[serde(borrow)]
                operations: &'a RawValue,
            },
        }
        let Frame::History { start, operations } =
            serde_json::from_str(frame).map_err(|error| super::wire_problem(&error))?;
        let entries: Vec<UserOperation> =
            serde_json::from_str(operations.get()).map_err(|error| super::wire_problem(&error))?;
        for (entry, revision) in entries.iter().zip(start + 1..) {
            if revision == self.end() + 1 {
                self.edits.push(Edit {
                    revision,
                    author: entry.id,
                    changes_text: !entry.operation.changes_nothing(),
                });
            }
        }
        Ok(())
    }

    /// Takes in one edit the session folded with its text.
    pub(super) fn hear(&mut self, edit: Edit) {
        if edit.revision == self.end() + 1 {
            self.edits.push(edit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_edits_after_the_start_are_heard_once_each() {
        let mut heard = Heard::after(1);
        let frame = r#"{"History":{"start":0,"operations":[{"id":1,"operation":["ab"]},{"id":2,"operation":[2]},{"id":3,"operation":[1,"c",1]}]}}"#;
        heard.hear_frame(frame, 3).unwrap();
        let edits = [
            Edit {
                revision: 2,
                author: 2,
                changes_text: false,
            },
            Edit {
                revision: 3,
                author: 3,
                changes_text: true,
            },
        ];
        assert_eq!(heard.edits(), edits);
        // The same entries again (an overlapping frame) add nothing.
        heard.hear_frame(frame, 3).unwrap();
        assert_eq!(heard.edits(), edits);
        heard.restart(3);
        assert!(heard.edits().is_empty());
        let next = r#"{"History":{"start":3,"operations":[{"id":7,"operation":[-1,3]}]}}"#;
        heard.hear_frame(next, 4).unwrap();
        assert_eq!(heard.edits()[0].author, 7);
        let mut nothing_yet = Heard::after(u64::MAX);
        nothing_yet.hear_frame(frame, 3).unwrap();
        assert!(nothing_yet.edits().is_empty());
    }
}
