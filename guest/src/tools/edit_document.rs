//! `edit_document`: a batch of edits stated against the text a model read,
//! sent to Rustpad as one operation at that text's revision.
//!
//! The edits are located in the text at the base ([`locate`]), built into one
//! operation on it, and carried over everything typed since exactly as
//! Rustpad will carry it ([`rebase`]); the removal rule judges the carried
//! operation, since that is what will change the pad. Rustpad does the real
//! carrying when the edit arrives, over whatever it holds by then, and the
//! history entry that acknowledges the edit is the edit as applied: the diff
//! and the line ranges in the result are taken from it.
use operational_transform::OperationSeq;
use ropey::Rope;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{BaseOrNow, Edits, Flag, PadId};
use super::catalogue::{removal_threshold, removals_counted};
use super::edit_effect::{Batch, Edited, Effect, applied, preview, report, untrusted_history};
use super::locate::{self, EditSpec, MAX_EDITS, Plan};
use super::outcome::{ToolError, ToolResult, Untrusted};
use super::session::{Revertible, Undoable, Written, check_limit, judge_removal, pad_of, take_place, undo_fields, with_session};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::digest;
use crate::guard::removal::{Change, Removal};
use crate::guard::{self, Proposal};
use crate::rustpad::authorship::Authorship;
use crate::rustpad::base::{Base, Stale};
use crate::rustpad::marks::{Class, Mark};
use crate::rustpad::rebase::rebase;
use crate::rustpad::since::Since;
use crate::rustpad::socket::{PadSocket, Queue, Track, first_change};

pub static TOOL: Tool = Tool {
    name: "edit_document",
    title: "Edit a pad where you read it",
    summary: "Up to 100 edits as one change, stated against the text you read; dry_run previews a diff; asks a person first when it removes most of the pad",
    description: Description::Built(description),
    kind: Kind::Remove { idempotent: false },
    essential: false,
    schemas: Schemas::of::<Arguments, Written<Untrusted<Revertible<Edited>>>>(),
    run,
};

fn description() -> String {
    format!("Makes up to {MAX_EDITS} exact-text edits to a pad as one change. Each edit replaces old_text with new_text; old_text must occur exactly once in the text, or exactly once starting on the given line. An empty old_text with a line inserts new_text at the start of that line (one past the last line appends at the very end; start new_text with a line break if the pad does not end with one). All edits are located in the same text and must not overlap. Pass the base from a get_document window (or an earlier edit_document result) to state the edits against that text: edits people made since are kept, and your edits land where you read them. Without a base the pad as it is now is used. Any problem refuses the whole batch and nothing is written. The result has a unified diff, the new revision and base, and the lines each edit's new text now occupies, with the names of anyone whose caret or selection is on them. dry_run: true returns the diff and whether a person would be asked, and writes nothing. A person is asked first (a dialog in the client, or a two-call confirm_token where the client cannot show one) when the change would remove {}, {}.", removal_threshold(), removals_counted())
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    /// The edits, all located in the same text (they do not see each other) and made as one change
    #[serde(borrow)]
    edits: Edits<'a>,
    /// The base from the get_document window (or edit_document result) the edits were read in; omit it to edit the pad as it is now
    base: Option<BaseOrNow>,
    /// Return the diff and whether a person would be asked, and write nothing
    #[serde(default)]
    dry_run: Flag,
}

/// How many edits the dialog shows by value.
const EDITS_SHOWN: usize = 3;
/// Labels for the edits the dialog shows: what goes, what comes.
const EDIT_LABELS: [(&str, &str); EDITS_SHOWN] = [
    ("Edit 1 replaces", "Edit 1 puts"),
    ("Edit 2 replaces", "Edit 2 puts"),
    ("Edit 3 replaces", "Edit 3 puts"),
];

/// What the call asked for, checked.
struct Request<'a> {
    id: &'a str,
    edits: Vec<EditSpec<'a>>,
    base: Option<Base>,
    dry_run: bool,
    /// What an approval is bound to besides the pad: the base as given
    /// (empty without one) and a digest of the edits.
    given: [String; 2],
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        edits: Edits(edits),
        base,
        dry_run: Flag(dry_run),
    } = call.arguments()?;
    let base = base.map(|BaseOrNow(base)| base);
    let given = [
        base.as_ref().map(Base::to_string).unwrap_or_default(),
        edits_digest(&edits),
    ];
    let request = Request {
        id,
        edits,
        base,
        dry_run,
        given,
    };
    // An answer names the revision the person was asked at; without a base,
    // the text there is what the edits were stated against.
    let track = match &request.base {
        Some(base) => Track::text_since(base.revision),
        None => Track::TEXT,
    }
    .with_authorship()
    .since_at_most(call.asked_at());
    // A dry run changes nothing, so it looks without joining.
    let (effect, base, would_ask, undo) = if request.dry_run {
        let mut socket = PadSocket::look(call.url, request.id, track)?;
        let outcome = carry_out(&mut socket, &request, call);
        socket.close();
        outcome?
    } else {
        with_session(call, request.id, track, |socket| {
            carry_out(socket, &request, call)
        })?
    };
    let batch = Batch {
        id: request.id,
        dry_run: request.dry_run,
        count: request.edits.len(),
    };
    report(call.url, &batch, &effect, &base, would_ask, undo)
}

