//! The standard headers of 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`) repeat what the body says, so that gateways can route a
//! request without reading it. A request whose headers disagree with its
//! body would be routed one way and served another, so it is refused.

use base64::Engine;
use http::HeaderMap;
use serde_json::Value;

pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
const NAME: &str = "mcp-name";
pub const SESSION_ID: &str = "mcp-session-id";

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// What a request's body says about itself: the parts the headers repeat,
/// read from the same parsed message the component will read (so a repeated
/// key means here what it means there: the last one counts).
#[derive(Default)]
pub struct Claims {
    method: Option<String>,
    version: Option<Value>,
    has_capabilities: bool,
    has_client_info: bool,
    name: Option<Value>,
    uri: Option<Value>,
}

impl Claims {
    pub fn of(message: &Value) -> Claims {
        let params = message.get("params");
        let param = |key: &str| params.and_then(|p| p.get(key)).cloned();
        let meta = |key: &str| params.and_then(|p| p.get("_meta")).and_then(|m| m.get(key));
        Claims {
            method: message
                .get("method")
                .and_then(Value::as_str)
                .map(String::from),
            version: meta(META_VERSION).cloned(),
            has_capabilities: meta(META_CAPABILITIES).is_some(),
            has_client_info: meta(META_CLIENT_INFO).is_some(),
            name: param("name"),
            uri: param("uri"),
        }
    }

    /// A 2026-07-28 request: it carries one of that revision's `_meta` keys,
    /// or calls `server/discover`, which only that revision has. The same
    /// rule as the component's (`guest/src/mcp/mod.rs`, `modern_meta`), so the
    /// host never treats as a session message what the component serves
    /// statelessly.
    pub fn is_modern(&self) -> bool {
        self.version.is_some()
            || self.has_capabilities
            || self.has_client_info
            || self.method.as_deref() == Some("server/discover")
    }

    /// Checks the standard headers against the body. Runs only once the
    /// body's own `_meta` is complete: a body that lacks a field is told so
    /// by the component, which is the more useful answer.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        let (Some(Value::String(version)), true) = (&self.version, self.has_capabilities) else {
            return Ok(());
        };
        header_matches(headers, PROTOCOL_VERSION, "MCP-Protocol-Version", version)?;
        let method = self.method.as_deref().unwrap_or_default();
        header_matches(headers, METHOD, "Mcp-Method", method)?;
        let named = match method {
            "tools/call" | "prompts/get" => &self.name,
            "resources/read" => &self.uri,
            _ => return Ok(()),
        };
        if let Some(Value::String(name)) = named {
            header_matches(headers, NAME, "Mcp-Name", name)?;
        }
        Ok(())
    }
}

fn header_matches(
    headers: &HeaderMap,
    header: &str,
    shown: &str,
    body: &str,
) -> Result<(), String> {
    let Some(value) = headers.get(header) else {
        return Err(format!(
            "Header mismatch: the {shown} header is missing; it must repeat the body's value {body:?}"
        ));
    };
    let sent = value
        .to_str()
        .ok()
        .and_then(|text| decode(text.trim()))
        .ok_or_else(|| format!("Header mismatch: the {shown} header is not valid"))?;
    if sent == body {
        Ok(())
    } else {
        Err(format!(
            "Header mismatch: the {shown} header says {sent:?} but the body says {body:?}"
        ))
    }
}

/// A header value as sent: plain ASCII, or `=?base64?…?=` for anything else.
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_document","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    #[test]
    fn headers_must_repeat_the_body() {
        let call = Claims::of(&serde_json::from_str(CALL).unwrap());
        assert!(call.is_modern());
        let good = [
            (PROTOCOL_VERSION, "2026-07-28"),
            (METHOD, "tools/call"),
            (NAME, "  get_document "),
        ];
        assert_eq!(call.check(&headers(&good)), Ok(()));
        let encoded = [
            (PROTOCOL_VERSION, "2026-07-28"),
            (METHOD, "tools/call"),
            (NAME, "=?base64?Z2V0X2RvY3VtZW50?="),
        ];
        assert_eq!(call.check(&headers(&encoded)), Ok(()));
        for bad in [
            &good[..2],
            &good[1..],
            &[good[0], (METHOD, "TOOLS/CALL"), good[2]][..],
            &[good[0], good[1], (NAME, "set_document")][..],
            &[good[0], good[1], (NAME, "=?base64?!!?=")][..],
            &[(PROTOCOL_VERSION, "2025-11-25"), good[1], good[2]][..],
        ] {
            let refusal = call.check(&headers(bad)).unwrap_err();
            assert!(refusal.starts_with("Header mismatch"), "{refusal}");
        }
    }

    #[test]
    fn a_repeated_key_counts_as_the_component_counts_it() {
        // The last "name" is the tool that would run, so it is the one checked.
        let body = CALL.replace(
            r#""name":"get_document""#,
            r#""name":"get_document","name":"set_document""#,
        );
        let claims = Claims::of(&serde_json::from_str(&body).unwrap());
        let headers = headers(&[
            (PROTOCOL_VERSION, "2026-07-28"),
            (METHOD, "tools/call"),
            (NAME, "get_document"),
        ]);
        assert!(claims.check(&headers).is_err());
    }

    #[test]
    fn an_incomplete_or_legacy_body_is_left_to_the_component() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ] {
            let claims = Claims::of(&serde_json::from_str(body).unwrap());
            assert_eq!(claims.check(&HeaderMap::new()), Ok(()), "{body}");
        }
        let claims = |body: &str| Claims::of(&serde_json::from_str(body).unwrap());
        assert!(!claims(r#"{"method":"tools/list"}"#).is_modern());
        assert!(claims(r#"{"method":"server/discover"}"#).is_modern());
        assert!(
            claims(r#"{"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#)
                .is_modern()
        );
    }
}
