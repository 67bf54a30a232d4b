//! `tools/call` in either era: the tool runs in a call place the host
//! grants, and a question the guard raises travels the era's way (an
//! `input_required` result, or a dialog pushed through the host followed by
//! running the same tool again with the answer).

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::INVALID_PARAMS;

use super::answers;
use super::request::{Outcome, Refusal, Request, RpcError};
use crate::config::Config;
use crate::guard::{ANSWER_KEY, MAX_ROUNDS};
use crate::tools::{self, CallContext, Era, Tool, ToolError};

/// Calls the tool `request` names: one the configuration offers, or the
/// pad view's own (`view_tool`) where this client was offered it.
pub(super) fn call_tool(
    config: &Config,
    request: &Request,
    view_tool: Option<&'static Tool>,
    mut context: CallContext,
) -> Outcome {
    let params = &request.params;
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: tools/call needs a tool name",
        )
        .into());
    };
    let tool = tools::catalogue::from_name(name)
        .filter(|tool| config.offers(tool))
        .or(view_tool.filter(|tool| tool.name == name));
    let Some(tool) = tool else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Unknown tool: {}", crate::text::clean_line(name, 100)),
        )
        .into());
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: \"arguments\" must be an object",
            )
            .into());
        }
    };
    if request.lone_surrogates {
        return Ok(ToolError::new(
            "the arguments contain an unpaired surrogate escape (\\ud800–\\udfff), which is not text; send valid Unicode",
        )
        .call_result());
    }
    // The era adapter: a question becomes an input_required result
    // (2026-07-28), or a dialog pushed to the client followed by the same
    // tool running again with the answer (2025-11-25).
    let settings = config.tool_settings();
    for _ in 0..=MAX_ROUNDS {
        let question = match tools::call(&settings, tool, &arguments, &context) {
            Ok(output) => return Ok(output.call_result()),
            Err(ToolError::NeedsInput(question)) => *question,
            Err(ToolError::NoRoom(reason)) => return Err(Refusal::Busy(reason)),
            Err(failed) => return Ok(failed.call_result()),
        };
        if context.era == Era::Modern {
            return Ok(json!({
                "resultType": "input_required",
                "inputRequests": {
                    ANSWER_KEY: { "method": "elicitation/create", "params": question.params },
                },
                "requestState": question.state,
            }));
        }
        let answer = match crate::grants::elicitation::ask(&question.params.to_string()) {
            Ok(answer) => answers::read(&answer),
            Err(failure) => {
                return Ok(ToolError::new(format!(
                    "rustpad-mcp: could not ask a person to confirm ({}); nothing was changed",
                    crate::text::clean_line(&failure.message, 200)
                ))
                .call_result());
            }
        };
        let mut responses = Map::new();
        responses.insert(ANSWER_KEY.into(), answer);
        context.responses = Some(responses);
        context.state = Some(question.state);
    }
    Ok(ToolError::new(
        "rustpad-mcp: the pad kept changing while a person was being asked; nothing was changed",
    )
    .call_result())
}
