//! What each tool takes and returns: its input schema (which `Args` checks
//! calls against) and its output schema (which `structuredContent` matches).

use serde_json::{Value, json};

use super::catalogue::ToolName;
use crate::text::{MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS};

impl ToolName {
    pub fn input_schema(self) -> Value {
        let (properties, required): (Value, &[&str]) = match self {
            ToolName::GetDocument | ToolName::GetDocumentInfo => {
                (json!({ "id": id_schema() }), &["id"])
            }
            ToolName::GetStats => (json!({}), &[]),
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
                        "type": "object",
                        "description": "Present when the text was cut to fit the result budget; counts are in characters (code points)",
                        "properties": { "shown": integer(), "total": integer() },
                        "required": ["shown", "total"],
                        "additionalProperties": false,
                    },
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

fn token_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_TOKEN_CHARS,
        "description": "Only where the client cannot show a confirmation dialog: the token a previous call with the same arguments returned. Omit it on the first call.",
    })
}
