//! What a POST to an MCP endpoint must be before its body is read: JSON, from
//! a client that takes JSON answers, at most [`MAX_MESSAGE_BYTES`], with each
//! standard header at most once. `rustpad-mcp --http` and the component
//! served by a WebAssembly host answer the same refusals from here.

use http::header::{
    ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    CONTENT_TYPE, VARY,
};
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::headers::{METHOD, NAME, PROTOCOL_VERSION, StandardHeaders};

/// What a browser page may send and read (CORS), for the origins the gate allows.
pub const CORS_REQUEST_HEADERS: &str =
    "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id";
pub const CORS_EXPOSED_HEADERS: &str = "mcp-session-id, www-authenticate, retry-after";

/// Lets the page at `origin`, one the gate allowed, read the answer.
pub fn add_cors(headers: &mut HeaderMap, origin: &HeaderValue) {
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(
        ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(CORS_EXPOSED_HEADERS),
    );
    headers.append(VARY, HeaderValue::from_static("Origin"));
}

/// The headers of the answer to a CORS preflight the gate let through,
/// offering `methods` (those the transport serves besides GET, which opens
/// no stream).
pub fn add_preflight(headers: &mut HeaderMap, methods: &'static str) {
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(CORS_REQUEST_HEADERS),
    );
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
}

/// Where MCP is served.
pub const ENDPOINT: &str = "/mcp";
pub const NOT_FOUND: &str = "Not found: MCP is served at /mcp\n";
pub const GET_NOT_ALLOWED: &str = "Method not allowed: send MCP messages with POST; GET opens a 2025-11-25 session's stream, and DELETE ends the session\n";

/// The largest message a transport accepts (a whole pad is at most a few MiB
/// of JSON).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// A request we cannot answer in a form the client takes, or a body that is
/// not JSON: the status and the plain-text explanation.
pub fn unacceptable(headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Some((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported media type: POST a JSON-RPC message as application/json\n",
        ));
    }
    let accepted = accepted(headers);
    let takes_json = accepted.is_empty()
        || accepted
            .iter()
            .any(|t| matches!(t.as_str(), "application/json" | "application/*" | "*/*"));
    if !takes_json {
        return Some((
            StatusCode::NOT_ACCEPTABLE,
            "Not acceptable: answers are application/json (or text/event-stream while a question is open); list both in Accept\n",
        ));
    }
    None
}

/// Whether the client takes an event stream as the answer.
pub fn accepts_event_streams(headers: &HeaderMap) -> bool {
    let accepted = accepted(headers);
    accepted.is_empty()
        || accepted
            .iter()
            .any(|t| matches!(t.as_str(), "text/event-stream" | "text/*" | "*/*"))
}

/// The standard headers, each at most once: a request that repeats one
/// could be routed on one copy and served on another. The error names the
/// repeated header.
pub fn standard_headers(headers: &HeaderMap) -> Result<StandardHeaders, &'static str> {
    let one = |name: &'static str| -> Result<Option<String>, &'static str> {
        let mut values = headers.get_all(name).iter();
        let first = values.next();
        if values.next().is_some() {
            return Err(name);
        }
        Ok(first.map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned()))
    };
    Ok(StandardHeaders {
        protocol_version: one(PROTOCOL_VERSION)?,
        method: one(METHOD)?,
        name: one(NAME)?,
    })
}

/// The refusal of a repeated standard header.
pub fn repeated_header(name: &str) -> (StatusCode, String) {
    (
        StatusCode::BAD_REQUEST,
        format!("Bad request: the request carries more than one {name} header\n"),
    )
}

/// The refusal of a body past [`MAX_MESSAGE_BYTES`].
pub fn too_large() -> (StatusCode, String) {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload too large: a message may be at most {MAX_MESSAGE_BYTES} bytes\n"),
    )
}

/// The media types listed in `Accept`, lower-cased, without parameters.
fn accepted(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            item.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn a_post_must_be_json_and_accept_json() {
        let status = |pairs| unacceptable(&headers(pairs)).map(|(status, _)| status);
        assert_eq!(status(&[("content-type", "application/json")]), None);
        assert_eq!(
            status(&[
                ("content-type", "Application/JSON; charset=utf-8"),
                ("accept", "text/event-stream, application/json")
            ]),
            None
        );
        assert_eq!(
            status(&[("content-type", "application/json"), ("accept", "*/*")]),
            None
        );
        assert_eq!(status(&[]), Some(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        assert_eq!(
            status(&[("content-type", "text/plain")]),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            status(&[
                ("content-type", "application/json"),
                ("accept", "text/event-stream")
            ]),
            Some(StatusCode::NOT_ACCEPTABLE)
        );
    }

    #[test]
    fn a_standard_header_given_twice_is_named() {
        let twice = headers(&[("mcp-method", "tools/call"), ("mcp-method", "tools/list")]);
        assert_eq!(standard_headers(&twice).unwrap_err(), METHOD);
        let once = standard_headers(&headers(&[("mcp-name", "get_document")])).unwrap();
        assert_eq!(once.name.as_deref(), Some("get_document"));
        assert!(accepts_event_streams(&headers(&[])));
        assert!(!accepts_event_streams(&headers(&[(
            "accept",
            "application/json"
        )])));
    }
}
