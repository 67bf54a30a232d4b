//! `create_document`: a new pad (a random id or a chosen one), optionally
//! with text and an editor language.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Language, PadId, Text};
use super::catalogue::EPHEMERAL;
use super::outcome::{self, ToolError, ToolResult};
use super::schema::True;
use super::session::{Revertible, Written, check_limit, undo_fields, with_session};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::Builder;
use crate::rustpad::socket::Track;
use crate::text::{char_len, count};

pub static TOOL: Tool = Tool {
    name: "create_document",
    title: "Create a pad",
    summary: "Create a pad (random or chosen id), optionally with text and language",
    description: Description::Built(description),
    kind: Kind::Add { idempotent: true },
    essential: true,
    schemas: Schemas::of::<Arguments, Written<Revertible<Created>>>(),
    run,
};

fn description() -> String {
    format!(
        "Creates a pad, optionally with initial text and an editor language, and returns the link to share. Without an id, a random {GENERATED_ID_CHARS}-character one is chosen. Refuses an id whose pad already has content. {EPHEMERAL} Anyone with the link can read and edit the pad. Rustpad has no separate create step: writing to any new id creates it just the same."
    )
}

/// What `create_document` adds to a write's result.
#[derive(Serialize, JsonSchema)]
struct Created {
    created: True,
    #[serde(skip_serializing_if = "Option::is_none")]
    language: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    /// Id for the new pad; omit it to get a random one
    #[serde(borrow)]
    id: Option<PadId<'a>>,
    /// Initial content
    #[serde(borrow)]
    text: Option<Text<'a>>,
    #[serde(borrow)]
    language: Option<Language<'a>>,
}

/// Length of generated pad ids, from `[a-z0-9]`.
const GENERATED_ID_CHARS: usize = 12;

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

fn run(call: &Call) -> ToolResult {
    let Arguments { id, text, language } = call.arguments()?;
    let id = match id {
        Some(PadId(id)) => id.to_string(),
        None => random_id(),
    };
    let text = text.map_or("", |Text(text)| text);
    let language = language.map(|Language(language)| language);
    // Refused before joining, which would make the pad: a pad with content
    // is refused anyway, so the pad is empty.
    let length = char_len(text);
    check_limit(0, length as u64)?;
    // The text is kept so that the result can name the change (its bases).
    let (characters, undo) = with_session(call, &id, Track::TEXT, |socket| {
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
        Ok((socket.document().len(), undo_fields(socket, call)))
    })?;
    let link = call.url.share_link(&id);
    let sentence = if text.is_empty() {
        format!("Created pad \"{id}\".\nLink: {link}\n{EPHEMERAL}")
    } else {
        format!(
            "Created pad \"{id}\" with {}.\nLink: {link}\n{EPHEMERAL}",
            count(length, "character")
        )
    };
    let created = Revertible {
        undo,
        own: Created {
            created: True,
            language: language.map(str::to_string),
        },
    };
    outcome::reported(
        sentence,
        &Written::new(call.url, &id, characters, EPHEMERAL, created),
    )
}
