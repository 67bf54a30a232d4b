//! JSON-RPC error codes, as MCP uses them.

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// 2025-11-25: no such resource (2026-07-28 says invalid params instead).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// 2026-07-28: headers that disagree with the body (HTTP only).
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_CAPABILITY: i64 = -32021;
/// 2026-07-28: a protocol revision this server does not speak.
pub const UNSUPPORTED_VERSION: i64 = -32022;
