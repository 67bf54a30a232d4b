//! Word when someone changes a pad: 2025-11-25 `resources/subscribe` and
//! `resources/unsubscribe`, which last as long as the session, and
//! 2026-07-28 `subscriptions/listen`, a request held open whose stream
//! carries the updates. Either way the update is
//! `notifications/resources/updated` with the pad's URI (and, on a listen's
//! stream, the listen's id in `_meta`): a level trigger that says "read it
//! again", never what changed.
//!
//! The component says what to watch and what to send (the `watches`
//! import); the host keeps the watches, one watcher per pad however many
//! subscribe, and runs [`watch_round`] for it round after round. A pad is
//! read and watched through [`crate::tools::reading`]; who counts as someone
//! else is `rustpad::watch`'s to say.

use std::time::Duration;

use serde_json::{Map, Value, json};

use rustpad_mcp_rules::codes::{INVALID_PARAMS, INVALID_REQUEST};

use super::request::{Answered, Hold, Outcome, Refusal, Request, RpcError};
use super::resources;
use crate::config::Config;
use crate::grants::watches::{self, Watch};
use crate::grants::websocket::Connection;
use crate::text;
use crate::tools::args::check_id;
use crate::tools::reading::Pad;

const UPDATED: &str = "notifications/resources/updated";
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
/// The longest one round watches before it hands back to the host, which
/// starts the next in a fresh instance (so no instance grows for ever).
pub const ROUND: Duration = rustpad_mcp_rules::watching::ROUND;
/// The most pads one listen may name, where the component streams the
/// listen itself (a WebAssembly host); rustpad-mcp's host has a setting.
pub const MAX_PADS_PER_LISTEN: usize = rustpad_mcp_rules::watching::PADS_PER_LISTEN;

/// `resources/subscribe`: the session hears of every change to the pad.
pub(super) fn subscribe(config: &Config, request: &Request) -> Outcome {
    let uri = resources::uri_of(&request.params, "resources/subscribe")?;
    let pad = resources::pad_of(config, uri)?;
    let watch = Watch {
        subject: pad.id().to_string(),
        update: updated(uri, None),
        cursor: Some(revision_now(pad, uri)?),
    };
    watches::start(&watch).map_err(|failure| cannot_watch(uri, &failure.message))?;
    resources::used(pad.id(), request);
    Ok(json!({}))
}

/// `resources/unsubscribe`: no more updates for the pad in this session
/// (answered alike whether or not it was subscribed).
pub(super) fn unsubscribe(config: &Config, params: &Map<String, Value>) -> Outcome {
    let uri = resources::uri_of(params, "resources/unsubscribe")?;
    if let Some(id) = uri.strip_prefix(resources::SCHEME)
        && resources::offered(config)
        && let Ok(id) = check_id(id)
    {
        watches::stop(id);
    }
    Ok(json!({}))
}

