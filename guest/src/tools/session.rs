//! What the write tools share: a joined session that is always closed, the
//! pad as the guard sees it, Rustpad's size limit and the room left to
//! people below it, and the result every write returns.
//!
//! Each write joins the pad as `rustpad-mcp`, computes one whole-document
//! operation against the snapshot it holds, sends it and waits for Rustpad's
//! acknowledgement; Rustpad transforms it over whatever people typed
//! meanwhile, so nobody's keystrokes are lost.

use std::time::{Duration, Instant};

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
use crate::text::{MAX_DOCUMENT_CHARS, count};

/// How many times a write tries when nothing was written (see [`attempts`]).
const ATTEMPTS: u32 = 3;
/// The pause before a write's second attempt; doubled before each further one.
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// A write starts no attempt that, taking as long as the one before it,
/// would end later than this after its first began.
const ATTEMPTS_WITHIN: Duration = Duration::from_secs(30);

/// What a write's result adds when its edit's acknowledgement was lost and
/// the edit then found in the pad's history.
pub const ACKNOWLEDGEMENT_LOST: &str = "\nThe connection to Rustpad broke before it acknowledged the edit; this server reconnected and found the edit in the pad's history, so it was made, once.";

/// Runs one attempt of a write after another while an attempt ends with
/// nothing written and a new connection may do better
/// ([`ToolError::Interrupted`]): up to [`ATTEMPTS`], pausing a little longer
/// each time, within [`ATTEMPTS_WITHIN`]: an attempt that timed out after
/// 10 s is tried once more at most, so a caller hears within about 20 s.
/// Never after an edit went out, unless the history showed it was not made
/// (`rustpad::settle`). Each attempt starts afresh: it reads the pad again
/// and builds its edit on what it reads.
fn attempts<T>(
    call: &Call,
    mut attempt: impl FnMut() -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let first = Instant::now();
    let mut pause = FIRST_PAUSE;
    let mut tried = 1;
    loop {
        let began = Instant::now();
        match attempt() {
            Err(ToolError::Interrupted(message)) => {
                let next_would_end = first.elapsed() + pause + began.elapsed();
                if tried >= ATTEMPTS || next_would_end > ATTEMPTS_WITHIN {
                    return Err(ToolError::Failed(format!(
                        "{}. Tried {}; nothing was written.",
                        message.trim_end_matches('.'),
                        count(tried, "time")
                    )));
                }
            }
            other => return other,
        }
        std::thread::sleep(pause);
        pause *= 2;
        tried += 1;
        // Rustpad may have restarted in between.
        call.started.set(None);
    }
}

/// Joins pad `id` for a write with `open` ([`PadSocket::join`], or
/// [`PadSocket::join_unseen`]), with what the session needs to learn an
/// unacknowledged edit's outcome: Rustpad's start time, when it can be read,
/// for a session that keeps the text (no other can learn it).
fn join(
    call: &Call,
    id: &str,
    track: Track,
    open: fn(&RustpadUrl, &str, Track) -> Result<PadSocket, crate::rustpad::Error>,
) -> Result<PadSocket, ToolError> {
    let mut socket = open(call.url, id, track)?;
    if track.keeps_text()
        && let Ok(started) = call.rustpad_started()
    {
        socket.know_started(started);
    }
    Ok(socket)
}

/// Runs `work` on a write session that adds text and removes none (it is
/// not judged by the removal rule): on a connection the host kept from an
/// earlier write to pad `id` when there is one, else on a new one without a
/// name; afterwards the host may keep the connection for the next write
/// (see `rustpad::kept`). In a host that keeps nothing, as
/// [`with_session`].
pub fn with_kept_session<T>(
    call: &Call,
    id: &str,
    mut work: impl FnMut(&mut PadSocket) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    if grants::STATELESS {
        return with_session(call, id, Track::TEXT, work);
    }
    attempts(call, || {
        let socket = match PadSocket::take_kept(call.url, id) {
            Some(socket) => {
                if let Some(started) = socket.started() {
                    call.started.set(Some(started));
                }
                socket
            }
            None => join(call, id, Track::TEXT, PadSocket::join_unseen)?,
        };
        on_session(call, socket, &mut work, PadSocket::keep_or_close)
    })
}

/// The session's edit was found in the history after its acknowledgement
/// was lost: the call's result says so.
fn note_acknowledgement(call: &Call, socket: &PadSocket) {
    if socket.acknowledgement_lost() {
        call.acknowledgement_lost.set(true);
    }
}

