//! Who may talk to an HTTP transport of rustpad-mcp: the checks every request
//! passes before any message reaches the component, for `rustpad-mcp --http`
//! and for the component served by a WebAssembly host alike.
//!
//! - A bearer token (`RUSTPAD_MCP_HTTP_TOKEN`): required when the listener is
//!   not known to be on loopback, and checked first whenever it is set, so
//!   that a client without it learns nothing else about the server.
//! - `Host`: the request must name a host this server answers to — on a
//!   loopback listener a loopback name, where `RUSTPAD_MCP_HTTP_HOSTS` is set
//!   one of those — so a rebound DNS name is refused even when no `Origin` is
//!   sent.
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
use http::{HeaderMap, HeaderValue, StatusCode, Uri};
use subtle::ConstantTimeEq;

use crate::loopback::{is_loopback_authority, is_loopback_name};

/// The variable holding the bearer token clients must present.
pub const TOKEN_VARIABLE: &str = "RUSTPAD_MCP_HTTP_TOKEN";
/// The variable listing further origins (comma-separated) allowed to call.
pub const ORIGINS_VARIABLE: &str = "RUSTPAD_MCP_HTTP_ORIGINS";
/// The variable listing the `Host` values (comma-separated `host[:port]`) served.
pub const HOSTS_VARIABLE: &str = "RUSTPAD_MCP_HTTP_HOSTS";
/// The `WWW-Authenticate` challenge sent with a refusal for want of the token.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"rustpad-mcp\"";
/// Shorter tokens are guessable; refuse them rather than run with one.
const MIN_TOKEN_CHARS: usize = 32;

#[derive(Debug)]
pub struct Gate {
    token: Option<String>,
    /// Extra allowed origins, as `scheme://host[:port]` (lower case, no default port).
    origins: Vec<String>,
    hosts: Hosts,
}

/// A host of `RUSTPAD_MCP_HTTP_HOSTS`: the name in lower case, and the port if one was given.
type ListedHost = (String, Option<u16>);

/// Which `Host` values are served.
#[derive(Debug)]
enum Hosts {
    /// Loopback names only: the listener is on loopback.
    Loopback,
    /// The operator's list.
    Listed(Vec<ListedHost>),
    /// Any: a public listener with a token and no list.
    Any,
}

