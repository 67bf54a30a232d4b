//! The plugin for ACT hosts (`act run --mcp`): the tools exported as
//! `act:tools/tool-provider`, the settings taken as session args
//! ([`settings`]), everything else the same code every build runs.
//!
//! An ACT host speaks MCP to the client itself and hands the component one
//! tool call at a time. So each export is a request put to the same dispatch
//! as any other build's, in the 2025-11-25 revision and without a session: a
//! client that can show no dialog (an ACT host relays none of ours), which is
//! what makes the guard answer with its two-call token. The answer is then
//! mapped to ACT's shapes:
//! - a tool's description, input schema and annotations (`std:read-only`,
//!   `std:destructive`, `std:idempotent`) as the catalogue has them; ACT's
//!   tool definition has no title, output schema or open-world hint;
//! - a result's text as a `text/plain` part, and its structured content as an
//!   `application/json` part only where the text does not already hold it
//!   (a sentence, numbered lines, a diff): act-cli makes every part a content
//!   block the model reads, so a second copy of a JSON text would show the
//!   model the pad twice. act-cli 0.14.6 gives a client `structuredContent`
//!   only for a result of one JSON part, so clients get the data as text;
//! - a failed call (a JSON-RPC error, or a result marked as an error) as an
//!   error event, whose message act-cli gives the client as the result's
//!   text with `isError` set.

use serde_json::{Value, json};

use rustpad_mcp_rules::codes::INVALID_PARAMS;
use rustpad_mcp_rules::headers::StandardHeaders;
use rustpad_mcp_rules::post::MAX_MESSAGE_BYTES;

use crate::config::Config;
use crate::mcp::{self, Session};

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
const INTERNAL: &str = "std:internal";
/// The kind of a call the tool itself turned down (a pad not found, a text
/// not matched, a removal that needs approval): ours, as ACT allows.
const REFUSED: &str = "rustpad-mcp:refused";

struct Plugin;

impl tool_provider::Guest for Plugin {
    async fn list_tools(metadata: Metadata) -> Result<ListToolsResponse, Error> {
        let config = configured(&metadata)?;
        let answer = dispatch(&config, "tools/list", json!({}))
            .map_err(|(kind, message)| error(kind, message))?;
        let tools = answer
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| tools.iter().map(definition).collect())
            .unwrap_or_default();
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
            Err((kind, message)) => vec![ToolEvent::Error(error(kind, message))],
        })
    }
}

impl session_provider::Guest for Plugin {
    async fn get_open_session_args_schema(_metadata: Metadata) -> Result<String, Error> {
        Ok(settings::schema())
    }

    async fn open_session(args: Metadata, _metadata: Metadata) -> Result<ActSession, Error> {
        let id = settings::open(&args).map_err(|problem| error(INVALID_ARGS, problem))?;
        Ok(ActSession {
            id,
            metadata: Vec::new(),
        })
    }

    fn close_session(session_id: String) {
        settings::close(&session_id);
    }
}

/// One tool call: its MCP result, or the kind and message of its failure.
fn call(
    name: &str,
    arguments: &[u8],
    metadata: &Metadata,
) -> Result<Value, (&'static str, String)> {
    let config = configured(metadata).map_err(|e| (INTERNAL, message_of(e)))?;
    if arguments.len() > MAX_MESSAGE_BYTES {
        return Err((
            INVALID_ARGS,
            format!("the arguments are larger than {MAX_MESSAGE_BYTES} bytes"),
        ));
    }
    let arguments: Value = ciborium::from_reader(arguments).map_err(|_| {
        (
            INVALID_ARGS,
            "the arguments are not CBOR that reads as JSON (byte strings, tags and non-text keys have no JSON form)".to_string(),
        )
    })?;
    let result = dispatch(
        &config,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    )?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err((REFUSED, text_of(&result).to_string()));
    }
    Ok(result)
}

fn text_of(result: &Value) -> &str {
    result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A successful result as ACT content parts (mime type, data): its text,
/// then its structured content unless the text ends with it already.
fn parts(result: &Value) -> Vec<(&'static str, String)> {
    let text = text_of(result).to_string();
    let structured = result
        .get("structuredContent")
        .filter(|s| !serde_json::to_string_pretty(s).is_ok_and(|json| text.ends_with(&json)));
    let mut parts = vec![("text/plain", text)];
    if let Some(structured) = structured {
        parts.push(("application/json", structured.to_string()));
    }
    parts
}

/// The settings, once the call is known to be in the opened session.
fn configured(metadata: &Metadata) -> Result<Config, Error> {
    settings::check_session(metadata).map_err(|problem| error(INTERNAL, problem))?;
    Config::from_settings().map_err(|problem| error(INTERNAL, problem))
}

/// Puts one request to the dispatch every build shares: its result, or the
/// kind and message of its error.
fn dispatch(config: &Config, method: &str, params: Value) -> Result<Value, (&'static str, String)> {
    let message = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let session = Session::standalone(&StandardHeaders::default());
    let reply = mcp::handle_with(config, &message.to_string(), None, session.as_deref());
    let response: Value = reply
        .response
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    if let Some(failure) = response.get("error") {
        let kind = match failure.get("code").and_then(Value::as_i64) {
            Some(INVALID_PARAMS) => INVALID_ARGS,
            _ => INTERNAL,
        };
        let text = failure.get("message").and_then(Value::as_str).unwrap_or("");
        return Err((kind, text.to_string()));
    }
    match response.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err((INTERNAL, format!("rustpad-mcp: {method} gave no answer"))),
    }
}

/// One tool as ACT describes it.
fn definition(tool: &Value) -> ToolDefinition {
    let text = |key: &str| {
        tool.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let hints = [
        ("std:read-only", "readOnlyHint"),
        ("std:destructive", "destructiveHint"),
        ("std:idempotent", "idempotentHint"),
    ];
    let metadata = hints
        .iter()
        .filter_map(|(key, hint)| {
            let value = tool.pointer(&format!("/annotations/{hint}"))?.as_bool()?;
            Some(((*key).to_string(), cbor(&value)))
        })
        .collect();
    ToolDefinition {
        name: text("name"),
        description: LocalizedString::Plain(text("description")),
        parameters_schema: tool
            .get("inputSchema")
            .map(Value::to_string)
            .unwrap_or_else(|| "{\"type\":\"object\"}".into()),
        metadata,
    }
}

fn cbor(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = Vec::new();
    // Writing a bool into a Vec cannot fail.
    let _ = ciborium::into_writer(value, &mut bytes);
    bytes
}

fn error(kind: &str, message: String) -> Error {
    Error {
        kind: kind.to_string(),
        message: LocalizedString::Plain(message),
        metadata: Vec::new(),
    }
}

fn message_of(error: Error) -> String {
    match error.message {
        LocalizedString::Plain(text) => text,
        LocalizedString::Localized(texts) => texts.into_iter().map(|(_, t)| t).collect(),
    }
}
