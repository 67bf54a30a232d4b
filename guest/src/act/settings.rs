//! The ACT plugin's settings: the args of the one session its host opens.
//!
//! ACT hosts hand a component no environment; what they do hand over is
//! metadata on every call, and session args. Per-call metadata cannot carry
//! settings: act-cli merges the model's own `_meta` argument into it, so a
//! model could switch `RUSTPAD_READ_ONLY` off for one call. Session args can:
//! the operator gives them when starting the host (`act run --session-args`),
//! the host checks them against [`schema`] and opens the session before any
//! client connects, and in that mode it puts its own session id on every call
//! whatever a client sends. So the first session an instance opens fixes its
//! settings for as long as the instance lives; a second is refused, and a call
//! outside that session (or in a host that keeps no instance between calls,
//! which loses it) is refused rather than served with other settings.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::grants::session_settings;

/// The metadata key an ACT host names a call's session with.
pub const SESSION_ID_KEY: &str = "std:session-id";

/// The settings this plugin takes, with what each is for (the schema's text).
const SETTINGS: [(&str, &str); 7] = [
    (
        "RUSTPAD_URL",
        "The base address of the Rustpad instance, e.g. https://rustpad.example.net",
    ),
    (
        "RUSTPAD_SEAL_KEY",
        "At least 32 characters (e.g. `openssl rand -hex 32`): signs confirmation tokens, which must verify in a later call",
    ),
    (
        "RUSTPAD_READ_ONLY",
        "true, 1 or yes: offer only the read tools",
    ),
    (
        "RUSTPAD_INSECURE_TLS",
        "true: accept a self-signed certificate from the Rustpad instance",
    ),
    (
        "RUSTPAD_ALLOW_TOOLS",
        "Comma-separated tool names: offer only these",
    ),
    (
        "RUSTPAD_DENY_TOOLS",
        "Comma-separated tool names: never offer these",
    ),
    (
        "ELICITATION",
        "true or false; ACT hosts show no dialogs, so approvals are by token either way",
    ),
];

/// The JSON Schema of the session args: every setting a string, no others.
pub fn schema() -> String {
    let properties: Map<String, Value> = SETTINGS
        .iter()
        .map(|(name, about)| {
            (
                (*name).to_string(),
                json!({ "type": "string", "description": about }),
            )
        })
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": ["RUSTPAD_URL", "RUSTPAD_SEAL_KEY"],
        "additionalProperties": false,
    })
    .to_string()
}

/// Opens the instance's one session with `args` (each a CBOR text string),
/// after the checks every build makes of its settings; its id on success.
pub fn open(args: &[(String, Vec<u8>)]) -> Result<String, String> {
    let mut values = BTreeMap::new();
    for (name, encoded) in args {
        if !SETTINGS.iter().any(|(known, _)| known == name) {
            return Err(format!(
                "rustpad-mcp: {} is not a setting of this plugin; the settings are {}",
                crate::text::clean_line(name, 64),
                names()
            ));
        }
        let value: Value = ciborium::from_reader(encoded.as_slice())
            .map_err(|_| format!("rustpad-mcp: {name} could not be read (not CBOR)"))?;
        let Value::String(value) = value else {
            return Err(format!(
                "rustpad-mcp: {name} must be a string, such as \"true\""
            ));
        };
        values.insert(name.clone(), value);
    }
    let config = crate::config::Config::from_lookup(|name| values.get(name).cloned())?;
    let id = format!(
        "rustpad-mcp-{}",
        crate::digest::hex(&wasip2::random::random::get_random_bytes(16))
    );
    session_settings::open(id.clone(), values)?;
    // (act-cli 0.14.6 shows a component's stderr to nobody; other hosts may.)
    for notice in config.startup().notices {
        eprintln!("{notice}");
    }
    Ok(id)
}

/// Ends the session `id`, if it is this instance's.
pub fn close(id: &str) {
    session_settings::close(id);
}

/// The id of the session the instance serves, while it is open.
pub fn opened() -> Option<String> {
    session_settings::opened_id()
}

/// Checks that a call's metadata names the instance's session.
pub fn check_session(metadata: &[(String, Vec<u8>)]) -> Result<(), String> {
    let named = metadata
        .iter()
        .find(|(key, _)| key == SESSION_ID_KEY)
        .and_then(|(_, value)| ciborium::from_reader::<String, _>(value.as_slice()).ok());
    match (session_settings::opened_id(), named) {
        (None, _) => Err("rustpad-mcp: no settings: start the host with the session args, e.g. act run --mcp --session-args '{\"RUSTPAD_URL\": \"https://rustpad.example.net\", \"RUSTPAD_SEAL_KEY\": \"…\"}' (docs/deployment.md)".to_string()),
        (Some(opened), Some(named)) if opened == named => Ok(()),
        (Some(_), _) => Err("rustpad-mcp: this call is not in the session the host opened at startup, so its settings would not be the operator's; nothing was done".to_string()),
    }
}

fn names() -> String {
    SETTINGS.map(|(name, _)| name).join(", ")
}
