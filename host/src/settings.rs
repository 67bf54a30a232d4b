//! The host's own settings (`RUSTPAD_MCP_*`, never handed to the component):
//! read strictly, so that a value that could be a typo stops startup, and
//! named at startup when they would do nothing.

/// Variables for the host itself, never handed to the component.
pub const HOST_ONLY: &str = "RUSTPAD_MCP_";

pub const CACHE_DIR: &str = "RUSTPAD_MCP_CACHE_DIR";
pub const TRACE: &str = "RUSTPAD_MCP_TRACE";
/// Tool calls running at once on stdio.
pub const MAX_CALLS: &str = "RUSTPAD_MCP_MAX_CALLS";
/// MiB that all running calls may hold together, on either transport.
pub const MAX_MEMORY: &str = "RUSTPAD_MCP_MAX_MEMORY";
/// Pads whose recent removals the tally keeps (see `state::running_totals`).
pub const TALLY_PADS: &str = "RUSTPAD_MCP_TALLY_PADS";
/// Seconds the tally keeps an amount at most (the component's window, or less).
pub const TALLY_SECONDS: &str = "RUSTPAD_MCP_TALLY_SECONDS";

/// Pads watched for subscribers at once, in all.
pub const WATCHED_PADS: &str = "RUSTPAD_MCP_WATCHED_PADS";
/// Pads one 2025-11-25 session may subscribe to.
pub const WATCHES_PER_SESSION: &str = "RUSTPAD_MCP_WATCHES_PER_SESSION";
/// Pads one held listen (2026-07-28) may name.
pub const WATCHES_PER_LISTEN: &str = "RUSTPAD_MCP_WATCHES_PER_LISTEN";
/// Pads watched at once for the clients of one address, over HTTP.
pub const WATCHES_PER_ADDRESS: &str = "RUSTPAD_MCP_WATCHES_PER_ADDRESS";

/// Tool calls running at once with `--http`.
pub const HTTP_MAX_CALLS: &str = "RUSTPAD_MCP_HTTP_MAX_CALLS";

/// The host's settings besides those of `--http`.
const GENERAL: [&str; 9] = [
    CACHE_DIR,
    TRACE,
    MAX_CALLS,
    MAX_MEMORY,
    TALLY_PADS,
    TALLY_SECONDS,
    WATCHED_PADS,
    WATCHES_PER_SESSION,
    WATCHES_PER_LISTEN,
];
/// The host settings that concern only `--http`.
const HTTP: [&str; 5] = [
    rustpad_mcp_rules::gate::TOKEN_VARIABLE,
    rustpad_mcp_rules::gate::ORIGINS_VARIABLE,
    rustpad_mcp_rules::gate::HOSTS_VARIABLE,
    HTTP_MAX_CALLS,
    WATCHES_PER_ADDRESS,
];
/// Settings that do nothing with `--http`, and what takes their place there.
const STDIO_ONLY: [(&str, &str); 1] = [(MAX_CALLS, HTTP_MAX_CALLS)];

const DEFAULT_MAX_CALLS: usize = 16;
const DEFAULT_MAX_MEMORY_MIB: usize = 2048;
/// Less than this cannot hold one call with its socket.
const MIN_MAX_MEMORY_MIB: usize = 64;
const MAX_MAX_MEMORY_MIB: usize = 1 << 20;
const MAX_MAX_CALLS: usize = 100_000;
const DEFAULT_TALLY_PADS: usize = 100_000;
const MAX_TALLY_PADS: usize = 10_000_000;
/// The removal rule's own window (`guard::removal::TALLY_WINDOW_SECONDS`):
/// the tally keeps nothing longer than a component asks, so this only shortens it.
const MAX_TALLY_SECONDS: usize = 15 * 60;
/// Between updates a watched pad holds only its joined socket, which counts
/// what it holds against `RUSTPAD_MCP_MAX_MEMORY`: at most 160 KiB at rest,
/// 544 KiB while a live message of the largest size a held socket takes
/// (`websocket::LIVE_MESSAGE_BYTES`) comes in. A thousand of them, all at
/// that peak at once, take 531 of the default 2,048 MiB; at rest, 156.
const DEFAULT_WATCHED_PADS: usize = 1_000;
const MAX_WATCHED_PADS: usize = 10_000;
/// A quarter of the process's watches: one client follows a few hundred
/// pads, and three more like it still find room.
const DEFAULT_WATCHES_PER_SUBSCRIBER: usize = 250;
const MAX_WATCHES_PER_SUBSCRIBER: usize = 1_000;
/// As much as one subscriber: however many sessions and listens one address
/// opens, three quarters of the process's watches stay for the others.
const DEFAULT_WATCHES_PER_ADDRESS: usize = DEFAULT_WATCHES_PER_SUBSCRIBER;

