//! What a revert's result says: the diff, the counts, the lines it touched
//! and where people's typing stayed; or that nothing was left to take back.

use ropey::Rope;
use serde_json::{Map, Value, json};

use super::Target;
use crate::guard::removal::Change;
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::base::Base;
use crate::rustpad::rebase::{Lean, position_after};
use crate::rustpad::socket::PadSocket;
use crate::rustpad::undo::Undo;
use crate::text::count;
use crate::tools::args::By;
use crate::tools::catalogue::EPHEMERAL;
use crate::tools::diff::{self, Diff};
use crate::tools::tool::Call;

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
) -> Result<Value, ToolError> {
    let text = socket.text()?;
    let mut payload = Map::new();
    payload.insert("id".into(), json!(id));
    payload.insert("url".into(), json!(call.url.share_link(id)));
    payload.insert("characters".into(), json!(text.len_chars()));
    payload.insert("revision".into(), json!(revision));
    payload.insert("base".into(), json!(Base::of(revision, &text.to_string()).to_string()));
    payload.insert("dry_run".into(), json!(false));
    payload.insert("taken_back".into(), json!(0));
    payload.insert("restored_characters".into(), json!(0));
    payload.insert("removed_characters".into(), json!(0));
    payload.insert("kept_lines".into(), json!([]));
    payload.insert("diff".into(), json!(""));
    payload.insert("diff_cut".into(), json!(false));
    payload.insert("note".into(), json!("Nothing was written."));
    let why = match target {
        Target::Since { by: By::ThisServer, .. } if crate::grants::STATELESS => " This host keeps nothing between calls, so no change is known as this server's own here: use the change a write's result gave out.",
        _ => "",
    };
    result::untrusted_listing(
        &format!(
            "Nothing to take back in pad \"{id}\": {} has no effect left on the text now (already taken back, or it changed nothing); nothing was written.{why}",
            target.in_words()
        ),
        "",
        payload,
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
    pub(super) undo_fields: Value,
}

impl Report<'_> {
    pub(super) fn into_result(self, call: &Call) -> ToolResult {
        let id = self.id;
        let (before, after) = (self.before.to_string(), self.after.to_string());
        let Diff { text: diff, cut } =
            diff::unified(&before, &after, &format!("{id} (before)"), &format!("{id} (after)"));
        let mut payload = Map::new();
        payload.insert("id".into(), json!(id));
        payload.insert("url".into(), json!(call.url.share_link(id)));
        payload.insert("characters".into(), json!(self.after.len_chars()));
        payload.insert("revision".into(), json!(self.revision));
        payload.insert("dry_run".into(), json!(self.would_ask.is_some()));
        payload.insert("taken_back".into(), json!(self.undo.entries));
        payload.insert("restored_characters".into(), json!(self.change.inserted));
        payload.insert("removed_characters".into(), json!(self.change.removed));
        if let Some(lines) = changed_lines(&before, &after, self.after) {
            payload.insert("lines".into(), json!(lines));
        }
        payload.insert("kept_lines".into(), json!(self.kept));
        payload.insert("diff".into(), json!(diff));
        payload.insert("diff_cut".into(), json!(cut));
        if let Value::Object(fields) = self.undo_fields {
            payload.extend(fields);
        }
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
                payload.insert("would_ask".into(), json!(would_ask));
                payload.insert("base".into(), json!(Base::of(self.revision, &before).to_string()));
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
        payload.insert("note".into(), json!(notes.join(" ")));
        result::untrusted_listing(&summary, &diff, payload)
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

