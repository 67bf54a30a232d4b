//! What a client may send for each argument type, as JSON Schema: the
//! limits the type's `Deserialize` enforces, said once beside it. A tool's
//! `Arguments` struct derives its input schema from these (inlined where a
//! field uses them) and adds each field's description from its doc comment.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::{
    BaseOrNow, By, ChangeHandle, ConfirmToken, Edits, Flag, GivenBase, Language, Line, MAX_LINE,
    NonEmptyText, PadId, Text,
};
use crate::rustpad::{base, change};
use crate::text::{MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS};
use crate::tools::locate::MAX_EDITS;

/// An argument type's schema, inlined wherever a field uses it.
macro_rules! argument_schema {
    ($type:ty, $name:literal, |$generator:ident| $schema:expr) => {
        impl JsonSchema for $type {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                $name.into()
            }

            fn json_schema($generator: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

argument_schema!(PadId<'_>, "PadId", |_generator| json_schema!({
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_ID_CHARS,
    "pattern": "^[A-Za-z0-9._-]+$",
    "description": "The pad's id: the part after # in its link",
}));

argument_schema!(Text<'_>, "Text", |_generator| json_schema!({
    "type": "string",
    "minLength": 0,
    "maxLength": MAX_DOCUMENT_CHARS,
}));

argument_schema!(
    NonEmptyText<'_>,
    "NonEmptyText",
    |_generator| json_schema!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_DOCUMENT_CHARS,
    })
);

argument_schema!(Language<'_>, "Language", |_generator| json_schema!({
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_LANGUAGE_CHARS,
    "pattern": "^[A-Za-z0-9+#.-]+$",
    "description": "Monaco language id for syntax highlighting, e.g. \"markdown\", \"javascript\", \"rust\", \"plaintext\"",
}));

argument_schema!(
    ConfirmToken<'_>,
    "ConfirmToken",
    |_generator| json_schema!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_TOKEN_CHARS,
        "description": "Only where the client cannot show a confirmation dialog: the token a previous call with the same arguments returned. Omit it on the first call.",
    })
);

argument_schema!(GivenBase, "GivenBase", |_generator| json_schema!({
    "type": "string",
    "pattern": base::PATTERN,
}));

// The same base; only the error for a bad one differs.
argument_schema!(BaseOrNow, "BaseOrNow", |generator| GivenBase::json_schema(
    generator
));

argument_schema!(ChangeHandle, "ChangeHandle", |_generator| json_schema!({
    "type": "string",
    "pattern": change::PATTERN,
}));

argument_schema!(By, "By", |_generator| json_schema!({
    "oneOf": [
        { "type": "string", "enum": ["this_server", "everyone"] },
        {
            "type": "object",
            "properties": { "connection": { "type": "integer", "minimum": 0 } },
            "required": ["connection"],
            "additionalProperties": false,
        },
        {
            "type": "object",
            "properties": { "name": { "type": "string", "minLength": 1, "maxLength": crate::text::MAX_LABEL_CHARS } },
            "required": ["name"],
            "additionalProperties": false,
        },
    ],
    "default": "this_server",
}));

// Absent means no, which the schema says as its default.
argument_schema!(Flag, "Flag", |_generator| json_schema!({
    "type": "boolean",
    "default": false,
}));

argument_schema!(Line, "Line", |_generator| json_schema!({
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_LINE,
}));

argument_schema!(Edits<'_>, "Edits", |generator| {
    let described = |mut schema: Schema, description: &str| {
        schema.insert("description".into(), description.into());
        schema
    };
    json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_EDITS,
        "items": {
            "type": "object",
            "properties": {
                "old_text": described(generator.subschema_for::<Text>(), "Exact text to replace, copied from the pad without line numbers; must occur once (or once starting on line). Empty: insert at the start of line"),
                "new_text": described(generator.subschema_for::<Text>(), "What to put in its place; empty deletes old_text"),
                "line": described(generator.subschema_for::<Line>(), "The line old_text starts on, to pick one of several occurrences; required when old_text is empty"),
            },
            "required": ["old_text", "new_text"],
            "additionalProperties": false,
        },
    })
});