/// How much the host lets running calls take, on either transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tool calls running at once on stdio.
    pub stdio_calls: usize,
    /// MiB all running calls may hold together.
    pub memory_mib: usize,
    /// Pads the removal tally keeps at once.
    pub tally_pads: usize,
    /// Seconds it keeps an amount at most.
    pub tally_seconds: usize,
    pub watches: WatchLimits,
}

/// How many pads may be watched for subscribers: in all, per 2025-11-25
/// session, per held listen, and over HTTP for the clients of one address
/// (sessions cost nothing to open, so only an address bounds a client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchLimits {
    pub pads: usize,
    pub per_session: usize,
    pub per_listen: usize,
    pub per_address: usize,
}

impl Limits {
    pub fn read(lookup: impl Fn(&str) -> Option<String>) -> Result<Limits, String> {
        Ok(Limits {
            stdio_calls: whole_number(&lookup, MAX_CALLS, DEFAULT_MAX_CALLS, 1..=MAX_MAX_CALLS)?,
            memory_mib: whole_number(
                &lookup,
                MAX_MEMORY,
                DEFAULT_MAX_MEMORY_MIB,
                MIN_MAX_MEMORY_MIB..=MAX_MAX_MEMORY_MIB,
            )?,
            tally_pads: whole_number(&lookup, TALLY_PADS, DEFAULT_TALLY_PADS, 1..=MAX_TALLY_PADS)?,
            tally_seconds: whole_number(
                &lookup,
                TALLY_SECONDS,
                MAX_TALLY_SECONDS,
                1..=MAX_TALLY_SECONDS,
            )?,
            watches: WatchLimits {
                pads: whole_number(
                    &lookup,
                    WATCHED_PADS,
                    DEFAULT_WATCHED_PADS,
                    1..=MAX_WATCHED_PADS,
                )?,
                per_session: whole_number(
                    &lookup,
                    WATCHES_PER_SESSION,
                    DEFAULT_WATCHES_PER_SUBSCRIBER,
                    1..=MAX_WATCHES_PER_SUBSCRIBER,
                )?,
                per_listen: whole_number(
                    &lookup,
                    WATCHES_PER_LISTEN,
                    DEFAULT_WATCHES_PER_SUBSCRIBER,
                    1..=MAX_WATCHES_PER_SUBSCRIBER,
                )?,
                per_address: whole_number(
                    &lookup,
                    WATCHES_PER_ADDRESS,
                    DEFAULT_WATCHES_PER_ADDRESS,
                    1..=MAX_WATCHED_PADS,
                )?,
            },
        })
    }
}

/// A whole-number setting within `range`, or `default` when unset.
pub fn whole_number(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, String> {
    let Some(text) = lookup(name) else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(format!(
            "{name} must be a whole number from {} to {}, not {:?}",
            range.start(),
            range.end(),
            text.chars().take(40).collect::<String>()
        )),
    }
}

