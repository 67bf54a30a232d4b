//! The standard headers of Streamable HTTP (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`) repeat what the body says, so that gateways can
//! route a request without reading it. A request whose headers disagree with
//! its body would be routed one way and served another, so it is refused; so
//! is a body that gives a routed key twice (which parser wins is anybody's
//! guess).

use base64::Engine;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::era::{self, Era};
use crate::json::replace_lone_surrogates;
use crate::methods::{self, Named};

/// The header names, in lower case.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub const METHOD: &str = "mcp-method";
pub const NAME: &str = "mcp-name";
pub const SESSION_ID: &str = "mcp-session-id";

/// The standard headers a request carried (the first of each), as sent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StandardHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// What a request's body says about itself: the parts the headers repeat,
/// and the parts that tell the revision.
#[derive(Debug, Default)]
pub struct Claims {
    method: Option<String>,
    /// It carries an `id`: a request, which 2026-07-28 requires to name its
    /// method in a header; a notification need not.
    is_request: bool,
    version: Option<Value>,
    has_capabilities: bool,
    marked: bool,
    name: Option<Value>,
    uri: Option<Value>,
}

/// The levels of a message the claims come from, each kept raw: reading
/// them allocates nothing for the rest of the body, and a routed key given
/// twice is an error here.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    version: Mark<'a>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, borrow)]
    capabilities: Mark<'a>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, borrow)]
    client_info: Mark<'a>,
}

impl Meta<'_> {
    /// It carries one of 2026-07-28's keys, whatever the value ([`era`]).
    fn marks(&self) -> bool {
        [&self.version, &self.capabilities, &self.client_info]
            .iter()
            .any(|mark| mark.raw().is_some())
    }
}

/// One of 2026-07-28's `_meta` keys: absent, or given with any value, `null`
/// included (which an `Option` would read as absent).
#[derive(Default)]
enum Mark<'a> {
    #[default]
    Absent,
    Given(&'a RawValue),
}

impl<'a> Mark<'a> {
    fn raw(&self) -> Option<&'a RawValue> {
        match self {
            Mark::Absent => None,
            Mark::Given(raw) => Some(raw),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Mark<'a> {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(value).map(Mark::Given)
    }
}

/// Reads `raw` as `T` when it is an object; anything else holds no claims.
fn object<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> serde_json::Result<Option<T>> {
    match raw {
        Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get()).map(Some),
        _ => Ok(None),
    }
}

/// A small routed value (a string, in any sane message); a large one is
/// not read into memory, since it can match no header anyway.
fn small(raw: Option<&RawValue>) -> serde_json::Result<Option<Value>> {
    match raw {
        Some(raw) if raw.get().len() <= 4096 => serde_json::from_str(raw.get()).map(Some),
        Some(_) => Ok(Some(Value::Null)),
        None => Ok(None),
    }
}

impl Claims {
    /// Reads what `body` claims. An error means the body is not JSON, or
    /// gives a routed key twice.
    pub fn read(body: &str) -> serde_json::Result<Claims> {
        let top: Top = serde_json::from_str(body)?;
        let params: Option<Params> = object(top.params)?;
        let meta: Option<Meta> = object(params.as_ref().and_then(|p| p.meta))?;
        let method = match small(top.method)? {
            Some(Value::String(method)) => Some(method),
            _ => None,
        };
        Ok(Claims {
            method,
            is_request: top.id.is_some(),
            version: small(meta.as_ref().and_then(|m| m.version.raw()))?,
            has_capabilities: meta
                .as_ref()
                .is_some_and(|m| m.capabilities.raw().is_some()),
            marked: meta.as_ref().is_some_and(Meta::marks),
            name: small(params.as_ref().and_then(|p| p.name))?,
            uri: small(params.as_ref().and_then(|p| p.uri))?,
        })
    }

    /// The method the body names, if it names one as a string.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// The revision the body speaks (see [`era`]).
    pub fn era(&self) -> Era {
        era::decide(self.method.as_deref(), self.marked)
    }

    fn is_modern(&self) -> bool {
        self.era() == Era::Modern
    }

