//! The HTTP status a reply travels with.
//!
//! A message the server cannot accept at all (not JSON-RPC, ambiguous, or
//! its headers disagree with it) is a 400 everywhere, as Streamable HTTP
//! asks. Otherwise, outside a session (2026-07-28, or a legacy request
//! without its session) a protocol error carries its HTTP status too, as
//! 2026-07-28 asks; inside a 2025-11-25 session every JSON-RPC answer is a
//! 200, which is what those clients read. A reply saying the server had no
//! room is a 503 either way.

use crate::codes::{
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_CAPABILITY, PARSE_ERROR, UNSUPPORTED_VERSION,
};

/// The kinds of error reply a transport treats apart (the WIT's
/// `reply-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyError {
    /// A JSON-RPC error with this code.
    Code(i64),
    /// No room for the call: a JSON-RPC internal error that is worth
    /// retrying shortly.
    Busy,
}

impl ReplyError {
    /// The JSON-RPC error code the response carries.
    pub fn code(self) -> i64 {
        match self {
            ReplyError::Code(code) => code,
            ReplyError::Busy => INTERNAL_ERROR,
        }
    }
}

/// The status for a reply whose error is `error` (none: a result).
pub fn of_reply(error: Option<ReplyError>, in_session: bool) -> u16 {
    match error {
        Some(ReplyError::Busy) => 503,
        error => of_code(error.map(ReplyError::code), in_session),
    }
}

/// The status for a reply whose error (if any) has `error_code`.
fn of_code(error_code: Option<i64>, in_session: bool) -> u16 {
    if let Some(PARSE_ERROR | INVALID_REQUEST | HEADER_MISMATCH) = error_code {
        return 400;
    }
    if in_session {
        return 200;
    }
    match error_code {
        None => 200,
        Some(METHOD_NOT_FOUND) => 404,
        Some(
            PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH | MISSING_CAPABILITY
            | UNSUPPORTED_VERSION,
        ) => 400,
        Some(_) => 500,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_travel_with_their_http_status_outside_a_session() {
        assert_eq!(of_reply(None, false), 200);
        assert_eq!(of_reply(Some(ReplyError::Code(-32601)), false), 404);
        for code in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(of_reply(Some(ReplyError::Code(code)), false), 400, "{code}");
        }
        assert_eq!(of_reply(Some(ReplyError::Code(-32603)), false), 500);
        assert_eq!(of_reply(Some(ReplyError::Code(-32601)), true), 200);
        assert_eq!(of_reply(Some(ReplyError::Code(-32602)), true), 200);
        for unacceptable in [-32700, -32600, -32020] {
            assert_eq!(
                of_reply(Some(ReplyError::Code(unacceptable)), true),
                400,
                "{unacceptable}"
            );
        }
        assert_eq!(of_reply(Some(ReplyError::Busy), true), 503);
        assert_eq!(of_reply(Some(ReplyError::Busy), false), 503);
    }
}
