//! The write tools. Each one joins the pad as `rustpad-mcp`, computes one
//! whole-document operation against the snapshot it holds, sends it and waits
//! for Rustpad's acknowledgement; Rustpad transforms it over whatever people
//! typed meanwhile, so nobody's keystrokes are lost.

use serde_json::{Value, json};

use super::args::Args;
use super::catalogue::EPHEMERAL;
use crate::config::RustpadUrl;
use crate::result::{self, ToolError, ToolResult};
use crate::rustpad::ot::{Builder, find_literal};
use crate::rustpad::socket::PadSocket;
use crate::text::{MAX_DOCUMENT_CHARS, char_len};

/// Length of generated pad ids, from `[a-z0-9]`.
const GENERATED_ID_CHARS: usize = 12;

/// Runs `work` on a joined session and always closes the socket afterwards.
fn with_session<T>(
    url: &RustpadUrl,
    id: &str,
    work: impl FnOnce(&mut PadSocket) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut socket = PadSocket::join(url, id)?;
    let outcome = work(&mut socket);
    socket.close();
    outcome
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
    let characters = with_session(url, &id, |socket| {
        if !socket.document().is_empty() {
            return Err(ToolError::new(format!(
                "pad \"{id}\" already has content; use set_document to replace it or append_to_document to add to it"
            )));
        }
        if !text.is_empty() {
            let (operation, _) = Builder::new().insert(text).finish();
            socket.edit(operation)?;
        }
        if let Some(language) = language {
            socket.set_language(language)?;
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

pub fn set_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let text = args.text("text", 0)?;
    args.confirm_token()?;
    let new_length = char_len(text);
    let (before, after, changed) = with_session(url, id, |socket| {
        let before = socket.document().len();
        if socket.document().text() == text {
            return Ok((before, before, false));
        }
        if before > 0 {
            return Err(needs_confirmation(&format!(
                "replacing the content of pad \"{id}\" ({before} characters)"
            )));
        }
        let (operation, _) = Builder::new().delete(before).insert(text).finish();
        socket.edit(operation)?;
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
    result::reported(
        format!(
            "Replaced the content of pad \"{id}\" ({before} → {new_length} characters).\nLink: {}",
            url.share_link(id)
        ),
        outcome(
            url,
            id,
            after,
            EPHEMERAL,
            json!({ "changed": true, "characters_before": before }),
        ),
    )
}

pub fn append_to_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let text = args.text("text", 1)?;
    let appended = char_len(text);
    let after = with_session(url, id, |socket| {
        let before = socket.document().len();
        check_limit(before + appended)?;
        let (operation, _) = Builder::new().retain(before).insert(text).finish();
        socket.edit(operation)?;
        Ok(socket.document().len())
    })?;
    result::reported(
        format!(
            "Appended {appended} characters to pad \"{id}\" (now {after} characters).\nLink: {}",
            url.share_link(id)
        ),
        outcome(
            url,
            id,
            after,
            EPHEMERAL,
            json!({ "appended_characters": appended }),
        ),
    )
}

pub fn replace_in_document(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let search = args.text("search", 1)?;
    let replace = args.text("replace", 0)?;
    let replace_all = args.flag("replace_all")?;
    args.confirm_token()?;
    if search == replace {
        return Err(ToolError::new(
            "search and replace are identical, so there is nothing to change",
        ));
    }
    let (replacements, after) = with_session(url, id, |socket| {
        let text = socket.document().text();
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
        let (search_len, replace_len) = (char_len(search), char_len(replace));
        check_limit(socket.document().len() - count * search_len + count * replace_len)?;
        if count > 1 {
            return Err(needs_confirmation(&format!(
                "replacing {count} occurrences in pad \"{id}\""
            )));
        }
        let mut builder = Builder::new();
        let mut at = 0;
        for (start, length) in &matches {
            builder = builder.retain(start - at).delete(*length).insert(replace);
            at = start + length;
        }
        let (operation, _) = builder.retain(socket.document().len() - at).finish();
        socket.edit(operation)?;
        Ok((count, socket.document().len()))
    })?;
    let plural = if replacements == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    result::reported(
        format!(
            "Replaced {replacements} {plural} in pad \"{id}\".\nLink: {}",
            url.share_link(id)
        ),
        outcome(
            url,
            id,
            after,
            EPHEMERAL,
            json!({ "replacements": replacements }),
        ),
    )
}

pub fn set_language(url: &RustpadUrl, args: &Args) -> ToolResult {
    let id = args.id()?;
    let Some(language) = args.language()? else {
        return Err(ToolError::new("missing required argument \"language\""));
    };
    let characters = with_session(url, id, |socket| {
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

/// Until a person can be asked, an irreversible edit is refused outright.
fn needs_confirmation(what: &str) -> ToolError {
    ToolError::new(format!(
        "{what} needs a person's confirmation, and this server cannot ask for it yet; nothing was written"
    ))
}
