//! The 2025-11-25 era (and 2025-06-18): `initialize` negotiates a version and
//! the client's capabilities, and later requests carry the session that
//! records them.

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};

use super::request::{Outcome, Request, RpcError};
use super::{LEGACY, Session, call, lists};
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

pub(super) fn handle(config: &Config, request: &Request, session: Option<&Session>) -> Outcome {
    match request.method.as_str() {
        "ping" => return Ok(json!({})),
        // Not MCP: what `rustpad-mcp --check` asks. Read-only, so any client may.
        "rustpad-mcp/check" => {
            let (ok, report) = crate::rustpad::check::run(config);
            return Ok(json!({ "ok": ok, "report": report }));
        }
        "tools/list" | "tools/call" if session.is_none() => {
            return Err(RpcError::new(
                INVALID_REQUEST,
                "Invalid request: send initialize first, or carry the 2026-07-28 _meta on every request",
            ));
        }
        _ => {}
    }
    match (request.method.as_str(), session) {
        ("tools/list", _) => lists::list_tools(config, &request.params),
        ("tools/call", Some(session)) => {
            let context = CallContext {
                era: Era::Legacy,
                can_elicit: can_show_forms(session.capabilities.get("elicitation")),
                responses: None,
                state: None,
            };
            call::call_tool(config, request, context)
        }
        ("logging/setLevel", _) => lists::set_level(&request.params),
        (other, _) => lists::no_prompts_or_resources(request).unwrap_or_else(|| {
            Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("Method not found: {other}"),
            ))
        }),
    }
}

/// Whether an `elicitation` capability covers form mode (`{}` means form).
pub(super) fn can_show_forms(capability: Option<&Value>) -> bool {
    match capability.and_then(Value::as_object) {
        Some(modes) => modes.is_empty() || modes.contains_key("form"),
        None => false,
    }
}
