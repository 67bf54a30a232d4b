//! What handling a message left for the transports: the component's
//! `reply`, with its kind of error in the terms the transports share with
//! the component's own HTTP front end (`rustpad_mcp_rules::status`).

use super::bindings::{self, Reply};

/// No response, no session: what a message that needs no answer leaves.
impl Default for Reply {
    fn default() -> Reply {
        Reply {
            response: None,
            session: None,
            error: None,
        }
    }
}

impl Reply {
    /// What kind of error the response is, in the transports' terms.
    pub fn error_kind(&self) -> Option<rustpad_mcp_rules::status::ReplyError> {
        self.error.map(Into::into)
    }
}

impl From<bindings::ReplyError> for rustpad_mcp_rules::status::ReplyError {
    fn from(error: bindings::ReplyError) -> Self {
        match error {
            bindings::ReplyError::Code(code) => Self::Code(code),
            bindings::ReplyError::Busy => Self::Busy,
        }
    }
}

impl From<rustpad_mcp_rules::status::ReplyError> for bindings::ReplyError {
    fn from(error: rustpad_mcp_rules::status::ReplyError) -> Self {
        match error {
            rustpad_mcp_rules::status::ReplyError::Code(code) => Self::Code(code),
            rustpad_mcp_rules::status::ReplyError::Busy => Self::Busy,
        }
    }
}
