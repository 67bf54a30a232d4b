//! The 2026-07-28 era: stateless; every request carries its version and the
//! client's capabilities in `params._meta`, and results carry `resultType`.

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION};
use rustpad_mcp_rules::methods::{self as table, Cache, Method};

use super::methods;
use super::request::{Outcome, Request, RpcError};
use super::{
    META_CAPABILITIES, META_CLIENT_INFO, META_SERVER_INFO, META_VERSION, MODERN, SUPPORTED, lists,
    negotiate,
};
use crate::config::Config;
use crate::guard::ANSWER_KEY;
use crate::tools::{CallContext, Era};

/// The `_meta` of a request meant for 2026-07-28: one that carries any of
/// that revision's `_meta` keys, or calls a method only that revision has
/// (so a `server/discover` without `_meta` is told what it lacks).
pub(super) fn meta(request: &Request) -> Option<Map<String, Value>> {
    let meta = request.params.get("_meta").and_then(Value::as_object);
    let marked = meta.is_some_and(|meta| {
        [META_VERSION, META_CAPABILITIES, META_CLIENT_INFO]
            .iter()
            .any(|key| meta.contains_key(*key))
    });
    (marked || table::only_modern(&request.method)).then(|| meta.cloned().unwrap_or_default())
}

/// A request of this era: its `_meta` must name this revision and the
/// client's capabilities; every result says it is complete (unless it asks
/// for input), and a list says how long it may be cached.
pub(super) fn handle(
    config: &Config,
    request: &Request,
    method: Option<Method>,
    meta: &Map<String, Value>,
) -> Outcome {
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
    let Some(method) = method.filter(|method| method.offered_in(true)) else {
        return Err(methods::not_found(request));
    };
    let context = || {
        Ok(CallContext {
            era: Era::Modern,
            can_elicit: negotiate::can_show_forms(client_capabilities.get("elicitation")),
            responses: input_responses(request)?,
            state: request_state(request)?,
        })
    };
    let mut result = methods::answer(config, request, method, context)
        .map_err(in_this_revision)?
        .result;
    match method.spec().cache {
        Cache::Not => {}
        Cache::Fixed => {
            result["ttlMs"] = json!(lists::LIST_TTL_MS);
            result["cacheScope"] = json!("public");
        }
        Cache::Live => {
            result["ttlMs"] = json!(0);
            result["cacheScope"] = json!("private");
        }
    }
    if result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    result["_meta"] = json!({ META_SERVER_INFO: lists::server_info() });
    Ok(result)
}

/// A missing resource is invalid params in this revision, with its URI.
fn in_this_revision(error: RpcError) -> RpcError {
    if error.code == RESOURCE_NOT_FOUND {
        return RpcError {
            code: INVALID_PARAMS,
            ..error
        };
    }
    error
}

/// `inputResponses`: the answers to questions an earlier round asked.
fn input_responses(request: &Request) -> Result<Option<Map<String, Value>>, RpcError> {
    match request.params.get("inputResponses") {
        None | Some(Value::Null) => Ok(None),
        // An answer that could be read two ways is one nobody understood.
        Some(_) if request.ambiguous_answers => Ok(Some(Map::from_iter([(
            ANSWER_KEY.to_string(),
            Value::Null,
        )]))),
        Some(Value::Object(responses)) => Ok(Some(responses.clone())),
        Some(_) => Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: inputResponses must be an object",
        )),
    }
}

/// `requestState`: what the earlier round sealed.
fn request_state(request: &Request) -> Result<Option<String>, RpcError> {
    match request.params.get("requestState") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(state)) => Ok(Some(state.clone())),
        Some(_) => Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: requestState must be a string",
        )),
    }
}
