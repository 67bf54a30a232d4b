//! `get_document_info`: a pad's length, revision, language and who has it
//! open, looked at over the collaboration socket without joining it.

use serde::Deserialize;
use serde_json::{Map, json};

use super::args::PadId;
use super::catalogue::EPHEMERAL;
use super::schema;
use super::schema::Fields;
use super::tool::{Annotations, Call, Tool};
use crate::result::{self, ToolResult};
use crate::rustpad::socket::{PadSocket, Track};

pub static TOOL: Tool = Tool {
    name: "get_document_info",
    title: "Inspect a pad",
    summary: "Length, revision, language and who has the pad open",
    description,
    annotations: Annotations::READ,
    asks_first: false,
    input,
    output,
    run,
};

fn description() -> String {
    format!(
        "Looks at a pad over Rustpad's collaboration socket without joining it visibly: its length in characters, its revision (number of edits), its editor language and the names of the people who have it open right now. {EPHEMERAL}"
    )
}

fn input() -> Fields {
    schema::fields(json!({ "id": schema::id() }), &["id"])
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

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
}

fn run(call: &Call) -> ToolResult {
    let Arguments { id: PadId(id) } = call.arguments()?;
    let socket = PadSocket::look(call.url, id, Track::LENGTH)?;
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
    payload.insert("note".into(), json!(EPHEMERAL));
    socket.close();
    result::untrusted(payload)
}
