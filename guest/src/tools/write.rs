//! The write tools. Each one joins the pad as `rustpad-mcp`, computes one
//! whole-document operation against the snapshot it holds, sends it and waits
//! for Rustpad's acknowledgement; Rustpad transforms it over whatever people
//! typed meanwhile, so nobody's keystrokes are lost.

use ropey::Rope;
use serde_json::{Value, json};

use super::args::Args;
use super::catalogue::EPHEMERAL;
use super::catalogue::ToolName;
use crate::config::RustpadUrl;
use crate::guard::removal::{Change, Ledger, Removal, go_unasked};
use crate::guard::{self, Guard, Pad, Proposal, seal};
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::{Builder, find_literal};
use crate::rustpad::socket::{PadSocket, PadState, Track};
use crate::text::{MAX_DOCUMENT_CHARS, char_len, shared_ends};

/// Length of generated pad ids, from `[a-z0-9]`.
const GENERATED_ID_CHARS: usize = 12;

/// Runs `work` on a joined session and always closes the socket afterwards.
fn with_session<T>(
    url: &RustpadUrl,
    id: &str,
    track: Track,
    work: impl FnOnce(&mut PadSocket) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut socket = PadSocket::join(url, id, track)?;
    let outcome = work(&mut socket);
    socket.close();
    outcome
}

/// The pad's text, from a session that was opened to keep it.
fn text_of(socket: &PadSocket) -> Result<String, ToolError> {
    socket
        .document()
        .text()
        .ok_or_else(|| ToolError::new("internal error: the session did not keep the pad's text"))
}

/// The pad as the guard checks an approval against it.
pub(super) fn pad_of(state: &PadState) -> Result<Pad<'_>, ToolError> {
    Ok(Pad {
        revision: state.revision(),
        text: state.text()?,
        record: state.since(),
        connection: state
            .me()
            .ok_or_else(|| ToolError::new("Rustpad never told this client its identity"))?,
    })
}

fn check_limit(length: usize) -> Result<(), ToolError> {
    if length > MAX_DOCUMENT_CHARS {
        return Err(ToolError::new(format!(
            "the pad would be {length} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS}; nothing was written"
        )));
    }
    Ok(())
}

fn outcome(url: &RustpadUrl, id: &str, characters: usize, note: &str, extra: Value) -> Value {
    let mut structured = json!({
        "id": id,
        "url": url.share_link(id),
        "characters": characters,
        "note": note,
    });
    if let (Some(all), Value::Object(extra)) = (structured.as_object_mut(), extra) {
        all.extend(extra);
    }
    structured
}

/// The result of a write that changed the pad: the sentence, then the link.
fn written(
    url: &RustpadUrl,
    id: &str,
    sentence: String,
    characters: usize,
    extra: Value,
) -> ToolResult {
    let link = url.share_link(id);
    result::reported(
        format!("{sentence}\nLink: {link}"),
        outcome(url, id, characters, EPHEMERAL, extra),
    )
}

/// A random pad id from the host's CSPRNG, unbiased over `[a-z0-9]`.
fn random_id() -> String {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut id = String::with_capacity(GENERATED_ID_CHARS);
    while id.len() < GENERATED_ID_CHARS {
        for byte in wasip2::random::random::get_random_bytes(32) {
            // 252 = 7 × 36: rejecting the top values keeps every letter equally likely.
            if byte < 252 && id.len() < GENERATED_ID_CHARS {
                id.push(ALPHABET[usize::from(byte) % 36] as char);
            }
        }
    }
    id
}

pub fn create_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = match args.optional_id()? {
        Some(id) => id.to_string(),
        None => random_id(),
    };
    let text = args.optional_text("text")?.unwrap_or("");
    let language = args.language()?;
    let characters = with_session(url, &id, Track::LENGTH, |socket| {
        if !socket.document().is_empty() {
            return Err(ToolError::new(format!(
                "pad \"{id}\" already has content; use set_document to replace it or append_to_document to add to it"
            )));
        }
        if !text.is_empty() {
            let operation = Builder::new().insert(text).finish();
            socket.edit(Mark::Writer, operation)?;
        }
        if let Some(language) = language {
            socket.set_language(language).map_err(|error| {
                let written = if text.is_empty() { "The pad was created" } else { "The text was written" };
                ToolError::new(format!(
                    "{written}, but setting its language failed: {} Call set_language to try again; do not call create_document again.",
                    error.message()
                ))
            })?;
        }
        Ok(socket.document().len())
    })?;
    let link = url.share_link(&id);
    let sentence = if text.is_empty() {
        format!("Created pad \"{id}\".\nLink: {link}\n{EPHEMERAL}")
    } else {
        format!(
            "Created pad \"{id}\" with {} characters.\nLink: {link}\n{EPHEMERAL}",
            char_len(text)
        )
    };
    let mut extra = json!({ "created": true });
    if let Some(language) = language {
        extra["language"] = json!(language);
    }
    result::reported(sentence, outcome(url, &id, characters, EPHEMERAL, extra))
}

