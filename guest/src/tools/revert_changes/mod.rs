//! `revert_changes`: takes chosen changes back out of a pad while keeping
//! everyone else's, for as long as Rustpad keeps the pad's history.
//!
//! What to take back is one write's change (the handle its result gave out)
//! or whose changes since a base. The undo is built from the history by
//! [`crate::rustpad::undo::take_back`], judged by the removal rule like any write (what it
//! removes may be people's text; what it puts back is not asked about), and
//! sent as one edit through the socket, so typing at that moment is kept.
//! Its mark says it restores ([`Mark::restoring`]): what it puts back counts
//! as people's text from then on, whoever first wrote it.

mod choose;
mod report;

use choose::undo_of;
use report::{Report, Reverted, kept_lines, nothing_to_take_back};

use ropey::Rope;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{By, ChangeHandle, Flag, GivenBase, PadId};
use super::catalogue::{removal_threshold, removals_counted};
use super::outcome::{ToolError, ToolResult, Untrusted};
use super::session::{Revertible, Undoable, Written, check_limit, judge_removal, pad_of, take_place, undo_fields, with_session};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::guard::Proposal;
use crate::guard::removal::Change;
use crate::rustpad::base::{Base, Stale};
use crate::rustpad::marks::Mark;
use crate::rustpad::since::Since;
use crate::rustpad::socket::{PadSocket, Queue, Track, first_change};
use crate::text::count;

pub static TOOL: Tool = Tool {
    name: "revert_changes",
    title: "Take changes back",
    summary: "Undo one write's change, or whose changes since a base, keeping everyone else's; dry_run previews a diff; asks a person first when it removes most of the pad",
    description: Description::Built(description),
    kind: Kind::Remove { idempotent: false },
    essential: false,
    schemas: Schemas::of::<Arguments, Written<Untrusted<Revertible<Reverted>>>>(),
    run,
};

fn description() -> String {
    format!(
        "Takes changes back out of a pad and keeps every other change, including what people type at the same moment. Pass change (the handle a write's result gave out) to take back exactly that write; or pass base (from a read or a write's base_before) with by: \"this_server\" (the default: this server's own writes since the base, as far as it can tell them from other deployments' and people's), \"everyone\" (the pad goes back to the text at the base), {{\"connection\": N}} (one connection that get_changes lists) or {{\"name\": \"…\"}} (the one person of that name in the pad now). Where someone has since typed inside text being taken back, their characters stay, and the result says on which lines. Possible only while Rustpad keeps the pad's history: not after Rustpad restarts or drops the pad, and a change or base from before then is refused. Languages are not taken back (set_language says what it replaced). Running the same revert again takes nothing back and says so. dry_run: true returns the diff and whether a person would be asked, and writes nothing. What a revert puts back then counts as people's text. A person is asked first (a dialog in the client, or a two-call confirm_token where the client cannot show one) when it would remove {}, {}.",
        removal_threshold(),
        removals_counted()
    )
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    /// The change a write's result gave out: take back exactly that write (leave base and by out)
    change: Option<ChangeHandle>,
    /// Take back changes made since this base (from a read, or a write's base_before); with by
    base: Option<GivenBase>,
    /// Whose changes since base to take back; this_server when left out
    by: Option<By>,
    /// Return the diff and whether a person would be asked, and write nothing
    #[serde(default)]
    dry_run: Flag,
}

/// What to take back, checked.
enum Target {
    Change(ChangeHandle),
    Since { base: Base, by: By },
}

impl Target {
    fn base(&self) -> &Base {
        match self {
            Target::Change(ChangeHandle(handle)) => &handle.before,
            Target::Since { base, .. } => base,
        }
    }

    /// What an approval is bound to besides the pad.
    fn given(&self) -> [String; 2] {
        match self {
            Target::Change(ChangeHandle(handle)) => [handle.to_string(), String::new()],
            Target::Since { base, by } => [base.to_string(), format!("{by:?}")],
        }
    }

    fn in_words(&self) -> String {
        match self {
            Target::Change(ChangeHandle(handle)) => {
                format!("the change of connection {}", handle.connection)
            }
            Target::Since { base, by } => {
                let whose = match by {
                    By::ThisServer => "this server's changes".to_string(),
                    By::Everyone => "every change".to_string(),
                    By::Connection(n) => format!("connection {n}'s changes"),
                    By::Name(_) => "the named person's changes".to_string(),
                };
                format!("{whose} since base {base}")
            }
        }
    }
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        change,
        base,
        by,
        dry_run: Flag(dry_run),
    } = call.arguments()?;
    let target = match (change, base, by) {
        (Some(change), None, None) => Target::Change(change),
        (None, Some(GivenBase(base)), by) => Target::Since {
            base,
            by: by.unwrap_or(By::ThisServer),
        },
        (Some(_), _, _) => {
            return Err(ToolError::new(
                "pass either change, or base (with by), not both: a change names its own base",
            ));
        }
        (None, None, _) => {
            return Err(ToolError::new(
                "say what to take back: change (the handle a write's result gave out), or base with by",
            ));
        }
    };
    let track = Track::text_since(target.base().revision)
        .with_authorship()
        .since_at_most(call.asked_at());
    if dry_run {
        let mut socket = PadSocket::look(call.url, id, track)?;
        let outcome = carry_out(&mut socket, id, &target, dry_run, call);
        socket.close();
        return outcome;
    }
    with_session(call, id, track, |socket| {
        carry_out(socket, id, &target, dry_run, call)
    })
}

