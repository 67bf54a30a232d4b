//! `set_language`: a pad's syntax-highlighting language, which everyone who
//! has it open sees change.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{Language, PadId};
use super::catalogue::EPHEMERAL;
use super::schema::{self, described};
use super::session::{outcome, with_session};
use super::schema::Fields;
use super::tool::{Annotations, Call, Tool};
use crate::result::{self, ToolResult};
use crate::rustpad::socket::Track;

pub static TOOL: Tool = Tool {
    name: "set_language",
    title: "Set a pad's editor language",
    summary: "Set the syntax-highlighting language",
    description,
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    essential: false,
    asks_first: false,
    waits: false,
    input: Arguments::json_schema,
    output,
    run,
};

fn description() -> String {
    "Sets a pad's syntax-highlighting language (a Monaco language id such as \"markdown\", \"python\" or \"rust\"). Everyone who has the pad open sees the change; the last one set wins.".to_string()
}

fn output() -> Fields {
    schema::written(
        json!({
            "language": schema::string(),
            "language_before": described(schema::string(), "The pad's language before this call, when it had one: set it again to go back (revert_changes does not undo languages)"),
        }),
        &["language"],
    )
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    #[serde(borrow)]
    language: Language<'a>,
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        language: Language(language),
    } = call.arguments()?;
    let (characters, before) = with_session(call.url, id, Track::LENGTH, |socket| {
        let before = socket.language().map(str::to_string);
        socket.set_language(language)?;
        Ok((socket.document().len(), before))
    })?;
    let mut extra = json!({ "language": language });
    if let Some(before) = before {
        extra["language_before"] = json!(before);
    }
    result::reported(
        format!("Set the language of pad \"{id}\" to {language}."),
        outcome(
            call.url,
            id,
            characters,
            EPHEMERAL,
            extra,
        ),
    )
}
