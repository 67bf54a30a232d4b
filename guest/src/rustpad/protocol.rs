//! The messages of Rustpad's collaboration socket, both ways, as
//! rustpad-server declares them (`ServerMsg` and `ClientMsg` in its
//! `rustpad.rs`): an externally tagged enum each, with the same variant and
//! field names in the same order, so serde reads and writes exactly the
//! frames Rustpad's own editor exchanges.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::positions::Positions;

/// The name people in the pad see for us.
pub(super) const CLIENT_NAME: &str = "rustpad-mcp";
/// Our caret colour, which people in the pad see beside our name.
const CLIENT_HUE: u32 = 200;

/// A server message, borrowing its text from the frame.
#[derive(Deserialize)]
pub(super) enum ServerMsg<'a> {
    Identity(u64),
    History {
        start: u64,
        /// Read after the frame, the way the session needs it.
        #[serde(borrow)]
        operations: &'a RawValue,
    },
    Language(String),
    UserInfo {
        id: u64,
        info: Option<UserInfo>,
    },
    UserCursor {
        id: u64,
        data: Positions,
    },
}

/// Who a connection says it is (only the name is kept).
#[derive(Deserialize)]
pub(super) struct UserInfo {
    pub(super) name: String,
}

/// A message this client sends, borrowing what it carries.
#[derive(Serialize)]
pub(super) enum ClientMsg<'a> {
    /// An edit built against the first `revision` entries of the history,
    /// in Rustpad's wire form of an operation.
    Edit {
        revision: u64,
        operation: &'a serde_json::Value,
    },
    SetLanguage(&'a str),
    /// The name and caret colour people in the pad see for this connection.
    ClientInfo {
        name: &'a str,
        hue: u32,
    },
    /// This connection's carets and selections, in code points.
    CursorData {
        cursors: &'a [u64],
        selections: &'a [[u64; 2]],
    },
}

impl ClientMsg<'_> {
    /// No caret and no selection: a barrier whose echo says that all Rustpad
    /// had before it has come (a look's snapshot, the edit of a writer that
    /// left), and which shows nothing in the pad.
    pub(super) const NO_CURSOR: ClientMsg<'static> = ClientMsg::CursorData {
        cursors: &[],
        selections: &[],
    };

    /// Our name and caret colour: the echo that ends a write session's
    /// snapshot, after which people in the pad see who edits.
    pub(super) const ANNOUNCE: ClientMsg<'static> = ClientMsg::ClientInfo {
        name: CLIENT_NAME,
        hue: CLIENT_HUE,
    };

    /// The frame's text.
    pub(super) fn frame(&self) -> String {
        serde_json::to_string(self).expect("a client message always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames Rustpad's editor sends, byte for byte.
    #[test]
    fn client_messages_are_rustpads_frames() {
        let operation = serde_json::json!([3, "ab", -2]);
        let frames = [
            (
                ClientMsg::Edit {
                    revision: 7,
                    operation: &operation,
                },
                r#"{"Edit":{"revision":7,"operation":[3,"ab",-2]}}"#,
            ),
            (ClientMsg::SetLanguage("rust"), r#"{"SetLanguage":"rust"}"#),
            (
                ClientMsg::ANNOUNCE,
                r#"{"ClientInfo":{"name":"rustpad-mcp","hue":200}}"#,
            ),
            (
                ClientMsg::NO_CURSOR,
                r#"{"CursorData":{"cursors":[],"selections":[]}}"#,
            ),
            (
                ClientMsg::CursorData {
                    cursors: &[4],
                    selections: &[[4, 6]],
                },
                r#"{"CursorData":{"cursors":[4],"selections":[[4,6]]}}"#,
            ),
        ];
        for (message, frame) in frames {
            assert_eq!(message.frame(), frame);
        }
    }
}
