//! What an `edit_document` batch did (or, on a dry run, would do): the pad
//! before and after, where each edit's text landed, and the result that
//! reports it. The history entry that acknowledged the batch is the batch
//! as Rustpad applied it, so the diff and the line ranges come from there.
//! Which edits changed a line where someone is working is said, never
//! refused: anyone can select a whole pad.

use operational_transform::OperationSeq;
use ropey::Rope;
use schemars::JsonSchema;
use serde::Serialize;

use super::catalogue::EPHEMERAL;
use super::diff::{self, Diff};
use super::locate::Plan;
use super::outcome::{self, ToolError, ToolResult, Untrusted};
use super::people::{self, People};
use super::session::{Revertible, Undoable, Written};
use crate::rustpad::base::Base;
use crate::rustpad::ot::apply_to_rope;
use crate::rustpad::positions::Positions;
use crate::rustpad::rebase::{Rebased, rebase};
use crate::rustpad::socket::PadSocket;
use crate::rustpad::state::PadState;
use crate::rustpad::url::RustpadUrl;

/// What the result says of the call.
#[derive(Clone, Copy)]
pub(super) struct Batch<'a> {
    pub id: &'a str,
    pub dry_run: bool,
    /// Edits in the batch.
    pub count: usize,
}

/// The pad before and after the batch, with where each edit's text landed.
pub(super) struct Effect {
    revision: u64,
    before: Rope,
    after: Rope,
    /// Per edit, in the order given: its new text's range in `after`.
    placed: Vec<(u64, u64)>,
    /// Where people are working in `after`.
    people: People,
}

/// What `edit_document` adds to a write's result (all of it pad content).
#[derive(Serialize, JsonSchema)]
pub(super) struct Edited {
    /// The pad's revision right after the edits (on a dry run: now)
    revision: u64,
    // It takes the place of the undo's `base` (see `report`), in the schema too.
    /// Names that revision and its text: pass it to state further edits against it (on a dry run: the pad as it is now)
    base: String,
    dry_run: bool,
    /// Dry run only: whether making the edits would ask a person first
    #[serde(skip_serializing_if = "Option::is_none")]
    would_ask: Option<bool>,
    /// For each edit, in the order given, the lines its new text occupies in the result, and who is working there
    edits: Vec<Landed>,
    /// Unified diff of the change, pad text with control characters removed
    diff: String,
    /// Whether the diff was cut to fit the result
    diff_cut: bool,
}

/// Where one edit's new text landed, and who is working there.
#[derive(Serialize, JsonSchema)]
struct Landed {
    #[schemars(range(min = 1))]
    edit: usize,
    #[schemars(range(min = 1))]
    start_line: usize,
    #[schemars(range(min = 1))]
    end_line: usize,
    /// Present when someone has a caret or selection on these lines: their names, with control characters removed
    #[serde(skip_serializing_if = "Vec::is_empty")]
    people: Vec<String>,
}

impl Effect {
    /// `operation` applied to `before`, with each edit's new text carried to
    /// where it lands.
    pub(super) fn of(
        revision: u64,
        before: Rope,
        operation: &OperationSeq,
        plan: &Plan,
        rebased: &Rebased,
        id: &str,
    ) -> Result<Effect, ToolError> {
        let mut after = before.clone();
        apply_to_rope(&mut after, operation).map_err(|_| untrusted_history(id))?;
        let placed = plan
            .placed
            .iter()
            .map(|(start, end)| rebased.carry(*start, *end))
            .collect();
        Ok(Effect {
            revision,
            before,
            after,
            placed,
            people: People::default(),
        })
    }

    /// With where people are working in the text after the batch: in a dry
    /// run, their places now carried over the batch (`carried_over`); once
    /// applied, their places as `state` holds them, when it holds no edit
    /// after the batch's.
    pub(super) fn with_people(
        mut self,
        state: &PadState,
        carried_over: Option<&OperationSeq>,
    ) -> Effect {
        let mut positions: Vec<(&str, Positions, bool)> = state
            .people_positions()
            .into_iter()
            .map(|placed| (placed.name, placed.positions.clone(), placed.writer))
            .collect();
        match carried_over {
            Some(operation) => positions
                .iter_mut()
                .for_each(|(_, at, _)| at.carry_over_seq(operation)),
            None if state.revision() != self.revision => return self,
            None => {}
        }
        let named = positions
            .iter()
            .map(|(name, at, writer)| (*name, at, *writer));
        self.people = people::located(named, &self.after);
        self
    }
}

/// What the batch would do to the pad as it stands, for a dry run.
pub(super) fn preview(
    before: Rope,
    revision: u64,
    plan: &Plan,
    rebased: &Rebased,
    id: &str,
) -> Result<Effect, ToolError> {
    Effect::of(revision, before, &rebased.operation, plan, rebased, id)
}

