//! Which way a client's message goes, the same on every transport. The host
//! reads only the JSON-RPC framing (and, to tell the revision, the keys
//! 2026-07-28 puts in `_meta`); what a message means is the component's.
//!
//! - a response is the answer to one of our own questions;
//! - `notifications/cancelled` stops the call it names;
//! - anything else is a call for the component, which may open a session
//!   (a method the component named at startup), continue the one its
//!   transport keeps, or stand alone (a 2026-07-28 request).

use rustpad_mcp_rules::era::Era;
use rustpad_mcp_rules::headers::era_of;
use serde_json::Value;

use crate::transport::jsonrpc::{CANCELLED, Envelope};

/// Where one message goes.
#[derive(Debug, PartialEq)]
pub enum Route {
    /// The client's answer to our request `id`: its result as written, or
    /// the error it sent (see [`Envelope::answer`]).
    Answer {
        id: Value,
        answer: Result<String, String>,
    },
    /// Stop the call whose request id has this key (none: the notification
    /// does not say unambiguously which).
    Cancel {
        request: Option<String>,
        session: SessionUse,
    },
    /// A call for the component.
    Call {
        /// Its request id; none for a notification.
        id: Option<Value>,
        /// Its method as sent (for trace lines).
        method: String,
        session: SessionUse,
    },
}

/// What a call does with the session its transport keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionUse {
    /// Nothing: a 2026-07-28 request stands alone.
    None,
    /// Its reply may hand over a new session, which the messages after it
    /// must see.
    Opens,
    /// It belongs to the session its connection has, if any.
    Continues,
}

/// Routes messages for one component.
pub struct Router {
    /// The methods the component said may open a session (at startup).
    session_openers: Vec<String>,
}

impl Router {
    pub fn new(session_openers: Vec<String>) -> Router {
        Router { session_openers }
    }

    pub fn route(&self, text: &str) -> Route {
        let envelope = Envelope::read(text);
        let id = envelope.id();
        if envelope.is_response()
            && let Some(id) = id
        {
            return Route::Answer {
                id,
                answer: envelope.answer(),
            };
        }
        let method = envelope.method.clone().unwrap_or_default();
        let session = match era_of(text) {
            // A body that speaks no revision with certainty joins no session:
            // the component refuses it, as it refuses any repeated key.
            Ok(Era::Modern) | Err(_) => SessionUse::None,
            Ok(Era::Legacy) if self.session_openers.contains(&method) => SessionUse::Opens,
            Ok(Era::Legacy) => SessionUse::Continues,
        };
        if method == CANCELLED {
            return Route::Cancel {
                request: envelope.cancelled_request(),
                session,
            };
        }
        Route::Call {
            id,
            method,
            session,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Made-up methods: the host names no MCP method (tests/contract.rs).
    const OPENER: &str = "example/open";

    fn router() -> Router {
        Router::new(vec![OPENER.into()])
    }

    fn session_of(text: &str) -> SessionUse {
        match router().route(text) {
            Route::Call { session, .. } => session,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_cancellations_and_calls_are_told_apart() {
        let route = router().route(r#"{"jsonrpc":"2.0","id":"q1","result":{"action":"accept"}}"#);
        assert_eq!(
            route,
            Route::Answer {
                id: Value::from("q1"),
                answer: Ok(r#"{"action":"accept"}"#.into())
            }
        );
        let cancel =
            format!(r#"{{"jsonrpc":"2.0","method":"{CANCELLED}","params":{{"requestId":7}}}}"#);
        assert_eq!(
            router().route(&cancel),
            Route::Cancel {
                request: Some("7".into()),
                session: SessionUse::Continues
            }
        );
        let route = router().route(r#"{"jsonrpc":"2.0","id":1,"method":"example/other"}"#);
        assert_eq!(
            route,
            Route::Call {
                id: Some(Value::from(1)),
                method: "example/other".into(),
                session: SessionUse::Continues
            }
        );
    }

    #[test]
    fn sessions_open_where_the_component_said_and_never_in_2026_07_28() {
        let open = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{OPENER}","params":{{}}}}"#);
        assert_eq!(session_of(&open), SessionUse::Opens);
        let modern = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{OPENER}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
        );
        assert_eq!(session_of(&modern), SessionUse::None);
        // The era's one rule (rustpad_mcp_rules::era): a mark with a null
        // value is 2026-07-28's too, and a mark given twice joins nothing.
        let null = modern.replace(r#""2026-07-28""#, "null");
        assert_eq!(session_of(&null), SessionUse::None);
        let twice = open.replace(
            r#""params":{}"#,
            r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        );
        assert_eq!(session_of(&twice), SessionUse::None);
        let other = Router::new(Vec::new());
        assert!(matches!(
            other.route(&open),
            Route::Call {
                session: SessionUse::Continues,
                ..
            }
        ));
    }
}
