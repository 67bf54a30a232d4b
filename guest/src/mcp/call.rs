//! A tool call, the one typed way every front end runs a tool ([`run`]:
//! a [`ToolCall`] in, a [`CallOutcome`] out), and `tools/call` in either era
//! on top of it. The tool runs in a call place the host grants, and a
//! question the guard raises travels the era's way (an `input_required`
//! result, or a dialog pushed through the host followed by running the same
//! tool again with the answer).

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::INVALID_PARAMS;

use super::answers;
use super::request::{Refusal, Request, RpcError};
use crate::config::Config;
use crate::guard::{ANSWER_KEY, MAX_ROUNDS, Question};
use crate::tools::{self, CallContext, Era, Tool, ToolError, ToolOutput};

/// One tool call, as every front end puts it: which tool (found with
/// [`offered_tool`] before anything else is read), its arguments, and what
/// the request knows (its revision, what its client can do, the answers it
/// carries). The MCP dispatch reads it from `tools/call`; the ACT plugin
/// from its host's call.
pub struct ToolCall {
    pub tool: &'static Tool,
    pub arguments: Map<String, Value>,
    pub context: CallContext,
}

/// The tool `name` names, where this server offers it: one the configuration
/// offers, or the pad view's own (`view_tool`) where this client was offered
/// it.
pub fn offered_tool(
    config: &Config,
    name: &str,
    view_tool: Option<&'static Tool>,
) -> Option<&'static Tool> {
    tools::catalogue::from_name(name)
        .filter(|tool| config.offers(tool))
        .or(view_tool.filter(|tool| tool.name == name))
}

/// How a tool call ended, for the front end to put in its own shapes.
#[derive(Debug)]
pub enum CallOutcome {
    /// The tool ran: its result.
    Done(ToolOutput),
    /// It failed, with words for the model (`OutcomeUnknown`: an edit went
    /// out and its fate is not known; anything else: nothing was changed).
    Failed(ToolError),
    /// A person has to answer first: the 2026-07-28 client asks and calls
    /// again with the answer and `state`.
    InputRequired(Box<Question>),
    /// The host had no place for the call: the reason.
    Busy(String),
}

/// Runs one tool call. A question the guard raises travels the era's way:
/// an [`CallOutcome::InputRequired`] (2026-07-28), or a dialog pushed
/// through the host followed by running the same tool again with the
/// answer (2025-11-25).
pub fn run(config: &Config, call: ToolCall) -> CallOutcome {
    let ToolCall {
        tool,
        arguments,
        mut context,
    } = call;
    let settings = config.tool_settings();
    for _ in 0..=MAX_ROUNDS {
        let question = match tools::call(&settings, tool, &arguments, &context) {
            Ok(output) => return CallOutcome::Done(output),
            Err(ToolError::NeedsInput(question)) => question,
            Err(ToolError::NoRoom(reason)) => return CallOutcome::Busy(reason),
            Err(failed) => return CallOutcome::Failed(failed),
        };
        if context.era == Era::Modern {
            return CallOutcome::InputRequired(question);
        }
        let answer = match crate::grants::elicitation::ask(&question.params.to_string()) {
            Ok(answer) => answers::read(&answer),
            Err(failure) => {
                return CallOutcome::Failed(ToolError::new(format!(
                    "rustpad-mcp: could not ask a person to confirm ({}); nothing was changed",
                    crate::text::clean_line(&failure.message, 200)
                )));
            }
        };
        let mut responses = Map::new();
        responses.insert(ANSWER_KEY.into(), answer);
        context.responses = Some(responses);
        context.state = Some(question.state);
    }
    CallOutcome::Failed(ToolError::new(
        "rustpad-mcp: the pad kept changing while a person was being asked; nothing was changed",
    ))
}

/// `tools/call`: the tool `request` names (see [`offered_tool`]); its
/// outcome as the `CallToolResult` (or JSON-RPC error) of this revision, and
/// the pad it used, as its result names it.
pub(super) fn call_tool(
    config: &Config,
    request: &Request,
    view_tool: Option<&'static Tool>,
    context: CallContext,
) -> Result<(Value, Option<String>), Refusal> {
    let params = &request.params;
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: tools/call needs a tool name",
        )
        .into());
    };
    let Some(tool) = offered_tool(config, name, view_tool) else {
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
        return Ok((
            ToolError::new(
                "the arguments contain an unpaired surrogate escape (\\ud800–\\udfff), which is not text; send valid Unicode",
            )
            .call_result(),
            None,
        ));
    }
    let call = ToolCall {
        tool,
        arguments,
        context,
    };
    match run(config, call) {
        CallOutcome::Done(output) => {
            let pad = output.pad().map(str::to_string);
            Ok((output.call_result(), pad))
        }
        CallOutcome::Failed(failed) => Ok((failed.call_result(), None)),
        // The wire literal of 2026-07-28's incomplete result.
        CallOutcome::InputRequired(question) => Ok((
            json!({
                "resultType": "input_required",
                "inputRequests": {
                    ANSWER_KEY: { "method": "elicitation/create", "params": question.params },
                },
                "requestState": question.state,
            }),
            None,
        )),
        CallOutcome::Busy(reason) => Err(Refusal::Busy(reason)),
    }
}
