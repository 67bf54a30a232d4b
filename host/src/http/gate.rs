//! Who may talk to the HTTP transport: the checks every request passes before
//! any message reaches the component.
//!
//! - A bearer token (`RUSTPAD_MCP_HTTP_TOKEN`): required when the listener is
//!   not on loopback, and checked first whenever it is set, so that a client
//!   without it learns nothing else about the server.
//! - `Host`: on a loopback listener the request must name a loopback host, so
//!   a rebound DNS name is refused even when no `Origin` is sent.
//! - `Origin`: browsers send it, and a page from elsewhere must not drive a
//!   server that can edit pads (DNS rebinding). Loopback origins pass, and so
//!   do the origins listed in `RUSTPAD_MCP_HTTP_ORIGINS`; only the listed
//!   ones get the CORS headers a browser needs to read the answers.
//! - Without a token, a request that came through a proxy (`Forwarded`,
//!   `X-Forwarded-For`, `X-Real-IP`) is refused: a loopback listener without a
//!   token trusts whoever can connect, and a proxy connects for everyone.
//! - Ambiguity is refused rather than read one way: several `Origin` or
//!   `Host` headers, or a request target in absolute form
//!   (`POST http://elsewhere/mcp`) naming another authority than `Host`.

use std::net::SocketAddr;

use http::header::{AUTHORIZATION, HOST, ORIGIN};
use http::{HeaderMap, HeaderValue, Uri};
use rustpad_mcp_rules::loopback::{is_loopback_authority, is_loopback_name};
use subtle::ConstantTimeEq;

/// The variable holding the bearer token clients must present.
pub const TOKEN_VARIABLE: &str = "RUSTPAD_MCP_HTTP_TOKEN";
/// The variable listing further origins (comma-separated) allowed to call.
pub const ORIGINS_VARIABLE: &str = "RUSTPAD_MCP_HTTP_ORIGINS";
/// Shorter tokens are guessable; refuse them rather than run with one.
const MIN_TOKEN_CHARS: usize = 32;

#[derive(Debug)]
pub struct Gate {
    token: Option<String>,
    /// Extra allowed origins, as `scheme://host[:port]` (lower case, no default port).
    origins: Vec<String>,
    /// The listener is on loopback: only loopback `Host` names are served.
    loopback: bool,
}

#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// No or the wrong bearer token.
    Unauthorized,
    /// A request from a browser page whose origin is not allowed.
    Origin(String),
    /// A `Host` that does not name this loopback listener.
    Host(String),
    /// Forwarded by a proxy to a server that has no token.
    Proxied,
    /// More than one `Origin` header: which one a browser meant is unknowable.
    SeveralOrigins,
    /// A request target or `Host` that does not name one authority.
    Target(String),
}

/// A request let through: the browser origin it came from, if any, which the
/// answer names so that the browser lets the page read it (CORS).
#[derive(Debug, PartialEq)]
pub struct Admitted {
    pub origin: Option<HeaderValue>,
}

/// Headers whose presence says a proxy relayed the request.
const PROXY_HEADERS: [&str; 3] = ["forwarded", "x-forwarded-for", "x-real-ip"];