/// Everything between the snapshot and the acknowledgement; the socket stays open.
fn carry_out(
    socket: &mut PadSocket,
    request: &Request,
    call: &Call,
) -> Result<(Effect, Base, bool, Undoable), ToolError> {
    let id = request.id;
    // A batch that removes text, or may use an approval, takes its place
    // among the pad's writes (see `rustpad::order`), so the history it is
    // judged by holds what writes marked before it did:
    // without a base, before it reads the pad as it is now; with one, once the
    // base has been found and the batch placed in its text (a batch refused
    // there sends nothing), and it is carried over their edits like anyone's.
    let takes_place = !request.dry_run
        && (call.carries_approval()
            || request
                .edits
                .iter()
                .any(|edit| Change::between(edit.old_text, edit.new_text).removed > 0));
    let mut queued = None;
    if request.base.is_none() {
        if takes_place {
            queued = Some(take_place(socket)?);
        }
        if socket.since().and_then(Since::text).is_none() {
            socket.record_from_here()?;
        }
    }
    let (base, base_text) = base_text(socket, request)?;
    let plan = locate::plan(&base_text, &request.edits).map_err(|problem| {
        ToolError::new(format!(
            "Nothing was written. The edits are located in the text at base {base}, and {}: {}.",
            if request.edits.len() == 1 {
                "this one cannot be placed"
            } else {
                "these cannot be placed"
            },
            problem.message()
        ))
    })?;
    if request.base.is_some() && takes_place {
        queued = Some(take_place(socket)?);
    }
    let since = socket.since().expect("the session records from its base");
    if let Some(made) = made_since(&plan.operation, since, socket.authorship()) {
        // A retry of a batch that landed (its first call's outcome unknown):
        // made again, its insertions would be made twice.
        return Err(ToolError::new(format!(
            "Nothing was written: exactly this change was already made to pad \"{id}\" since base {base}, at revision {made}, by a write of this server's (an earlier call whose outcome was unknown did land). Call get_changes with this base to see it. To make the same change once more on purpose, state it against the base of the current text."
        )));
    }
    let rebased = rebase(
        plan.operation.clone(),
        since.entries().iter().map(|entry| &entry.operation),
    )
    .map_err(|_| untrusted_history(id))?;
    let change = Change::of_operation(&rebased.operation);
    if change.removed < Change::of_operation(&plan.operation).removed {
        // Someone deleted or rewrote text these edits replace: carried over
        // that, they would merge into it (or make it twice, when the earlier
        // change was this very batch landing before a retry).
        return Err(ToolError::new(format!(
            "Nothing was written: some of the text these edits replace or delete was changed since base {base} (by someone in the pad, or by an earlier call that did land), so making them now would repeat or tangle that change. Call get_changes with this base to see what changed, then state the edits against the base it gives."
        )));
    }
    check_limit(rebased.operation.base_len(), rebased.operation.target_len() as u64)?;
    let queue = queued.unwrap_or(Queue::Clear);
    let mut removal = judge_removal(socket, call, id, queue, &rebased.operation)?;
    if request.dry_run {
        let before = socket.text()?.clone();
        let effect = preview(before, socket.revision(), &plan, &rebased, id)?
            .with_people(socket, Some(&rebased.operation));
        return Ok((effect, base, removal.needs_person(), Undoable::default()));
    }
    let mut asks = removal.needs_person();
    if !asks {
        // Recorded before it is made; one the tally cannot keep asks.
        asks = !removal.record_unasked();
    }
    if asks {
        removal.give_back_turn();
        // The base and what the batch removes: carried over what happened
        // since, the removal can only shrink, and any shrinking is refused
        // above, so this holds at every revision since the person was asked
        // exactly when it holds now; a batch that landed also shrinks it.
        let state = format!("{base} {}", removal.removed());
        let state_of = move |_: &Rope| state.clone();
        let proposal = proposal(request, &base, &plan, &removal, &state_of);
        call.approve(&proposal, &pad_of(socket, call, queued)?)?;
    }
    let wire = serde_json::to_value(&plan.operation).unwrap_or_default();
    // People see this server's caret where the batch first changes the pad as it is now.
    let shown = first_change(&serde_json::to_value(&rebased.operation).unwrap_or_default());
    socket.edit_at(Mark::of(asks), base.revision, wire, shown)?;
    // The host's turn for the pad goes back once the edit is acknowledged.
    drop(removal);
    let effect = applied(socket, &plan, id)?.with_people(socket, None);
    Ok((effect, base, false, undo_fields(socket, call)))
}