/// A notice for every host variable that does nothing: a name that is not a
/// setting (likely a typo), or a setting of the other transport. The
/// component names its own (`RUSTPAD_*`) the same way.
pub fn notices(names: impl Iterator<Item = String>, serving_http: bool) -> Vec<String> {
    let mut known: Vec<&str> = GENERAL.to_vec();
    known.extend(HTTP);
    names
        .filter(|name| name.starts_with(HOST_ONLY))
        .filter_map(|name| {
            let shown: String = name.escape_debug().take(64).collect();
            if !known.contains(&name.as_str()) {
                Some(format!(
                    "rustpad-mcp: {shown} is not a setting of this server and is ignored; the host's settings are {}",
                    known.join(", ")
                ))
            } else if HTTP.contains(&name.as_str()) && !serving_http {
                Some(format!(
                    "rustpad-mcp: {shown} applies only with --http and is ignored on stdio"
                ))
            } else if let Some((_, instead)) = STDIO_ONLY
                .iter()
                .find(|(stdio, _)| *stdio == name && serving_http)
            {
                Some(format!(
                    "rustpad-mcp: {shown} applies only on stdio and is ignored with --http, where {instead} sets the limit"
                ))
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn host_variables_that_do_nothing_are_named() {
        let given = names(&[
            "RUSTPAD_MCP_HTTP_TOKNE",
            "RUSTPAD_MCP_HTTP_TOKEN",
            "RUSTPAD_MCP_TRACE",
            "RUSTPAD_MCP_MAX_CALLS",
            "RUSTPAD_URL",
            "HOME",
        ]);
        let on_stdio = notices(given.clone().into_iter(), false);
        assert_eq!(on_stdio.len(), 2, "{on_stdio:?}");
        assert!(on_stdio[0].contains("RUSTPAD_MCP_HTTP_TOKNE is not a setting"));
        assert!(on_stdio[0].contains("RUSTPAD_MCP_HTTP_MAX_CALLS"));
        assert!(on_stdio[1].contains("RUSTPAD_MCP_HTTP_TOKEN applies only with --http"));
        let on_http = notices(given.into_iter(), true);
        assert_eq!(on_http.len(), 2, "{on_http:?}");
        assert!(on_http[1].contains("RUSTPAD_MCP_MAX_CALLS applies only on stdio"));
    }

    #[test]
    fn limits_are_whole_numbers_in_range() {
        let limits = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Limits::read(|name| {
                pairs
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert_eq!(
            limits(&[]).unwrap(),
            Limits {
                stdio_calls: DEFAULT_MAX_CALLS,
                memory_mib: DEFAULT_MAX_MEMORY_MIB,
                tally_pads: DEFAULT_TALLY_PADS,
                tally_seconds: MAX_TALLY_SECONDS,
                watches: WatchLimits {
                    pads: DEFAULT_WATCHED_PADS,
                    per_session: DEFAULT_WATCHES_PER_SUBSCRIBER,
                    per_listen: DEFAULT_WATCHES_PER_SUBSCRIBER,
                    per_address: DEFAULT_WATCHES_PER_ADDRESS,
                },
            }
        );
        assert!(limits(&[(WATCHED_PADS, "0")]).is_err());
        assert!(limits(&[(WATCHES_PER_LISTEN, "1001")]).is_err());
        assert_eq!(
            limits(&[(WATCHES_PER_SESSION, "2")])
                .unwrap()
                .watches
                .per_session,
            2
        );
        assert_eq!(limits(&[(MAX_MEMORY, " 80 ")]).unwrap().memory_mib, 80);
        for bad in ["0", "63", "-1", "1.5", "lots", ""] {
            let refusal = limits(&[(MAX_MEMORY, bad)]).unwrap_err();
            assert!(
                refusal.contains("RUSTPAD_MCP_MAX_MEMORY must be"),
                "{refusal}"
            );
        }
        assert!(limits(&[(MAX_CALLS, "0")]).is_err());
        assert_eq!(limits(&[(MAX_CALLS, "2")]).unwrap().stdio_calls, 2);
        assert!(limits(&[(TALLY_PADS, "0")]).is_err());
        assert_eq!(limits(&[(TALLY_PADS, "3")]).unwrap().tally_pads, 3);
        assert_eq!(limits(&[(TALLY_SECONDS, "1")]).unwrap().tally_seconds, 1);
        assert!(limits(&[(TALLY_SECONDS, "901")]).is_err());
    }
}
