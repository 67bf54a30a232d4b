//! `replace_in_document`: an exact string replaced where it occurs, editing
//! only the matched ranges; a person is asked first when more than one place
//! changes or the change removes much of the pad (the removal rule).

use operational_transform::OperationSeq;
use ropey::Rope;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Flag, NonEmptyText, PadId, Text};
use super::catalogue::removals_counted;
use super::outcome::{ToolError, ToolResult};
use super::session::{
    Revertible, Written, check_limit, judge_removal, pad_of, take_place, text_of, undo_fields,
    with_session, written,
};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::digest;
use crate::guard::removal::{Change, Removal};
use crate::guard::{self, Proposal};
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::{Builder, find_literal};
use crate::rustpad::socket::{Queue, Track};
use crate::text::{char_len, shared_ends};

pub static TOOL: Tool = Tool {
    name: "replace_in_document",
    title: "Find and replace in a pad",
    summary: "Replace an exact string via OT; asks a person first when it changes more than one place or removes most of the pad",
    description: Description::Built(description),
    kind: Kind::Remove { idempotent: false },
    essential: false,
    schemas: Schemas::of::<Arguments, Written<Revertible<Replacements>>>(),
    run,
};

fn description() -> String {
    format!(
        "Replaces an exact string (no regular expressions) in a pad, editing only the matched ranges so concurrent edits elsewhere survive. Matches are found left to right without overlap. By default the string must occur exactly once; set replace_all to change every occurrence. A person is asked to confirm first (a dialog in the client, or a two-call confirm_token where the client cannot show one) when more than one occurrence would change, or when the change would remove {}. What a replacement shares with the text it replaces at either end is not counted as removed, so fixing a typo never asks.",
        removals_counted()
    )
}

/// What `replace_in_document` adds to a write's result.
#[derive(Serialize, JsonSchema)]
struct Replacements {
    replacements: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    /// The exact string to find (literal, not a regular expression)
    #[serde(borrow)]
    search: NonEmptyText<'a>,
    /// What to put in its place; may be empty to delete the match
    #[serde(borrow)]
    replace: Text<'a>,
    /// Replace every occurrence instead of requiring exactly one
    #[serde(default)]
    replace_all: Flag,
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        search: NonEmptyText(search),
        replace: Text(replace),
        replace_all: Flag(replace_all),
    } = call.arguments()?;
    if search == replace {
        return Err(ToolError::new(
            "search and replace are identical, so there is nothing to change",
        ));
    }
    let each = Change::between(search, replace);
    let state_of = |text: &Rope| {
        let text = text.to_string();
        let count = find_literal(&text, search).len();
        replace_state(&text, search, replace, count, each)
    };
    let track = Track::TEXT
        .with_authorship()
        .since_at_most(call.asked_at());
    let (replacements, after, undo) = with_session(call, id, track, |socket| {
        // A replacement that removes text, or may use an approval, takes
        // its place among the pad's writes first, so what it reads below
        // includes what writes marked before it did.
        let queued = (each.removed > 0 || call.carries_approval())
            .then(|| take_place(socket))
            .transpose()?;
        let text = text_of(socket)?;
        let matches = find_literal(&text, search);
        let count = matches.len();
        if count == 0 {
            return Err(ToolError::new(format!(
                "the search string was not found in pad \"{id}\"; nothing was changed"
            )));
        }
        if count > 1 && !replace_all {
            return Err(ToolError::new(format!(
                "the search string occurs {count} times in pad \"{id}\"; pass replace_all=true to replace every one, or use a longer search string that occurs once"
            )));
        }
        let pad_chars = socket.document().len();
        // The matches do not overlap, so they remove at most the pad; what
        // they insert is counted in 64 bits, past what a wasm32 `usize` holds.
        let kept = pad_chars - each.times(count).removed;
        check_limit(pad_chars, kept as u64 + each.inserted as u64 * count as u64)?;
        let operation = replace_operation(pad_chars, &matches, search, replace);
        let queue = queued.unwrap_or(Queue::Clear);
        let mut removal = judge_removal(socket, call, id, queue, &operation)?;
        let mut asks = count > 1 || removal.needs_person();
        if !asks {
            // Recorded before it is made; one the tally cannot keep asks.
            asks = !removal.record_unasked();
        }
        if asks {
            removal.give_back_turn();
            let proposal =
                replace_proposal(id, search, replace, &text, &matches, &removal, &state_of);
            call.approve(&proposal, &pad_of(socket, call, queued)?)?;
        }
        let wire = serde_json::to_value(&operation).unwrap_or_default();
        socket.edit(Mark::of(asks), wire)?;
        // The host's turn for the pad goes back once the edit is acknowledged.
        drop(removal);
        Ok((count, socket.document().len(), undo_fields(socket, call)))
    })?;
    let plural = if replacements == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    written(
        call.url,
        id,
        format!("Replaced {replacements} {plural} in pad \"{id}\"."),
        after,
        Revertible {
            undo,
            own: Replacements { replacements },
        },
    )
}

