//! What the write tools share: a joined session that is always closed, the
//! pad as the guard sees it, Rustpad's size limit, and the result every
//! write returns.
//!
//! Each write joins the pad as `rustpad-mcp`, computes one whole-document
//! operation against the snapshot it holds, sends it and waits for Rustpad's
//! acknowledgement; Rustpad transforms it over whatever people typed
//! meanwhile, so nobody's keystrokes are lost.

use std::time::Duration;

use operational_transform::OperationSeq;
use schemars::JsonSchema;
use serde::Serialize;

use super::catalogue::EPHEMERAL;
use super::outcome::{self, FromRustpad, ToolError, ToolResult};
use super::tool::Call;
use crate::grants;
use crate::guard::Pad;
use crate::guard::removal::{self, Change, Ledger, Removal};
use crate::rustpad::change::Handle;
use crate::rustpad::socket::{PadSocket, PadState, Queue, Track};
use crate::rustpad::url::RustpadUrl;
use crate::text::MAX_DOCUMENT_CHARS;

/// Runs `work` on a joined session and always closes the socket afterwards.
pub fn with_session<T>(
    url: &RustpadUrl,
    id: &str,
    track: Track,
    work: impl FnOnce(&mut PadSocket) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut socket = PadSocket::join(url, id, track)?;
    let outcome = work(&mut socket);
    socket.close();
    outcome
}

/// The pad's text, from a session that was opened to keep it.
pub fn text_of(socket: &PadSocket) -> Result<String, ToolError> {
    socket
        .document()
        .text()
        .ok_or_else(|| ToolError::new("internal error: the session did not keep the pad's text"))
}

/// The pad as the guard checks an approval against it, for a write that
/// took its place in the pad's order of writes with the outcome `queued`
/// (None: it did not, so no approval can be used).
pub fn pad_of<'a>(
    state: &'a PadState,
    call: &Call,
    queued: Option<Queue>,
) -> Result<Pad<'a>, ToolError> {
    Ok(Pad {
        revision: state.revision(),
        text: state.text()?,
        record: state.since(),
        connection: connection_of(state)?,
        started: call.rustpad_started()?,
        queued,
    })
}

/// Rustpad's number for the session's connection.
pub fn connection_of(state: &PadState) -> Result<u64, ToolError> {
    state
        .me()
        .ok_or_else(|| ToolError::new("Rustpad never told this client its identity"))
}

/// Takes the place of a write in the pad's order of writes, waiting for the
/// writes of this server's marked before it (see `rustpad::order`): a write
/// that may remove text, so that its removal is judged with theirs, and one
/// that may use an approval, so that a second use at the same moment finds
/// the first one's change.
pub fn take_place(socket: &mut PadSocket) -> Result<Queue, ToolError> {
    Ok(socket.queue(Duration::from_secs(removal::QUEUE_SECONDS))?)
}

/// Judges what `operation` removes from the pad a session holds, which
/// queued with the outcome `queue` (see [`take_place`]).
pub fn judge_removal(
    socket: &PadSocket,
    call: &Call,
    id: &str,
    queue: Queue,
    operation: &OperationSeq,
) -> Result<Removal, ToolError> {
    let at_work = |author| socket.at_work(author);
    let mut ledger = Ledger::of(id, socket.authorship(), &at_work).queued(queue);
    let removes = Change::of_operation(operation).removed > 0;
    if removes && !grants::STATELESS {
        // Where the host's tally notes the removal. Without the start time
        // the note is empty, which the rule never takes as shown (so it
        // counts twice, never less).
        if let Ok(started) = call.rustpad_started() {
            ledger = ledger.made_over(started, connection_of(socket)?);
        }
    }
    Ok(ledger.judge(socket.document().len(), operation))
}

/// What undoing a write's own edit needs, in its result; all absent when
/// it wrote nothing.
#[derive(Default, Serialize, JsonSchema)]
pub struct Undoable {
    /// Names this write's change: pass it to revert_changes to take back exactly this change (while Rustpad keeps the pad's history)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// The base just before this write's change: the text it was made on
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_before: Option<String>,
    /// The base just after this write's change
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// A write's own fields (`T`), after what taking the write back needs.
#[derive(Serialize, JsonSchema)]
pub struct Revertible<T> {
    #[serde(flatten)]
    pub undo: Undoable,
    #[serde(flatten)]
    pub own: T,
}

/// What undoing the session's own edit needs (see [`Undoable`]): nothing when
/// the session made no edit, and no `change` (see [`Handle`]) when
/// Rustpad's start time cannot be read (the edit stands either way).
pub fn undo_fields(socket: &PadSocket, call: &Call) -> Undoable {
    let Some(edit) = socket.own_edit() else {
        return Undoable::default();
    };
    let before = edit.base_before();
    let change = match (socket.me(), call.rustpad_started()) {
        (Some(connection), Ok(started)) => Some(Handle {
            before: before.clone(),
            connection,
            started,
        }),
        _ => None,
    };
    Undoable {
        change: change.map(|handle| handle.to_string()),
        base_before: Some(before.to_string()),
        base: Some(edit.base_after().to_string()),
    }
}

/// Refuses a write that would make the pad longer than Rustpad allows.
pub fn check_limit(length: usize) -> Result<(), ToolError> {
    if length > MAX_DOCUMENT_CHARS {
        return Err(ToolError::new(format!(
            "the pad would be {length} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS}; nothing was written"
        )));
    }
    Ok(())
}

/// A write's result: the fields every write has, then the tool's own.
#[derive(Serialize, JsonSchema)]
pub struct Written<T> {
    pub id: String,
    /// Share link: anyone who has it can read and edit the pad
    pub url: String,
    /// Length of the pad after the write, in characters (code points)
    pub characters: usize,
    pub note: String,
    #[serde(flatten)]
    pub own: T,
}

impl<T> Written<T> {
    pub fn new(url: &RustpadUrl, id: &str, characters: usize, note: &str, own: T) -> Written<T> {
        Written {
            id: id.to_string(),
            url: url.share_link(id),
            characters,
            note: note.to_string(),
            own,
        }
    }
}

/// A write whose own fields are from Rustpad says so in them.
impl<T: FromRustpad> FromRustpad for Written<T> {}

/// The result of a write that changed the pad: the sentence, then the link.
pub fn written<T: Serialize>(
    url: &RustpadUrl,
    id: &str,
    sentence: String,
    characters: usize,
    own: T,
) -> ToolResult {
    let link = url.share_link(id);
    outcome::reported(
        format!("{sentence}\nLink: {link}"),
        &Written::new(url, id, characters, EPHEMERAL, own),
    )
}