#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// No or the wrong bearer token.
    Unauthorized,
    /// A request from a browser page whose origin is not allowed.
    Origin(String),
    /// A `Host` this server does not answer to; `listed` when an operator's list decided.
    Host { host: String, listed: bool },
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
    /// The gate for `rustpad-mcp --http` listening on `listen`, from the
    /// operator's settings (`lookup` reads a variable). An unsafe or
    /// unreadable setting is an error.
    pub fn new(
        listen: SocketAddr,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Gate, String> {
        let loopback = listen.ip().is_loopback();
        let token = read_token(&lookup)?;
        if token.is_none() && !loopback {
            return Err(format!(
                "refusing to serve HTTP on {listen} without a bearer token: anyone who can reach it could edit pads. Set {TOKEN_VARIABLE} (at least {MIN_TOKEN_CHARS} characters), or listen on 127.0.0.1"
            ));
        }
        let hosts = match read_hosts(&lookup)? {
            Some(listed) => Hosts::Listed(listed),
            None if loopback => Hosts::Loopback,
            None => Hosts::Any,
        };
        Ok(Gate {
            token,
            origins: read_origins(&lookup)?,
            hosts,
        })
    }

    /// The gate for a component served by a WebAssembly host, which cannot
    /// see the address it listens on and so never assumes loopback: the
    /// token and the list of hosts are both required.
    pub fn for_wasm_host(lookup: impl Fn(&str) -> Option<String>) -> Result<Gate, String> {
        let Some(token) = read_token(&lookup)? else {
            return Err(format!(
                "{TOKEN_VARIABLE} is not set. A WebAssembly host may serve this component on any address, so every request must carry a bearer token: set {TOKEN_VARIABLE} to at least {MIN_TOKEN_CHARS} characters (for example: openssl rand -hex 32)"
            ));
        };
        let Some(hosts) = read_hosts(&lookup)? else {
            return Err(format!(
                "{HOSTS_VARIABLE} is not set. List the Host values clients use to reach this server, comma-separated host[:port] (for example: mcp.example.net,localhost:8080), so that a rebound DNS name is refused"
            ));
        };
        Ok(Gate {
            token: Some(token),
            origins: read_origins(&lookup)?,
            hosts: Hosts::Listed(hosts),
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
        let host = headers
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        let served = match &self.hosts {
            Hosts::Loopback => is_loopback_authority(host),
            Hosts::Listed(listed) => names_listed_host(host, listed),
            Hosts::Any => true,
        };
        if !served {
            return Err(Refusal::Host {
                host: host.chars().take(100).collect(),
                listed: matches!(self.hosts, Hosts::Listed(_)),
            });
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

impl Refusal {
    /// The status and plain-text explanation every transport answers with,
    /// and whether to ask for the bearer token (`WWW-Authenticate`).
    pub fn answer(&self) -> (StatusCode, String, bool) {
        match self {
            Refusal::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Unauthorized: send Authorization: Bearer <the server's {TOKEN_VARIABLE}>\n"
                ),
                true,
            ),
            Refusal::Origin(origin) => (
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: requests from origin {origin:?} are not allowed (list it in {ORIGINS_VARIABLE})\n"
                ),
                false,
            ),
            Refusal::Host { host, listed: true } => (
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: this server answers only to the hosts in {HOSTS_VARIABLE}, not to Host {host:?}\n"
                ),
                false,
            ),
            Refusal::Host {
                host,
                listed: false,
            } => (
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: this server listens on loopback and answers only to localhost, not to Host {host:?}\n"
                ),
                false,
            ),
            Refusal::SeveralOrigins => (
                StatusCode::FORBIDDEN,
                "Forbidden: the request carries more than one Origin header\n".into(),
                false,
            ),
            Refusal::Target(problem) => (
                StatusCode::BAD_REQUEST,
                format!("Bad request: {problem}\n"),
                false,
            ),
            Refusal::Proxied => (
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: this request came through a proxy, and this server has no token, so it would serve anyone the proxy serves; set {TOKEN_VARIABLE} (see docs/deployment.md)\n"
                ),
                false,
            ),
        }
    }
}

