//! The standard headers of 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`) repeat what the body says, so that gateways can route a
//! request without reading it. A request whose headers disagree with its
//! body would be routed one way and served another, so it is refused.

use base64::Engine;
use http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;

pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
const NAME: &str = "mcp-name";
pub const SESSION_ID: &str = "mcp-session-id";
/// The JSON-RPC error for headers that disagree with the body.
pub const HEADER_MISMATCH: i64 = -32020;

/// What a request's body says about itself: the parts the headers repeat.
#[derive(Deserialize, Default)]
pub struct Stated {
    method: Option<String>,
    #[serde(default)]
    params: Params,
}

#[derive(Deserialize, Default)]
struct Params {
    #[serde(rename = "_meta", default)]
    meta: Meta,
    name: Option<Value>,
    uri: Option<Value>,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: Option<Value>,
}

impl Stated {
    /// Reads the body's statements; an unreadable body states nothing.
    pub fn read(body: &str) -> Stated {
        serde_json::from_str(body).unwrap_or_default()
    }

    /// The request names its 2026-07-28 version in `_meta`: it is served
    /// statelessly, and any session header is ignored.
    pub fn is_modern(&self) -> bool {
        self.params.meta.version.is_some()
    }

    /// Checks the standard headers against the body. Runs only once the
    /// body's own `_meta` is complete: a body that lacks a field is told so
    /// by the component, which is the more useful answer.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        let (Some(Value::String(version)), Some(_)) =
            (&self.params.meta.version, &self.params.meta.capabilities)
        else {
            return Ok(());
        };
        agree(headers, PROTOCOL_VERSION, "MCP-Protocol-Version", version)?;
        let method = self.method.as_deref().unwrap_or_default();
        agree(headers, METHOD, "Mcp-Method", method)?;
        let named = match method {
            "tools/call" | "prompts/get" => &self.params.name,
            "resources/read" => &self.params.uri,
            _ => return Ok(()),
        };
        if let Some(Value::String(name)) = named {
            agree(headers, NAME, "Mcp-Name", name)?;
        }
        Ok(())
    }
}

fn agree(headers: &HeaderMap, header: &str, shown: &str, body: &str) -> Result<(), String> {
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
        let call = Stated::read(CALL);
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
    fn an_incomplete_or_legacy_body_is_left_to_the_component() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "not json",
        ] {
            assert_eq!(
                Stated::read(body).check(&HeaderMap::new()),
                Ok(()),
                "{body}"
            );
        }
        assert!(!Stated::read(r#"{"method":"tools/list"}"#).is_modern());
    }
}
