//! What a revert's result says: the diff, the counts, the lines it touched
//! and where people's typing stayed; or that nothing was left to take back.

use ropey::Rope;
use schemars::JsonSchema;
use serde::Serialize;

use super::Target;
use crate::guard::removal::Change;
use crate::rustpad::base::Base;
use crate::rustpad::rebase::{Lean, position_after};
use crate::rustpad::socket::PadSocket;
use crate::rustpad::undo::Undo;
use crate::text::count;
use crate::tools::args::By;
use crate::tools::catalogue::EPHEMERAL;
use crate::tools::diff::{self, Diff};
use crate::tools::outcome::{self, ToolResult, Untrusted};
use crate::tools::session::{Revertible, Undoable, Written};
use crate::tools::tool::Call;

/// What `revert_changes` adds to a write's result (all of it pad content).
#[derive(Serialize, JsonSchema)]
pub(in crate::tools) struct Reverted {
    /// The pad's revision after the revert (on a dry run or when nothing was taken back: now)
    revision: u64,
    dry_run: bool,
    /// Dry run only: whether the revert would ask a person first
    #[serde(skip_serializing_if = "Option::is_none")]
    would_ask: Option<bool>,
    /// How many changes were taken back (0: nothing left to take back)
    taken_back: usize,
    /// Characters put back
    restored_characters: usize,
    /// Characters removed
    removed_characters: usize,
    /// The first and last line the revert changed, in the text after it; absent when it changed nothing
    #[schemars(inner(range(min = 1)))]
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<[usize; 2]>,
    /// Lines where someone had typed inside text being taken back: their characters stay there
    #[schemars(inner(range(min = 1)))]
    kept_lines: Vec<usize>,
    /// Unified diff of the revert, pad text with control characters removed
    diff: String,
    /// Whether the diff was cut to fit the result
    diff_cut: bool,
}

/// The lines where later typing inside taken-back text stays, in `after`.
pub(super) fn kept_lines(undo: &Undo, after: &Rope) -> Vec<usize> {
    let mut lines: Vec<usize> = undo
        .kept_inside
        .iter()
        .map(|at| position_after(&undo.operation, *at, Lean::Start) as usize)
        .map(|at| after.char_to_line(at.min(after.len_chars())) + 1)
        .collect();
    lines.dedup();
    lines
}


/// The result when there is nothing left to take back.
pub(super) fn nothing_to_take_back(
    call: &Call,
    socket: &PadSocket,
    id: &str,
    target: &Target,
    revision: u64,
) -> ToolResult {
    let text = socket.text()?;
    let undo = Undoable {
        base: Some(Base::of(revision, &text.to_string()).to_string()),
        ..Undoable::default()
    };
    let nothing = Reverted {
        revision,
        dry_run: false,
        would_ask: None,
        taken_back: 0,
        restored_characters: 0,
        removed_characters: 0,
        lines: None,
        kept_lines: Vec::new(),
        diff: String::new(),
        diff_cut: false,
    };
    let nothing = Revertible { undo, own: nothing };
    let characters = text.len_chars();
    let result = Written::new(call.url, id, characters, "Nothing was written.", Untrusted::new(nothing));
    let why = match target {
        Target::Since { by: By::ThisServer, .. } if crate::grants::STATELESS => " This host keeps nothing between calls, so no change is known as this server's own here: use the change a write's result gave out.",
        _ => "",
    };
    outcome::untrusted_listing(
        &format!(
            "Nothing to take back in pad \"{id}\": {} has no effect left on the text now (already taken back, or it changed nothing); nothing was written.{why}",
            target.in_words()
        ),
        "",
        &result,
    )
}

/// What the result says of a revert (or, on a dry run, of what it would do).
pub(super) struct Report<'a> {
    pub(super) id: &'a str,
    pub(super) revision: u64,
    pub(super) before: &'a Rope,
    pub(super) after: &'a Rope,
    pub(super) undo: &'a Undo,
    pub(super) change: Change,
    pub(super) kept: Vec<usize>,
    pub(super) would_ask: Option<bool>,
    pub(super) undo_fields: Undoable,
}

impl Report<'_> {
    pub(super) fn into_result(self, call: &Call) -> ToolResult {
        let id = self.id;
        let (before, after) = (self.before.to_string(), self.after.to_string());
        let Diff { text: diff, cut } =
            diff::unified(&before, &after, &format!("{id} (before)"), &format!("{id} (after)"));
        let mut notes = vec![EPHEMERAL.to_string()];
        if cut {
            notes.push(format!(
                "The diff was cut at {} characters; read the changed lines with get_document.",
                diff::MAX_DIFF_CHARS
            ));
        }
        let kept = if self.kept.is_empty() {
            String::new()
        } else {
            let lines: Vec<String> = self.kept.iter().map(usize::to_string).collect();
            format!(
                " Someone had typed inside text it takes back; their characters stay, on {} {}.",
                if lines.len() == 1 { "line" } else { "lines" },
                lines.join(", ")
            )
        };
        let what = format!(
            "{} ({} put back, {} removed)",
            count(self.undo.entries, "change"),
            count(self.change.inserted, "character"),
            count(self.change.removed, "character")
        );
        let summary = match self.would_ask {
            Some(would_ask) => {
                let asking = if would_ask {
                    "Made for real, it would ask a person first."
                } else {
                    "Made for real, it would not need a person's approval."
                };
                format!(
                    "Dry run: taking back {what} would change pad \"{id}\" as the diff below shows; nothing was written. {asking}{kept}"
                )
            }
            None => format!(
                "Took back {what} in pad \"{id}\": it is now at revision {}.{kept}\nLink: {}",
                self.revision,
                call.url.share_link(id)
            ),
        };
        let mut undo = self.undo_fields;
        if self.would_ask.is_some() {
            // A dry run's base is that of the pad as it is now.
            undo.base = Some(Base::of(self.revision, &before).to_string());
        }
        let reverted = Reverted {
            revision: self.revision,
            dry_run: self.would_ask.is_some(),
            would_ask: self.would_ask,
            taken_back: self.undo.entries,
            restored_characters: self.change.inserted,
            removed_characters: self.change.removed,
            lines: changed_lines(&before, &after, self.after),
            kept_lines: self.kept,
            diff: diff.clone(),
            diff_cut: cut,
        };
        let reverted = Revertible {
            undo,
            own: reverted,
        };
        let characters = self.after.len_chars();
        let result = Written::new(call.url, id, characters, &notes.join(" "), Untrusted::new(reverted));
        outcome::untrusted_listing(&summary, &diff, &result)
    }
}

/// The first and last line that differ, in the text after.
fn changed_lines(before: &str, after: &str, rope: &Rope) -> Option<[usize; 2]> {
    if before == after {
        return None;
    }
    let (prefix, suffix) = crate::text::shared_ends(before, after);
    let after_chars = rope.len_chars();
    let start = prefix.min(after_chars);
    let end = after_chars.saturating_sub(suffix).max(start);
    let first = rope.char_to_line(start) + 1;
    let last = rope.char_to_line(end.saturating_sub(1).max(start)) + 1;
    Some([first, last])
}

