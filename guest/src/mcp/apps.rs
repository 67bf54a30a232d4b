//! The MCP Apps extension (`io.modelcontextprotocol/ui`): the pad view, and
//! who is offered it.
//!
//! A client that renders views says so in its capabilities (`initialize`'s
//! in 2025-11-25, every request's `_meta` in 2026-07-28). Only then do the
//! tools whose results a person would rather see than read link the view
//! (`_meta.ui.resourceUri`), and only then can it be read. Every other
//! client gets the tool list and the results it got before the view
//! existed, byte for byte: the extension's text says servers should check
//! the capability before offering such tools, and a host that keeps nothing
//! between requests (a 2025-11-25 request standing alone) has no capability
//! to check, so it is not offered the view there.
//!
//! The view (`guest/view/`) is one HTML file with its script and style
//! inside, built from pinned sources and committed, so building the server
//! needs no npm. It talks only to the client that shows it, and only calls
//! tools that read: it never approves, writes, or speaks to the model.

use serde_json::{Value, json};

use super::request::Outcome;
use super::resources::not_found;
use crate::config::Config;
use crate::tools::{EDIT_DOCUMENT, GET_CHANGES, GET_DOCUMENT, Tool};

/// The extension's name in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The only kind of view the extension defines, and the one we serve.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// Where the pad view is, as a resource.
pub const VIEW_URI: &str = "ui://rustpad/pad-view.html";
/// The view itself, built by `make view` from guest/view/.
const VIEW_HTML: &str = include_str!("../../view/pad-view.html");

/// The tools that link the view: a pad's text, and the diffs of
/// `get_changes` and `edit_document`, are what a person wants to see.
const LINKED: [&Tool; 3] = [GET_DOCUMENT, GET_CHANGES, EDIT_DOCUMENT];

/// Whether a client that declared `capabilities` renders our view: its
/// extension entry lists our MIME type.
pub(super) fn renders_views(capabilities: Option<&Value>) -> bool {
    capabilities
        .and_then(|caps| caps.pointer(&format!("/extensions/{}", EXTENSION.replace('/', "~1"))))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(VIEW_MIME)))
}

/// What a 2025-11-25 session keeps of the extension: the one fact we read
/// later, not the client's whole declaration (the host stores sessions).
pub(super) fn kept_capability() -> (String, Value) {
    (
        "extensions".into(),
        json!({ EXTENSION: { "mimeTypes": [VIEW_MIME] } }),
    )
}

/// Whether the view is offered to a client: it renders views, and the view
/// has a tool to belong to (the tool filter and read-only mode decide).
pub(super) fn offered(config: &Config, renders: bool) -> bool {
    renders && LINKED.iter().any(|tool| config.tools.contains(tool))
}

/// Links the view from a tool's definition, when the tool is one of ours.
pub(super) fn link(tool: &Tool, definition: &mut Value) {
    if LINKED.iter().any(|linked| linked.name == tool.name) {
        definition["_meta"] = json!({ "ui": { "resourceUri": VIEW_URI } });
    }
}

/// `resources/read` of the view.
pub(super) fn read(config: &Config, renders: bool, uri: &str) -> Outcome {
    if !offered(config, renders) {
        return Err(not_found(
            uri,
            format!(
                "the pad view is offered only to a client that declares the {EXTENSION} extension with {VIEW_MIME}, and only beside {}",
                LINKED.map(|tool| tool.name).join(", ")
            ),
        ));
    }
    Ok(json!({
        "contents": [{
            "uri": VIEW_URI,
            "mimeType": VIEW_MIME,
            "text": VIEW_HTML,
            "_meta": {
                "ui": {
                    // No origin at all: the view reaches the pad only through
                    // the client's tool calls, and loads nothing.
                    "csp": { "connectDomains": [], "resourceDomains": [] },
                    "prefersBorder": true,
                },
            },
        }],
    }))
}

/// Whether `uri` names the view (and so is this module's to read).
pub(super) fn is_view(uri: &str) -> bool {
    uri == VIEW_URI
}