    /// Checks the standard headers against the body. A complete 2026-07-28
    /// request must carry all three; a complete 2026-07-28 notification its
    /// `MCP-Protocol-Version` (the revision requires it of every POST, and
    /// defines no method headers for notifications: its Streamable HTTP
    /// page, "Sending Messages"); any other message must agree with
    /// whichever it carries. (A 2026-07-28 body that lacks a `_meta` field is
    /// told so by the dispatch, which is the more useful answer.)
    pub fn check(&self, headers: &StandardHeaders) -> Result<(), String> {
        let method = self.method.as_deref().unwrap_or_default();
        let named = match methods::named_by(method) {
            Some(Named::Name) => self.name.as_ref(),
            Some(Named::Uri) => self.uri.as_ref(),
            None => None,
        };
        let named = match named {
            Some(Value::String(name)) => Some(name.as_str()),
            _ => None,
        };
        let sent = |value: &Option<String>| value.clone();
        if let (Some(Value::String(version)), true) = (&self.version, self.has_capabilities) {
            matches(
                sent(&headers.protocol_version),
                "MCP-Protocol-Version",
                version,
            )?;
            if self.is_request || headers.method.is_some() {
                matches(sent(&headers.method), "Mcp-Method", method)?;
            }
            if let Some(name) = named.filter(|_| self.is_request || headers.name.is_some()) {
                matches(sent(&headers.name), "Mcp-Name", name)?;
            }
        } else if !self.is_modern() {
            if headers.method.is_some() {
                matches(sent(&headers.method), "Mcp-Method", method)?;
            }
            if headers.name.is_some() {
                matches(sent(&headers.name), "Mcp-Name", named.unwrap_or_default())?;
            }
        }
        Ok(())
    }
}

/// A body that cannot say which revision it speaks: not JSON, or a key that
/// tells the revision (or that a header repeats) given twice.
#[derive(Debug)]
pub struct Unreadable(pub serde_json::Error);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Unreadable {}

/// The revision `body` speaks ([`crate::era`]). An escaped lone UTF-16 surrogate, which the
/// dispatch reads as U+FFFD, is read the same way here.
pub fn era_of(body: &str) -> Result<Era, Unreadable> {
    match Claims::read(body) {
        Ok(claims) => Ok(claims.era()),
        Err(error) => match replace_lone_surrogates(body) {
            Some(repaired) => Claims::read(&repaired)
                .map(|claims| claims.era())
                .map_err(Unreadable),
            None => Err(Unreadable(error)),
        },
    }
}

/// What is wrong with a request's `MCP-Protocol-Version`, if anything: in a
/// session it must name the revision agreed there; outside one it must name
/// a revision the server speaks. (A 2026-07-28 request's header is checked
/// against its `_meta` by [`Claims::check`] instead.)
pub fn version_problem(
    headers: &StandardHeaders,
    session_version: Option<&str>,
    supported: &[&str],
    modern: bool,
) -> Option<String> {
    let named = headers.protocol_version.as_deref()?.trim();
    match session_version {
        Some(agreed) if named != agreed => Some(format!(
            "Bad request: MCP-Protocol-Version must be {agreed}, the revision this session agreed on"
        )),
        Some(_) => None,
        None if modern || supported.contains(&named) => None,
        None => Some(format!(
            "Bad request: MCP-Protocol-Version {:?} is not a revision this server speaks ({})",
            named.chars().take(40).collect::<String>(),
            supported.join(", ")
        )),
    }
}