/// What a person is asked before a replace: how many places change, where,
/// and how much of the pad goes.
fn replace_proposal<'a>(
    id: &'a str,
    search: &'a str,
    replace: &'a str,
    text: &str,
    matches: &[(usize, usize)],
    removal: &Removal,
    state_of: &'a dyn Fn(&Rope) -> String,
) -> Proposal<'a> {
    let count = matches.len();
    let mut lines = match_lines(text, matches);
    lines.dedup();
    let (occurrences, where_, consequence, hint) = if count == 1 {
        (
            "1 occurrence".to_string(),
            format!("The match is on line {}.", lines[0]),
            "What is replaced cannot be restored.",
            "Tick the box to replace it; leave it unticked to change nothing.",
        )
    } else {
        let on_lines = if lines.len() == 1 { "line" } else { "lines" };
        (
            format!("{count} occurrences"),
            format!(
                "The matches are on {on_lines} {}.",
                guard::list_lines(&lines)
            ),
            "What is replaced cannot be restored, and a search string that is shorter than intended matches in places nobody looked at.",
            "Tick the box to replace them all; leave it unticked to change nothing.",
        )
    };
    let mut facts = vec![where_];
    facts.extend(removal.facts());
    Proposal {
        tool: TOOL.name,
        pad: id,
        arguments: vec![search, replace],
        state_of,
        what: format!("replace {occurrences} in pad \"{id}\""),
        consequence,
        facts,
        values: vec![("Search", search), ("Replace with", replace)],
        title: format!("Replace {occurrences} in pad \"{id}\"?"),
        hint,
    }
}

/// One operation replacing every match, touching only what differs: the
/// ends a match shares with its replacement are retained.
fn replace_operation(
    pad_chars: usize,
    matches: &[(usize, usize)],
    search: &str,
    replace: &str,
) -> OperationSeq {
    let (prefix, suffix) = shared_ends(search, replace);
    let middle: String = replace
        .chars()
        .skip(prefix)
        .take(char_len(replace) - prefix - suffix)
        .collect();
    let mut builder = Builder::new();
    let mut at = 0;
    for (start, length) in matches {
        builder = builder
            .retain(start + prefix - at)
            .delete(length - prefix - suffix)
            .insert(&middle);
        at = start + length - suffix;
    }
    builder.retain(pad_chars - at).build()
}

/// What a replace approval is bound to in a text with `count` matches: the
/// binding below and the characters the replacement would remove.
fn replace_state(text: &str, search: &str, replace: &str, count: usize, each: Change) -> String {
    format!(
        "{} {}",
        replace_binding(text, search, replace, count),
        each.times(count).removed
    )
}

/// What a replace approval is bound to besides its values: the match count,
/// which a replacement changes, unless the result holds as many matches as
/// before (`a` → `ab`, or `ab` → `b` in `aab`). Then the count cannot tell
/// "not yet done" from "done", and a replayed approval (at another replica,
/// whose record of spent approvals is its own) would replace a second time; so
/// the approval is bound to the exact content instead, which the first use
/// changes. The price: an edit by anyone while the dialog is open asks again.
/// (The approval also checks that this held at every revision since the
/// person was asked; see `guard::standing`.)
fn replace_binding(text: &str, search: &str, replace: &str, count: usize) -> String {
    if text.replace(search, replace).matches(search).count() == count {
        format!("{count} {}", digest::fingerprint(text))
    } else {
        count.to_string()
    }
}

/// The 1-based line on which each match starts (matches are in code points).
fn match_lines(text: &str, matches: &[(usize, usize)]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(matches.len());
    let (mut line, mut at) = (1, 0);
    let mut chars = text.chars();
    for (start, _) in matches {
        line += chars
            .by_ref()
            .take(start - at)
            .filter(|c| *c == '\n')
            .count();
        at = *start;
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn match_lines_counts_newlines_before_each_match() {
        let text = "a\nb a\n\na";
        let matches = find_literal(text, "a");
        assert_eq!(match_lines(text, &matches), vec![1, 2, 4]);
    }

    #[test]
    fn a_replace_touches_only_what_differs() {
        let text = "teh cat, teh dog";
        let matches = find_literal(text, "teh");
        assert_eq!(
            serde_json::to_value(replace_operation(16, &matches, "teh", "the")).unwrap(),
            json!([1, "he", -2, 7, "he", -2, 4])
        );
        let mut document = crate::rustpad::ot::Document::with_text();
        let seed = json!([text]).to_string();
        document
            .apply(&serde_json::from_str(&seed).unwrap())
            .unwrap();
        let wire = serde_json::to_string(&replace_operation(16, &matches, "teh", "the")).unwrap();
        document
            .apply(&serde_json::from_str(&wire).unwrap())
            .unwrap();
        assert_eq!(document.text().unwrap(), "the cat, the dog");
    }

    #[test]
    fn a_replace_that_keeps_its_match_count_is_bound_to_the_content() {
        // The count changes: binding to it is enough.
        assert_eq!(replace_binding("a a", "a", "b", 2), "2");
        // The count survives the replacement: bind to the exact content.
        for (text, search, replace) in [("a a", "a", "ab"), ("aab aab", "ab", "b")] {
            let binding = replace_binding(text, search, replace, 2);
            assert_eq!(binding, format!("2 {}", digest::fingerprint(text)));
            let done = text.replace(search, replace);
            assert_ne!(replace_binding(&done, search, replace, 2), binding);
        }
    }
}
