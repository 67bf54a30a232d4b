//! The JSON messages exchanged over a pad's WebSocket, spelled exactly as upstream's serde
//! derives spell them (externally tagged enums), so both this server and its test clients can
//! share one definition.

use operational_transform::OperationSeq;
use serde::{Deserialize, Serialize};

/// One entry of a document's history: an operation and the user id that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserOperation {
    /// The user that made the edit; `u64::MAX` marks text loaded from storage.
    pub id: u64,
    /// The edit, already transformed to apply at this point of the history.
    pub operation: OperationSeq,
}

/// What a client tells the others about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// Display name.
    pub name: String,
    /// Colour hue in degrees.
    pub hue: u32,
}

/// Cursor and selection positions, in code points.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorData {
    /// Caret offsets.
    pub cursors: Vec<u32>,
    /// Selections as `(start, end)` pairs, sent as two-element arrays.
    pub selections: Vec<(u32, u32)>,
}

/// A message from a client to the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClientMsg {
    /// An edit based on the first `revision` operations of the history.
    Edit {
        /// How many history entries the client had seen when it made the edit.
        revision: usize,
        /// The edit itself.
        operation: OperationSeq,
    },
    /// Sets the pad's language; the last writer wins.
    SetLanguage(String),
    /// Sets this client's name and colour.
    ClientInfo(UserInfo),
    /// Sets this client's cursors and selections.
    CursorData(CursorData),
}

/// A message from the server to a client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ServerMsg {
    /// The receiving connection's user id within this document.
    Identity(u64),
    /// History entries from index `start` onwards.
    History {
        /// Index of the first entry in `operations`.
        start: usize,
        /// The entries, in order.
        operations: Vec<UserOperation>,
    },
    /// The pad's language.
    Language(String),
    /// A user's information, or `None` once that user has gone.
    UserInfo {
        /// The user the information is about.
        id: u64,
        /// The information, absent on disconnect.
        info: Option<UserInfo>,
    },
    /// A user's cursors.
    UserCursor {
        /// The user the cursors belong to.
        id: u64,
        /// The positions.
        data: CursorData,
    },
}

impl ServerMsg {
    /// The message as the JSON text that goes in a WebSocket text frame.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("server messages always serialise")
    }
}

impl ClientMsg {
    /// The message as the JSON text that goes in a WebSocket text frame.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("client messages always serialise")
    }
}
