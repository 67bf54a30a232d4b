//! `set_language`: a pad's syntax-highlighting language, which everyone who
//! has it open sees change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Language, PadId};
use super::catalogue::EPHEMERAL;
use super::outcome::{self, ToolResult};
use super::session::{Written, with_session};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::socket::Track;

pub static TOOL: Tool = Tool {
    name: "set_language",
    title: "Set a pad's editor language",
    summary: "Set the syntax-highlighting language",
    description: Description::Fixed("Sets a pad's syntax-highlighting language (a Monaco language id such as \"markdown\", \"python\" or \"rust\"). Everyone who has the pad open sees the change; the last one set wins."),
    kind: Kind::Add { idempotent: true },
    essential: false,
    schemas: Schemas::of::<Arguments, Written<LanguageSet>>(),
    run,
};

/// What `set_language` adds to a write's result.
#[derive(Serialize, JsonSchema)]
struct LanguageSet {
    language: String,
    /// The pad's language before this call, when it had one: set it again to go back (revert_changes does not undo languages)
    #[serde(skip_serializing_if = "Option::is_none")]
    language_before: Option<String>,
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
    let (characters, before) = with_session(call, id, Track::LENGTH, |socket| {
        let before = socket.language().map(str::to_string);
        socket.set_language(language)?;
        Ok((socket.document().len(), before))
    })?;
    let set = LanguageSet {
        language: language.to_string(),
        language_before: before,
    };
    outcome::reported(
        format!("Set the language of pad \"{id}\" to {language}."),
        &Written::new(call.url, id, characters, EPHEMERAL, set),
    )
}
