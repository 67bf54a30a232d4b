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
//! tools that read: `get_document`, and `follow_pad`, its own wait, which
//! the same clients alone are offered, marked for the view so the client
//! keeps it from the model. It never approves, writes, or speaks to the
//! model.

use serde_json::{Value, json};

use super::request::{Outcome, RpcError};
use crate::config::Config;
use crate::tools::{
    EDIT_DOCUMENT, FOLLOW_PAD, GET_CHANGES, GET_DOCUMENT, REVERT_CHANGES, Tool, WAIT_FOR_CHANGES,
};

/// The extension's name in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The only kind of view the extension defines, and the one we serve.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// Where the pad view is, as a resource.
pub const VIEW_URI: &str = "ui://rustpad/pad-view.html";
/// The view itself, built by `make view` from guest/view/.
const VIEW_HTML: &str = include_str!("../../view/pad-view.html");

/// The tools that link the view: a pad's text, and the diffs of
/// `get_changes`, `edit_document` and `revert_changes`, are what a person
/// wants to see.
const LINKED: [&Tool; 4] = [GET_DOCUMENT, GET_CHANGES, EDIT_DOCUMENT, REVERT_CHANGES];

/// Whether a client whose capabilities declared `extensions` renders our
/// view: its entry for the extension lists our MIME type.
pub(super) fn renders_views(extensions: Option<&Value>) -> bool {
    extensions
        .and_then(|extensions| extensions.get(EXTENSION))
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
    renders && LINKED.iter().any(|tool| config.offers(tool))
}

/// The tool only the view calls (`follow_pad`, hidden from the model), when
/// the view is offered and so is the wait it is a form of.
pub(super) fn view_tool(config: &Config, renders: bool) -> Option<&'static Tool> {
    (offered(config, renders) && config.offers(WAIT_FOR_CHANGES)).then_some(FOLLOW_PAD)
}

/// `follow_pad`'s definition, marked for the view alone.
pub(super) fn view_tool_definition(tool: &Tool) -> Value {
    let mut definition = tool.definition();
    definition["_meta"] = json!({ "ui": { "visibility": ["app"] } });
    definition
}

/// Links the view from a tool's definition, when the tool is one of ours.
pub(super) fn link(tool: &Tool, definition: &mut Value) {
    if LINKED.contains(&tool) {
        definition["_meta"] = json!({ "ui": { "resourceUri": VIEW_URI } });
    }
}