pub fn set_document(url: &RustpadUrl, args: &Args, guard: &Guard) -> ToolResult {
    let id = args.id()?;
    let text = args.text("text", 0)?;
    let new_length = char_len(text);
    let new_fingerprint = seal::fingerprint(text);
    let content = |text: &Rope| seal::fingerprint(&text.to_string());
    let track = Track::TEXT.since_at_most(guard.asked_at());
    let (before, after, changed) = with_session(url, id, track, |socket| {
        let before = socket.document().len();
        let old = text_of(socket)?;
        if old == text {
            return Ok((before, before, false));
        }
        if before > 0 {
            let proposal = Proposal {
                tool: ToolName::SetDocument,
                pad: id,
                arguments: vec![&new_fingerprint],
                state_of: &content,
                what: format!(
                    "replace the entire content of pad \"{id}\" ({before} characters) with new content ({new_length} characters)"
                ),
                consequence: "The previous content cannot be restored.",
                facts: vec![format!(
                    "Lines now: {}; lines after: {}.",
                    line_count(&old),
                    line_count(text)
                )],
                values: Vec::new(),
                title: format!("Replace the content of pad \"{id}\"?"),
                hint: "Tick the box to replace it; leave it unticked to keep the pad as it is.",
            };
            guard.approve(&proposal, &pad_of(socket)?)?;
        }
        let operation = Builder::new().delete(before).insert(text).finish();
        // Whatever this removes, a person approved (a non-empty pad asks).
        socket.edit(Mark::of(before > 0), operation)?;
        Ok((before, socket.document().len(), true))
    })?;
    if !changed {
        return result::reported(
            format!("Pad \"{id}\" already has exactly this content; nothing was written."),
            outcome(
                url,
                id,
                after,
                "Nothing was written.",
                json!({ "changed": false, "characters_before": before }),
            ),
        );
    }
    written(
        url,
        id,
        format!("Replaced the content of pad \"{id}\" ({before} → {new_length} characters)."),
        after,
        json!({ "changed": true, "characters_before": before }),
    )
}

pub fn append_to_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let text = args.text("text", 1)?;
    let appended = char_len(text);
    let after = with_session(url, id, Track::LENGTH, |socket| {
        let before = socket.document().len();
        check_limit(before + appended)?;
        let operation = Builder::new().retain(before).insert(text).finish();
        socket.edit(Mark::Writer, operation)?;
        Ok(socket.document().len())
    })?;
    written(
        url,
        id,
        format!("Appended {appended} characters to pad \"{id}\" (now {after} characters)."),
        after,
        json!({ "appended_characters": appended }),
    )
}

pub fn replace_in_document(url: &RustpadUrl, args: &Args, guard: &Guard) -> ToolResult {
    let id = args.id()?;
    let search = args.text("search", 1)?;
    let replace = args.text("replace", 0)?;
    let replace_all = args.flag("replace_all")?;
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
        .since_at_most(guard.asked_at());
    let (replacements, after) = with_session(url, id, track, |socket| {
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
        let change = each.times(count);
        check_limit(pad_chars - change.removed + change.inserted)?;
        let at_work = |author| socket.at_work(author);
        let removal = Ledger::of(id, socket.authorship(), &at_work).judge(pad_chars, change);
        let asks = count > 1 || removal.needs_person() || !go_unasked(id, &removal);
        if asks {
            let proposal =
                replace_proposal(id, search, replace, &text, &matches, &removal, &state_of);
            guard.approve(&proposal, &pad_of(socket)?)?;
        }
        let operation = replace_operation(pad_chars, &matches, search, replace);
        socket.edit(Mark::of(asks), operation)?;
        Ok((count, socket.document().len()))
    })?;
    let plural = if replacements == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    written(
        url,
        id,
        format!("Replaced {replacements} {plural} in pad \"{id}\"."),
        after,
        json!({ "replacements": replacements }),
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
        tool: ToolName::ReplaceInDocument,
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
) -> serde_json::Value {
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
    builder.retain(pad_chars - at).finish()
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
        format!("{count} {}", seal::fingerprint(text))
    } else {
        count.to_string()
    }
}

pub fn set_language(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let Some(language) = args.language()? else {
        return Err(ToolError::new("missing required argument \"language\""));
    };
    let characters = with_session(url, id, Track::LENGTH, |socket| {
        socket.set_language(language)?;
        Ok(socket.document().len())
    })?;
    result::reported(
        format!("Set the language of pad \"{id}\" to {language}."),
        outcome(
            url,
            id,
            characters,
            EPHEMERAL,
            json!({ "language": language }),
        ),
    )
}

fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count().max(1)
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
            replace_operation(16, &matches, "teh", "the"),
            json!([1, "he", -2, 7, "he", -2, 4])
        );
        let mut document = crate::rustpad::ot::Document::with_text();
        let seed = json!([text]).to_string();
        document
            .apply(&serde_json::from_str(&seed).unwrap())
            .unwrap();
        let wire = replace_operation(16, &matches, "teh", "the").to_string();
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
            assert_eq!(binding, format!("2 {}", seal::fingerprint(text)));
            let done = text.replace(search, replace);
            assert_ne!(replace_binding(&done, search, replace, 2), binding);
        }
    }
}
