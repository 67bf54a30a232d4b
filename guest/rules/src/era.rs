//! Which revision of MCP a message speaks, decided in one place for the
//! component's dispatch and the host's router, so that a message is never
//! served as one revision and routed as another.
//!
//! 2026-07-28 marks every request: its `params._meta` carries the revision,
//! the client's capabilities and the client's name under keys no earlier
//! revision uses, and one method (`server/discover`) exists only there. A key
//! that is present marks the message whatever its value, `null` included: a
//! request that meant 2026-07-28 and got a field wrong is then told what its
//! `_meta` lacks, rather than served as part of a session it never opened.
//! A body that gives one of these keys (or any key the headers repeat) twice
//! speaks no revision with certainty: [`crate::headers::era_of`] says so, and
//! the dispatch refuses it.

/// The `_meta` keys of 2026-07-28.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The two ways MCP frames a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 and 2025-06-18: `initialize` negotiates a session that the
    /// transport keeps, and the server asks its questions mid-call.
    Legacy,
    /// 2026-07-28: every request stands alone, and a question ends the
    /// round with an `input_required` result.
    Modern,
}

/// The rule itself, over what a body says (read by
/// [`crate::headers::era_of`]): any mark, or a method only 2026-07-28 has.
pub fn decide(method: Option<&str>, marked: bool) -> Era {
    if marked || method.is_some_and(crate::methods::only_modern) {
        Era::Modern
    } else {
        Era::Legacy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::era_of as of;

    fn with_meta(meta: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#)
    }

    #[test]
    fn any_mark_makes_a_request_modern_whatever_its_value() {
        for key in [META_VERSION, META_CAPABILITIES, META_CLIENT_INFO] {
            for value in [r#""2026-07-28""#, "{}", "null", "7"] {
                let body = with_meta(&format!(r#"{{"{key}":{value}}}"#));
                assert_eq!(of(&body).unwrap(), Era::Modern, "{body}");
            }
        }
        let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
        assert_eq!(of(discover).unwrap(), Era::Modern);
    }

    #[test]
    fn anything_else_is_legacy() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.to_string(),
            with_meta(r#"{"progressToken":1}"#),
            with_meta("null"),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_string(),
        ] {
            assert_eq!(of(&body).unwrap(), Era::Legacy, "{body}");
        }
    }

    #[test]
    fn a_mark_given_twice_or_a_broken_body_speaks_no_revision() {
        let twice = with_meta(&format!(
            r#"{{"{META_VERSION}":"2026-07-28","{META_VERSION}":null}}"#
        ));
        assert!(of(&twice).is_err());
        let method_twice =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"server/discover"}"#;
        assert!(of(method_twice).is_err());
        assert!(of("{").is_err());
        // Keys that tell nothing may repeat as far as the era goes; the
        // dispatch refuses them for its own reasons.
        let other_twice = with_meta(r#"{"progressToken":1,"progressToken":2}"#);
        assert_eq!(of(&other_twice).unwrap(), Era::Legacy);
    }

    #[test]
    fn a_lone_surrogate_is_read_as_the_dispatch_reads_it() {
        let body = with_meta(&format!(r#"{{"{META_VERSION}":"\ud800"}}"#));
        assert_eq!(of(&body).unwrap(), Era::Modern);
        let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\udc00"}}"#;
        assert_eq!(of(legacy).unwrap(), Era::Legacy);
    }
}
