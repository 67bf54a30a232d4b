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
use serde_json::{Map, Value, json};

use super::args::Args;
use super::catalogue::{EPHEMERAL, ToolName};
use super::diff::{self, Diff};
use super::locate::{self, EditSpec, Plan};
use super::write::pad_of;
use crate::config::RustpadUrl;
use crate::guard::removal::{Change, Ledger, Removal, go_unasked};
use crate::guard::{self, Guard, Proposal, seal};
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::authorship::Authorship;
use crate::rustpad::base::{Base, Stale};
use crate::rustpad::marks::{Class, Mark};
use crate::rustpad::ot::apply_to_rope;
use crate::rustpad::rebase::{Rebased, rebase};
use crate::rustpad::since::Since;
use crate::rustpad::socket::{PadSocket, Track};
use crate::text::MAX_DOCUMENT_CHARS;

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

/// The pad before and after the batch, with where each edit's text landed.
struct Effect {
    revision: u64,
    before: Rope,
    after: Rope,
    /// Per edit, in the order given: its new text's range in `after`.
    placed: Vec<(u64, u64)>,
}

impl Effect {
    /// `operation` applied to `before`, with each edit's new text carried to
    /// where it lands.
    fn of(
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
        })
    }
}

pub fn edit_document(url: &RustpadUrl, args: &Args, guard: &Guard) -> ToolResult {
    let id = args.id()?;
    let edits = args.edits()?;
    let base = args.base()?;
    let given = [
        base.as_ref().map(Base::to_string).unwrap_or_default(),
        edits_digest(&edits),
    ];
    let request = Request {
        id,
        edits,
        base,
        dry_run: args.flag("dry_run")?,
        given,
    };
    // An answer names the revision the person was asked at; without a base,
    // the text there is what the edits were stated against.
    let track = match &request.base {
        Some(base) => Track::text_since(base.revision),
        None => Track::TEXT,
    }
    .with_authorship()
    .since_at_most(guard.asked_at());
    // A dry run changes nothing, so it looks without joining.
    let mut socket = if request.dry_run {
        PadSocket::look(url, request.id, track)?
    } else {
        PadSocket::join(url, request.id, track)?
    };
    let outcome = run(&mut socket, &request, guard);
    socket.close();
    let (effect, base, would_ask) = outcome?;
    report(url, &request, &effect, &base, would_ask)
}

/// Everything between the snapshot and the acknowledgement; the socket stays open.
fn run(
    socket: &mut PadSocket,
    request: &Request,
    guard: &Guard,
) -> Result<(Effect, Base, bool), ToolError> {
    let id = request.id;
    if request.base.is_none() && socket.since().and_then(Since::text).is_none() {
        socket.record_from_here()?;
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
    let target = rebased.operation.target_len();
    if target > MAX_DOCUMENT_CHARS {
        return Err(ToolError::new(format!(
            "Nothing was written: with these edits pad \"{id}\" would be {target} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS}."
        )));
    }
    let pad_chars = socket.document().len();
    let at_work = |author| socket.at_work(author);
    let removal = Ledger::of(id, socket.authorship(), &at_work).judge(pad_chars, change);
    if request.dry_run {
        let before = socket.text()?.clone();
        let effect = preview(before, socket.revision(), &plan, &rebased, id)?;
        return Ok((effect, base, removal.needs_person()));
    }
    let asks = removal.needs_person() || !go_unasked(id, &removal);
    if asks {
        // The base and what the batch removes: carried over what happened
        // since, the removal can only shrink, and any shrinking is refused
        // above, so this holds at every revision since the person was asked
        // exactly when it holds now; a batch that landed also shrinks it.
        let state = format!("{base} {}", removal.removed());
        let state_of = move |_: &Rope| state.clone();
        let proposal = proposal(request, &base, &plan, &removal, &state_of);
        guard.approve(&proposal, &pad_of(socket)?)?;
    }
    let wire = serde_json::to_value(&plan.operation).unwrap_or_default();
    socket.edit_at(Mark::of(asks), base.revision, wire)?;
    Ok((applied(socket, &plan, id)?, base, false))
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
            "Nothing was written: base {base} names revision {}, but pad \"{id}\" now has only {} revision(s). Rustpad has restarted or the pad expired since that read, so the text the edits were stated against is gone. Read the pad again (get_document with start_line) and state the edits against the new base.",
            base.revision,
            socket.revision()
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
            && authorship.class(entry.author) != Class::Unmarked
        {
            return Some(revision);
        }
        carried = carried.transform(&entry.operation).ok()?.0;
    }
    None
}

