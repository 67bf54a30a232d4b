//! The pieces the tools' output schemas are made of, so that a field every
//! result shares (a pad's id and link, its length) is described once. Input
//! schemas are derived from the arguments' types ([`super::args`]).

use serde_json::{Value, json};

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

/// The fields a write that changed the text gives out so that it can be
/// undone (`revert_changes`): absent when it wrote nothing.
pub fn undoable() -> Value {
    json!({
        "change": { "type": "string", "description": "Names this write's change: pass it to revert_changes to take back exactly this change (while Rustpad keeps the pad's history)" },
        "base_before": { "type": "string", "description": "The base just before this write's change: the text it was made on" },
        "base": { "type": "string", "description": "The base just after this write's change" },
    })
}

pub fn described(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}
