//! What the host running this component grants beyond WASI, and what follows
//! from it. The rest of the guest reaches the outside world through the seven
//! modules re-exported here, whichever build it is:
//!
//! - for rustpad-mcp's own host, they are the imports of the `server` world:
//!   a socket to Rustpad through the host's egress policy, questions pushed to
//!   the client mid-call, and records (a tally of removals, call places, the
//!   connections this process wrote over) that outlive one request;
//! - for a WebAssembly host (`wasi-http`), nothing outlives a request and
//!   nothing can be pushed to the client: the socket is the component's own
//!   (over `wasi:sockets`), and the guard's rules rest on the pad's history
//!   alone, which holds there as everywhere (see `guard`).

#[cfg(feature = "wasi-http")]
mod stateless;
#[cfg(feature = "wasi-http")]
pub mod tcp;
/// The component's own socket to Rustpad, over `wasi:sockets`.
#[cfg(feature = "wasi-http")]
pub mod websocket;

#[cfg(not(feature = "wasi-http"))]
pub use crate::bindings::rustpad::mcp::{
    calls, elicitation, recent, tally, watches, websocket, writers,
};
#[cfg(feature = "wasi-http")]
pub use stateless::{calls, elicitation, recent, tally, watches, writers};

/// The host can put a question to the client in the middle of a 2025-11-25
/// call (`elicitation/create` on the client's connection).
pub const PUSHES_QUESTIONS: bool = cfg!(not(feature = "wasi-http"));

/// Every request runs in a fresh instance of a host that keeps nothing
/// between requests: no key made up by one request could check an answer
/// that comes back in the next, and no host tally adds to the removal rule.
pub const STATELESS: bool = cfg!(feature = "wasi-http");

/// HTTP requests to Rustpad go through a host that is not ours, which checks
/// certificates its own way: `RUSTPAD_INSECURE_TLS` cannot reach them.
pub const HOST_CHECKS_HTTP_CERTIFICATES: bool = cfg!(feature = "wasi-http");

/// The host keeps sessions' subscriptions (2025-11-25 `resources/subscribe`)
/// and watches pads for them. A WebAssembly host keeps nothing between
/// requests, so only a held request (2026-07-28 `subscriptions/listen`),
/// which the component streams itself, can be served there.
pub const KEEPS_SUBSCRIPTIONS: bool = cfg!(not(feature = "wasi-http"));

/// The host keeps what each session used lately, and can tell a 2025-11-25
/// session's client when that changes (`notifications/resources/list_changed`).
pub const KEEPS_RECENT: bool = cfg!(not(feature = "wasi-http"));

/// The host keeps a record of the connections this process wrote over, so
/// a wait can tell this server's writes from people's.
pub const KNOWS_OWN_WRITES: bool = cfg!(not(feature = "wasi-http"));