/// Runs `work` on a joined session and always closes the socket afterwards,
/// in [`attempts`].
pub fn with_session<T>(
    call: &Call,
    id: &str,
    track: Track,
    mut work: impl FnMut(&mut PadSocket) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    attempts(call, || {
        let socket = join(call, id, track, PadSocket::join)?;
        on_session(call, socket, &mut work, PadSocket::close)
    })
}

/// Runs `work` on `socket`, then `end`s it (closes it, or hands it on),
/// whatever the outcome: one attempt of a write.
fn on_session<T>(
    call: &Call,
    mut socket: PadSocket,
    work: &mut impl FnMut(&mut PadSocket) -> Result<T, ToolError>,
    end: fn(PadSocket),
) -> Result<T, ToolError> {
    let outcome = work(&mut socket).map_err(|error| said_of_write(error, &socket));
    note_acknowledgement(call, &socket);
    end(socket);
    outcome
}

/// A write's failure as the model should read it: one before any edit went
/// out says that nothing was written (unless it says so already); one after
/// an edit went out is never tried again.
fn said_of_write(error: ToolError, socket: &PadSocket) -> ToolError {
    match error {
        ToolError::Interrupted(message) if socket.edit_sent() => ToolError::Failed(format!(
            "{message}. This came after the write's edit had been made, so it is not tried again."
        )),
        ToolError::Failed(message) if !socket.edit_sent() && !says_nothing_changed(&message) => {
            ToolError::Failed(format!("{message}; nothing was written."))
        }
        other => other,
    }
}

/// Whether a failure's message already says that the pad was left as it was.
fn says_nothing_changed(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "nothing was written",
        "nothing was changed",
        "was not changed",
    ]
    .iter()
    .any(|phrase| message.contains(phrase))
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
    let (before, after) = edit.bases();
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
        base: Some(after.to_string()),
    }
}

/// Characters at the end of Rustpad's limit that this server's writes leave
/// to people. Rustpad ends the connection of anyone whose edit would pass
/// its limit, so a pad a model filled to the brim would throw off the next
/// person to type a key (their editor rejoins and the key is lost). This
/// much room is some fifteen minutes of steady typing.
pub const ROOM_FOR_PEOPLE: usize = 4_096;
/// The longest pad this server's writes make.
pub const MAX_WRITTEN_CHARS: usize = MAX_DOCUMENT_CHARS - ROOM_FOR_PEOPLE;

/// Refuses a write that would take a pad of `before` characters to `after`:
/// past Rustpad's limit always, and into the room left for people when it
/// makes the pad longer. A write that does not lengthen the pad is never
/// refused for that room, so a model can always shorten or rework a pad that
/// people filled themselves. `after` is a `u64` so that a length past 32
/// bits is told as it is.
pub fn check_limit(before: usize, after: u64) -> Result<(), ToolError> {
    if after > MAX_DOCUMENT_CHARS as u64 {
        return Err(ToolError::new(format!(
            "the pad would be {after} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS}; nothing was written"
        )));
    }
    if after > MAX_WRITTEN_CHARS as u64 && after > before as u64 {
        return Err(ToolError::new(format!(
            "the pad would be {after} characters long: this server makes pads at most {MAX_WRITTEN_CHARS} characters long, leaving the last {ROOM_FOR_PEOPLE} of Rustpad's limit to people typing in them; nothing was written"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_for_people_stops_only_writes_that_lengthen_the_pad() {
        assert!(check_limit(0, MAX_WRITTEN_CHARS as u64).is_ok());
        let into_room = check_limit(0, MAX_WRITTEN_CHARS as u64 + 1).unwrap_err();
        assert!(into_room.message().contains("leaving the last 4096"));
        // A pad people filled past the room's start: kept or shortened, never refused for it.
        assert!(check_limit(MAX_DOCUMENT_CHARS, MAX_DOCUMENT_CHARS as u64).is_ok());
        assert!(check_limit(MAX_WRITTEN_CHARS + 9, MAX_WRITTEN_CHARS as u64 + 8).is_ok());
        assert!(check_limit(MAX_WRITTEN_CHARS + 9, MAX_WRITTEN_CHARS as u64 + 10).is_err());
        let past_rustpad =
            check_limit(MAX_DOCUMENT_CHARS, MAX_DOCUMENT_CHARS as u64 + 1).unwrap_err();
        assert!(
            past_rustpad
                .message()
                .contains("more than Rustpad's limit of 262144")
        );
    }
}
