//! The 2026-07-28 era: stateless; every request carries its version and the
//! client's capabilities in `params._meta`, and results carry `resultType`.

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION};
use rustpad_mcp_rules::methods::{Cache, Method};

use super::request::{Answered, Refusal, Request, RpcError};
use super::{
    META_CAPABILITIES, META_SERVER_INFO, META_VERSION, MODERN, SUPPORTED, lists, negotiate,
};
use super::{apps, methods};
use crate::config::Config;
use crate::guard::ANSWER_KEY;
use crate::tools::{CallContext, Era};

/// A request of this era: its `_meta` must name this revision and the
/// client's capabilities; every result says it is complete (unless it asks
/// for input), and a list says how long it may be cached.
pub(super) fn handle(
    config: &Config,
    request: &Request,
    method: Option<Method>,
) -> Result<Answered, Refusal> {
    let no_meta = Map::new();
    let meta = match request.params.get("_meta") {
        Some(Value::Object(meta)) => meta,
        _ => &no_meta,
    };
    let Some(version) = meta.get(META_VERSION).and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Invalid params: _meta must carry \"{META_VERSION}\" (a string)"),
        )
        .into());
    };
    if version != MODERN {
        return Err(RpcError {
            code: UNSUPPORTED_VERSION,
            message: format!(
                "Unsupported protocol version; this server speaks {}",
                SUPPORTED.join(", ")
            ),
            data: Some(json!({ "supported": SUPPORTED, "requested": version })),
        }
        .into());
    }
    let Some(client_capabilities) = meta.get(META_CAPABILITIES).and_then(Value::as_object) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Invalid params: _meta must carry \"{META_CAPABILITIES}\" (an object)"),
        )
        .into());
    };
    let Some(method) = method.filter(|method| method.offered_in(true)) else {
        return Err(methods::not_found(request).into());
    };
    let context = || {
        Ok(CallContext {
            era: Era::Modern,
            can_elicit: negotiate::can_show_forms(client_capabilities.get("elicitation")),
            responses: input_responses(request)?,
            state: request_state(request)?,
        })
    };
    let renders = apps::renders_views(client_capabilities.get("extensions"));
    let mut answered =
        methods::answer(config, request, method, renders, context).map_err(in_this_revision)?;
    let result = &mut answered.result;
    match method.spec().cache {
        Cache::Not => {}
        Cache::Fixed => {
            result["ttlMs"] = json!(lists::LIST_TTL_MS);
            // A tool list that links the view is this client's alone: a
            // shared cache must not hand it to a client that renders none.
            let shaped = method == Method::ToolsList && apps::offered(config, renders);
            result["cacheScope"] = json!(if shaped { "private" } else { "public" });
        }
        Cache::Live => {
            result["ttlMs"] = json!(0);
            result["cacheScope"] = json!("private");
        }
    }
    if result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    if !result["_meta"].is_object() {
        result["_meta"] = json!({});
    }
    result["_meta"][META_SERVER_INFO] = lists::server_info();
    Ok(answered)
}

/// A missing resource is invalid params in this revision, with its URI.
fn in_this_revision(refusal: Refusal) -> Refusal {
    match refusal {
        Refusal::Error(error) if error.code == RESOURCE_NOT_FOUND => Refusal::Error(RpcError {
            code: INVALID_PARAMS,
            ..error
        }),
        other => other,
    }
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
