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
//!   text with `isError` set, and whose kind says what failed: ACT's own
//!   (`std:invalid-args`, `std:not-found` for a tool not offered,
//!   `std:session-not-found`, `std:internal`), or ours for a call the tool
//!   turned down and for a write whose outcome is unknown, with the result's
//!   `_meta` as the error's metadata.

use serde_json::{Value, json};

use rustpad_mcp_rules::codes::INVALID_PARAMS;
use rustpad_mcp_rules::headers::StandardHeaders;
use rustpad_mcp_rules::post::MAX_MESSAGE_BYTES;

use crate::config::Config;
use crate::mcp::{self, Session};
use crate::tools;
use crate::tools::OUTCOME_KEY;

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
            tools::ALL
                .iter()
                .map(|tool| definition(&tool.definition()))
                .collect()
        } else {
            let config = configured(&metadata).map_err(Failure::into_error)?;
            let answer = dispatch(&config, "tools/list", json!({})).map_err(Failure::into_error)?;
            answer
                .get("tools")
                .and_then(Value::as_array)
                .map(|tools| tools.iter().map(definition).collect())
                .unwrap_or_default()
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

/// One tool call: its MCP result, or why it failed.
fn call(name: &str, arguments: &[u8], metadata: &Metadata) -> Result<Value, Failure> {
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
    let offered = tools::catalogue::from_name(name).is_some_and(|tool| config.offers(tool));
    let result = dispatch(
        &config,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    )
    .map_err(|failure| match offered {
        // The dispatch's own message ("Unknown tool: …"), with ACT's kind for it.
        false => Failure {
            kind: NOT_FOUND,
            ..failure
        },
        true => failure,
    })?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        let meta = result.get("_meta").and_then(Value::as_object);
        let outcome_unknown =
            meta.and_then(|entries| entries.get(OUTCOME_KEY)) == Some(&json!("unknown"));
        let metadata = meta
            .map(|entries| entries.iter().map(|(k, v)| (k.clone(), cbor(v))).collect())
            .unwrap_or_default();
        return Err(Failure {
            kind: if outcome_unknown {
                OUTCOME_UNKNOWN
            } else {
                REFUSED
            },
            message: text_of(&result).to_string(),
            metadata,
        });
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
fn configured(metadata: &Metadata) -> Result<Config, Failure> {
    settings::check_session(metadata)
        .map_err(|problem| Failure::new(SESSION_NOT_FOUND, problem))?;
    Config::from_settings().map_err(|problem| Failure::new(INTERNAL, problem))
}

/// Puts one request to the dispatch every build shares: its result, or why
/// it failed.
fn dispatch(config: &Config, method: &str, params: Value) -> Result<Value, Failure> {
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
        return Err(Failure::new(kind, text));
    }
    match response.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(Failure::new(
            INTERNAL,
            format!("rustpad-mcp: {method} gave no answer"),
        )),
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
    // Writing JSON values into a Vec cannot fail.
    let _ = ciborium::into_writer(value, &mut bytes);
    bytes
}