fn matches(sent: Option<String>, shown: &str, body: &str) -> Result<(), String> {
    let Some(value) = sent else {
        return Err(format!(
            "Header mismatch: the {shown} header is missing; it must repeat the body's value {body:?}"
        ));
    };
    let sent = decode(value.trim())
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

    fn headers(version: Option<&str>, method: Option<&str>, name: Option<&str>) -> StandardHeaders {
        StandardHeaders {
            protocol_version: version.map(String::from),
            method: method.map(String::from),
            name: name.map(String::from),
        }
    }

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_document","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    #[test]
    fn headers_must_repeat_the_body() {
        let call = Claims::read(CALL).unwrap();
        assert!(call.is_modern());
        let good = (
            Some("2026-07-28"),
            Some("tools/call"),
            Some("  get_document "),
        );
        assert_eq!(call.check(&headers(good.0, good.1, good.2)), Ok(()));
        let encoded = headers(good.0, good.1, Some("=?base64?Z2V0X2RvY3VtZW50?="));
        assert_eq!(call.check(&encoded), Ok(()));
        for bad in [
            headers(good.0, good.1, None),
            headers(None, good.1, good.2),
            headers(good.0, Some("TOOLS/CALL"), good.2),
            headers(good.0, good.1, Some("set_document")),
            headers(good.0, good.1, Some("=?base64?!!?=")),
            headers(Some("2025-11-25"), good.1, good.2),
        ] {
            let refusal = call.check(&bad).unwrap_err();
            assert!(refusal.starts_with("Header mismatch"), "{refusal}");
        }
    }

    #[test]
    fn a_notification_need_not_name_its_method_but_may_not_misname_it() {
        let cancel = CALL
            .replace(r#""id":1,"#, "")
            .replace("tools/call", "notifications/cancelled")
            .replace(
                r#""name":"get_document","arguments":{},"#,
                r#""requestId":1,"#,
            );
        let cancel = Claims::read(&cancel).unwrap();
        assert!(cancel.is_modern() && !cancel.is_request);
        assert_eq!(
            cancel.check(&headers(Some("2026-07-28"), None, None)),
            Ok(())
        );
        let named = headers(Some("2026-07-28"), Some("notifications/cancelled"), None);
        assert_eq!(cancel.check(&named), Ok(()));
        for bad in [
            headers(Some("2026-07-28"), Some("tools/call"), None),
            headers(None, None, None),
            headers(Some("2025-11-25"), None, None),
        ] {
            let refusal = cancel.check(&bad).unwrap_err();
            assert!(refusal.starts_with("Header mismatch"), "{refusal}");
        }
        // A request still needs its method header.
        let call = Claims::read(CALL).unwrap();
        let refusal = call
            .check(&headers(Some("2026-07-28"), None, Some("get_document")))
            .unwrap_err();
        assert!(
            refusal.contains("Mcp-Method header is missing"),
            "{refusal}"
        );
    }

    #[test]
    fn a_routed_key_given_twice_is_refused() {
        let body = CALL.replace(
            r#""name":"get_document""#,
            r#""name":"get_document","name":"set_document""#,
        );
        assert!(Claims::read(&body).unwrap_err().is_data());
        let body = CALL.replace(
            r#""method":"tools/call""#,
            r#""method":"tools/call","method":"x""#,
        );
        assert!(Claims::read(&body).is_err());
        // Keys that route nothing may repeat; the dispatch decides about them.
        let body = CALL.replace(r#""arguments":{}"#, r#""arguments":{"a":1,"a":2}"#);
        assert!(Claims::read(&body).is_ok());
    }

    #[test]
    fn other_messages_must_agree_with_the_headers_they_carry() {
        let legacy = Claims::read(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_document"}}"#,
        )
        .unwrap();
        assert_eq!(legacy.check(&StandardHeaders::default()), Ok(()));
        assert!(
            legacy
                .check(&headers(None, None, Some("get_document")))
                .is_err()
        );
        assert!(
            legacy
                .check(&headers(None, Some("tools/list"), None))
                .is_err()
        );
        assert_eq!(
            legacy.check(&headers(None, None, Some("create_document"))),
            Ok(())
        );
        let note =
            Claims::read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(note.check(&headers(None, Some("bogus"), None)).is_err());
    }

    #[test]
    fn an_incomplete_or_legacy_body_is_left_to_the_dispatch() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ] {
            let claims = Claims::read(body).unwrap();
            assert_eq!(claims.check(&StandardHeaders::default()), Ok(()), "{body}");
        }
        let claims = |body: &str| Claims::read(body).unwrap();
        assert!(!claims(r#"{"method":"tools/list"}"#).is_modern());
        assert!(claims(r#"{"method":"server/discover"}"#).is_modern());
    }

    #[test]
    fn the_version_header_names_the_session_revision_or_a_spoken_one() {
        let named = |v: &str| headers(Some(v), None, None);
        let spoken = ["2026-07-28", "2025-11-25"];
        assert_eq!(
            version_problem(&named("2025-11-25"), Some("2025-11-25"), &spoken, false),
            None
        );
        assert!(
            version_problem(&named("2026-07-28"), Some("2025-11-25"), &spoken, false).is_some()
        );
        assert_eq!(
            version_problem(&named("2025-11-25"), None, &spoken, false),
            None
        );
        assert!(version_problem(&named("1999-01-01"), None, &spoken, false).is_some());
        assert_eq!(
            version_problem(&named("1999-01-01"), None, &spoken, true),
            None
        );
        assert_eq!(
            version_problem(&StandardHeaders::default(), None, &spoken, false),
            None
        );
    }
}
