//! The server's configuration, read from the operator's settings: the
//! environment the host hands over (or, for the ACT plugin, the session args
//! its host opened with; see [`crate::grants::setting`]).
//!
//! Every variable has one strict reading, and a value that could be a typo
//! never silently changes behaviour: either it stops startup with a message
//! that names the valid values, or (for the one variable that only removes a
//! protection) it keeps the safe behaviour and says so. The RUSTPAD_URL value
//! is never echoed, because people paste secrets into it.

use crate::rustpad::url::RustpadUrl;
use crate::tools::{self, Tool, selection};

/// The configuration of one server process.
#[derive(Clone, Debug)]
pub struct Config {
    /// None: started without RUSTPAD_URL; tools are listed, every call explains.
    pub rustpad: Option<RustpadUrl>,
    pub insecure_tls: bool,
    /// False: guarded tools use the two-call token even for clients with dialogs.
    pub elicitation: bool,
    /// The tools this server offers, in catalogue order.
    pub tools: Vec<&'static Tool>,
    /// Signs question states and confirmation tokens (see [`crate::guard::seal`]).
    pub seal_key: Vec<u8>,
    /// The key lives only as long as this process (the host said
    /// `RUSTPAD_SEAL_KEY_SCOPE=process`): a token from before a restart cannot verify.
    pub seal_key_per_process: bool,
    notices: Vec<String>,
}

/// The variables this server reads (besides the unprefixed ELICITATION).
const VARIABLES: [&str; 6] = [
    "RUSTPAD_URL",
    "RUSTPAD_READ_ONLY",
    "RUSTPAD_INSECURE_TLS",
    "RUSTPAD_ALLOW_TOOLS",
    "RUSTPAD_DENY_TOOLS",
    "RUSTPAD_SEAL_KEY",
];

/// Variables the host sets for the component, which are not the operator's settings.
const HOST_PROVIDED: [&str; 1] = ["RUSTPAD_SEAL_KEY_SCOPE"];

/// What the host needs to know to serve: the origin to allow, TLS, messages.
pub struct Startup {
    pub origin: Option<String>,
    pub insecure_tls: bool,
    pub notices: Vec<String>,
}

/// The one line printed when the dialog is switched off (the product guide's wording).
pub const ELICITATION_OFF_NOTICE: &str =
    "rustpad-mcp: ELICITATION=false — guarded tools fall back to the two-call token";

const MISSING_URL_NOTICE: &str = "rustpad-mcp: RUSTPAD_URL is not set, so the tools are listed but every call will fail until it is.
  Set it to the base address of your Rustpad instance, e.g. RUSTPAD_URL=https://rustpad.example.net
  Rustpad has no accounts: anyone who can reach the instance and knows a pad id can read and change that pad.
  Optional: RUSTPAD_READ_ONLY=true offers only the read tools; RUSTPAD_INSECURE_TLS=true accepts a self-signed certificate;
  RUSTPAD_ALLOW_TOOLS / RUSTPAD_DENY_TOOLS choose the tools; ELICITATION=false swaps the approval dialog for a two-call token.";

impl Config {
    /// Reads the configuration from the operator's settings.
    pub fn from_settings() -> Result<Config, String> {
        Config::from_lookup(crate::grants::setting)
    }

