//! What each tool takes and returns: its input schema (which `Args` checks
//! calls against) and its output schema (which `structuredContent` matches).

use serde_json::{Value, json};

use super::args::MAX_LINE;
use super::catalogue::ToolName;
use super::locate::MAX_EDITS;
use crate::rustpad::base;
use crate::text::{MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS};

impl ToolName {
    pub fn input_schema(self) -> Value {
        let (properties, required): (Value, &[&str]) = match self {
            ToolName::GetDocument => (
                json!({
                    "id": id_schema(),
                    "start_line": with_description(line_schema(), "First line of a window (1-based). With start_line or end_line the result is those lines, numbered, with a base for edit_document"),
                    "end_line": with_description(line_schema(), "Last line of a window, inclusive; past the last line means to the end"),
                }),
                &["id"],
            ),
            ToolName::GetDocumentInfo => (json!({ "id": id_schema() }), &["id"]),
            ToolName::GetStats => (json!({}), &[]),
            ToolName::GetChanges => (
                json!({
                    "id": id_schema(),
                    "base": with_description(base_schema(), "The base from a get_document window or an edit_document result: the text to compare the pad with"),
                }),
                &["id", "base"],
            ),
            ToolName::CreateDocument => (
                json!({
                    "id": with_description(id_schema(), "Id for the new pad; omit it to get a random one"),
                    "text": with_description(text_schema(0), "Initial content"),
                    "language": language_schema(),
                }),
                &[],
            ),
            ToolName::SetDocument => (
                json!({
                    "id": id_schema(),
                    "text": with_description(text_schema(0), "The complete new content; may be empty to clear the pad"),
                    "confirm_token": token_schema(),
                }),
                &["id", "text"],
            ),
            ToolName::AppendToDocument => (
                json!({
                    "id": id_schema(),
                    "text": with_description(text_schema(1), "Text to add at the end, exactly as given"),
                }),
                &["id", "text"],
            ),
            ToolName::ReplaceInDocument => (
                json!({
                    "id": id_schema(),
                    "search": with_description(text_schema(1), "The exact string to find (literal, not a regular expression)"),
                    "replace": with_description(text_schema(0), "What to put in its place; may be empty to delete the match"),
                    "replace_all": {
                        "type": "boolean",
                        "default": false,
                        "description": "Replace every occurrence instead of requiring exactly one",
                    },
                    "confirm_token": token_schema(),
                }),
                &["id", "search", "replace"],
            ),
            ToolName::EditDocument => (
                json!({
                    "id": id_schema(),
                    "edits": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_EDITS,
                        "description": "The edits, all located in the same text (they do not see each other) and made as one change",
                        "items": {
                            "type": "object",
                            "properties": {
                                "old_text": with_description(text_schema(0), "Exact text to replace, copied from the pad without line numbers; must occur once (or once starting on line). Empty: insert at the start of line"),
                                "new_text": with_description(text_schema(0), "What to put in its place; empty deletes old_text"),
                                "line": with_description(line_schema(), "The line old_text starts on, to pick one of several occurrences; required when old_text is empty"),
                            },
                            "required": ["old_text", "new_text"],
                            "additionalProperties": false,
                        },
                    },
                    "base": with_description(base_schema(), "The base from the get_document window (or edit_document result) the edits were read in; omit it to edit the pad as it is now"),
                    "dry_run": {
                        "type": "boolean",
                        "default": false,
                        "description": "Return the diff and whether a person would be asked, and write nothing",
                    },
                    "confirm_token": token_schema(),
                }),
                &["id", "edits"],
            ),
            ToolName::SetLanguage => (
                json!({ "id": id_schema(), "language": language_schema() }),
                &["id", "language"],
            ),
        };
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    pub fn output_schema(self) -> Value {
        let (properties, required): (Value, Vec<&str>) = match self {
            ToolName::GetDocument => (
                json!({
                    "untrusted": { "const": true },
                    "source": { "const": "rustpad" },
                    "id": string(),
                    "text": { "type": "string", "description": "The pad's text, with control characters removed" },
                    "empty": { "const": true },
                    "truncated": {
                        "description": "Whole pad: present, as shown and total characters (code points), when the text was cut to fit the result budget. Window: whether the window was cut (see continue_from)",
                        "anyOf": [
                            {
                                "type": "object",
                                "properties": { "shown": integer(), "total": integer() },
                                "required": ["shown", "total"],
                                "additionalProperties": false,
                            },
                            { "type": "boolean" },
                        ],
                    },
                    "revision": with_description(integer(), "Window only: the pad's revision the text is from"),
                    "base": with_description(string(), "Window only: names this revision and its text, for edit_document"),
                    "start_line": with_description(line_number(), "Window only: the first line shown"),
                    "end_line": with_description(line_number(), "Window only: the last line shown (partly, if that line alone was too long)"),
                    "total_lines": with_description(line_number(), "Window only: lines in the pad"),
                    "continue_from": with_description(line_number(), "Window only: present when the window was cut; the line to start the next window at"),
                    "note": string(),
                }),
                vec!["untrusted", "source", "id", "text"],
            ),
            ToolName::GetDocumentInfo => (
                json!({
                    "untrusted": { "const": true },
                    "source": { "const": "rustpad" },
                    "id": string(),
                    "url": string(),
                    "length_characters": integer(),
                    "revision": integer(),
                    "language": string(),
                    "active_users": { "type": "array", "items": string() },
                    "note": string(),
                }),
                vec![
                    "untrusted",
                    "source",
                    "id",
                    "url",
                    "length_characters",
                    "revision",
                    "language",
                    "active_users",
                    "note",
                ],
            ),
            ToolName::GetStats => (
                json!({
                    "start_time": { "type": "integer", "description": "Server start, Unix seconds" },
                    "start_time_iso": string(),
                    "num_documents": integer(),
                    "database_size": integer(),
                }),
                vec![
                    "start_time",
                    "start_time_iso",
                    "num_documents",
                    "database_size",
                ],
            ),
            ToolName::GetChanges => (
                json!({
                    "untrusted": { "const": true },
                    "source": { "const": "rustpad" },
                    "id": string(),
                    "since_revision": with_description(integer(), "The base's revision: where the comparison starts"),
                    "revision": with_description(integer(), "The pad's revision now"),
                    "base": with_description(string(), "Names the pad's text now: pass it to a later get_changes or edit_document"),
                    "changed": with_description(json!({ "type": "boolean" }), "Whether the text differs from the text at the base"),
                    "operations": with_description(integer(), "Operations the pad's history holds after the base"),
                    "authors": {
                        "type": "array",
                        "description": "Who made those operations, in the order they first appear",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": with_description(string(), "The author's name while they have the pad open; otherwise \"someone who has left\""),
                                "in_pad": { "type": "boolean" },
                                "operations": line_number(),
                            },
                            "required": ["name", "in_pad", "operations"],
                            "additionalProperties": false,
                        },
                    },
                    "diff": with_description(string(), "Unified line diff from the text at the base to now, pad text with control characters removed; empty when unchanged or too different"),
                    "diff_cut": with_description(json!({ "type": "boolean" }), "Whether the diff was cut to fit the result"),
                    "too_different": with_description(json!({ "type": "boolean" }), "The texts differ too much for a diff: read the pad again instead"),
                    "note": string(),
                }),
                vec![
                    "untrusted",
                    "source",
                    "id",
                    "since_revision",
                    "revision",
                    "base",
                    "changed",
                    "operations",
                    "authors",
                    "diff",
                    "diff_cut",
                    "too_different",
                ],
            ),
            ToolName::CreateDocument => written(
                json!({ "created": { "const": true }, "language": string() }),
                &["created"],
            ),
            ToolName::SetDocument => written(
                json!({ "changed": { "type": "boolean" }, "characters_before": integer() }),
                &["changed", "characters_before"],
            ),
            ToolName::AppendToDocument => written(
                json!({ "appended_characters": integer() }),
                &["appended_characters"],
            ),
            ToolName::ReplaceInDocument => {
                written(json!({ "replacements": integer() }), &["replacements"])
            }
            ToolName::EditDocument => written(
                json!({
                    "untrusted": { "const": true },
                    "source": { "const": "rustpad" },
                    "revision": with_description(integer(), "The pad's revision right after the edits (on a dry run: now)"),
                    "base": with_description(string(), "Names that revision and its text: pass it to state further edits against it (on a dry run: the pad as it is now)"),
                    "dry_run": { "type": "boolean" },
                    "would_ask": with_description(json!({ "type": "boolean" }), "Dry run only: whether making the edits would ask a person first"),
                    "edits": {
                        "type": "array",
                        "description": "For each edit, in the order given, the lines its new text occupies in the result",
                        "items": {
                            "type": "object",
                            "properties": {
                                "edit": line_number(),
                                "start_line": line_number(),
                                "end_line": line_number(),
                            },
                            "required": ["edit", "start_line", "end_line"],
                            "additionalProperties": false,
                        },
                    },
                    "diff": with_description(string(), "Unified diff of the change, pad text with control characters removed"),
                    "diff_cut": with_description(json!({ "type": "boolean" }), "Whether the diff was cut to fit the result"),
                }),
                &[
                    "untrusted",
                    "source",
                    "revision",
                    "base",
                    "dry_run",
                    "edits",
                    "diff",
                    "diff_cut",
                ],
            ),
            ToolName::SetLanguage => written(json!({ "language": string() }), &["language"]),
        };
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }
}