/// `resources/read` of the view, by a client that renders it.
pub(super) fn read(config: &Config, uri: &str) -> Outcome {
    if !offered(config, true) {
        return Err(RpcError::resource_not_found(
            uri,
            format!(
                "the pad view goes with {}, and this server offers none of them here",
                LINKED.map(|tool| tool.name).join(", ")
            ),
        )
        .into());
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::mcp::{META_CAPABILITIES, META_VERSION, MODERN, handle_with};

    fn config_with(settings: &[(&str, &str)]) -> Config {
        Config::from_lookup(|name| {
            if name == "RUSTPAD_SEAL_KEY" {
                return Some("k".repeat(32));
            }
            settings
                .iter()
                .find(|(setting, _)| *setting == name)
                .map(|(_, value)| value.to_string())
        })
        .unwrap()
    }

    fn declaring(mime_types: Value) -> Value {
        json!({ "extensions": { EXTENSION: { "mimeTypes": mime_types } } })
    }

    /// Sends `method` in both eras (a 2025-11-25 session opened with
    /// `capabilities`, and a 2026-07-28 request carrying them) and returns
    /// both raw responses.
    fn both_eras(
        config: &Config,
        capabilities: &Value,
        method: &str,
        params: Value,
    ) -> [String; 2] {
        let opened = handle_with(
            config,
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":capabilities}}).to_string(),
            None,
            None,
        );
        let session = opened.session.unwrap();
        let legacy = handle_with(
            config,
            &json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string(),
            None,
            Some(&session),
        );
        let mut modern_params = params;
        modern_params["_meta"] = json!({ META_VERSION: MODERN, META_CAPABILITIES: capabilities });
        let modern = handle_with(
            config,
            &json!({"jsonrpc":"2.0","id":1,"method":method,"params":modern_params}).to_string(),
            None,
            None,
        );
        [legacy.response.unwrap(), modern.response.unwrap()]
    }

    /// The names of the listed tools that link to the view.
    fn linked(response: &str) -> Vec<String> {
        names_where(response, |tool| {
            tool.pointer("/_meta/ui/resourceUri") == Some(&json!(VIEW_URI))
        })
    }

    /// The names of the listed tools.
    fn listed(response: &str) -> Vec<String> {
        names_where(response, |_| true)
    }

    /// The names of the tools a tools/list response lists that `keep` keeps.
    fn names_where(response: &str, keep: impl Fn(&Value) -> bool) -> Vec<String> {
        let response: Value = serde_json::from_str(response).unwrap();
        response["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|tool| keep(tool))
            .map(|tool| tool["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn only_a_client_that_lists_our_mime_type_renders_views() {
        let renders = |capabilities: &Value| renders_views(capabilities.get("extensions"));
        assert!(renders(&declaring(json!([VIEW_MIME]))));
        assert!(renders(&declaring(json!(["text/plain", VIEW_MIME]))));
        for capabilities in [
            json!({}),
            declaring(json!([])),
            declaring(json!(["text/html"])),
            declaring(json!(VIEW_MIME)),
            json!({ "extensions": { EXTENSION: {} } }),
            json!({ "extensions": { "io.modelcontextprotocol/other": { "mimeTypes": [VIEW_MIME] } } }),
            json!({ "experimental": { EXTENSION: { "mimeTypes": [VIEW_MIME] } } }),
        ] {
            assert!(!renders(&capabilities), "{capabilities}");
        }
        assert!(!renders_views(None));
    }

    #[test]
    fn without_the_extension_the_tool_list_is_what_it_was() {
        let config = config_with(&[]);
        let plain = both_eras(&config, &json!({}), "tools/list", json!({}));
        let viewing = both_eras(
            &config,
            &declaring(json!([VIEW_MIME])),
            "tools/list",
            json!({}),
        );
        for (plain, viewing) in plain.iter().zip(&viewing) {
            assert!(!plain.contains("ui://") && !plain.contains("\"ui\""));
            assert_eq!(
                linked(viewing),
                [
                    "get_document",
                    "get_changes",
                    "edit_document",
                    "revert_changes"
                ]
            );
            // Take the links, the view's own tool (and the cache scope they
            // change) away, and the lists are the same bytes.
            let mut stripped: Value = serde_json::from_str(viewing).unwrap();
            let tools = stripped["result"]["tools"].as_array_mut().unwrap();
            let view_tool = tools.pop().unwrap();
            assert_eq!(view_tool["name"], "follow_pad");
            assert_eq!(
                view_tool["_meta"],
                json!({ "ui": { "visibility": ["app"] } })
            );
            for tool in tools {
                tool.as_object_mut().unwrap().remove("_meta");
            }
            if let Some(scope) = stripped["result"].get_mut("cacheScope") {
                assert_eq!(scope, "private");
                *scope = json!("public");
            }
            assert_eq!(&stripped.to_string(), plain);
        }
    }

    #[test]
    fn the_view_tool_is_for_the_view_alone() {
        let config = config_with(&[]);
        let viewing = declaring(json!([VIEW_MIME]));
        let call = json!({ "name": "follow_pad", "arguments": { "id": "p", "base": "r1.0000000000000000" } });
        for response in both_eras(&config, &json!({}), "tools/call", call.clone()) {
            assert!(response.contains("Unknown tool: follow_pad"), "{response}");
        }
        for response in both_eras(&config, &viewing, "tools/call", call.clone()) {
            // It runs (and fails here only for want of a Rustpad).
            assert!(!response.contains("Unknown tool"), "{response}");
        }
        // It is a form of wait_for_changes: where that is filtered out, so is it.
        let no_waits = config_with(&[("RUSTPAD_DENY_TOOLS", "wait_for_changes")]);
        for response in both_eras(&no_waits, &viewing, "tools/list", json!({})) {
            assert!(!listed(&response).iter().any(|name| name == "follow_pad"));
            assert_eq!(
                linked(&response),
                [
                    "get_document",
                    "get_changes",
                    "edit_document",
                    "revert_changes"
                ]
            );
        }
        for response in both_eras(&no_waits, &viewing, "tools/call", call.clone()) {
            assert!(response.contains("Unknown tool: follow_pad"), "{response}");
        }
    }

    #[test]
    fn a_session_keeps_one_fact_of_the_extension() {
        let capabilities = json!({ "extensions": { EXTENSION: {
            "mimeTypes": [VIEW_MIME, "x".repeat(5_000)],
            "other": "y".repeat(5_000),
        } } });
        let opened = handle_with(
            &config_with(&[]),
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":capabilities}}).to_string(),
            None,
            None,
        );
        assert_eq!(
            opened.session.unwrap(),
            r#"{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}"#
        );
    }

    #[test]
    fn the_view_follows_the_tools_it_belongs_to() {
        let viewing = declaring(json!([VIEW_MIME]));
        let read_only = config_with(&[("RUSTPAD_READ_ONLY", "true")]);
        for response in both_eras(&read_only, &viewing, "tools/list", json!({})) {
            assert_eq!(linked(&response), ["get_document", "get_changes"]);
        }
        // With none of its tools, the view is not offered, and nothing varies.
        let none = config_with(&[("RUSTPAD_ALLOW_TOOLS", "get_stats,wait_for_changes")]);
        let [_, modern] = both_eras(&none, &viewing, "tools/list", json!({}));
        assert!(!modern.contains("ui://") && modern.contains(r#""cacheScope":"public""#));
        for response in both_eras(
            &none,
            &viewing,
            "resources/read",
            json!({ "uri": VIEW_URI }),
        ) {
            assert!(response.contains("offers none of them here"), "{response}");
        }
    }

    #[test]
    fn the_view_is_read_only_by_a_client_that_renders_it() {
        let config = config_with(&[]);
        for response in both_eras(
            &config,
            &declaring(json!([VIEW_MIME])),
            "resources/read",
            json!({ "uri": VIEW_URI }),
        ) {
            let response: Value = serde_json::from_str(&response).unwrap();
            let contents = &response["result"]["contents"][0];
            assert_eq!(contents["mimeType"], VIEW_MIME);
            assert_eq!(contents["text"], VIEW_HTML);
            assert_eq!(
                contents["_meta"]["ui"]["csp"],
                json!({ "connectDomains": [], "resourceDomains": [] })
            );
        }
        for response in both_eras(
            &config,
            &json!({}),
            "resources/read",
            json!({ "uri": VIEW_URI }),
        ) {
            // Any other client is answered as before the view existed.
            let response: Value = serde_json::from_str(&response).unwrap();
            assert_eq!(response["error"]["data"]["uri"], VIEW_URI);
            let message = response["error"]["message"].as_str().unwrap();
            assert!(
                message.ends_with("this server's resources are rustpad://{id}"),
                "{message}"
            );
        }
        // The view is one file with nothing to fetch.
        assert!(VIEW_HTML.starts_with("<!doctype html>"));
        for fetches in ["<script src", "<link", "<img", "<iframe", "@import"] {
            assert!(!VIEW_HTML.contains(fetches), "the view holds {fetches}");
        }
        assert_eq!(VIEW_HTML.matches("<script").count(), 1);
    }
}
