//! The little of JSON-RPC that the transports need to route messages: the
//! envelope, request ids as keys, error codes, and the error replies the host
//! writes itself.
//!
//! The host reads only what routing needs (and, over HTTP, what the headers
//! repeat); the component parses each message again, in full, as the client
//! sent it.

use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The largest message either transport accepts.
pub use rustpad_mcp_rules::post::MAX_MESSAGE_BYTES;

/// The notification that stops a running call (either way).
pub const CANCELLED: &str = "notifications/cancelled";

/// The answer to a request whose id is already in use by a running call.
pub const DUPLICATE_ID: &str =
    "Invalid request: a request with this id is still running; give each request its own id";

/// The parts of a message the transports route on, kept raw: a client's text
/// (even one with unpaired surrogate escapes) never stops routing. A member
/// given as `null` counts as given (`"result": null` is a response), and one
/// given twice is read the way the component reads it, the last one counting,
/// but marks the envelope ambiguous.
#[derive(Default)]
pub struct Envelope<'a> {
    id: Option<&'a RawValue>,
    pub method: Option<String>,
    pub params: Option<&'a RawValue>,
    pub result: Option<&'a RawValue>,
    pub error: Option<&'a RawValue>,
    /// A routed member was given twice: the message means two things at once.
    ambiguous: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(message: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Envelope<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }

            fn visit_map<A: MapAccess<'de>>(
                self,
                mut members: A,
            ) -> Result<Envelope<'de>, A::Error> {
                let mut envelope = Envelope::default();
                let mut seen: Vec<String> = Vec::new();
                while let Some(name) = members.next_key::<String>()? {
                    let routed =
                        ["id", "method", "params", "result", "error"].contains(&name.as_str());
                    if routed && seen.contains(&name) {
                        envelope.ambiguous = true;
                    }
                    match name.as_str() {
                        "id" => envelope.id = members.next_value()?,
                        "method" => envelope.method = members.next_value()?,
                        "params" => envelope.params = members.next_value()?,
                        "result" => envelope.result = Some(members.next_value()?),
                        "error" => envelope.error = Some(members.next_value()?),
                        _ => {
                            members.next_value::<IgnoredAny>()?;
                        }
                    }
                    if routed {
                        seen.push(name);
                    }
                }
                Ok(envelope)
            }
        }
        message.deserialize_map(Members)
    }
}

impl<'a> Envelope<'a> {
    /// Reads the envelope of `text`; anything unreadable is an empty envelope,
    /// and the component answers it with the precise error.
    pub fn read(text: &'a str) -> Envelope<'a> {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The request id, unless absent or null.
    pub fn id(&self) -> Option<Value> {
        self.id
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .filter(|id| !id.is_null())
    }

    /// A response from the client: an id with a result or an error, no method.
    pub fn is_response(&self) -> bool {
        self.method.is_none()
            && self.id.is_some()
            && (self.result.is_some() || self.error.is_some())
    }

    /// The request whose cancellation this `notifications/cancelled` asks
    /// for; none when the message does not say it unambiguously (a key
    /// given twice anywhere in it: `rustpad_mcp_rules::json`).
    pub fn cancelled_request(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Cancelled {
            #[serde(rename = "requestId")]
            request_id: Value,
        }
        let params = self.params?.get();
        if self.ambiguous || rustpad_mcp_rules::json::repeated_key(params).is_some() {
            return None;
        }
        let params: Cancelled = serde_json::from_str(params).ok()?;
        Some(key(&params.request_id))
    }

    /// The client's answer to one of our requests, as the component gets it:
    /// the result as written, or the error's message. An ambiguous response
    /// (a member given twice, or both a result and an error) is handed on as
    /// text that is no JSON value, which the component takes as an answer it
    /// did not understand.
    pub fn answer(&self) -> Result<String, String> {
        if self.ambiguous || (self.result.is_some() && self.error.is_some()) {
            return Ok(String::new());
        }
        #[derive(Deserialize)]
        struct ErrorBody {
            message: String,
        }
        match (self.result, self.error) {
            (Some(result), _) => Ok(result.get().to_string()),
            (None, Some(error)) => Err(format!(
                "the client answered with an error: {}",
                serde_json::from_str::<ErrorBody>(error.get())
                    .map_or_else(|_| "(unreadable)".to_string(), |e| e.message)
            )),
            (None, None) => Err("the client's answer was empty".into()),
        }
    }
}

/// A request id as a map key: its JSON text, so 1 and "1" stay distinct.
pub fn key(id: &Value) -> String {
    id.to_string()
}

pub fn error_response(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_result_is_an_answer_and_a_doubled_member_an_unreadable_one() {
        let null = Envelope::read(r#"{"jsonrpc":"2.0","id":"q","result":null}"#);
        assert!(null.is_response());
        assert_eq!(null.answer(), Ok("null".into()));
        let plain = Envelope::read(r#"{"jsonrpc":"2.0","id":"q","result":{"action":"decline"}}"#);
        assert_eq!(plain.answer(), Ok(r#"{"action":"decline"}"#.into()));
        for doubled in [
            r#"{"jsonrpc":"2.0","id":"q","result":{"action":"decline"},"result":{"action":"accept"}}"#,
            r#"{"jsonrpc":"2.0","id":"x","id":"q","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"q","result":{},"error":{"code":1,"message":"m"}}"#,
        ] {
            let envelope = Envelope::read(doubled);
            assert!(envelope.is_response(), "{doubled}");
            assert_eq!(envelope.id(), Some(Value::from("q")), "{doubled}");
            assert_eq!(envelope.answer(), Ok(String::new()), "{doubled}");
        }
        // Members that route nothing may repeat.
        let extra = Envelope::read(r#"{"jsonrpc":"2.0","x":1,"x":2,"id":"q","result":{}}"#);
        assert_eq!(extra.answer(), Ok("{}".into()));
    }
}