/// What the batch did, from the history entry that acknowledged it.
pub(super) fn applied(socket: &PadSocket, plan: &Plan, id: &str) -> Result<Effect, ToolError> {
    let since = socket.since().expect("the session records from its base");
    let entries = since.entries();
    let Some(ours) = entries.iter().position(|entry| entry.before.is_some()) else {
        return Err(untrusted_history(id));
    };
    let entry = &entries[ours];
    // Carried over the same edits as Rustpad did, our operation is the one it applied.
    let rebased = rebase(
        plan.operation.clone(),
        entries[..ours].iter().map(|e| &e.operation),
    )
    .map_err(|_| untrusted_history(id))?;
    if rebased.operation != entry.operation {
        return Err(ToolError::new(format!(
            "The edits were written to pad \"{id}\", but Rustpad applied them differently from the way this server carried them over the edits since the base, so where they landed is unknown. Read the pad with get_document before editing it further."
        )));
    }
    let before = entry.before.clone().unwrap_or_default();
    let revision = since.revision() + ours as u64 + 1;
    Effect::of(revision, before, &entry.operation, plan, &rebased, id)
}

pub(super) fn untrusted_history(id: &str) -> ToolError {
    ToolError::new(format!(
        "Rustpad's history of pad \"{id}\" does not fit together, so this server cannot place the edits; nothing was written by this call unless a later read shows otherwise. Read the pad again before editing it."
    ))
}

/// The result: the diff, the new revision and base, and where each edit's
/// text now stands (a dry run: what would happen, and whether it would ask).
pub(super) fn report(
    url: &RustpadUrl,
    batch: &Batch,
    effect: &Effect,
    base: &Base,
    would_ask: bool,
    mut undo: Undoable,
) -> ToolResult {
    let Batch { id, dry_run, count } = *batch;
    let after_text = effect.after.to_string();
    let (new_revision, new_base) = if dry_run {
        (
            effect.revision,
            Base::of(effect.revision, &effect.before.to_string()),
        )
    } else {
        (effect.revision, Base::of(effect.revision, &after_text))
    };
    let Diff { text: diff, cut } = diff::unified(
        &effect.before.to_string(),
        &after_text,
        &format!("{id} (before)"),
        &format!("{id} (after)"),
    );
    let mut beside = Vec::new();
    // Names are pad content of up to 100 characters each: the result names
    // at most this many in all, however many edits and people there are.
    let mut names_left = people::MAX_PEOPLE_SHOWN * 2;
    let edits: Vec<Landed> = effect
        .placed
        .iter()
        .enumerate()
        .map(|(index, (start, end))| {
            let (first, last) = line_range(&effect.after, *start, *end);
            // A caret at the very end of the new text is where it was typing
            // (an insertion at a caret pushes it past the text), so the line
            // the range ends on counts even when the range stops before it.
            let touched_last = effect
                .after
                .char_to_line((*end as usize).min(effect.after.len_chars()))
                + 1;
            let names: Vec<String> = effect
                .people
                .iter()
                .filter(|person| person.is_on(first, last.max(touched_last)))
                .map(|person| person.name.clone())
                .take(names_left)
                .collect();
            names_left -= names.len();
            if !names.is_empty() {
                beside.push(format!(
                    "Edit {} changed a line where {} {} working.",
                    index + 1,
                    names.join(", "),
                    if names.len() == 1 { "is" } else { "are" }
                ));
            }
            Landed {
                edit: index + 1,
                start_line: first,
                end_line: last,
                people: names,
            }
        })
        .collect();
    let edit_count = crate::text::count(count, "edit");
    let mut notes = vec![EPHEMERAL.to_string()];
    if cut {
        notes.push(format!(
            "The diff was cut at {} characters; read the changed lines with get_document and the line ranges above.",
            diff::MAX_DIFF_CHARS
        ));
    }
    let summary = if dry_run {
        let asking = if would_ask {
            "Made for real, it would ask a person first."
        } else {
            "Made for real, it would not need a person's approval."
        };
        format!(
            "Dry run: {edit_count} stated against base {base} would change pad \"{id}\" as the diff below shows; nothing was written. {asking} To make the edits, call edit_document again with the same edits and base {base}, without dry_run."
        )
    } else {
        format!(
            "Applied {edit_count} to pad \"{id}\" as one change: it is now at revision {new_revision} (base {new_base}, {}).\nLink: {}",
            crate::text::count(effect.after.len_chars(), "character"),
            url.share_link(id)
        )
    };
    let mut body = diff.clone();
    if !beside.is_empty() {
        body = format!("{}\n\n{}", body.trim_end(), beside.join("\n"));
    }
    let edited = Edited {
        // The undo's base, when there is one, is the base after the edits.
        base: undo.base.take().unwrap_or_else(|| new_base.to_string()),
        revision: new_revision,
        dry_run,
        would_ask: dry_run.then_some(would_ask),
        edits,
        diff,
        diff_cut: cut,
    };
    let edited = Revertible { undo, own: edited };
    let characters = effect.after.len_chars();
    let result = Written::new(
        url,
        id,
        characters,
        &notes.join(" "),
        Untrusted::new(edited),
    );
    outcome::untrusted_listing(&summary, &body, &result)
}

/// The 1-based lines a range of characters covers; an empty range is on the
/// line it points at.
fn line_range(text: &Rope, start: u64, end: u64) -> (usize, usize) {
    let clamp = |at: u64| (at as usize).min(text.len_chars());
    let first = text.char_to_line(clamp(start)) + 1;
    let last = if end > start {
        text.char_to_line(clamp(end - 1)) + 1
    } else {
        first
    };
    (first, last)
}