impl Gate {
    /// The gate for a listener on `listen`, from the operator's settings
    /// (`lookup` reads a variable). An unsafe or unreadable setting is an error.
    pub fn new(
        listen: SocketAddr,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Gate, String> {
        let loopback = listen.ip().is_loopback();
        let token = lookup(TOKEN_VARIABLE).filter(|token| !token.is_empty());
        if let Some(token) = &token {
            if token.chars().count() < MIN_TOKEN_CHARS
                || !token.chars().all(|c| c.is_ascii_graphic())
            {
                return Err(format!(
                    "{TOKEN_VARIABLE} must be at least {MIN_TOKEN_CHARS} visible ASCII characters (no spaces); for example: openssl rand -hex 32"
                ));
            }
        } else if !loopback {
            return Err(format!(
                "refusing to serve HTTP on {listen} without a bearer token: anyone who can reach it could edit pads. Set {TOKEN_VARIABLE} (at least {MIN_TOKEN_CHARS} characters), or listen on 127.0.0.1"
            ));
        }
        let mut origins = Vec::new();
        for listed in lookup(ORIGINS_VARIABLE)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
        {
            match normalized_origin(listed) {
                Some(origin) => origins.push(origin),
                None => {
                    return Err(format!(
                        "{ORIGINS_VARIABLE}: {listed:?} is not an origin like https://chat.example.net"
                    ));
                }
            }
        }
        Ok(Gate {
            token,
            origins,
            loopback,
        })
    }

    pub fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// Lets a request for `target` through, or says why not.
    pub fn admit(&self, target: &Uri, headers: &HeaderMap) -> Result<Admitted, Refusal> {
        match &self.token {
            Some(token) => {
                let presented = headers
                    .get(AUTHORIZATION)
                    .and_then(|h| h.to_str().ok())
                    .and_then(bearer_credentials)
                    .unwrap_or_default();
                if !bool::from(presented.as_bytes().ct_eq(token.as_bytes())) {
                    return Err(Refusal::Unauthorized);
                }
            }
            None => {
                if PROXY_HEADERS.iter().any(|name| headers.contains_key(*name)) {
                    return Err(Refusal::Proxied);
                }
            }
        }
        self.preflight(target, headers)
    }

    /// The checks a browser's CORS preflight (`OPTIONS`) must pass. It
    /// carries no credentials, so the token is not asked for; the request
    /// that follows is checked in full.
    pub fn preflight(&self, target: &Uri, headers: &HeaderMap) -> Result<Admitted, Refusal> {
        check_target(target, headers)?;
        if self.loopback {
            let host = headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default();
            if !is_loopback_authority(host) {
                return Err(Refusal::Host(host.to_string()));
            }
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        let Some(origin) = origins.next() else {
            return Ok(Admitted { origin: None });
        };
        if origins.next().is_some() {
            return Err(Refusal::SeveralOrigins);
        }
        let text = origin.to_str().unwrap_or_default();
        match origin_url(text) {
            // Listed: the operator wants pages there to use the server.
            Some(url) if self.origins.contains(&url.origin().ascii_serialization()) => {
                Ok(Admitted {
                    origin: Some(origin.clone()),
                })
            }
            // Loopback: not a rebinding attack, but no invitation either, so no
            // CORS; a page on another local port cannot read the answers.
            Some(url) if is_loopback_url(&url) => Ok(Admitted { origin: None }),
            _ => Err(Refusal::Origin(text.to_string())),
        }
    }
}

/// One `Host` header at most, and a target in absolute form naming the same
/// authority (host and port, the scheme's default filled in) as `Host`.
fn check_target(target: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
    let mut hosts = headers.get_all(HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(Refusal::Target(
            "the request carries more than one Host header".into(),
        ));
    }
    let Some(named) = target.authority() else {
        return Ok(());
    };
    let default_port = if target.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let port = |authority: &http::uri::Authority| authority.port_u16().unwrap_or(default_port);
    let host = host
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<http::uri::Authority>().ok());
    match host {
        Some(host)
            if host.host().eq_ignore_ascii_case(named.host()) && port(&host) == port(named) =>
        {
            Ok(())
        }
        _ => Err(Refusal::Target(format!(
            "the request target names {:?}, which is not the authority its Host header names",
            named.as_str().chars().take(100).collect::<String>()
        ))),
    }
}

/// The credentials of `Authorization: Bearer <credentials>`; the scheme's
/// case does not matter (RFC 9110, section 11.1).
fn bearer_credentials(header: &str) -> Option<&str> {
    let (scheme, credentials) = header.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// An http(s) origin, parsed.
fn origin_url(text: &str) -> Option<url::Url> {
    let url = url::Url::parse(text).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then_some(url)
}

/// `scheme://host[:port]` of an http(s) origin, as browsers serialize it.
fn normalized_origin(text: &str) -> Option<String> {
    origin_url(text).map(|url| url.origin().ascii_serialization())
}

fn is_loopback_url(url: &url::Url) -> bool {
    url.host_str().is_some_and(is_loopback_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    /// The usual request target, in origin form.
    fn mcp() -> Uri {
        Uri::from_static("/mcp")
    }

    fn gate(listen: &str, vars: &[(&str, &str)]) -> Result<Gate, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Gate::new(listen.parse().unwrap(), |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    fn headers(pairs: &[(http::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_public_listener_needs_a_long_enough_token() {
        assert!(
            gate("0.0.0.0:8080", &[])
                .unwrap_err()
                .contains(TOKEN_VARIABLE)
        );
        assert!(
            gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, "short")])
                .unwrap_err()
                .contains("at least 32")
        );
        assert!(gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, TOKEN)]).is_ok());
        assert!(gate("127.0.0.1:8080", &[]).is_ok());
        assert!(gate("[::1]:8080", &[]).is_ok());
    }

    const PASSED: Result<Admitted, Refusal> = Ok(Admitted { origin: None });

    #[test]
    fn loopback_listeners_serve_only_loopback_host_names() {
        let gate = gate("127.0.0.1:8080", &[]).unwrap();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "[::1]",
            // The one loopback rule (rustpad_mcp_rules::loopback), as RUSTPAD_URL's check uses it.
            "localhost.",
            "pad.localhost:8080",
            "[::ffff:127.0.0.1]",
        ] {
            assert_eq!(
                gate.admit(&mcp(), &headers(&[(HOST, host)])),
                PASSED,
                "{host}"
            );
        }
        for host in [
            "evil.example:8080",
            "127.0.0.1.nip.io:8080",
            "",
            "[::1]evil.example",
            "user@localhost",
            "localhost.evil.example",
        ] {
            assert!(
                matches!(
                    gate.admit(&mcp(), &headers(&[(HOST, host)])),
                    Err(Refusal::Host(_))
                ),
                "{host}"
            );
        }
    }

