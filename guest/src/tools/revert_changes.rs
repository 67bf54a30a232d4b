//! `revert_changes`: takes chosen changes back out of a pad while keeping
//! everyone else's, for as long as Rustpad keeps the pad's history.
//!
//! What to take back is one write's change (the handle its result gave out)
//! or whose changes since a base. The undo is built from the history by
//! [`undo::take_back`], judged by the removal rule like any write (what it
//! removes may be people's text; what it puts back is not asked about), and
//! sent as one edit through the socket, so typing at that moment is kept.
//! Its mark says it restores ([`Mark::restoring`]): what it puts back counts
//! as people's text from then on, whoever first wrote it.

use ropey::Rope;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{By, ChangeHandle, Flag, GivenBase, PadId};
use super::catalogue::{EPHEMERAL, removal_threshold, removals_counted};
use super::diff::{self, Diff};
use super::schema::{self, Fields, described};
use super::session::{check_limit, judge_removal, pad_of, take_place, undo_fields};
use super::tool::{Annotations, Call, Tool};
use crate::guard::Proposal;
use crate::guard::removal::Change;
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::base::{Base, Stale};
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::Builder;
use crate::rustpad::rebase::{Lean, position_after};
use crate::rustpad::since::Since;
use crate::rustpad::socket::{PadSocket, Queue, Track, first_change};
use crate::rustpad::undo::{self, Undo};
use crate::text::count;

pub static TOOL: Tool = Tool {
    name: "revert_changes",
    title: "Take changes back",
    summary: "Undo one write's change, or whose changes since a base, keeping everyone else's; dry_run previews a diff; asks a person first when it removes most of the pad",
    description,
    annotations: Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    },
    essential: false,
    asks_first: true,
    waits: false,
    input: Arguments::json_schema,
    output,
    run,
};

fn description() -> String {
    format!(
        "Takes changes back out of a pad and keeps every other change, including what people type at the same moment. Pass change (the handle a write's result gave out) to take back exactly that write; or pass base (from a read or a write's base_before) with by: \"this_server\" (the default: this server's own writes since the base, as far as it can tell them from other deployments' and people's), \"everyone\" (the pad goes back to the text at the base), {{\"connection\": N}} (one connection that get_changes lists) or {{\"name\": \"…\"}} (the one person of that name in the pad now). Where someone has since typed inside text being taken back, their characters stay, and the result says on which lines. Possible only while Rustpad keeps the pad's history: not after Rustpad restarts or drops the pad, and a change or base from before then is refused. Languages are not taken back (set_language says what it replaced). Running the same revert again takes nothing back and says so. dry_run: true returns the diff and whether a person would be asked, and writes nothing. What a revert puts back then counts as people's text. A person is asked first (a dialog in the client, or a two-call confirm_token where the client cannot show one) when it would remove {}, {}.",
        removal_threshold(),
        removals_counted()
    )
}

