//! The 2026-07-28 era: stateless; every request carries its version and the
//! client's capabilities in `params._meta`, and results carry `resultType`.

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_VERSION};

use super::request::{Outcome, Request, RpcError};
use super::{
    META_CAPABILITIES, META_CLIENT_INFO, META_SERVER_INFO, META_VERSION, MODERN, SUPPORTED, call,
    legacy, lists,
};
use crate::config::Config;
use crate::guard::ANSWER_KEY;
use crate::tools::{CallContext, Era};

/// The `_meta` of a request meant for 2026-07-28: one that carries any of
/// that revision's `_meta` keys, or calls `server/discover`, which only that
/// revision has (so a discover without `_meta` is told what it lacks).
pub(super) fn meta(request: &Request) -> Option<Map<String, Value>> {
    let meta = request.params.get("_meta").and_then(Value::as_object);
    let marked = meta.is_some_and(|meta| {
        [META_VERSION, META_CAPABILITIES, META_CLIENT_INFO]
            .iter()
            .any(|key| meta.contains_key(*key))
    });
    (marked || request.method == "server/discover").then(|| meta.cloned().unwrap_or_default())
}

pub(super) fn handle(config: &Config, request: &Request, meta: &Map<String, Value>) -> Outcome {
    let Some(version) = meta.get(META_VERSION).and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Invalid params: _meta must carry \"{META_VERSION}\" (a string)"),
        ));
    };
    if version != MODERN {
        return Err(RpcError {
            code: UNSUPPORTED_VERSION,
            message: format!(
                "Unsupported protocol version; this server speaks {}",
                SUPPORTED.join(", ")
            ),
            data: Some(json!({ "supported": SUPPORTED, "requested": version })),
            busy: false,
        });
    }
    let Some(client_capabilities) = meta.get(META_CAPABILITIES).and_then(Value::as_object) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Invalid params: _meta must carry \"{META_CAPABILITIES}\" (an object)"),
        ));
    };
    let mut result = match request.method.as_str() {
        "server/discover" => {
            json!({
                "supportedVersions": SUPPORTED,
                "capabilities": lists::capabilities(),
                "serverInfo": lists::server_info(),
                "instructions": lists::INSTRUCTIONS,
                "ttlMs": lists::LIST_TTL_MS,
                "cacheScope": "public",
            })
        }
        "tools/list" => {
            let mut list = lists::list_tools(config, &request.params)?;
            list["ttlMs"] = json!(lists::LIST_TTL_MS);
            list["cacheScope"] = json!("public");
            list
        }
        "tools/call" => {
            let responses = match request.params.get("inputResponses") {
                None | Some(Value::Null) => None,
                // An answer that could be read two ways is one nobody understood.
                Some(_) if request.ambiguous_answers => {
                    Some(Map::from_iter([(ANSWER_KEY.to_string(), Value::Null)]))
                }
                Some(Value::Object(responses)) => Some(responses.clone()),
                Some(_) => {
                    return Err(RpcError::new(
                        INVALID_PARAMS,
                        "Invalid params: inputResponses must be an object",
                    ));
                }
            };
            let state = match request.params.get("requestState") {
                None | Some(Value::Null) => None,
                Some(Value::String(state)) => Some(state.clone()),
                Some(_) => {
                    return Err(RpcError::new(
                        INVALID_PARAMS,
                        "Invalid params: requestState must be a string",
                    ));
                }
            };
            let context = CallContext {
                era: Era::Modern,
                can_elicit: legacy::can_show_forms(client_capabilities.get("elicitation")),
                responses,
                state,
            };
            call::call_tool(config, request, context)?
        }
        other => match lists::no_prompts_or_resources(request) {
            Some(outcome) => {
                let mut result = outcome?;
                if other.ends_with("/list") {
                    result["ttlMs"] = json!(lists::LIST_TTL_MS);
                    result["cacheScope"] = json!("public");
                }
                result
            }
            None => {
                return Err(RpcError::new(
                    METHOD_NOT_FOUND,
                    format!("Method not found: {other}"),
                ));
            }
        },
    };
    if result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    result["_meta"] = json!({ META_SERVER_INFO: lists::server_info() });
    Ok(result)
}
