//! rustpad-mcp as a WebAssembly component: an MCP server for Rustpad.
//!
//! Everything that knows about MCP, Rustpad and operational transform lives
//! here. It builds as three components from the same code:
//! - for rustpad-mcp's own host: the host hands each JSON-RPC message to a
//!   fresh instance through the `server` world in `wit/` (its exports:
//!   `server_world`), and the instance reaches the outside world only
//!   through that world's imports;
//! - with the `wasi-http` feature, for any WebAssembly host that runs the
//!   standard `wasi:http/proxy` world (`wasi_http`): it serves Streamable
//!   HTTP itself and imports nothing but WASI;
//! - with the `act` feature, as a plugin for ACT hosts (`act`), which serve
//!   its tools as MCP themselves: the `plugin` world in `wit/act/`.
//!
//! [`grants`] is where they differ in what they may keep and do, and where
//! their settings come from.
//!
//! Modules, each the one owner of its concept:
//! - [`config`]: the environment, validated.
//! - [`mcp`]: JSON-RPC, both protocol eras, dispatch.
//! - [`tools`]: the catalogue (names, schemas, annotations), the handlers
//!   and their typed results.
//! - [`rustpad`]: the HTTP API and the collaboration socket, with the OT fold.
//! - [`text`]: cleaning untrusted text, budgets, code-point arithmetic.
//! - [`guard`]: asking a person before irreversible edits; sealing.
// Only the generated bindings may use `unsafe` (the canonical ABI glue).
#![deny(unsafe_code)]

#[cfg(feature = "act")]
mod act;
pub mod config;
pub mod digest;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod grants;
pub mod guard;
pub mod mcp;
pub mod rustpad;
#[cfg(not(feature = "wasm-host"))]
mod server_world;
pub mod text;
pub mod tools;
#[cfg(feature = "wasi-http")]
mod wasi_http;

// Generated glue: `unsafe` for the canonical ABI, and as many arguments as the
// WIT signatures flatten to. At the crate root because `grants` reads the
// world's imports here; its exports are `server_world`'s.
#[cfg(not(feature = "wasm-host"))]
#[allow(unsafe_code, clippy::too_many_arguments)]
mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "server",
        with: {
            "wasi:http/outgoing-handler@0.2.12": wasip2::http::outgoing_handler,
            "wasi:http/types@0.2.12": wasip2::http::types,
            "wasi:io/error@0.2.12": wasip2::io::error,
            "wasi:io/poll@0.2.12": wasip2::io::poll,
            "wasi:io/streams@0.2.12": wasip2::io::streams,
            "wasi:clocks/monotonic-clock@0.2.12": wasip2::clocks::monotonic_clock,
        },
    });
}