fn output() -> Fields {
    schema::written(
        schema::joined(
            schema::joined(schema::untrusted(), schema::undoable()),
            json!({
                "revision": described(schema::integer(), "The pad's revision after the revert (on a dry run or when nothing was taken back: now)"),
                "dry_run": schema::boolean(),
                "would_ask": described(schema::boolean(), "Dry run only: whether the revert would ask a person first"),
                "taken_back": described(schema::integer(), "How many changes were taken back (0: nothing left to take back)"),
                "restored_characters": described(schema::integer(), "Characters put back"),
                "removed_characters": described(schema::integer(), "Characters removed"),
                "lines": {
                    "type": "array",
                    "items": schema::line_number(),
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "The first and last line the revert changed, in the text after it; absent when it changed nothing",
                },
                "kept_lines": {
                    "type": "array",
                    "items": schema::line_number(),
                    "description": "Lines where someone had typed inside text being taken back: their characters stay there",
                },
                "diff": described(schema::string(), "Unified diff of the revert, pad text with control characters removed"),
                "diff_cut": described(schema::boolean(), "Whether the diff was cut to fit the result"),
            }),
        ),
        &[
            "untrusted",
            "source",
            "revision",
            "dry_run",
            "taken_back",
            "restored_characters",
            "removed_characters",
            "kept_lines",
            "diff",
            "diff_cut",
        ],
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
    let mut socket = if dry_run {
        PadSocket::look(call.url, id, track)?
    } else {
        PadSocket::join(call.url, id, track)?
    };
    let outcome = carry_out(&mut socket, id, &target, dry_run, call);
    socket.close();
    outcome
}

/// Everything between the snapshot and the result; the socket stays open.
fn carry_out(
    socket: &mut PadSocket,
    id: &str,
    target: &Target,
    dry_run: bool,
    call: &Call,
) -> Result<Value, ToolError> {
    // Its place among the pad's writes first: what it judges holds every
    // write marked before it, and an approval is used once.
    let queued = (!dry_run).then(|| take_place(socket)).transpose()?;
    let since = socket.since().expect("the session records from its base");
    check_history(socket, since, id, target, call)?;
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
    check_limit(undo.operation.target_len())?;
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
            undo_fields: json!({}),
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
    // if nothing but the rest of its mark came between (its first entry was
    // in before the undo was worked out).
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
    if let Target::Change(ChangeHandle(handle)) = target {
        if handle.started != call.rustpad_started()? {
            return Err(ToolError::new(format!(
                "{gone} Rustpad has restarted since change {handle} was made, so the history that held it is gone. Read the pad (get_document) to see what it holds now."
            )));
        }
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

/// The undo of what `target` chooses.
fn undo_of(socket: &PadSocket, since: &Since, id: &str, target: &Target) -> Result<Undo, ToolError> {
    let authorship = socket
        .authorship()
        .expect("the session follows who wrote what");
    let connection = match target {
        Target::Change(ChangeHandle(handle)) => {
            let made = since.entries().iter().any(|entry| {
                entry.author == handle.connection && !entry.operation.is_noop()
            });
            if !made {
                return Err(ToolError::new(format!(
                    "Nothing was written: pad \"{id}\"'s history holds no change by connection {} after base {}, so change {handle} was never made (its write failed before its edit landed).",
                    handle.connection, handle.before
                )));
            }
            Some(handle.connection)
        }
        Target::Since { by: By::Connection(n), .. } => Some(*n),
        Target::Since { by: By::Name(name), .. } => Some(one_named(socket, since, id, name)?),
        Target::Since { by: By::Everyone, .. } => return Ok(back_to_base(socket, since, id)?),
        Target::Since { by: By::ThisServer, .. } => None,
    };
    let chosen = |_, author| match connection {
        Some(connection) => author == connection,
        None => authorship.is_own(author),
    };
    let mut reverts: Vec<u64> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in since.entries() {
        let revert = authorship.class(entry.author).restores() && !entry.operation.is_noop();
        if revert && Some(entry.author) != connection && seen.insert(entry.author) {
            reverts.push(entry.author);
        }
    }
    undo::take_back_once(since, chosen, &reverts).map_err(|_| untrusted_history(id))
}

/// The pad back at the text of its base: the shortest replacement from the
/// text now (what they share at both ends stays).
fn back_to_base(socket: &PadSocket, since: &Since, id: &str) -> Result<Undo, ToolError> {
    let now = socket.text()?.to_string();
    let then = since.text().ok_or_else(|| untrusted_history(id))?.to_string();
    let (prefix, suffix) = crate::text::shared_ends(&now, &then);
    let then_chars: Vec<char> = then.chars().collect();
    let middle: String = then_chars[prefix..then_chars.len() - suffix].iter().collect();
    let now_chars = crate::text::char_len(&now);
    let operation = Builder::new()
        .retain(prefix)
        .delete(now_chars - prefix - suffix)
        .insert(&middle)
        .retain(suffix)
        .build();
    let entries = since
        .entries()
        .iter()
        .filter(|entry| !entry.operation.is_noop())
        .count();
    Ok(Undo {
        operation,
        entries,
        kept_inside: Vec::new(),
    })
}

/// The one connection in the pad now called `name`, or a refusal that
/// names the connections to choose from.
fn one_named(socket: &PadSocket, since: &Since, id: &str, name: &str) -> Result<u64, ToolError> {
    let named = socket.connections_named(name);
    if let [one] = named.as_slice() {
        return Ok(*one);
    }
    let mut authors: Vec<u64> = since
        .entries()
        .iter()
        .filter(|entry| !entry.operation.is_noop())
        .map(|entry| entry.author)
        .collect();
    authors.sort_unstable();
    authors.dedup();
    let listed: Vec<String> = authors.iter().take(20).map(u64::to_string).collect();
    let choose = if listed.is_empty() {
        "nobody has changed the pad since the base".to_string()
    } else {
        format!(
            "the connections that changed it since the base are {}{}",
            listed.join(", "),
            if authors.len() > listed.len() { ", …" } else { "" }
        )
    };
    let problem = if named.is_empty() {
        "nobody of that name is in the pad now (names are known only while people have it open)".to_string()
    } else {
        let numbers: Vec<String> = named.iter().map(u64::to_string).collect();
        format!("{} connections in the pad have that name ({})", named.len(), numbers.join(", "))
    };
    Err(ToolError::new(format!(
        "Nothing was written to pad \"{id}\": {problem}; {choose}. Pass by: {{\"connection\": N}} with one of them (get_changes lists each author's connections)."
    )))
}

/// The lines where later typing inside taken-back text stays, in `after`.
fn kept_lines(undo: &Undo, after: &Rope) -> Vec<usize> {
    let mut lines: Vec<usize> = undo
        .kept_inside
        .iter()
        .map(|at| position_after(&undo.operation, *at, Lean::Start) as usize)
        .map(|at| after.char_to_line(at.min(after.len_chars())) + 1)
        .collect();
    lines.dedup();
    lines
}

fn untrusted_history(id: &str) -> ToolError {
    ToolError::new(format!(
        "Rustpad's history of pad \"{id}\" does not fit together, so this server cannot work out what to take back; nothing was written by this call unless a later read shows otherwise."
    ))
}

/// The result when there is nothing left to take back.
fn nothing_to_take_back(
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
struct Report<'a> {
    id: &'a str,
    revision: u64,
    before: &'a Rope,
    after: &'a Rope,
    undo: &'a Undo,
    change: Change,
    kept: Vec<usize>,
    would_ask: Option<bool>,
    undo_fields: Value,
}

impl Report<'_> {
    fn into_result(self, call: &Call) -> ToolResult {
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
