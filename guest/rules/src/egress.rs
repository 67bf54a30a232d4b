//! The egress rule: the one origin (scheme, host and port) of `RUSTPAD_URL`
//! is all that may be reached, by HTTP or WebSocket. `rustpad-mcp`'s host
//! applies it to every request the component makes through it, and the
//! component applies it itself where it opens its own sockets (in a
//! WebAssembly host that grants sockets all or nothing).

use std::fmt;

use crate::errors::{Error, ErrorKind};

/// `scheme://host:port`, with WebSocket schemes mapped to their HTTP twins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub secure: bool,
    /// Lower case; an IPv6 address keeps its brackets.
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// Parses an absolute `http`, `https`, `ws` or `wss` URL.
    pub fn of(url: &str) -> Option<Origin> {
        let parsed = url::Url::parse(url).ok()?;
        let secure = match parsed.scheme() {
            "https" | "wss" => true,
            "http" | "ws" => false,
            _ => return None,
        };
        let host = parsed.host_str()?.to_ascii_lowercase();
        let port = parsed.port().unwrap_or(if secure { 443 } else { 80 });
        Some(Origin { secure, host, port })
    }

    /// `host:port`, as a TCP connection names it.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.secure { "https" } else { "http" };
        write!(f, "{scheme}://{}:{}", self.host, self.port)
    }
}

/// Admits `url` only when it is on the `allowed` origin (none: nothing is).
pub fn admit(allowed: Option<&Origin>, url: &str) -> Result<Origin, Error> {
    let Some(origin) = Origin::of(url) else {
        return Err(Error::new(
            ErrorKind::Invalid,
            "egress denied: not an absolute http(s) or ws(s) URL",
        ));
    };
    match allowed {
        Some(allowed) if *allowed == origin => Ok(origin),
        Some(allowed) => Err(Error::new(
            ErrorKind::Refused,
            format!("egress denied: {origin} is not the allowed origin {allowed}"),
        )),
        None => Err(Error::new(
            ErrorKind::Refused,
            "egress denied: no RUSTPAD_URL is configured",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admits(allowed: &str, url: &str) -> bool {
        admit(Origin::of(allowed).as_ref(), url).is_ok()
    }

    #[test]
    fn admits_only_the_configured_origin() {
        let allowed = "http://127.0.0.1:3030";
        assert!(admits(allowed, "http://127.0.0.1:3030/api/text/a"));
        assert!(admits(allowed, "ws://127.0.0.1:3030/api/socket/a"));
        assert!(admits(allowed, "HTTP://127.0.0.1:3030/"));
        for refused in [
            "http://127.0.0.1:3031/",
            "https://127.0.0.1:3030/",
            "wss://127.0.0.1:3030/",
            "http://localhost:3030/",
            "http://127.0.0.2:3030/",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(!admits(allowed, refused), "{refused}");
        }
    }

    #[test]
    fn default_ports_are_the_same_origin() {
        let allowed = "https://pad.example.net";
        assert!(admits(allowed, "wss://pad.example.net:443/api/socket/x"));
        assert!(admits(allowed, "https://PAD.example.net/api/stats"));
        assert!(!admits(allowed, "https://pad.example.net:8443/"));
    }

    #[test]
    fn nothing_is_admitted_without_configuration() {
        assert!(admit(None, "http://127.0.0.1:3030/").is_err());
    }
}
