//! What the host running this component grants beyond WASI, and what follows
//! from it. The rest of the guest reaches the outside world through the eight
//! modules re-exported here, whichever build it is:
//!
//! - for rustpad-mcp's own host, they are the imports of the `server` world:
//!   a socket to Rustpad through the host's egress policy, questions pushed to
//!   the client mid-call, and records (a tally of removals, call places, the
//!   connections this process wrote over, write connections kept between
//!   calls) that outlive one request;
//! - for a WebAssembly host (`wasm-host`: the `wasi-http` component and the
//!   `act` plugin), nothing outlives a request and nothing can be pushed to
//!   the client: the socket is the component's own (over `wasi:sockets`), and
//!   the guard's rules rest on the pad's history alone, which holds there as
//!   everywhere (see `guard`).
//!
//! [`setting`] is where the operator's settings come from: the environment,
//! or for the ACT plugin the args of the session its host opened.

/// The ACT plugin's settings, kept from the session its host opened.
#[cfg(feature = "act")]
pub mod session_settings;
#[cfg(feature = "wasm-host")]
mod stateless;
#[cfg(feature = "wasm-host")]
pub mod tcp;
/// The component's own socket to Rustpad, over `wasi:sockets`.
#[cfg(feature = "wasm-host")]
pub mod websocket;

#[cfg(not(feature = "wasm-host"))]
pub use crate::bindings::rustpad::mcp::{
    calls, elicitation, held_writes, recent, tally, watches, websocket, writers,
};
#[cfg(feature = "wasm-host")]
pub use stateless::{calls, elicitation, held_writes, recent, tally, watches, writers};

/// How an import fails: a kind to act on, and a message (the WIT's
/// `errors`); the component's own socket in WebAssembly hosts fails the
/// same way, with the rules' twin of that type.
#[cfg(not(feature = "wasm-host"))]
pub use crate::bindings::rustpad::mcp::errors::{Error as HostError, ErrorKind};
#[cfg(feature = "wasm-host")]
pub use rustpad_mcp_rules::errors::{Error as HostError, ErrorKind};

/// The operator's value of the setting `name` (`RUSTPAD_URL`, …), as given.
#[cfg(not(feature = "act"))]
pub fn setting(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
#[cfg(feature = "act")]
pub use session_settings::setting;

/// The names of all the settings the operator gave, known or not.
#[cfg(not(feature = "act"))]
pub fn setting_names() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .collect()
}
#[cfg(feature = "act")]
pub use session_settings::setting_names;

/// What the operator changes when the host refuses this component Rustpad:
/// the HTTP API's origin, and the collaboration socket's host and port.
#[cfg(not(feature = "act"))]
pub const ALLOW_HTTP: &str = "this server may only reach the origin of RUSTPAD_URL";
#[cfg(feature = "act")]
pub const ALLOW_HTTP: &str =
    "act grants HTTP by origin: add --allow 'http=<RUSTPAD_URL without its path>' to `act run`";
#[cfg(not(feature = "act"))]
pub const ALLOW_SOCKETS: &str =
    "allow Rustpad's origin (its host and port, for TCP) in the host's outbound policy";
#[cfg(feature = "act")]
pub const ALLOW_SOCKETS: &str =
    "act grants sockets by address: add --allow 'sockets=<Rustpad's host>:<port>/tcp' to `act run`";

/// What the operator changes when the host looks no names up for this component.
#[cfg(not(feature = "act"))]
pub const ALLOW_LOOKUPS: &str = "allow the name in the host's name-lookup policy, or name the address in RUSTPAD_SOCKET_ADDRESS";
#[cfg(feature = "act")]
pub const ALLOW_LOOKUPS: &str = "act looks names up only for a plugin it grants sockets: add --allow 'sockets=<Rustpad's host>:<port>/tcp' to `act run`";

/// Why a guarded call without a dialog asked nobody, in a host that cannot
/// carry one (see [`PUSHES_QUESTIONS`]).
#[cfg(not(feature = "act"))]
pub const WHY_NOBODY_WAS_ASKED: &str = "This server runs in a WebAssembly host without sessions, so it cannot put a question to a 2025-11-25 client in the middle of a call, and nobody was asked (a 2026-07-28 client that can show forms gets the dialog).";
/// Under ACT: act-cli speaks MCP to the client itself and relays no question
/// of a component's; its own consent questions are about grants, and a
/// standing `--allow` answers them without a person, so they cannot stand in.
#[cfg(feature = "act")]
pub const WHY_NOBODY_WAS_ASKED: &str = "This server runs as a plugin of an ACT host, which passes no question of ours on to a person, so nobody was asked.";

/// The host can put a question to the client in the middle of a 2025-11-25
/// call (`elicitation/create` on the client's connection).
pub const PUSHES_QUESTIONS: bool = cfg!(not(feature = "wasm-host"));

/// Every request runs in a fresh instance of a host that keeps nothing
/// between requests: no key made up by one request could check an answer
/// that comes back in the next, and no host tally adds to the removal rule.
pub const STATELESS: bool = cfg!(feature = "wasm-host");

/// HTTP requests to Rustpad go through a host that is not ours, which checks
/// certificates its own way: `RUSTPAD_INSECURE_TLS` cannot reach them.
pub const HOST_CHECKS_HTTP_CERTIFICATES: bool = cfg!(feature = "wasm-host");

/// The host keeps sessions' subscriptions (2025-11-25 `resources/subscribe`)
/// and watches pads for them. A WebAssembly host keeps nothing between
/// requests, so only a held request (2026-07-28 `subscriptions/listen`),
/// which the component streams itself, can be served there.
pub const KEEPS_SUBSCRIPTIONS: bool = cfg!(not(feature = "wasm-host"));

/// The host keeps what each session used lately, and can tell a 2025-11-25
/// session's client when that changes (`notifications/resources/list_changed`).
pub const KEEPS_RECENT: bool = cfg!(not(feature = "wasm-host"));

/// The host keeps a record of the connections this process wrote over, so
/// a wait can tell this server's writes from people's.
pub const KNOWS_OWN_WRITES: bool = cfg!(not(feature = "wasm-host"));
