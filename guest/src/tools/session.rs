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
use serde_json::{Value, json};

use super::catalogue::EPHEMERAL;
use super::tool::Call;
use crate::grants;
use crate::guard::Pad;
use crate::guard::removal::{self, Change, Ledger, Removal};
use crate::result::{self, ToolError, ToolResult};
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

/// What undoing the session's own edit needs, for a write's result:
/// `change` (see [`Handle`]), `base_before` and `base`; nothing when the
/// session made no edit, and no `change` when Rustpad's start time cannot
/// be read (the edit stands either way).
pub fn undo_fields(socket: &PadSocket, call: &Call) -> Value {
    let Some(edit) = socket.own_edit() else {
        return json!({});
    };
    let before = edit.base_before();
    let mut fields = json!({
        "base_before": before.to_string(),
        "base": edit.base_after().to_string(),
    });
    if let (Some(connection), Ok(started)) = (socket.me(), call.rustpad_started()) {
        let handle = Handle {
            before,
            connection,
            started,
        };
        fields["change"] = json!(handle.to_string());
    }
    fields
}

/// `extra` with the fields of `more` added.
pub fn with_fields(mut extra: Value, more: Value) -> Value {
    if let (Some(extra), Value::Object(more)) = (extra.as_object_mut(), more) {
        extra.extend(more);
    }
    extra
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

/// A write's structured content: the fields every write has, then `extra`.
pub fn outcome(url: &RustpadUrl, id: &str, characters: usize, note: &str, extra: Value) -> Value {
    let mut structured = json!({
        "id": id,
        "url": url.share_link(id),
        "characters": characters,
        "note": note,
    });
    if let (Some(all), Value::Object(extra)) = (structured.as_object_mut(), extra) {
        all.extend(extra);
    }
    structured
}

/// The result of a write that changed the pad: the sentence, then the link.
pub fn written(
    url: &RustpadUrl,
    id: &str,
    sentence: String,
    characters: usize,
    extra: Value,
) -> ToolResult {
    let link = url.share_link(id);
    result::reported(
        format!("{sentence}\nLink: {link}"),
        outcome(url, id, characters, EPHEMERAL, extra),
    )
}
