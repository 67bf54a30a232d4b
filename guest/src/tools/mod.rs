//! The tools: the catalogue and one handler per tool.
//!
//! Handlers never see the protocol era: they get checked arguments and the
//! configuration, and return a result or a failure for the model.

pub mod args;
pub mod catalogue;
mod read;
mod write;

use serde_json::{Map, Value};

use crate::config::Config;
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
}

const UNCONFIGURED: &str = "rustpad-mcp is running without RUSTPAD_URL, so it cannot reach any pad. Set RUSTPAD_URL to the base address of your Rustpad instance (for example https://rustpad.example.net) in this server's environment, then restart it.";

/// Runs a tool and returns its `CallToolResult`.
pub fn call(
    config: &Config,
    tool: ToolName,
    arguments: &Map<String, Value>,
    _context: &CallContext,
) -> Value {
    match run(config, tool, arguments) {
        Ok(result) => result,
        Err(error) => result::failure(&error),
    }
}

fn run(config: &Config, tool: ToolName, arguments: &Map<String, Value>) -> result::ToolResult {
    let args = Args::check(tool, arguments)?;
    let url = config
        .rustpad
        .as_ref()
        .ok_or_else(|| ToolError::new(UNCONFIGURED))?;
    match tool {
        ToolName::GetDocument => read::get_document(url, &args),
        ToolName::GetDocumentInfo => read::get_document_info(url, &args),
        ToolName::GetStats => read::get_stats(url),
        ToolName::CreateDocument => write::create_document(url, &args),
        ToolName::SetDocument => write::set_document(url, &args),
        ToolName::AppendToDocument => write::append_to_document(url, &args),
        ToolName::ReplaceInDocument => write::replace_in_document(url, &args),
        ToolName::SetLanguage => write::set_language(url, &args),
    }
}
