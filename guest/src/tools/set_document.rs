//! `set_document`: a pad's whole content replaced; a person is asked first
//! when the pad is not empty, since the old content cannot be restored.

use ropey::Rope;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{PadId, Text};
use super::outcome::{self, ToolResult};
use super::session::{Revertible, Undoable, Written, check_limit, pad_of, take_place, text_of, undo_fields, with_session, written};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::digest;
use crate::guard::Proposal;
use crate::rustpad::marks::Mark;
use crate::rustpad::ot::Builder;
use crate::rustpad::socket::Track;
use crate::text::{char_len, count};

pub static TOOL: Tool = Tool {
    name: "set_document",
    title: "Replace a pad's content",
    summary: "Replace the whole content; asks a person first when the pad is not empty",
    description: Description::Fixed("Replaces the whole content of a pad. When the pad is not empty, a person is asked to confirm first (a dialog in the client, or a two-call confirm_token where the client cannot show one), because the old content can be got back (with revert_changes and the change this call returns) only while Rustpad keeps the pad's history. For a targeted change prefer replace_in_document or append_to_document, which leave other people's concurrent edits intact."),
    kind: Kind::Remove { idempotent: true },
    essential: true,
    schemas: Schemas::of::<Arguments, Written<Revertible<Replaced>>>(),
    run,
};

/// What `set_document` adds to a write's result.
#[derive(Serialize, JsonSchema)]
struct Replaced {
    changed: bool,
    characters_before: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Arguments<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    /// The complete new content; may be empty to clear the pad
    #[serde(borrow)]
    text: Text<'a>,
}

fn run(call: &Call) -> ToolResult {
    let Arguments {
        id: PadId(id),
        text: Text(text),
    } = call.arguments()?;
    let new_length = char_len(text);
    let new_fingerprint = digest::fingerprint(text);
    let content = |text: &Rope| digest::fingerprint(&text.to_string());
    let track = Track::TEXT
        .with_authorship()
        .since_at_most(call.asked_at());
    let (before, after, changed, undo) = with_session(call, id, track, |socket| {
        // Its place among the pad's writes first, so that what it reads
        // holds every write marked before it: two calls at once with one
        // approval, or with one text for an empty pad, then make it once.
        let queued = take_place(socket)?;
        let before = socket.document().len();
        let old = text_of(socket)?;
        if old == text {
            return Ok((before, before, false, Undoable::default()));
        }
        check_limit(before, new_length as u64)?;
        if before > 0 {
            let proposal = Proposal {
                tool: TOOL.name,
                pad: id,
                arguments: vec![&new_fingerprint],
                state_of: &content,
                what: format!(
                    "replace the entire content of pad \"{id}\" ({}) with new content ({})",
                    count(before, "character"),
                    count(new_length, "character")
                ),
                consequence: "The previous content cannot be restored.",
                facts: vec![format!(
                    "Lines now: {}; lines after: {}.",
                    line_count(&old),
                    line_count(text)
                )],
                values: Vec::new(),
                title: format!("Replace the content of pad \"{id}\"?"),
                hint: "Tick the box to replace it; leave it unticked to keep the pad as it is.",
            };
            call.approve(&proposal, &pad_of(socket, call, Some(queued))?)?;
        }
        let operation = Builder::new().delete(before).insert(text).finish();
        // Whatever this removes, a person approved (a non-empty pad asks).
        socket.edit(Mark::of(before > 0), operation)?;
        Ok((before, socket.document().len(), true, undo_fields(socket, call)))
    })?;
    if !changed {
        let unchanged = Revertible {
            undo,
            own: Replaced {
                changed: false,
                characters_before: before,
            },
        };
        return outcome::reported(
            format!("Pad \"{id}\" already has exactly this content; nothing was written."),
            &Written::new(call.url, id, after, "Nothing was written.", unchanged),
        );
    }
    written(
        call.url,
        id,
        format!(
            "Replaced the content of pad \"{id}\" ({before} → {}).",
            count(new_length, "character")
        ),
        after,
        Revertible {
            undo,
            own: Replaced {
                changed: true,
                characters_before: before,
            },
        },
    )
}

fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count().max(1)
    }
}
