//! `append_to_document`: text added at the end of a pad; what people type
//! elsewhere at the same moment stays as it is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{NonEmptyText, PadId};
use super::outcome::ToolResult;
use super::session::{
    Revertible, Written, check_limit, undo_fields, with_kept_session, written,
};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::Builder;
use crate::text::{char_len, count};

pub static TOOL: Tool = Tool {
    name: "append_to_document",
    title: "Append to a pad",
    summary: "Add text at the end; concurrent edits elsewhere survive",
    description: Description::Fixed("Adds text at the end of a pad. Everything else, including what people type at the same moment, stays as it is. The text is added exactly as given: start it with a newline to begin a new line."),
    kind: Kind::Add { idempotent: false },
    essential: true,
    schemas: Schemas::of::<Arguments, Written<Revertible<Appended>>>(),
    run,
};

/// What `append_to_document` adds to a write's result.
#[derive(Serialize, JsonSchema)]
struct Appended {
    appended_characters: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    /// Text to add at the end, exactly as given
    #[serde(borrow)]
    text: NonEmptyText<'a>,
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        text: NonEmptyText(text),
    } = call.arguments()?;
    let appended = char_len(text);
    // The text is kept so that the result can name the change (its bases).
    let (after, undo) = with_kept_session(call, id, |socket| {
        let before = socket.document().len();
        check_limit(before, (before + appended) as u64)?;
        let operation = Builder::new().retain(before).insert(text).finish();
        socket.edit(Mark::Writer, operation)?;
        Ok((socket.document().len(), undo_fields(socket, call)))
    })?;
    written(
        call.url,
        id,
        format!(
            "Appended {} to pad \"{id}\" (now {}).",
            count(appended, "character"),
            count(after, "character")
        ),
        after,
        Revertible {
            undo,
            own: Appended {
                appended_characters: appended,
            },
        },
    )
}