    /// Reads the configuration through `get` (the environment, or a test's map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let mut notices = Vec::new();
        let elicitation = parse_elicitation(get("ELICITATION").as_deref())?;
        let rustpad = match get("RUSTPAD_URL").filter(|v| !v.trim().is_empty()) {
            None => None,
            Some(raw) => {
                let (url, warning) = RustpadUrl::parse(&raw)?;
                notices.extend(warning);
                Some(url)
            }
        };
        let read_only = parse_read_only(get("RUSTPAD_READ_ONLY").as_deref())?;
        let insecure_tls = match get("RUSTPAD_INSECURE_TLS").as_deref().map(str::trim) {
            Some("true") => true,
            None | Some("") | Some("false") => false,
            Some(other) => {
                notices.push(format!(
                    "rustpad-mcp: RUSTPAD_INSECURE_TLS is {}, not \"true\", so certificates are still checked",
                    describe_value(other)
                ));
                false
            }
        };
        let seal_key = parse_seal_key(get("RUSTPAD_SEAL_KEY").as_deref(), &mut notices)?;
        let seal_key_per_process = get("RUSTPAD_SEAL_KEY_SCOPE").as_deref() == Some("process");
        let tools = selection::select(
            get("RUSTPAD_ALLOW_TOOLS").as_deref(),
            get("RUSTPAD_DENY_TOOLS").as_deref(),
            read_only,
            &mut notices,
        )?;
        if insecure_tls {
            notices.push("rustpad-mcp: RUSTPAD_INSECURE_TLS=true — certificates of the Rustpad instance are not checked (this connection only)".into());
        }
        if read_only {
            notices.push(
                "rustpad-mcp: RUSTPAD_READ_ONLY is on — only the read tools are offered".into(),
            );
        }
        if !elicitation {
            notices.push(ELICITATION_OFF_NOTICE.into());
        }
        match &rustpad {
            Some(url) => notices.push(format!("rustpad-mcp: serving Rustpad at {}", url.base())),
            None => notices.push(MISSING_URL_NOTICE.into()),
        }
        Ok(Config {
            rustpad,
            insecure_tls,
            elicitation,
            tools,
            seal_key,
            seal_key_per_process,
            notices,
        })
    }

    /// What the host learns at startup, with a notice for every `RUSTPAD_*`
    /// variable in the environment that is not a setting (likely a typo).
    pub fn startup(self) -> Startup {
        let unknown = unknown_variables(&[]).into_iter().map(|name| {
            format!(
                "rustpad-mcp: {name} is not a setting of this server and is ignored; the settings are {}",
                VARIABLES.join(", ")
            )
        });
        Startup {
            origin: self.rustpad.as_ref().map(|url| url.origin().to_string()),
            insecure_tls: self.insecure_tls,
            notices: unknown.chain(self.notices).collect(),
        }
    }

    pub fn offers(&self, tool: &Tool) -> bool {
        self.tools.contains(&tool)
    }

    /// What a tool call needs of this configuration.
    pub fn tool_settings(&self) -> tools::Settings<'_> {
        tools::Settings {
            rustpad: self.rustpad.as_ref(),
            elicitation: self.elicitation,
            seal_key: &self.seal_key,
            seal_key_per_process: self.seal_key_per_process,
        }
    }
}

/// The `RUSTPAD_*` settings given that are neither this server's settings
/// nor among `also_known`, cleaned for showing.
pub fn unknown_variables(also_known: &[&str]) -> Vec<String> {
    crate::grants::setting_names()
        .into_iter()
        .filter(|name| {
            name.starts_with("RUSTPAD_")
                && !VARIABLES.contains(&name.as_str())
                && !HOST_PROVIDED.contains(&name.as_str())
                && !also_known.contains(&name.as_str())
        })
        .map(|name| crate::text::clean_line(&name, 64))
        .collect()
}

/// The settings this server reads, for messages.
pub fn settings() -> String {
    VARIABLES.join(", ")
}

fn parse_elicitation(raw: Option<&str>) -> Result<bool, String> {
    let value = raw.unwrap_or("").trim();
    match value.to_ascii_lowercase().as_str() {
        "" | "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!(
            "rustpad-mcp: ELICITATION must be \"true\" or \"false\", but it is {}. Refusing to start rather than guess which one was meant.",
            describe_value(value)
        )),
    }
}

/// The shortest operator-supplied seal key accepted (e.g. `openssl rand -hex 32`).
const MIN_SEAL_KEY_CHARS: usize = 32;

fn parse_seal_key(raw: Option<&str>, notices: &mut Vec<String>) -> Result<Vec<u8>, String> {
    match raw.map(str::trim) {
        Some(key) if key.chars().count() >= MIN_SEAL_KEY_CHARS => Ok(key.as_bytes().to_vec()),
        Some("") | None if crate::grants::STATELESS => Err(format!(
            "rustpad-mcp: RUSTPAD_SEAL_KEY is not set. In a WebAssembly host every request runs in a fresh instance, so a key one request made up could not check the answer that comes back in the next: set RUSTPAD_SEAL_KEY to at least {MIN_SEAL_KEY_CHARS} characters (for example the output of `openssl rand -hex 32`)"
        )),
        Some("") | None => {
            notices.push("rustpad-mcp: RUSTPAD_SEAL_KEY is not set by the host, so answers to confirmation questions can only be checked within one call".into());
            Ok(wasip2::random::random::get_random_bytes(32))
        }
        Some(key) => Err(format!(
            "rustpad-mcp: RUSTPAD_SEAL_KEY must be at least {MIN_SEAL_KEY_CHARS} characters (for example the output of `openssl rand -hex 32`), but it is {} characters long",
            key.chars().count()
        )),
    }
}

fn parse_read_only(raw: Option<&str>) -> Result<bool, String> {
    let value = raw.unwrap_or("").trim();
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "" | "0" | "false" | "no" => Ok(false),
        _ => Err(format!(
            "rustpad-mcp: RUSTPAD_READ_ONLY must be one of true, 1, yes (on) or false, 0, no (off), but it is {}. Refusing to start rather than guess.",
            describe_value(value)
        )),
    }
}