/// What the batch would do to the pad as it stands, for a dry run.
fn preview(
    before: Rope,
    revision: u64,
    plan: &Plan,
    rebased: &Rebased,
    id: &str,
) -> Result<Effect, ToolError> {
    Effect::of(revision, before, &rebased.operation, plan, rebased, id)
}

/// What the batch did, from the history entry that acknowledged it.
fn applied(socket: &PadSocket, plan: &Plan, id: &str) -> Result<Effect, ToolError> {
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

fn untrusted_history(id: &str) -> ToolError {
    ToolError::new(format!(
        "Rustpad's history of pad \"{id}\" does not fit together, so this server cannot place the edits; nothing was written by this call unless a later read shows otherwise. Read the pad again before editing it."
    ))
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
    let edits = if count == 1 {
        "1 edit".to_string()
    } else {
        format!("{count} edits")
    };
    Proposal {
        tool: ToolName::EditDocument,
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
            seal::digest(&[edit.old_text, edit.new_text, &line])
        })
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    seal::digest(&parts)
}

fn report(
    url: &RustpadUrl,
    request: &Request,
    effect: &Effect,
    base: &Base,
    would_ask: bool,
) -> ToolResult {
    let id = request.id;
    let after_text = effect.after.to_string();
    let (new_revision, new_base) = if request.dry_run {
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
    let ranges: Vec<Value> = effect
        .placed
        .iter()
        .enumerate()
        .map(|(index, (start, end))| {
            let (first, last) = line_range(&effect.after, *start, *end);
            json!({ "edit": index + 1, "start_line": first, "end_line": last })
        })
        .collect();
    let count = request.edits.len();
    let edits = if count == 1 {
        "1 edit".to_string()
    } else {
        format!("{count} edits")
    };
    let mut notes = vec![EPHEMERAL.to_string()];
    if cut {
        notes.push(format!(
            "The diff was cut at {} characters; read the changed lines with get_document and the line ranges above.",
            diff::MAX_DIFF_CHARS
        ));
    }
    let mut payload = Map::new();
    payload.insert("id".into(), json!(id));
    payload.insert("url".into(), json!(url.share_link(id)));
    payload.insert("characters".into(), json!(effect.after.len_chars()));
    payload.insert("revision".into(), json!(new_revision));
    payload.insert("base".into(), json!(new_base.to_string()));
    payload.insert("dry_run".into(), json!(request.dry_run));
    payload.insert("edits".into(), json!(ranges));
    payload.insert("diff".into(), json!(diff));
    payload.insert("diff_cut".into(), json!(cut));
    let summary = if request.dry_run {
        payload.insert("would_ask".into(), json!(would_ask));
        let asking = if would_ask {
            "Made for real, it would ask a person first."
        } else {
            "Made for real, it would not need a person's approval."
        };
        format!(
            "Dry run: {edits} stated against base {base} would change pad \"{id}\" as the diff below shows; nothing was written. {asking} To make the edits, call edit_document again with the same edits and base {base}, without dry_run."
        )
    } else {
        format!(
            "Applied {edits} to pad \"{id}\" as one change: it is now at revision {new_revision} (base {new_base}, {} characters).\nLink: {}",
            effect.after.len_chars(),
            url.share_link(id)
        )
    };
    payload.insert("note".into(), json!(notes.join(" ")));
    result::untrusted_listing(&summary, &diff, payload)
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
