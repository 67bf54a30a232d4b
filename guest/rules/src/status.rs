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
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_CAPABILITY,
    PARSE_ERROR, UNSUPPORTED_VERSION,
};

/// The status for a reply whose error (if any) has `error_code`.
pub fn of_reply(error_code: Option<i64>, in_session: bool, busy: bool) -> u16 {
    if busy {
        return 503;
    }
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
        assert_eq!(of_reply(None, false, false), 200);
        assert_eq!(of_reply(Some(-32601), false, false), 404);
        for code in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(of_reply(Some(code), false, false), 400, "{code}");
        }
        assert_eq!(of_reply(Some(-32603), false, false), 500);
        assert_eq!(of_reply(Some(-32601), true, false), 200);
        assert_eq!(of_reply(Some(-32602), true, false), 200);
        for unacceptable in [-32700, -32600, -32020] {
            assert_eq!(
                of_reply(Some(unacceptable), true, false),
                400,
                "{unacceptable}"
            );
        }
        assert_eq!(of_reply(Some(-32603), true, true), 503);
        assert_eq!(of_reply(Some(-32603), false, true), 503);
    }
}
