//! What a 2025-11-25 connection settles at `initialize`: the revision, and
//! whether its client can show a form and render our view (which a
//! 2026-07-28 request says in its `_meta` instead).

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::INVALID_PARAMS;

use super::request::RpcError;
use super::{LEGACY, Session, apps, lists};

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
    // shows forms, whether it renders our view), not the client's
    // declaration: the host stores sessions, and their size should not be
    // the client's choice.
    let declared = params.get("capabilities");
    let mut client_capabilities = Map::new();
    if can_show_forms(declared.and_then(|caps| caps.get("elicitation"))) {
        client_capabilities.insert("elicitation".into(), json!({ "form": {} }));
    }
    if apps::renders_views(declared.and_then(|caps| caps.get("extensions"))) {
        let (key, kept) = apps::kept_capability();
        client_capabilities.insert(key, kept);
    }
    let client_capabilities = Value::Object(client_capabilities);
    let result = json!({
        "protocolVersion": version,
        "capabilities": lists::capabilities(false),
        "serverInfo": lists::server_info(),
        "instructions": lists::INSTRUCTIONS,
    });
    let session = Session {
        protocol_version: version.into(),
        capabilities: client_capabilities,
    };
    Ok((result, session))
}

/// Whether an `elicitation` capability covers form mode (`{}` means form).
pub(super) fn can_show_forms(capability: Option<&Value>) -> bool {
    match capability.and_then(Value::as_object) {
        Some(modes) => modes.is_empty() || modes.contains_key("form"),
        None => false,
    }
}
