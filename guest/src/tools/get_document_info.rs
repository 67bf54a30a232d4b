//! `get_document_info`: a pad's length, revision, language, who has it
//! open and where they are working, looked at over the collaboration socket
//! without joining it.
//!
//! The look folds lengths only (cheap on a long history), so the lines and
//! columns of people's carets come from the text read over HTTP, and only
//! when that text is as long as the look said: a pad that changed between
//! the two says so instead.

use schemars::JsonSchema;
use serde::Serialize;

use super::args::{PadId, PadOnly};
use super::catalogue::EPHEMERAL;
use super::outcome::{self, ToolResult, Untrusted};
use super::people::{self, People};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::http;
use crate::rustpad::positions::Positions;
use crate::rustpad::socket::{PadSocket, Track};

pub static TOOL: Tool = Tool {
    name: "get_document_info",
    title: "Inspect a pad",
    summary: "Length, revision, language, who has the pad open and where they are working",
    description: Description::Built(description),
    kind: Kind::Read,
    essential: true,
    schemas: Schemas::of::<PadOnly, Untrusted<Info>>(),
    run,
};

fn description() -> String {
    format!(
        "Looks at a pad over Rustpad's collaboration socket without joining it visibly: its length in characters, its revision (number of edits), its editor language, the names of the people who have it open right now, and where they have their carets and selections (lines and columns). {EPHEMERAL}"
    )
}

/// What a look at a pad shows.
#[derive(Serialize, JsonSchema)]
struct Info {
    id: String,
    url: String,
    length_characters: usize,
    revision: u64,
    language: String,
    active_users: Vec<String>,
    /// Present when someone has a caret in the pad
    #[serde(skip_serializing_if = "People::is_empty")]
    people: People,
    note: String,
}

fn run(call: &Call) -> ToolResult {
    let PadOnly { id: PadId(id) } = call.arguments()?;
    let socket = PadSocket::look(call.url, id, Track::LENGTH.with_people())?;
    let length = socket.document().len();
    let mut info = Info {
        id: id.to_string(),
        url: call.url.share_link(id),
        length_characters: length,
        revision: socket.revision(),
        language: socket
            .language()
            .unwrap_or("plaintext (default)")
            .to_string(),
        active_users: socket.other_users(),
        people: People::default(),
        note: EPHEMERAL.to_string(),
    };
    let positions: Vec<(String, Positions, bool)> = socket
        .people_positions()
        .into_iter()
        .map(|placed| (placed.name.to_string(), placed.positions.clone(), placed.writer))
        .collect();
    socket.close();
    if !positions.is_empty() {
        // Where people are is extra: a failed read leaves it out, not the rest.
        let text = http::pad_text(call.url, id).map(|text| ropey::Rope::from_str(&text));
        match text {
            Ok(text) if text.len_chars() == length => {
                let named = positions
                    .iter()
                    .map(|(name, at, writer)| (name.as_str(), at, *writer));
                info.people = people::located(named, &text);
            }
            Ok(_) => info.note.push_str(" The pad changed while it was being looked at, so where people are working is left out: call again to see it."),
            Err(error) => info.note.push_str(&format!(
                " Where people are working is left out: reading the pad's text failed ({}).",
                error.message()
            )),
        }
    }
    outcome::untrusted(&Untrusted::new(info))
}
