//! How MCP messages come and go: the stdio and Streamable HTTP transports,
//! the JSON-RPC framing they read, where each message goes ([`route`]), the
//! one life every call has whichever transport carried it ([`call`]), the
//! calls in progress that `notifications/cancelled` stops
//! ([`running_calls`]), and the questions the server asks the client
//! ([`questions`]).

pub mod call;
pub mod http;
pub mod jsonrpc;
pub mod questions;
pub mod route;
pub mod running_calls;
pub mod stdio;
