//! Where Rustpad is: RUSTPAD_URL, validated once, and every address derived
//! from it (the HTTP API, the collaboration socket, share links).

use rustpad_mcp_rules::loopback::is_loopback_name;

/// A validated Rustpad base URL: `scheme://host[:port][/path]`, no trailing slash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RustpadUrl {
    base: String,
    origin: String,
    authority: String,
    path: String,
    secure: bool,
}

impl RustpadUrl {
    /// Parses and normalises a RUSTPAD_URL value. Errors never contain the value.
    pub fn parse(raw: &str) -> Result<(Self, Option<String>), String> {
        let parsed = url::Url::parse(raw.trim())
            .map_err(|_| "rustpad-mcp: RUSTPAD_URL is not an absolute URL (expected something like https://rustpad.example.net)".to_string())?;
        let secure = match parsed.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err("rustpad-mcp: RUSTPAD_URL must start with http:// or https://".into()),
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err("rustpad-mcp: RUSTPAD_URL must not carry a user name or password".into());
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(
                "rustpad-mcp: RUSTPAD_URL must not carry a query string or a fragment".into(),
            );
        }
        let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
            return Err("rustpad-mcp: RUSTPAD_URL has no host name".into());
        };
        let origin = parsed.origin().ascii_serialization();
        let path = parsed.path().trim_end_matches('/');
        let warning = (!secure && !is_loopback_name(host)).then(|| {
            "rustpad-mcp: warning: RUSTPAD_URL uses plain http to a host other than this machine, so pad content crosses the network unencrypted; prefer https://".to_string()
        });
        let authority = match parsed.port() {
            Some(port) => format!("{}:{port}", parsed.host_str().unwrap_or(host)),
            None => host.to_string(),
        };
        let url = RustpadUrl {
            base: format!("{origin}{path}"),
            origin,
            authority,
            path: path.to_string(),
            secure,
        };
        Ok((url, warning))
    }

    /// The normalised base, used for share links: `<base>/#<id>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `scheme://host[:port]`: the only place the host lets us connect to.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// True for https:// (and so wss://).
    pub fn is_secure(&self) -> bool {
        self.secure
    }

    /// `host[:port]`, the port only when it is not the scheme's default.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The path and query of the HTTP API address for `path` (which starts with `/api/`).
    pub fn http_path(&self, path: &str) -> String {
        format!("{}{path}", self.path)
    }

    /// The WebSocket address for `path`: ws:// for http, wss:// for https.
    pub fn websocket(&self, path: &str) -> String {
        let rest = self.base.split_once("://").map_or("", |(_, rest)| rest);
        let scheme = if self.secure { "wss" } else { "ws" };
        format!("{scheme}://{rest}{path}")
    }

    /// The link people open in a browser to edit pad `id`.
    pub fn share_link(&self, id: &str) -> String {
        format!("{}/#{id}", self.base)
    }
}
