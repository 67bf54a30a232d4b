//! The plugin for ACT hosts (`act run --mcp`): the tools exported as
//! `act:tools/tool-provider`, the settings taken as session args
//! ([`settings`]), everything else the same code every build runs.
//!
//! An ACT host speaks MCP to the client itself and hands the component one
//! tool call at a time. So each export runs the tool through the one typed
//! call every front end uses ([`mcp::run_tool`]), as a 2025-11-25 request
//! without a session: a client that can show no dialog (an ACT host relays
//! none of ours), which is what makes the guard answer with its two-call
//! token. No JSON-RPC is written or read here; the outcome is mapped to
//! ACT's shapes:
//! - a tool's description, input schema and annotations (`std:read-only`,
//!   `std:destructive`, `std:idempotent`) as the catalogue has them; ACT's
//!   tool definition has no title, output schema or open-world hint;
//! - a result's text as a `text/plain` part, and its structured content as an
//!   `application/json` part only where the text does not already hold it
//!   (a sentence, numbered lines, a diff): act-cli makes every part a content
//!   block the model reads, so a second copy of a JSON text would show the
//!   model the pad twice. act-cli 0.14.6 gives a client `structuredContent`
//!   only for a result of one JSON part, so clients get the data as text;
//! - a failed call as an error event, whose message act-cli gives the client
//!   as the result's text with `isError` set, and whose kind says what
//!   failed: ACT's own (`std:invalid-args`, `std:not-found` for a tool not
//!   offered, `std:session-not-found`, `std:internal`), or ours for a call
//!   the tool turned down and for a write whose outcome is unknown, with the
//!   MCP result's `_meta` entry as the error's metadata.

use serde_json::{Map, Value};

use rustpad_mcp_rules::post::MAX_MESSAGE_BYTES;

use crate::config::Config;
use crate::mcp::{self, CallOutcome, ToolCall};
use crate::tools::{self, CallContext, Era, OUTCOME_KEY, Tool, ToolError, ToolOutput};

pub mod settings;

// Generated glue: `unsafe` for the canonical ABI.
#[allow(unsafe_code, clippy::too_many_arguments)]
mod bindings {
    wit_bindgen::generate!({
        path: "../wit/act",
        world: "plugin",
        generate_all,
    });

    use super::Plugin;
    export!(Plugin with_types_in self);
}

use bindings::act::core::types::{Error, LocalizedString, Metadata};
use bindings::act::sessions::types::Session as ActSession;
use bindings::act::tools::types::{ContentPart, ListToolsResponse, ToolDefinition, ToolEvent};
use bindings::exports::act::sessions::session_provider;
use bindings::exports::act::tools::tool_provider::{self, ToolResult};

/// ACT's error kinds (act-spec's constants).
const INVALID_ARGS: &str = "std:invalid-args";
const NOT_FOUND: &str = "std:not-found";
const SESSION_NOT_FOUND: &str = "std:session-not-found";
const INTERNAL: &str = "std:internal";
/// The kind of a call the tool itself turned down (a pad not found, a text
/// not matched, a removal that needs approval): ours, as ACT allows.
const REFUSED: &str = "rustpad-mcp:refused";
/// The kind of a failed write that may have been made all the same (its text
/// says so first): ours, so that no client takes it for a refusal.
const OUTCOME_UNKNOWN: &str = "rustpad-mcp:outcome-unknown";

/// Why a call failed: an ACT error kind, our message, and the result's
/// `_meta` entries, which act passes on as `dev.actcore/error-metadata`.
struct Failure {
    kind: &'static str,
    message: String,
    metadata: Metadata,
}

impl Failure {
    fn new(kind: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            metadata: Vec::new(),
        }
    }

    fn into_error(self) -> Error {
        Error {
            kind: self.kind.to_string(),
            message: LocalizedString::Plain(self.message),
            metadata: self.metadata,
        }
    }
}

struct Plugin;

impl tool_provider::Guest for Plugin {
    async fn list_tools(metadata: Metadata) -> Result<ListToolsResponse, Error> {
        let tools = if settings::opened().is_none() {
            // Before any settings (`act info --tools`, or a host started
            // without session args): every tool, as the server lists them
            // when started without configuration; each call then says how
            // to configure it.
            tools::ALL.iter().copied().map(definition).collect()
        } else {
            let config = configured(&metadata).map_err(Failure::into_error)?;
            config.tools.iter().copied().map(definition).collect()
        };
        Ok(ListToolsResponse {
            metadata: Vec::new(),
            tools,
        })
    }

