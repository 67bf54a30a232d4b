//! Enough open files for the sockets the settings allow: every watched pad
//! holds one, and the usual soft limit (1,024) is near the thousand pads a
//! process may watch. At start the soft limit is raised to the hard one,
//! which any process may do; when even the hard one is below what the
//! settings may need, the operator is told, once.

/// Files this process opens besides its sockets to Rustpad and its clients
/// (the binary, stdio, the runtime's own descriptors), with room to spare.
const BESIDES_SOCKETS: u64 = 64;

/// Raises the soft limit on open files to the hard one; a notice for the
/// operator when the limit is still below `sockets` + a margin (`kept` of
/// them write connections kept between calls).
pub fn raise_limit(sockets: u64, kept: usize) -> Option<String> {
    let needed = sockets + BESIDES_SOCKETS;
    let limit = raise();
    (limit < needed).then(|| {
        format!(
            "rustpad-mcp: this process may open {limit} files, and its settings may need {needed} (a socket for every watched pad, every call and up to {kept} write connections kept between calls, RUSTPAD_MCP_WATCHED_PADS and RUSTPAD_MCP_MAX_CALLS or RUSTPAD_MCP_HTTP_MAX_CALLS); past the limit new sockets fail. Raise it (ulimit -n, LimitNOFILE=) or lower those settings."
        )
    })
}

/// The soft limit after raising it as far as allowed.
#[cfg(unix)]
fn raise() -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    let hard = now.maximum;
    let soft = now.current;
    if soft != hard {
        let raised = Rlimit {
            current: hard,
            maximum: hard,
        };
        // macOS refuses a soft limit past OPEN_MAX even when the hard one is infinite.
        let fallback = Rlimit {
            current: Some(hard.unwrap_or(u64::MAX).min(10_240)),
            maximum: hard,
        };
        if setrlimit(Resource::Nofile, raised).is_err() {
            let _ = setrlimit(Resource::Nofile, fallback);
        }
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// Elsewhere the system decides, and this process cannot tell.
#[cfg(not(unix))]
fn raise() -> u64 {
    u64::MAX
}
