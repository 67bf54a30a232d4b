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
mod tests;