    #[test]
    fn origins_other_than_loopback_need_listing() {
        let gate = gate(
            "127.0.0.1:8080",
            &[(
                ORIGINS_VARIABLE,
                "https://chat.example.net, http://tools.example:8443",
            )],
        )
        .unwrap();
        let from = |origin| {
            gate.admit(
                &mcp(),
                &headers(&[(HOST, "127.0.0.1:8080"), (ORIGIN, origin)]),
            )
        };
        for listed in [
            "https://chat.example.net",
            "https://CHAT.example.net:443",
            "http://tools.example:8443",
        ] {
            let admitted = from(listed).unwrap();
            assert_eq!(admitted.origin.unwrap(), listed, "{listed}");
        }
        // Loopback pages pass the rebinding check, without CORS.
        for local in ["http://localhost:5173", "http://127.0.0.1"] {
            assert_eq!(from(local), PASSED, "{local}");
        }
        for refused in [
            "https://evil.example",
            "http://chat.example.net",
            "http://tools.example",
            "null",
            "http://localhost.evil.example",
        ] {
            assert!(
                matches!(from(refused), Err(Refusal::Origin(_))),
                "{refused}"
            );
        }
        assert!(gate_err(&[(ORIGINS_VARIABLE, "chat.example.net")]).contains(ORIGINS_VARIABLE));
    }

    fn gate_err(vars: &[(&str, &str)]) -> String {
        gate("127.0.0.1:1", vars).unwrap_err()
    }

    #[test]
    fn the_token_is_checked_first_whenever_it_is_set() {
        let gate = gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, TOKEN)]).unwrap();
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let presented = format!("{scheme} {TOKEN}");
            assert_eq!(
                gate.admit(&mcp(), &headers(&[(AUTHORIZATION, &presented)])),
                PASSED
            );
        }
        for wrong in [
            "",
            "Bearer",
            "Bearer x",
            &format!("Basic {TOKEN}"),
            &format!("Bearer {TOKEN}0"),
        ] {
            let presented = if wrong.is_empty() {
                headers(&[])
            } else {
                headers(&[(AUTHORIZATION, wrong)])
            };
            assert_eq!(
                gate.admit(&mcp(), &presented),
                Err(Refusal::Unauthorized),
                "{wrong:?}"
            );
        }
        // Without the token, a refused origin is not even looked at.
        let from_elsewhere = headers(&[(ORIGIN, "https://evil.example")]);
        assert_eq!(
            gate.admit(&mcp(), &from_elsewhere),
            Err(Refusal::Unauthorized)
        );
        // A preflight carries no token; its origin decides.
        assert!(matches!(
            gate.preflight(&mcp(), &from_elsewhere),
            Err(Refusal::Origin(_))
        ));
    }

    #[test]
    fn without_a_token_a_proxied_request_is_refused() {
        let open = gate("127.0.0.1:8080", &[]).unwrap();
        for header in ["forwarded", "x-forwarded-for", "x-real-ip"] {
            let proxied = headers(&[
                (HOST, "127.0.0.1:8080"),
                (http::HeaderName::from_static(header), "203.0.113.9"),
            ]);
            assert_eq!(
                open.admit(&mcp(), &proxied),
                Err(Refusal::Proxied),
                "{header}"
            );
        }
        let guarded = gate("127.0.0.1:8080", &[(TOKEN_VARIABLE, TOKEN)]).unwrap();
        let bearer = format!("Bearer {TOKEN}");
        let proxied = headers(&[
            (HOST, "127.0.0.1:8080"),
            (AUTHORIZATION, &bearer),
            (
                http::HeaderName::from_static("x-forwarded-for"),
                "203.0.113.9",
            ),
        ]);
        assert_eq!(guarded.admit(&mcp(), &proxied), PASSED);
    }

    #[test]
    fn ambiguous_origins_hosts_and_targets_are_refused() {
        let gate = gate("127.0.0.1:8080", &[]).unwrap();
        let mut two_origins = headers(&[(HOST, "127.0.0.1:8080")]);
        two_origins.append(ORIGIN, HeaderValue::from_static("http://localhost:1"));
        two_origins.append(ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert_eq!(
            gate.admit(&mcp(), &two_origins),
            Err(Refusal::SeveralOrigins)
        );
        let mut two_hosts = headers(&[(HOST, "127.0.0.1:8080")]);
        two_hosts.append(HOST, HeaderValue::from_static("localhost:8080"));
        assert!(matches!(
            gate.admit(&mcp(), &two_hosts),
            Err(Refusal::Target(_))
        ));
        let local = headers(&[(HOST, "localhost:8080")]);
        let foreign = Uri::from_static("http://evil.example/mcp");
        assert!(matches!(
            gate.admit(&foreign, &local),
            Err(Refusal::Target(_))
        ));
        let other_port = Uri::from_static("http://localhost:9090/mcp");
        assert!(matches!(
            gate.admit(&other_port, &local),
            Err(Refusal::Target(_))
        ));
        let same = Uri::from_static("http://LOCALHOST:8080/mcp");
        assert_eq!(gate.admit(&same, &local), PASSED);
        let default_port = headers(&[(HOST, "localhost")]);
        assert_eq!(
            gate.admit(&Uri::from_static("http://localhost:80/mcp"), &default_port),
            PASSED
        );
    }
}