fn integer() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}

fn line_number() -> Value {
    json!({ "type": "integer", "minimum": 1 })
}

fn line_schema() -> Value {
    json!({ "type": "integer", "minimum": 1, "maximum": MAX_LINE })
}

fn string() -> Value {
    json!({ "type": "string" })
}

/// The fields every write result has, plus a tool's own.
fn written(own: Value, own_required: &[&'static str]) -> (Value, Vec<&'static str>) {
    let mut properties = json!({
        "id": string(),
        "url": { "type": "string", "description": "Share link: anyone who has it can read and edit the pad" },
        "characters": { "type": "integer", "minimum": 0, "description": "Length of the pad after the write, in characters (code points)" },
        "note": string(),
    });
    if let (Some(all), Value::Object(own)) = (properties.as_object_mut(), own) {
        all.extend(own);
    }
    let mut required = vec!["id", "url", "characters", "note"];
    required.extend(own_required);
    (properties, required)
}

fn with_description(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

fn id_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ID_CHARS,
        "pattern": "^[A-Za-z0-9._-]+$",
        "description": "The pad's id: the part after # in its link",
    })
}

fn text_schema(min: usize) -> Value {
    json!({ "type": "string", "minLength": min, "maxLength": MAX_DOCUMENT_CHARS })
}

fn language_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_LANGUAGE_CHARS,
        "pattern": "^[A-Za-z0-9+#.-]+$",
        "description": "Monaco language id for syntax highlighting, e.g. \"markdown\", \"javascript\", \"rust\", \"plaintext\"",
    })
}

fn base_schema() -> Value {
    json!({ "type": "string", "pattern": base::PATTERN })
}

fn token_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_TOKEN_CHARS,
        "description": "Only where the client cannot show a confirmation dialog: the token a previous call with the same arguments returned. Omit it on the first call.",
    })
}