/// `subscriptions/listen`: the request is held open; its acknowledgement
/// goes first, then an update whenever a named pad changes. The list
/// notifications are never honoured: the tool and prompt lists never
/// change, and the resource list changes only with what a session used,
/// which a 2026-07-28 client over HTTP has none of (on stdio it can list
/// again after its own calls).
/// The result is the listen's response, sent when it ends (the dispatch
/// makes it the response of a [`super::Held`]).
pub(super) fn listen(config: &Config, request: &Request) -> Result<Answered, Refusal> {
    let Some(filter) = request
        .params
        .get("notifications")
        .and_then(Value::as_object)
    else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: subscriptions/listen needs \"notifications\" (an object)",
        )
        .into());
    };
    let uris: Vec<&str> = match filter.get("resourceSubscriptions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(uris)) => uris
            .iter()
            .map(|uri| {
                uri.as_str().ok_or_else(|| {
                    RpcError::new(
                        INVALID_PARAMS,
                        "Invalid params: resourceSubscriptions must list URIs (strings)",
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: resourceSubscriptions must be a list of URIs",
            )
            .into());
        }
    };
    let id = request.id.clone().unwrap_or(Value::Null);
    let mut honoured: Vec<&str> = Vec::new();
    let mut watches = Vec::new();
    for uri in uris {
        if honoured.contains(&uri) {
            continue;
        }
        let pad = resources::pad_of(config, uri)?;
        honoured.push(uri);
        watches.push(Watch {
            subject: pad.id().to_string(),
            update: updated(uri, Some(&id)),
            // Where a WebAssembly host's listen watches from is its own look.
            cursor: if crate::grants::KEEPS_SUBSCRIPTIONS {
                Some(revision_now(pad, uri)?)
            } else {
                None
            },
        });
    }
    if !crate::grants::KEEPS_SUBSCRIPTIONS && watches.len() > MAX_PADS_PER_LISTEN {
        return Err(RpcError::new(
            INVALID_REQUEST,
            format!(
                "Cannot listen: a listen here watches at most {MAX_PADS_PER_LISTEN} pads, and this one names {}",
                watches.len()
            ),
        ).into());
    }
    for watch in &watches {
        resources::used(&watch.subject, request);
    }
    let agreed = if honoured.is_empty() {
        json!({})
    } else {
        json!({ "resourceSubscriptions": honoured })
    };
    let opening = json!({
        "jsonrpc": "2.0",
        "method": ACKNOWLEDGED,
        "params": { "_meta": { META_SUBSCRIPTION: id }, "notifications": agreed },
    });
    Ok(Answered {
        result: json!({ "_meta": { META_SUBSCRIPTION: id } }),
        session: None,
        hold: Some(Hold {
            opening: opening.to_string(),
            watches,
        }),
    })
}

/// The pad's revision now, from an invisible look: the watch starts there,
/// so a change made after this answer is never missed. It takes a call
/// place, as a read does; a pad that cannot be reached is the resource
/// error.
fn revision_now(pad: Pad, uri: &str) -> Result<String, Refusal> {
    resources::take_call_place()?;
    let revision = pad.revision_now().map_err(|error| {
        RpcError::resource_not_found(
            uri,
            format!(
                "pad \"{}\" cannot be watched: {}",
                pad.id(),
                error.message()
            ),
        )
    })?;
    Ok(revision.to_string())
}

/// The line that tells a subscriber `uri` changed; `listen` is the id of
/// the listen whose stream carries it.
fn updated(uri: &str, listen: Option<&Value>) -> String {
    let mut params = json!({ "uri": uri });
    if let Some(listen) = listen {
        params["_meta"] = json!({ META_SUBSCRIPTION: listen });
    }
    json!({ "jsonrpc": "2.0", "method": UPDATED, "params": params }).to_string()
}

fn cannot_watch(uri: &str, reason: &str) -> RpcError {
    RpcError::new(
        INVALID_REQUEST,
        format!(
            "Cannot subscribe to {}: {reason}",
            text::clean_line(uri, 200)
        ),
    )
}

/// Where the next round goes on from (see the `watch` export).
pub struct Resume {
    pub cursor: String,
    /// The look's connection, for the host to hold until a message that
    /// begins with one of `wake` comes.
    pub look: Option<Connection>,
    pub wake: Vec<String>,
}

/// How one round of watching ended (see the `watch` export).
pub enum Round {
    Changed(Resume),
    Quiet(Resume),
    Lost(String),
}

/// The one message worth a round while the host holds a look: Rustpad's
/// History, which carries edits (exactly as its server writes it, with no
/// space). Carets, names and languages change nothing a subscriber hears of.
const WAKE_ON: &str = "{\"History\":";

/// Watches pad `subject` for one round from `from` (where the last round
/// left off, with its look's connection if the host held it; none: from
/// now): [`Pad::watch_round`], on this server's Rustpad.
pub fn watch_round(subject: &str, from: Option<(String, Option<Connection>)>) -> Round {
    let config = match Config::from_settings() {
        Ok(config) => config,
        Err(problem) => return Round::Lost(problem.to_string()),
    };
    let Some(url) = &config.rustpad else {
        return Round::Lost("this server runs without RUSTPAD_URL".into());
    };
    let id = match check_id(subject) {
        Ok(id) => id,
        Err(problem) => return Round::Lost(problem.to_string()),
    };
    match Pad::new(url, id).watch_round(from, ROUND) {
        Ok(watched) => {
            let resume = Resume {
                cursor: watched.cursor,
                look: Some(watched.look),
                wake: vec![WAKE_ON.to_string()],
            };
            if watched.changed {
                Round::Changed(resume)
            } else {
                Round::Quiet(resume)
            }
        }
        Err(reason) => Round::Lost(reason),
    }
}
