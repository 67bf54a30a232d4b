//! MCP over JSON-RPC, both protocol eras, from one dispatch.
//!
//! - 2025-11-25 (and 2025-06-18, [`legacy`]): `initialize` negotiates a
//!   version and the client's capabilities; the reply hands the host an
//!   opaque session that comes back with every later message of the
//!   connection.
//! - 2026-07-28 ([`modern`]): stateless; every request carries its version
//!   and the client's capabilities in `params._meta`, and results carry
//!   `resultType`.
//!
//! Both eras reach the same tool code through [`call`]; only the envelope
//! differs. Over HTTP, the standard headers are checked against the body
//! here, before anything runs. Cancellation (`notifications/cancelled`) is
//! carried out by the host, which drops the instance working on that request.

mod answers;
mod apps;
mod call;
mod legacy;
mod lists;
mod methods;
mod modern;
mod negotiate;
mod request;
mod resources;
mod subscriptions;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use rustpad_mcp_rules::codes::{HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use rustpad_mcp_rules::era::{Era, META_CAPABILITIES, META_SERVER_INFO, META_VERSION};
use rustpad_mcp_rules::headers::{Claims, StandardHeaders, version_problem};
use rustpad_mcp_rules::methods::Method;
pub use rustpad_mcp_rules::status::ReplyError;

use crate::config::Config;
use request::{Answered, Outcome, Refusal, RpcError};

pub use call::{CallOutcome, ToolCall, offered_tool, run as run_tool};
pub use lists::server_info;
pub use subscriptions::{MAX_PADS_PER_LISTEN, ROUND, Resume, Round, watch_round};

pub const MODERN: &str = "2026-07-28";
/// Legacy revisions we speak: the ones with elicitation and structured output.
pub const LEGACY: [&str; 2] = ["2025-11-25", "2025-06-18"];
/// Every revision we speak, newest first.
const SUPPORTED: [&str; 3] = [MODERN, LEGACY[0], LEGACY[1]];

/// The methods whose reply may open a session (see `startup` in the WIT world).
pub fn session_openers() -> Vec<String> {
    rustpad_mcp_rules::methods::session_openers()
        .map(String::from)
        .collect()
}

/// What handling one message produced (see the `reply` record in the WIT world).
#[derive(Debug, Default)]
pub struct Reply {
    pub response: Option<String>,
    pub session: Option<String>,
    /// What kind of error `response` is, when it is one.
    pub error: Option<ReplyError>,
    /// A request to hold open instead of answering now (a 2026-07-28
    /// listen): whoever streams responses carries it out.
    pub held: Option<Box<Held>>,
}

impl Reply {
    /// Nothing to send: a notification, or a stray response.
    pub fn is_silent(&self) -> bool {
        self.response.is_none() && self.session.is_none() && self.held.is_none()
    }

    /// Hands a held request to rustpad-mcp's host (the `watches` import's
    /// `hold`), which streams it: nothing is sent now, unless the host
    /// cannot hold it.
    #[cfg(not(feature = "wasm-host"))]
    pub fn held_by_host(self) -> Reply {
        let Some(held) = self.held else {
            return self;
        };
        match crate::grants::watches::hold(&held.opening, &held.closing, &held.watches) {
            Ok(()) => Reply::default(),
            Err(failure) => held.refused(&failure.message),
        }
    }
}

/// A request held open: `opening` goes out at once, each watch's update
/// while it is open, and `closing`, its response, when it ends.
#[derive(Debug)]
pub struct Held {
    pub opening: String,
    pub closing: String,
    pub watches: Vec<crate::grants::watches::Watch>,
    id: Option<Value>,
}

impl Held {
    /// The response when it cannot be held (a cap reached).
    pub fn refused(&self, reason: &str) -> Reply {
        respond(
            self.id.clone(),
            Err(RpcError::new(INVALID_REQUEST, format!("Cannot listen: {reason}")).into()),
        )
    }
}

/// What a legacy-era connection negotiated, kept by the host between messages.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Session {
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    pub capabilities: Value,
}

impl Session {
    /// The session a 2025-11-25 request stands in where the transport keeps
    /// none (a component in a WebAssembly host; each POST stands alone, as
    /// Streamable HTTP allows): the legacy revision its header names, else
    /// the newest when it names none, and no client capabilities, since
    /// without a session no question can reach the client mid-call anyway.
    /// None when the header names another revision, which the header check
    /// then explains.
    pub fn standalone(headers: &StandardHeaders) -> Option<String> {
        let version = match headers.protocol_version.as_deref().map(str::trim) {
            None => LEGACY[0],
            Some(named) => LEGACY.into_iter().find(|v| *v == named)?,
        };
        Some(json!({ "protocolVersion": version, "capabilities": {} }).to_string())
    }
}

