//! `get_document_info`: a pad's length, revision, language, who has it
//! open and where they are working, looked at over the collaboration socket
//! without joining it.
//!
//! The look folds lengths only (cheap on a long history), so the lines and
//! columns of people's carets come from the text read over HTTP, and only
//! when that text is as long as the look said: a pad that changed between
//! the two says so instead.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, json};

use super::args::PadId;
use super::catalogue::EPHEMERAL;
use super::people;
use super::schema::{self, Fields, described};
use super::tool::{Annotations, Call, Tool};
use crate::result::{self, ToolResult};
use crate::rustpad::http;
use crate::rustpad::positions::Positions;
use crate::rustpad::socket::{PadSocket, Track};

pub static TOOL: Tool = Tool {
    name: "get_document_info",
    title: "Inspect a pad",
    summary: "Length, revision, language, who has the pad open and where they are working",
    description,
    annotations: Annotations::READ,
    essential: true,
    asks_first: false,
    waits: false,
    input: Arguments::json_schema,
    output,
    run,
};

fn description() -> String {
    format!(
        "Looks at a pad over Rustpad's collaboration socket without joining it visibly: its length in characters, its revision (number of edits), its editor language, the names of the people who have it open right now, and where they have their carets and selections (lines and columns). {EPHEMERAL}"
    )
}

fn output() -> Fields {
    schema::fields(
        schema::joined(
            schema::untrusted(),
            json!({
                "id": schema::string(),
                "url": schema::string(),
                "length_characters": schema::integer(),
                "revision": schema::integer(),
                "language": schema::string(),
                "active_users": { "type": "array", "items": schema::string() },
                "people": described(people::schema(), "Present when someone has a caret in the pad"),
                "note": schema::string(),
            }),
        ),
        &[
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
    )
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
}

fn run(call: &Call) -> ToolResult {
    let Arguments { id: PadId(id) } = call.arguments()?;
    let socket = PadSocket::look(call.url, id, Track::LENGTH.with_people())?;
    let mut payload = Map::new();
    payload.insert("id".into(), json!(id));
    payload.insert("url".into(), json!(call.url.share_link(id)));
    payload.insert("length_characters".into(), json!(socket.document().len()));
    payload.insert("revision".into(), json!(socket.revision()));
    payload.insert(
        "language".into(),
        json!(socket.language().unwrap_or("plaintext (default)")),
    );
    payload.insert("active_users".into(), json!(socket.other_users()));
    let positions: Vec<(String, Positions, bool)> = socket
        .people_positions()
        .into_iter()
        .map(|placed| (placed.name.to_string(), placed.positions.clone(), placed.writer))
        .collect();
    let length = socket.document().len();
    socket.close();
    let mut note = EPHEMERAL.to_string();
    if !positions.is_empty() {
        // Where people are is extra: a failed read leaves it out, not the rest.
        let text = http::pad_text(call.url, id).map(|text| ropey::Rope::from_str(&text));
        match text {
            Ok(text) if text.len_chars() == length => {
                let named = positions
                    .iter()
                    .map(|(name, at, writer)| (name.as_str(), at, *writer));
                let people = people::located(named, &text);
                if !people.is_empty() {
                    payload.insert("people".into(), people::to_json(&people));
                }
            }
            Ok(_) => note.push_str(" The pad changed while it was being looked at, so where people are working is left out: call again to see it."),
            Err(error) => note.push_str(&format!(
                " Where people are working is left out: reading the pad's text failed ({}).",
                error.message()
            )),
        }
    }
    payload.insert("note".into(), json!(note));
    result::untrusted(payload)
}