/// Everything between the snapshot and the result; the socket stays open.
fn carry_out(
    socket: &mut PadSocket,
    id: &str,
    target: &Target,
    dry_run: bool,
    call: &Call,
) -> ToolResult {
    // A history that no longer holds the change or base is refused before
    // anything is sent (later entries cannot make it hold again).
    check_history(socket, socket.since().expect("the session records from its base"), id, target, call)?;
    // Then its place among the pad's writes: what it judges holds every
    // write marked before it, and an approval is used once.
    let queued = (!dry_run).then(|| take_place(socket)).transpose()?;
    let since = socket.since().expect("the session records from its base");
    let undo = undo_of(socket, since, id, target)?;
    let revision = socket.revision();
    let before = socket.text()?.clone();
    let mut after = before.clone();
    crate::rustpad::ot::apply_to_rope(&mut after, &undo.operation)
        .map_err(|_| untrusted_history(id))?;
    // Composed inverses can delete and put back the same text: what counts
    // is whether the text would change.
    if after == before {
        return nothing_to_take_back(call, socket, id, target, revision);
    }
    let change = Change::of_operation(&undo.operation);
    check_limit(before.len_chars(), undo.operation.target_len() as u64)?;
    let queue = queued.unwrap_or(Queue::Clear);
    let mut removal = judge_removal(socket, call, id, queue, &undo.operation)?;
    if dry_run {
        let kept = kept_lines(&undo, &after);
        let report = Report {
            id,
            revision,
            before: &before,
            after: &after,
            undo: &undo,
            change,
            kept,
            would_ask: Some(removal.needs_person()),
            undo_fields: Undoable::default(),
        };
        return report.into_result(call);
    }
    let mut asks = removal.needs_person();
    if !asks {
        asks = !removal.record_unasked();
    }
    if asks {
        removal.give_back_turn();
        let given = target.given();
        // What it removes can only shrink as people type (see
        // `rustpad::undo`), and shrinking is a change the person did not
        // see: the approval holds for exactly this amount.
        let state = format!("{} {}", given.join(" "), change.removed);
        let state_of = move |_: &Rope| state.clone();
        let what = format!("take back {} in pad \"{id}\"", target.in_words());
        let mut facts = vec![format!(
            "It takes back {} and would remove {} and put back {}.",
            count(undo.entries, "change"),
            count(change.removed, "character"),
            count(change.inserted, "character")
        )];
        facts.extend(removal.facts());
        let proposal = Proposal {
            tool: TOOL.name,
            pad: id,
            arguments: given.iter().map(String::as_str).collect(),
            state_of: &state_of,
            what,
            consequence: "What the revert removes can be put back with another revert only while Rustpad keeps this pad's history.",
            facts,
            values: Vec::new(),
            title: format!("Take changes back in pad \"{id}\"?"),
            hint: "Tick the box to take the changes back; leave it unticked to change nothing.",
        };
        call.approve(&proposal, &pad_of(socket, call, queued)?)?;
    }
    let wire = serde_json::to_value(&undo.operation).unwrap_or_default();
    let shown = first_change(&wire);
    socket.edit_at(Mark::restoring(asks), revision, wire, shown)?;
    drop(removal);
    let edit = socket
        .own_edit()
        .cloned()
        .ok_or_else(|| untrusted_history(id))?;
    // Where people's typing stays is known in the text the undo made only
    // if nothing but the rest of its mark came between (the mark's first
    // entry was in before the undo was worked out).
    let kept = if edit.revision == revision + Mark::restoring(asks).entries() as u64 {
        kept_lines(&undo, &edit.after)
    } else {
        Vec::new()
    };
    let report = Report {
        id,
        revision: edit.revision,
        before: &edit.before,
        after: &edit.after,
        undo: &undo,
        change,
        kept,
        would_ask: None,
        undo_fields: undo_fields(socket, call),
    };
    report.into_result(call)
}

/// Refuses a change or base the pad's history no longer holds: Rustpad
/// restarted, or dropped the pad and it was written again.
fn check_history(
    socket: &PadSocket,
    since: &Since,
    id: &str,
    target: &Target,
    call: &Call,
) -> Result<(), ToolError> {
    let base = target.base();
    let gone = "Nothing was written and nothing can be taken back: Rustpad keeps a pad's history only until it restarts or drops the pad, and";
    if let Target::Change(ChangeHandle(handle)) = target
        && handle.started != call.rustpad_started()?
    {
        return Err(ToolError::new(format!(
            "{gone} Rustpad has restarted since change {handle} was made, so the history that held it is gone. Read the pad (get_document) to see what it holds now."
        )));
    }
    match base.find(since) {
        Ok(_) => Ok(()),
        Err(Stale::Unreached) => Err(ToolError::new(format!(
            "{gone} base {base} names revision {}, but pad \"{id}\" now has only {}: the history it was read from is gone.",
            base.revision,
            count(socket.revision(), "revision")
        ))),
        Err(Stale::Rewritten) => Err(ToolError::new(format!(
            "{gone} base {base} does not match pad \"{id}\"'s history: revision {} now holds another text, so the pad was dropped or Rustpad restarted and it was written again.",
            base.revision
        ))),
    }
}

fn untrusted_history(id: &str) -> ToolError {
    ToolError::new(format!(
        "Rustpad's history of pad \"{id}\" does not fit together, so this server cannot work out what to take back; nothing was written by this call unless a later read shows otherwise."
    ))
}

