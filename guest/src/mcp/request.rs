//! One JSON-RPC message from the client, parsed, and what it can be
//! answered with: a method's result, or an error.

use std::fmt;

use serde_json::{Map, Value};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RESOURCE_NOT_FOUND};
use rustpad_mcp_rules::era::Era;
use rustpad_mcp_rules::headers::era_of;
use rustpad_mcp_rules::json::{repeated_key, replace_lone_surrogates};

use super::Session;
use crate::grants::watches::Watch;

pub(super) struct Request {
    pub id: Option<Value>,
    pub method: String,
    pub params: Map<String, Value>,
    /// The message escaped an unpaired UTF-16 surrogate (`"\ud800"`), which
    /// no Rust string can hold; it was read with U+FFFD in its place.
    pub lone_surrogates: bool,
    /// The revision it speaks ([`rustpad_mcp_rules::era`]).
    pub era: Era,
    /// `inputResponses` giving a key twice somewhere: no answer can be read
    /// from it with certainty (see `rustpad_mcp_rules::json`).
    pub ambiguous_answers: bool,
}

impl Request {
    /// A request (a method that is not a notification) sent without an id:
    /// it cannot be answered, so it is never carried out either.
    pub fn lacks_its_id(&self) -> bool {
        self.id.is_none() && !self.method.starts_with("notifications/")
    }
}

/// A JSON-RPC error: why a message was not carried out.
pub(super) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// No such resource: the revision's own code is the era adapter's to
    /// give (see `modern::in_this_revision`).
    pub fn resource_not_found(uri: &str, why: String) -> RpcError {
        RpcError {
            code: RESOURCE_NOT_FOUND,
            message: format!(
                "Resource not found: {}: {why}",
                crate::text::clean_line(uri, 200)
            ),
            data: Some(serde_json::json!({ "uri": uri })),
        }
    }
}

/// Why a message was not answered with a result.
pub(super) enum Refusal {
    /// It was not carried out, for the reason the error gives.
    Error(RpcError),
    /// The server had no room to carry it out (every place for calls was
    /// taken): the reason. Answered as a JSON-RPC error too, which a
    /// transport that can marks as worth retrying shortly (HTTP 503).
    Busy(String),
}

impl From<RpcError> for Refusal {
    fn from(error: RpcError) -> Refusal {
        Refusal::Error(error)
    }
}

impl Refusal {
    /// The host had no place for the call: `reason` is its word, for the client.
    pub fn busy(host: crate::grants::HostError) -> Refusal {
        Refusal::Busy(host.message)
    }

    /// The JSON-RPC error the client is sent.
    pub fn into_error(self) -> RpcError {
        match self {
            Refusal::Error(error) => error,
            Refusal::Busy(reason) => RpcError::new(
                rustpad_mcp_rules::codes::INTERNAL_ERROR,
                format!("Server busy: {reason}"),
            ),
        }
    }
}

pub(super) type Outcome = Result<Value, Refusal>;

/// What a method produced: its result, for `initialize` the session it
/// opens, and for `subscriptions/listen` what the host holds open (the
/// result is then the response sent when the listen ends).
pub(super) struct Answered {
    pub result: Value,
    pub session: Option<Session>,
    pub hold: Option<Hold>,
}

/// A request to hold open: the line that opens its stream, and the pads
/// whose changes it carries.
pub(super) struct Hold {
    pub opening: String,
    pub watches: Vec<Watch>,
}

impl From<Value> for Answered {
    fn from(result: Value) -> Answered {
        Answered {
            result,
            session: None,
            hold: None,
        }
    }
}

/// A refusal of a message that is not a request this server can read, with
/// the id to answer (none when it has no usable one) and what is wrong.
fn invalid_request(id: Option<Value>, problem: impl fmt::Display) -> (Option<Value>, RpcError) {
    let error = RpcError::new(INVALID_REQUEST, format!("Invalid request: {problem}"));
    (id, error)
}

/// Parses a message. `Ok(None)`: nothing to answer (a stray response).
// Once per message, and the error is what gets answered: its size is no cost worth boxing for.
#[allow(clippy::result_large_err)]
pub(super) fn parse(message: &str) -> Result<Option<Request>, (Option<Value>, RpcError)> {
    let not_json = || {
        (
            None,
            RpcError::new(PARSE_ERROR, "Parse error: the message is not valid JSON"),
        )
    };
    let (value, repeated, lone_surrogates) = match serde_json::from_str(message) {
        Ok(value) => (value, repeated_key(message), false),
        Err(_) => {
            let repaired = replace_lone_surrogates(message).ok_or_else(not_json)?;
            let value: Value = serde_json::from_str(&repaired).map_err(|_| not_json())?;
            (value, repeated_key(&repaired), true)
        }
    };
    // One rule for every object of a message: a key given twice is not read
    // either way. In an answer that is an answer nobody understood (the call
    // ends with the pad unchanged); anywhere else the request is refused.
    let ambiguous_answers = repeated
        .as_ref()
        .is_some_and(|r| r.concerns("params.inputResponses"));
    if let Some(repeated) = repeated.filter(|_| !ambiguous_answers) {
        let id = value
            .get("id")
            .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
        let id = id
            .cloned()
            .filter(|_| !repeated.at.is_empty() || repeated.key != "id");
        return Err(invalid_request(
            id,
            format!(
                "{repeated}; a key given twice can be read either way, so the request is not carried out. Give each key once."
            ),
        ));
    }
    let Value::Object(mut object) = value else {
        return Err(invalid_request(None, "expected a JSON-RPC object"));
    };
    let id = object.remove("id");
    let id_is_valid = matches!(&id, None | Some(Value::String(_)))
        || id.as_ref().is_some_and(|v| v.is_i64() || v.is_u64());
    let echo_id = if id_is_valid { id.clone() } else { None };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid_request(echo_id, "\"jsonrpc\" must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        None if object.contains_key("result") || object.contains_key("error") => return Ok(None),
        _ => {
            return Err(invalid_request(echo_id, "\"method\" must be a string"));
        }
    };
    if !id_is_valid {
        return Err(invalid_request(
            None,
            "\"id\" must be a string or an integer",
        ));
    }
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err((
                id,
                RpcError::new(
                    INVALID_PARAMS,
                    "Invalid params: \"params\" must be an object",
                ),
            ));
        }
    };
    // What remains cannot be unreadable to the era's rule: the message is
    // JSON and no key in it repeats.
    let era = era_of(message).map_err(|_| not_json())?;
    Ok(Some(Request {
        id,
        method,
        params,
        era,
        lone_surrogates,
        ambiguous_answers,
    }))
}
