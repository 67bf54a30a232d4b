//! The 2025-11-25 era (and 2025-06-18): `initialize` negotiates a version and
//! the client's capabilities, and later requests carry the session that
//! records them.

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, INVALID_REQUEST};
use rustpad_mcp_rules::methods::Method;

use super::methods::{self, Answered};
use super::request::{Request, RpcError};
use super::{LEGACY, Session, lists};
use crate::config::Config;
use crate::tools::{CallContext, Era};

pub(super) fn initialize(params: &Map<String, Value>) -> Result<(Value, Session), RpcError> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "initialize needs a protocolVersion string",
        ));
    };
    let version = LEGACY
        .into_iter()
        .find(|v| *v == requested)
        .unwrap_or(LEGACY[0]);
    // The session keeps only what this server consults (whether the client
    // shows forms), not the client's declaration: the host stores sessions,
    // and their size should not be the client's choice.
    let elicitation = params
        .get("capabilities")
        .and_then(|caps| caps.get("elicitation"));
    let client_capabilities = if can_show_forms(elicitation) {
        json!({ "elicitation": { "form": {} } })
    } else {
        json!({})
    };
    let result = json!({
        "protocolVersion": version,
        "capabilities": lists::capabilities(),
        "serverInfo": lists::server_info(),
        "instructions": lists::INSTRUCTIONS,
    });
    let session = Session {
        protocol_version: version.into(),
        capabilities: client_capabilities,
    };
    Ok((result, session))
}

/// A request of this era: a method that needs a session is refused
/// without one, and a tool call learns from the session whether the client
/// shows forms.
pub(super) fn handle(
    config: &Config,
    request: &Request,
    method: Option<Method>,
    session: Option<&Session>,
) -> Result<Answered, RpcError> {
    let Some(method) = method.filter(|method| method.offered_in(false)) else {
        return Err(methods::not_found(request));
    };
    if method.spec().needs_session && session.is_none() {
        return Err(RpcError::new(
            INVALID_REQUEST,
            "Invalid request: send initialize first, or carry the 2026-07-28 _meta on every request",
        ));
    }
    methods::answer(config, request, method, || {
        Ok(CallContext {
            era: Era::Legacy,
            can_elicit: session.is_some_and(|s| can_show_forms(s.capabilities.get("elicitation"))),
            responses: None,
            state: None,
        })
    })
}

/// Whether an `elicitation` capability covers form mode (`{}` means form).
pub(super) fn can_show_forms(capability: Option<&Value>) -> bool {
    match capability.and_then(Value::as_object) {
        Some(modes) => modes.is_empty() || modes.contains_key("form"),
        None => false,
    }
}