fn read_token(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<String>, String> {
    let token = lookup(TOKEN_VARIABLE).filter(|token| !token.is_empty());
    if let Some(token) = &token
        && (token.chars().count() < MIN_TOKEN_CHARS || !token.chars().all(|c| c.is_ascii_graphic()))
    {
        return Err(format!(
            "{TOKEN_VARIABLE} must be at least {MIN_TOKEN_CHARS} visible ASCII characters (no spaces); for example: openssl rand -hex 32"
        ));
    }
    Ok(token)
}

fn read_origins(lookup: &impl Fn(&str) -> Option<String>) -> Result<Vec<String>, String> {
    let mut origins = Vec::new();
    for listed in entries(lookup(ORIGINS_VARIABLE)) {
        match normalized_origin(&listed) {
            Some(origin) => origins.push(origin),
            None => {
                return Err(format!(
                    "{ORIGINS_VARIABLE}: {listed:?} is not an origin like https://chat.example.net"
                ));
            }
        }
    }
    Ok(origins)
}

/// The hosts of `RUSTPAD_MCP_HTTP_HOSTS`; None when it is unset or empty.
fn read_hosts(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<Vec<ListedHost>>, String> {
    let mut hosts = Vec::new();
    for listed in entries(lookup(HOSTS_VARIABLE)) {
        match listed.parse::<http::uri::Authority>() {
            Ok(authority) if !authority.as_str().contains('@') && !authority.host().is_empty() => {
                hosts.push((authority.host().to_ascii_lowercase(), authority.port_u16()));
            }
            _ => {
                return Err(format!(
                    "{HOSTS_VARIABLE}: {:?} is not a host[:port] like mcp.example.net or localhost:8080",
                    listed.chars().take(100).collect::<String>()
                ));
            }
        }
    }
    Ok((!hosts.is_empty()).then_some(hosts))
}

/// The trimmed, non-empty entries of a comma-separated setting.
fn entries(setting: Option<String>) -> Vec<String> {
    setting
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a `Host` value names a listed host: same name (any case), and the
/// same port where the entry gives one.
fn names_listed_host(host: &str, listed: &[(String, Option<u16>)]) -> bool {
    let Ok(authority) = host.parse::<http::uri::Authority>() else {
        return false;
    };
    if authority.as_str().contains('@') {
        return false;
    }
    listed.iter().any(|(name, port)| {
        authority.host().eq_ignore_ascii_case(name)
            && port.is_none_or(|port| authority.port_u16() == Some(port))
    })
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
                    Err(Refusal::Host { .. })
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

    #[test]
    fn listed_hosts_are_the_only_ones_served() {
        let gate = gate(
            "0.0.0.0:8080",
            &[
                (TOKEN_VARIABLE, TOKEN),
                (HOSTS_VARIABLE, "MCP.example.net, localhost:8080"),
            ],
        )
        .unwrap();
        let bearer = format!("Bearer {TOKEN}");
        let with_host =
            |host| gate.admit(&mcp(), &headers(&[(AUTHORIZATION, &bearer), (HOST, host)]));
        for served in ["mcp.example.net", "mcp.EXAMPLE.net:443", "localhost:8080"] {
            assert_eq!(with_host(served), PASSED, "{served}");
        }
        for refused in [
            "localhost:9090",
            "localhost",
            "evil.example",
            "mcp.example.net.evil",
            "u@mcp.example.net",
            "",
        ] {
            assert_eq!(
                with_host(refused),
                Err(Refusal::Host {
                    host: refused.into(),
                    listed: true
                }),
                "{refused}"
            );
        }
        assert!(gate_err(&[(HOSTS_VARIABLE, "https://mcp.example.net/")]).contains(HOSTS_VARIABLE));
    }

    #[test]
    fn a_wasm_host_gate_needs_a_token_and_hosts() {
        let vars = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Gate::for_wasm_host(|name| {
                pairs
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert!(
            vars(&[(HOSTS_VARIABLE, "localhost")])
                .unwrap_err()
                .contains(TOKEN_VARIABLE)
        );
        assert!(
            vars(&[(TOKEN_VARIABLE, TOKEN)])
                .unwrap_err()
                .contains(HOSTS_VARIABLE)
        );
        assert!(vars(&[(TOKEN_VARIABLE, "short"), (HOSTS_VARIABLE, "localhost")]).is_err());
        let gate = vars(&[(TOKEN_VARIABLE, TOKEN), (HOSTS_VARIABLE, "localhost")]).unwrap();
        assert!(gate.requires_token());
        assert_eq!(
            gate.admit(&mcp(), &headers(&[(HOST, "localhost:1234")])),
            Err(Refusal::Unauthorized)
        );
    }

    #[test]
    fn every_refusal_has_a_status_and_an_explanation() {
        assert_eq!(Refusal::Unauthorized.answer().0, StatusCode::UNAUTHORIZED);
        assert!(Refusal::Unauthorized.answer().2);
        let (status, text, _) = Refusal::Host {
            host: "evil".into(),
            listed: true,
        }
        .answer();
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(text.contains(HOSTS_VARIABLE) && text.ends_with('\n'));
        assert_eq!(
            Refusal::Target("x".into()).answer().0,
            StatusCode::BAD_REQUEST
        );
    }
}