/// The base the edits are stated against, checked against the pad's history,
/// and the text it names.
fn base_text(socket: &PadSocket, request: &Request) -> Result<(Base, Rope), ToolError> {
    let id = request.id;
    let since = socket.since().expect("the session records from its base");
    let Some(base) = &request.base else {
        let text = since
            .text()
            .expect("a session records from the text it holds");
        return Ok((Base::of(since.revision(), &text.to_string()), text.clone()));
    };
    match base.find(since) {
        Ok(text) => Ok((base.clone(), text.clone())),
        Err(Stale::Unreached) => Err(ToolError::new(format!(
            "Nothing was written: base {base} names revision {}, but pad \"{id}\" now has only {}. Rustpad has restarted or the pad expired since that read, so the text the edits were stated against is gone. Read the pad again (get_document with start_line) and state the edits against the new base.",
            base.revision,
            crate::text::count(socket.revision(), "revision")
        ))),
        Err(Stale::Rewritten) => Err(ToolError::new(format!(
            "Nothing was written: base {base} does not match pad \"{id}\"'s history. Its revision {} now holds another text, so Rustpad has restarted or the pad expired and was written again since that read. Read the pad again (get_document with start_line) and state the edits against the new base.",
            base.revision
        ))),
    }
}

/// The revision at which a write of this server's made exactly this batch
/// since its base, if one did: the batch carried to just before an entry of
/// a marked writer's is that entry.
fn made_since(
    operation: &OperationSeq,
    since: &Since,
    authorship: Option<&Authorship>,
) -> Option<u64> {
    let authorship = authorship?;
    let mut carried = operation.clone();
    for (revision, entry) in (since.revision() + 1..).zip(since.entries()) {
        if carried == entry.operation
            && !carried.is_noop()
            && authorship.class_at(revision) != Class::Unmarked
        {
            return Some(revision);
        }
        carried = carried.transform(&entry.operation).ok()?.0;
    }
    None
}

/// What a person is asked before a batch that removes much of the pad.
fn proposal<'a>(
    request: &'a Request,
    base: &Base,
    plan: &Plan,
    removal: &Removal,
    state_of: &'a dyn Fn(&Rope) -> String,
) -> Proposal<'a> {
    let id = request.id;
    let count = request.edits.len();
    let mut lines = plan.lines.clone();
    lines.sort_unstable();
    lines.dedup();
    let mut facts = vec![format!(
        "The edits are on {} {} of the text at revision {}.",
        if lines.len() == 1 { "line" } else { "lines" },
        guard::list_lines(&lines),
        base.revision
    )];
    facts.extend(removal.facts());
    match count {
        n if n <= EDITS_SHOWN => {}
        n if n == EDITS_SHOWN + 1 => facts.push(format!("Edit {n} is not shown below.")),
        n => facts.push(format!(
            "Edits {} to {n} are not shown below.",
            EDITS_SHOWN + 1
        )),
    }
    let values = request
        .edits
        .iter()
        .zip(EDIT_LABELS)
        .flat_map(|(edit, (old_label, new_label))| {
            [(old_label, edit.old_text), (new_label, edit.new_text)]
        })
        .collect();
    let edits = crate::text::count(count, "edit");
    Proposal {
        tool: TOOL.name,
        pad: id,
        arguments: request.given.iter().map(String::as_str).collect(),
        state_of,
        what: format!("apply {edits} to pad \"{id}\" as one change"),
        consequence: "What the edits remove cannot be restored.",
        facts,
        values,
        title: format!("Apply {edits} to pad \"{id}\"?"),
        hint: "Tick the box to make the edits; leave it unticked to change nothing.",
    }
}

/// One digest of every edit's values, in order.
fn edits_digest(edits: &[EditSpec]) -> String {
    let parts: Vec<String> = edits
        .iter()
        .map(|edit| {
            let line = edit.line.map(|l| l.to_string()).unwrap_or_default();
            digest::digest(&[edit.old_text, edit.new_text, &line])
        })
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    digest::digest(&parts)
}
