//! The pieces the tools' schemas are made of, so that an argument every tool
//! shares (a pad id, a text, a base) is described once, with the limits
//! [`super::args`] enforces.

use serde_json::{Value, json};

use super::args::MAX_LINE;
use crate::rustpad::base;
use crate::text::{MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS};

/// A schema's `properties` and the names among them that are `required`.
pub struct Fields {
    pub properties: Value,
    pub required: Vec<&'static str>,
}

/// An object schema that holds nothing but `properties`.
pub fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

pub fn fields(properties: Value, required: &[&'static str]) -> Fields {
    Fields {
        properties,
        required: required.to_vec(),
    }
}

pub fn integer() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}

pub fn line_number() -> Value {
    json!({ "type": "integer", "minimum": 1 })
}

/// A line argument: at most one past the longest pad's last line.
pub fn line() -> Value {
    json!({ "type": "integer", "minimum": 1, "maximum": MAX_LINE })
}

pub fn string() -> Value {
    json!({ "type": "string" })
}

pub fn boolean() -> Value {
    json!({ "type": "boolean" })
}

/// The two fields every result with pad content has: it says it is
/// untrusted, and where it came from.
pub fn untrusted() -> Value {
    json!({
        "untrusted": { "const": true },
        "source": { "const": "rustpad" },
    })
}

/// `own` with the fields of `first` before it.
pub fn joined(first: Value, own: Value) -> Value {
    let mut all = first;
    if let (Some(all), Value::Object(own)) = (all.as_object_mut(), own) {
        all.extend(own);
    }
    all
}

/// The fields every write result has, plus a tool's own.
pub fn written(own: Value, own_required: &[&'static str]) -> Fields {
    let properties = joined(
        json!({
            "id": string(),
            "url": { "type": "string", "description": "Share link: anyone who has it can read and edit the pad" },
            "characters": { "type": "integer", "minimum": 0, "description": "Length of the pad after the write, in characters (code points)" },
            "note": string(),
        }),
        own,
    );
    let mut required = vec!["id", "url", "characters", "note"];
    required.extend(own_required);
    Fields {
        properties,
        required,
    }
}

pub fn described(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

pub fn id() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ID_CHARS,
        "pattern": "^[A-Za-z0-9._-]+$",
        "description": "The pad's id: the part after # in its link",
    })
}

pub fn text(min: usize) -> Value {
    json!({ "type": "string", "minLength": min, "maxLength": MAX_DOCUMENT_CHARS })
}

pub fn language() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_LANGUAGE_CHARS,
        "pattern": "^[A-Za-z0-9+#.-]+$",
        "description": "Monaco language id for syntax highlighting, e.g. \"markdown\", \"javascript\", \"rust\", \"plaintext\"",
    })
}

pub fn base() -> Value {
    json!({ "type": "string", "pattern": base::PATTERN })
}

pub fn token() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_TOKEN_CHARS,
        "description": "Only where the client cannot show a confirmation dialog: the token a previous call with the same arguments returned. Omit it on the first call.",
    })
}