    async fn call_tool(name: String, arguments: Vec<u8>, metadata: Metadata) -> ToolResult {
        ToolResult::Immediate(match call(&name, &arguments, &metadata) {
            Ok(result) => parts(&result)
                .into_iter()
                .map(|(mime, data)| {
                    ToolEvent::Content(ContentPart {
                        data: data.into_bytes(),
                        mime_type: Some(mime.into()),
                        metadata: Vec::new(),
                    })
                })
                .collect(),
            Err(failure) => vec![ToolEvent::Error(failure.into_error())],
        })
    }
}

impl session_provider::Guest for Plugin {
    async fn get_open_session_args_schema(_metadata: Metadata) -> Result<String, Error> {
        Ok(settings::schema())
    }

    async fn open_session(args: Metadata, _metadata: Metadata) -> Result<ActSession, Error> {
        let id = settings::open(&args)
            .map_err(|problem| Failure::new(INVALID_ARGS, problem).into_error())?;
        Ok(ActSession {
            id,
            metadata: Vec::new(),
        })
    }

    fn close_session(session_id: String) {
        settings::close(&session_id);
    }
}

/// One tool call: its result, or why it failed.
fn call(name: &str, arguments: &[u8], metadata: &Metadata) -> Result<ToolOutput, Failure> {
    let config = configured(metadata)?;
    if arguments.len() > MAX_MESSAGE_BYTES {
        return Err(Failure::new(
            INVALID_ARGS,
            format!("the arguments are larger than {MAX_MESSAGE_BYTES} bytes"),
        ));
    }
    let arguments: Value = ciborium::from_reader(arguments).map_err(|_| {
        Failure::new(
            INVALID_ARGS,
            "the arguments are not CBOR that reads as JSON (byte strings, tags and non-text keys have no JSON form)",
        )
    })?;
    let Some(tool) = mcp::offered_tool(&config, name, None) else {
        return Err(Failure::new(
            NOT_FOUND,
            format!("Unknown tool: {}", crate::text::clean_line(name, 100)),
        ));
    };
    let arguments = match arguments {
        Value::Null => Map::new(),
        Value::Object(arguments) => arguments,
        _ => {
            return Err(Failure::new(
                INVALID_ARGS,
                "Invalid params: \"arguments\" must be an object",
            ));
        }
    };
    let call = ToolCall {
        tool,
        arguments,
        context: CallContext {
            era: Era::Legacy,
            can_elicit: false,
            responses: None,
            state: None,
        },
    };
    match mcp::run_tool(&config, call) {
        CallOutcome::Done(output) => Ok(output),
        CallOutcome::Failed(failed) => Err(refused(&failed)),
        // A client without dialogs is never asked; were it, it could not answer.
        CallOutcome::InputRequired(_) => Err(Failure::new(
            REFUSED,
            "a person has to confirm this first, and this host passes no question on to one",
        )),
        CallOutcome::Busy(reason) => Err(Failure::new(INTERNAL, format!("Server busy: {reason}"))),
    }
}

/// A call the tool turned down, or a write of unknown outcome (its text
/// says so first, and its metadata as the MCP result's `_meta` would).
fn refused(failed: &ToolError) -> Failure {
    match failed {
        ToolError::OutcomeUnknown(message) => Failure {
            kind: OUTCOME_UNKNOWN,
            message: format!("Outcome unknown: {message}"),
            metadata: vec![(OUTCOME_KEY.to_string(), cbor(&"unknown"))],
        },
        other => Failure::new(REFUSED, other.message()),
    }
}

/// A successful result as ACT content parts (mime type, data): its text,
/// then its structured content unless the text ends with it already.
fn parts(output: &ToolOutput) -> Vec<(&'static str, String)> {
    let text = output.text.clone();
    let holds_it =
        serde_json::to_string_pretty(&output.structured).is_ok_and(|json| text.ends_with(&json));
    let mut parts = vec![("text/plain", text)];
    if !holds_it {
        parts.push(("application/json", output.structured.to_string()));
    }
    parts
}

/// The settings, once the call is known to be in the opened session.
fn configured(metadata: &Metadata) -> Result<Config, Failure> {
    settings::check_session(metadata)
        .map_err(|problem| Failure::new(SESSION_NOT_FOUND, problem))?;
    Config::from_settings().map_err(|problem| Failure::new(INTERNAL, problem))
}

/// One tool as ACT describes it.
fn definition(tool: &Tool) -> ToolDefinition {
    let hints = tool.annotations();
    let metadata = [
        ("std:read-only", hints.read_only),
        ("std:destructive", hints.destructive),
        ("std:idempotent", hints.idempotent),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), cbor(&value)))
    .collect();
    ToolDefinition {
        name: tool.name.to_string(),
        description: LocalizedString::Plain(tool.description()),
        parameters_schema: tool.input_schema().to_string(),
        metadata,
    }
}

fn cbor(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = Vec::new();
    // Writing JSON values into a Vec cannot fail.
    let _ = ciborium::into_writer(value, &mut bytes);
    bytes
}