/// Handles one JSON-RPC message from the client; `headers` are its standard
/// HTTP headers when it came over HTTP.
pub fn handle(message: &str, headers: Option<&StandardHeaders>, session: Option<&str>) -> Reply {
    match Config::from_settings() {
        Ok(config) => handle_with(&config, message, headers, session),
        Err(problem) => {
            let id = serde_json::from_str::<Value>(message)
                .ok()
                .and_then(|m| m.get("id").cloned());
            respond(id, Err(RpcError::new(INTERNAL_ERROR, problem).into()))
        }
    }
}

/// Handles one message under `config`.
pub fn handle_with(
    config: &Config,
    message: &str,
    headers: Option<&StandardHeaders>,
    session: Option<&str>,
) -> Reply {
    let session: Option<Session> = session.and_then(|s| serde_json::from_str(s).ok());
    if let Some(headers) = headers
        && let Err(refusal) = check_headers(message, headers, session.as_ref())
    {
        return refusal;
    }
    let request = match request::parse(message) {
        Ok(Some(request)) => request,
        Ok(None) => return Reply::default(),
        Err((id, error)) => return respond(id, Err(error.into())),
    };
    if request.lacks_its_id() {
        return Reply::default();
    }
    let method = Method::parse(&request.method);
    // A 2026-07-28 request is served statelessly whatever its method, and
    // `initialize` is not one of that revision's methods.
    let answered = match request.era {
        Era::Modern => modern::handle(config, &request, method),
        Era::Legacy => legacy::handle(config, &request, method, session.as_ref()),
    };
    if request.id.is_none() {
        return Reply::default();
    }
    match answered {
        Err(error) => respond(request.id, Err(error)),
        Ok(Answered {
            result,
            hold: Some(hold),
            ..
        }) => Reply {
            held: Some(Box::new(Held {
                opening: hold.opening,
                closing: respond(request.id.clone(), Ok(result))
                    .response
                    .unwrap_or_default(),
                watches: hold.watches,
                id: request.id,
            })),
            ..Reply::default()
        },
        Ok(Answered {
            result, session, ..
        }) => Reply {
            session: session.and_then(|session| serde_json::to_string(&session).ok()),
            ..respond(request.id, Ok(result))
        },
    }
}

/// Over HTTP: refuses a body whose routed keys are ambiguous, and headers
/// that disagree with the body or name a revision they may not.
fn check_headers(
    message: &str,
    headers: &StandardHeaders,
    session: Option<&Session>,
) -> Result<(), Reply> {
    let claims = Claims::read(message).map_err(|error| {
        let (code, text) = if message.trim_start().starts_with('[') {
            (
                INVALID_REQUEST,
                "Invalid request: batches are not part of MCP; send one message per request"
                    .to_string(),
            )
        } else if error.is_data() {
            (INVALID_REQUEST, format!("Invalid request: {error}"))
        } else {
            (PARSE_ERROR, format!("Parse error: {error}"))
        };
        respond(None, Err(RpcError::new(code, text).into()))
    })?;
    let id = || {
        serde_json::from_str::<Value>(message)
            .ok()
            .and_then(|m| m.get("id").cloned())
    };
    let modern = claims.era() == Era::Modern;
    let agreed = session
        .filter(|_| !modern)
        .map(|s| s.protocol_version.as_str());
    if let Some(problem) = version_problem(headers, agreed, &SUPPORTED, modern) {
        // Within a session the header disagrees with what the session agreed.
        let code = if agreed.is_some() {
            HEADER_MISMATCH
        } else {
            INVALID_REQUEST
        };
        return Err(respond(id(), Err(RpcError::new(code, problem).into())));
    }
    if claims.method().is_some()
        && let Err(mismatch) = claims.check(headers)
    {
        return Err(respond(
            id(),
            Err(RpcError::new(HEADER_MISMATCH, mismatch).into()),
        ));
    }
    Ok(())
}

fn respond(id: Option<Value>, outcome: Outcome) -> Reply {
    let (message, error) = match outcome {
        Ok(result) => (
            json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            None,
        ),
        Err(refusal) => {
            let kind = match &refusal {
                Refusal::Busy(_) => ReplyError::Busy,
                Refusal::Error(error) => ReplyError::Code(error.code),
            };
            let error = refusal.into_error();
            let mut body = json!({ "code": error.code, "message": error.message });
            if let Some(data) = error.data {
                body["data"] = data;
            }
            (
                json!({ "jsonrpc": "2.0", "id": id, "error": body }),
                Some(kind),
            )
        }
    };
    Reply {
        response: Some(message.to_string()),
        error,
        ..Reply::default()
    }
}
