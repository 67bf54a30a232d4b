//! Who may talk to the HTTP transport: the checks every request passes before
//! any message reaches the component.
//!
//! - A bearer token (`RUSTPAD_MCP_HTTP_TOKEN`): required when the listener is
//!   not on loopback, and checked whenever it is set.
//! - `Origin`: browsers send it, and a page from elsewhere must not drive a
//!   server that can edit pads (DNS rebinding). Loopback origins pass, and so
//!   do the origins listed in `RUSTPAD_MCP_HTTP_ORIGINS`.
//! - `Host`: on a loopback listener the request must name a loopback host, so
//!   a rebound DNS name is refused even when no `Origin` is sent.

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;
use http::header::{AUTHORIZATION, HOST, ORIGIN};
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
}

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

    /// Lets a request through, or says why not.
    pub fn admit(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if self.loopback {
            let host = headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default();
            if !is_loopback_host(host) {
                return Err(Refusal::Host(host.to_string()));
            }
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let allowed = normalized_origin(origin).is_some_and(|o| {
                is_loopback_name(url_host(&o).unwrap_or_default()) || self.origins.contains(&o)
            });
            if !allowed {
                return Err(Refusal::Origin(origin.to_string()));
            }
        }
        if let Some(token) = &self.token {
            let presented = headers
                .get(AUTHORIZATION)
                .and_then(|h| h.to_str().ok())
                .and_then(|h| h.strip_prefix("Bearer "))
                .unwrap_or_default();
            if !bool::from(presented.as_bytes().ct_eq(token.as_bytes())) {
                return Err(Refusal::Unauthorized);
            }
        }
        Ok(())
    }
}

/// `scheme://host[:port]` of an http(s) origin, as browsers serialize it.
fn normalized_origin(text: &str) -> Option<String> {
    let url = url::Url::parse(text).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    Some(url.origin().ascii_serialization())
}

fn url_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(match rest.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => rest.rsplit_once(':').map_or(rest, |(host, _)| host),
    })
}

/// A `Host` header value (`name[:port]`) naming this machine's loopback.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(addr, _)| addr),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    is_loopback_name(name)
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

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

    #[test]
    fn loopback_listeners_serve_only_loopback_host_names() {
        let gate = gate("127.0.0.1:8080", &[]).unwrap();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
        ] {
            assert_eq!(gate.admit(&headers(&[(HOST, host)])), Ok(()), "{host}");
        }
        for host in ["evil.example:8080", "127.0.0.1.nip.io:8080", ""] {
            assert!(
                matches!(gate.admit(&headers(&[(HOST, host)])), Err(Refusal::Host(_))),
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
        let from = |origin| gate.admit(&headers(&[(HOST, "127.0.0.1:8080"), (ORIGIN, origin)]));
        for allowed in [
            "http://localhost:5173",
            "http://127.0.0.1",
            "https://chat.example.net",
            "https://CHAT.example.net:443",
            "http://tools.example:8443",
        ] {
            assert_eq!(from(allowed), Ok(()), "{allowed}");
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
    fn the_token_is_checked_whenever_it_is_set() {
        let gate = gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, TOKEN)]).unwrap();
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(gate.admit(&headers(&[(AUTHORIZATION, &bearer)])), Ok(()));
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
                gate.admit(&presented),
                Err(Refusal::Unauthorized),
                "{wrong:?}"
            );
        }
    }
}
