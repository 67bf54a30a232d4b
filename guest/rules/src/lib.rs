//! The rules of MCP's transports that more than one side needs, without
//! any I/O, so that the component, the host and any other transport built on
//! the component read them from one place (it builds for wasm32-wasip2 as
//! well as natively):
//! - [`codes`]: the JSON-RPC error codes MCP uses;
//! - [`status`]: the HTTP status a reply travels with on Streamable HTTP;
//! - [`methods`]: which MCP methods exist, in which revisions, needing what;
//! - [`era`]: which revision a message speaks;
//! - [`headers`]: the standard headers of Streamable HTTP, which must repeat
//!   what the body says;
//! - [`json`]: no object of a message may give a key twice, and how a lone
//!   UTF-16 surrogate is read;
//! - [`egress`]: the one origin that may be reached;
//! - [`errors`]: how an import fails, by kind (the WIT's `errors`);
//! - [`websocket`]: the bounds and deadlines of a connection to Rustpad;
//! - [`watching`]: the pace of every watch loop (coalescing, keepalives);
//! - [`gate`]: who may call an HTTP transport, and how a refusal is answered;
//! - [`post`]: what a POST must be before its body is read;
//! - [`loopback`]: what names this machine;
//! - `tls` (feature `tls`): the TLS client settings for Rustpad's origin.

pub mod codes;
pub mod egress;
pub mod era;
pub mod errors;
pub mod gate;
pub mod headers;
pub mod json;
pub mod loopback;
pub mod methods;
pub mod post;
pub mod status;
#[cfg(feature = "tls")]
pub mod tls;
pub mod watching;
pub mod websocket;
