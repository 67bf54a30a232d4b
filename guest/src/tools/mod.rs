//! The tools: the catalogue and one handler per tool.
//!
//! Handlers never see the protocol era: they get checked arguments and the
//! configuration, and return a result or a failure for the model.

pub mod args;
pub mod catalogue;
mod changes;
mod diff;
mod edit;
pub mod locate;
mod read;
mod schemas;
pub mod selection;
mod window;
mod write;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::guard::{Answers, Guard, NoDialog, Question, seal::Sealer};
use crate::result::{self, ToolError};
use args::Args;
use catalogue::ToolName;

/// Which protocol revision a call came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 / 2025-06-18: `initialize`, server-pushed elicitation.
    Legacy,
    /// 2026-07-28: stateless, `input_required` results.
    Modern,
}

/// What a tool call knows about the request it came in.
pub struct CallContext {
    pub era: Era,
    /// The client declared it can show an elicitation dialog.
    pub can_elicit: bool,
    /// `inputResponses` carried by this request (2026-07-28), or the answer
    /// relayed from the client's dialog (2025-11-25).
    pub responses: Option<Map<String, Value>>,
    /// `requestState` carried by this request, or the one we sealed.
    pub state: Option<String>,
}

/// How a tool call ended.
pub enum Outcome {
    /// A `CallToolResult` (possibly an `isError` one).
    Done(Value),
    /// A person must answer first; the era adapter asks and calls again.
    Ask(Question),
    /// The host has no place for another tool call; the reason is for the client.
    NoRoom(String),
}

const UNCONFIGURED: &str = "rustpad-mcp is running without RUSTPAD_URL, so it cannot reach any pad. Set RUSTPAD_URL to the base address of your Rustpad instance (for example https://rustpad.example.net) in this server's environment, then restart it.";

/// Runs a tool.
pub fn call(
    config: &Config,
    tool: ToolName,
    arguments: &Map<String, Value>,
    context: &CallContext,
) -> Outcome {
    match run(config, tool, arguments, context) {
        Ok(result) => Outcome::Done(result),
        Err(ToolError::NoRoom(reason)) => Outcome::NoRoom(reason),
        Err(ToolError::NeedsInput(question)) => Outcome::Ask(*question),
        Err(error) => Outcome::Done(result::failure(&error)),
    }
}

fn run(
    config: &Config,
    tool: ToolName,
    arguments: &Map<String, Value>,
    context: &CallContext,
) -> result::ToolResult {
    let args = Args::check(tool, arguments)?;
    let url = config
        .rustpad
        .as_ref()
        .ok_or_else(|| ToolError::new(UNCONFIGURED))?;
    // A call that will reach Rustpad runs in one of the host's places for
    // tool calls, or not at all (the instance keeps its place to the end).
    crate::calls::enter().map_err(ToolError::NoRoom)?;
    let pushes = context.era == Era::Modern || crate::grants::PUSHES_QUESTIONS;
    let answers = Answers {
        can_ask: config.elicitation && context.can_elicit && pushes,
        no_dialog: if !config.elicitation {
            NoDialog::SwitchedOff
        } else if !pushes {
            NoDialog::NoSessions
        } else {
            NoDialog::ClientCannot
        },
        responses: context.responses.clone(),
        state: context.state.clone(),
        token: args.confirm_token()?.map(str::to_string),
    };
    let mut sealer = Sealer::new(&config.seal_key);
    if config.seal_key_per_process {
        sealer = sealer.per_process();
    }
    let guard = Guard {
        sealer: &sealer,
        answers: &answers,
    };
    match tool {
        ToolName::GetDocument => read::get_document(url, &args),
        ToolName::GetDocumentInfo => read::get_document_info(url, &args),
        ToolName::GetStats => read::get_stats(url),
        ToolName::GetChanges => changes::get_changes(url, &args),
        ToolName::CreateDocument => write::create_document(url, &args),
        ToolName::SetDocument => write::set_document(url, &args, &guard),
        ToolName::AppendToDocument => write::append_to_document(url, &args),
        ToolName::ReplaceInDocument => write::replace_in_document(url, &args, &guard),
        ToolName::EditDocument => edit::edit_document(url, &args, &guard),
        ToolName::SetLanguage => write::set_language(url, &args),
    }
}
