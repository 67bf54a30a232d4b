//! The 2025-11-25 era (and 2025-06-18): `initialize` negotiates a version and
//! the client's capabilities, and later requests carry the session that
//! records them.

use rustpad_mcp_rules::codes::INVALID_REQUEST;
use rustpad_mcp_rules::methods::Method;

use super::Session;
use super::negotiate::can_show_forms;
use super::request::{Answered, Refusal, Request, RpcError};
use super::{apps, methods};
use crate::config::Config;
use crate::tools::{CallContext, Era};

/// A request of this era: a method that needs a session is refused
/// without one, and a tool call learns from the session whether the client
/// shows forms.
pub(super) fn handle(
    config: &Config,
    request: &Request,
    method: Option<Method>,
    session: Option<&Session>,
) -> Result<Answered, Refusal> {
    let Some(method) = method.filter(|method| method.offered_in(false)) else {
        return Err(methods::not_found(request).into());
    };
    if method.spec().needs_session && session.is_none() {
        return Err(RpcError::new(
            INVALID_REQUEST,
            "Invalid request: send initialize first, or carry the 2026-07-28 _meta on every request",
        ).into());
    }
    let renders = apps::renders_views(session.and_then(|s| s.capabilities.get("extensions")));
    methods::answer(config, request, method, renders, || {
        Ok(CallContext {
            era: Era::Legacy,
            can_elicit: session.is_some_and(|s| can_show_forms(s.capabilities.get("elicitation"))),
            responses: None,
            state: None,
        })
    })
}
