//! What each method answers, whichever revision asked: one arm per row of
//! the method table ([`rustpad_mcp_rules::methods`]). The era adapters
//! ([`super::legacy`], [`super::modern`]) check what a method needs before it
//! gets here and decorate what comes back.

use serde_json::json;

use rustpad_mcp_rules::methods::Method;

use super::request::{Answered, Refusal, Request, RpcError};
use super::{apps, call, lists, negotiate, resources, subscriptions};
use crate::config::Config;
use crate::tools::CallContext;
use crate::tools::args::check_id;

/// Answers `method`. `renders` says whether the client renders our view
/// ([`apps`]); `context` tells a tool call what its request carried, and is
/// only asked for by `tools/call`.
pub(super) fn answer(
    config: &Config,
    request: &Request,
    method: Method,
    renders: bool,
    context: impl FnOnce() -> Result<CallContext, RpcError>,
) -> Result<Answered, Refusal> {
    let params = &request.params;
    let result = match method {
        Method::Initialize => {
            let (result, session) = negotiate::initialize(params)?;
            return Ok(Answered {
                result,
                session: Some(session),
                hold: None,
            });
        }
        Method::Ping => json!({}),
        Method::ServerDiscover => lists::discover(),
        Method::ToolsList => lists::list_tools(config, params, renders)?,
        Method::ToolsCall => {
            let view_tool = apps::view_tool(config, renders);
            let (result, pad) = call::call_tool(config, request, view_tool, context()?)?;
            if let Some(id) = pad.as_deref().and_then(|id| check_id(id).ok()) {
                resources::used(id, request);
            }
            result
        }
        Method::PromptsList => lists::empty_list(params, "prompts")?,
        Method::ResourcesList => resources::list(config, params)?,
        Method::ResourcesTemplatesList => resources::templates(config, params)?,
        Method::PromptsGet => return Err(lists::no_prompt().into()),
        Method::ResourcesRead => match resources::uri_of(params, "resources/read")? {
            // A client that renders no view is answered as before the view existed.
            uri if renders && apps::is_view(uri) => apps::read(config, uri)?,
            _ => resources::read(config, request)?,
        },
        Method::ResourcesSubscribe => subscriptions::subscribe(config, request)?,
        Method::ResourcesUnsubscribe => subscriptions::unsubscribe(config, params)?,
        Method::SubscriptionsListen => return subscriptions::listen(config, request),
        Method::LoggingSetLevel => lists::set_level(params)?,
    };
    Ok(result.into())
}

/// The answer to a method this server does not have (in this revision).
pub(super) fn not_found(request: &Request) -> RpcError {
    RpcError::new(
        rustpad_mcp_rules::codes::METHOD_NOT_FOUND,
        format!("Method not found: {}", request.method),
    )
}