/// Shows a configuration value only when it is short, printable ASCII.
pub fn describe_value(value: &str) -> String {
    let printable = value.chars().all(|c| c.is_ascii_graphic() || c == ' ');
    let length = value.chars().count();
    if length == 0 {
        "empty".into()
    } else if printable && length <= 20 {
        format!("\"{value}\"")
    } else {
        format!("a {length}-character value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: (&str, &str) = ("RUSTPAD_SEAL_KEY", "0123456789abcdef0123456789abcdef");

    fn config(vars: &[(&str, &str)]) -> Result<Config, String> {
        Config::from_lookup(|name| {
            vars.iter()
                .chain([&KEY])
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn seal_keys_must_be_long() {
        let err =
            Config::from_lookup(|name| (name == "RUSTPAD_SEAL_KEY").then(|| "short".to_string()))
                .unwrap_err();
        assert!(err.contains("at least 32"), "{err}");
    }

    #[test]
    fn url_is_normalised() {
        let (url, warning) = RustpadUrl::parse(" HTTPS://Pad.Example.NET///").unwrap();
        assert_eq!(url.base(), "https://pad.example.net");
        assert!(warning.is_none());
        let (url, _) = RustpadUrl::parse("https://h/ /x/").unwrap();
        assert_eq!(url.base(), "https://h/%20/x");
        assert_eq!(url.websocket("/api/socket/a"), "wss://h/%20/x/api/socket/a");
        let (url, warning) = RustpadUrl::parse("http://127.0.0.1:3030").unwrap();
        assert_eq!(url.origin(), "http://127.0.0.1:3030");
        assert_eq!(
            url.websocket("/api/socket/a"),
            "ws://127.0.0.1:3030/api/socket/a"
        );
        assert!(warning.is_none());
    }

    #[test]
    fn url_errors_never_echo_the_value() {
        for bad in [
            "secret-token-123",
            "ftp://secret.example",
            "https://user:secret@h",
            "https://h/?secret=1",
            "https://h/#secret",
            "deadbeef:secret",
        ] {
            let err = RustpadUrl::parse(bad).unwrap_err();
            assert!(!err.contains("secret"), "{err}");
        }
    }

    #[test]
    fn plain_http_to_another_host_warns() {
        let (_, warning) = RustpadUrl::parse("http://pad.example.net").unwrap();
        assert!(warning.unwrap().contains("unencrypted"));
        for local in [
            "localhost",
            "a.localhost",
            "127.1.2.3",
            "[::1]",
            "[::ffff:127.0.0.1]",
        ] {
            let (_, warning) = RustpadUrl::parse(&format!("http://{local}:1")).unwrap();
            assert!(warning.is_none(), "{local}");
        }
        let (_, warning) = RustpadUrl::parse("http://127.example.com").unwrap();
        assert!(warning.is_some());
    }

    #[test]
    fn elicitation_is_strict() {
        assert!(config(&[]).unwrap().elicitation);
        assert!(config(&[("ELICITATION", " TRUE ")]).unwrap().elicitation);
        assert!(!config(&[("ELICITATION", "False")]).unwrap().elicitation);
        for bad in ["yes", "1", "off"] {
            let err = config(&[("ELICITATION", bad)]).unwrap_err();
            assert!(
                err.contains("\"true\"") && err.contains("\"false\""),
                "{err}"
            );
        }
    }

    #[test]
    fn read_only_is_lenient_about_spelling_but_not_typos() {
        for on in ["1", "true", "YES", " True "] {
            assert_eq!(parse_read_only(Some(on)), Ok(true), "{on}");
            let tools = config(&[("RUSTPAD_READ_ONLY", on)]).unwrap().tools;
            assert!(tools.iter().all(|tool| tool.is_read()), "{on}");
        }
        for off in ["", "0", "false", "No"] {
            assert_eq!(parse_read_only(Some(off)), Ok(false), "{off}");
        }
        assert!(config(&[("RUSTPAD_READ_ONLY", "ture")]).is_err());
    }

    #[test]
    fn insecure_tls_needs_exactly_true() {
        assert!(
            config(&[("RUSTPAD_INSECURE_TLS", "true")])
                .unwrap()
                .insecure_tls
        );
        let relaxed = config(&[("RUSTPAD_INSECURE_TLS", "TRUE")]).unwrap();
        assert!(!relaxed.insecure_tls);
        assert!(relaxed.notices.iter().any(|n| n.contains("still checked")));
    }

    #[test]
    fn describes_values_without_echoing_long_ones() {
        assert_eq!(describe_value("yes"), "\"yes\"");
        assert_eq!(describe_value(&"x".repeat(30)), "a 30-character value");
        assert_eq!(describe_value("a\u{1b}b"), "a 3-character value");
    }
}
