//! rustpad-mcp: the host that runs the rustpad-mcp component.
//!
//! The host knows the transports (stdio, Streamable HTTP), wasmtime and
//! egress policy, and nothing about pads. It hands the component its
//! configuration (the `RUSTPAD_*` variables but the host's own
//! `RUSTPAD_MCP_*`, and `ELICITATION`; nothing else), lets it reach only
//! RUSTPAD_URL's origin, and carries MCP messages between the client and a
//! fresh instance per message.
#![forbid(unsafe_code)]

mod egress;
mod flights;
mod http;
mod jsonrpc;
mod questions;
mod runtime;
mod single_use;
mod stdio;
mod tally;
pub mod websocket;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use runtime::Runtime;

const HELP: &str = "rustpad-mcp — an MCP server for Rustpad, the collaborative text editor

Usage: rustpad-mcp [--http ADDRESS] [--component FILE]
       rustpad-mcp --check
       rustpad-mcp --help | --version

  --http ADDRESS     serve MCP over Streamable HTTP at http://ADDRESS/mcp
                     instead of stdio; ADDRESS is HOST:PORT, or a port on
                     127.0.0.1 (see docs/deployment.md)

  --check            connect to RUSTPAD_URL once and report what works
                     (HTTP API, collaboration socket, TLS); exit 1 if anything fails

  --component FILE   run another component that implements the rustpad:mcp
                     server world (wit/world.wit) instead of the built-in one

Speaks MCP over stdin/stdout, or HTTP with --http (protocol revisions
2025-11-25, 2025-06-18 and 2026-07-28). Logs go to stderr.

Environment:
  RUSTPAD_URL            base address of the Rustpad instance, e.g. https://rustpad.example.net
  RUSTPAD_READ_ONLY      true, 1 or yes: offer only the read tools
  RUSTPAD_INSECURE_TLS   true: accept a self-signed certificate (this connection only)
  RUSTPAD_ALLOW_TOOLS    comma-separated tool names, prefix* patterns, or essential
  RUSTPAD_DENY_TOOLS     same syntax; removed from what the allow list chose
  ELICITATION            true (default) or false: false swaps the approval dialog
                         for a two-call confirmation token
  RUSTPAD_SEAL_KEY       key (32+ characters) that signs confirmation questions and
                         tokens; random per process unless set. Give replicas
                         behind one gateway the same key.
  RUSTPAD_MCP_TRACE      1: one JSON line per call on stderr with its timing
                         (total, instantiation, waiting on Rustpad, guest fuel)
  RUSTPAD_MCP_CACHE_DIR  where the compiled component is cached
                         (default: $XDG_CACHE_HOME/rustpad-mcp or ~/.cache/rustpad-mcp)

With --http:
  RUSTPAD_MCP_HTTP_TOKEN    bearer token every request must carry (32+ characters);
                            required unless ADDRESS is loopback
  RUSTPAD_MCP_HTTP_ORIGINS  comma-separated browser origins allowed (with CORS)
                            besides localhost, e.g. https://chat.example.net
  RUSTPAD_MCP_HTTP_MAX_CALLS  tool calls served at once, dialogs waiting included
                            (default 64); more get 503 and Retry-After
";

/// Variables for the host itself, never handed to the component.
const HOST_ONLY: &str = "RUSTPAD_MCP_";

/// The host's own settings besides those of `--http`.
const HOST_SETTINGS: [&str; 2] = ["RUSTPAD_MCP_CACHE_DIR", "RUSTPAD_MCP_TRACE"];

/// A notice for every host variable that does nothing: a name that is not a
/// setting (likely a typo), or an HTTP setting while serving stdio. The
/// component names its own (`RUSTPAD_*`) the same way.
fn host_notices(names: impl Iterator<Item = String>, serving_http: bool) -> Vec<String> {
    let mut known: Vec<&str> = HOST_SETTINGS.to_vec();
    known.extend(http::SETTINGS);
    names
        .filter(|name| name.starts_with(HOST_ONLY))
        .filter_map(|name| {
            let shown: String = name.escape_debug().take(64).collect();
            if !known.contains(&name.as_str()) {
                Some(format!(
                    "rustpad-mcp: {shown} is not a setting of this server and is ignored; the host's settings are {}",
                    known.join(", ")
                ))
            } else if http::SETTINGS.contains(&name.as_str()) && !serving_http {
                Some(format!(
                    "rustpad-mcp: {shown} applies only with --http and is ignored on stdio"
                ))
            } else {
                None
            }
        })
        .collect()
}

/// The variable that carries the key sealing confirmation state.
const SEAL_KEY: &str = "RUSTPAD_SEAL_KEY";

/// The environment the component sees: its configuration and nothing else,
/// plus a random seal key for this process unless the operator set one.
fn component_env() -> anyhow::Result<Vec<(String, String)>> {
    // vars_os: a stray variable that is not UTF-8 must not stop the server.
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| {
            (name.starts_with("RUSTPAD_") && !name.starts_with(HOST_ONLY)) || name == "ELICITATION"
        })
        .collect();
    if !env
        .iter()
        .any(|(name, value)| name == SEAL_KEY && !value.trim().is_empty())
    {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)
            .map_err(|e| anyhow::anyhow!("no randomness for the seal key: {e}"))?;
        let key: String = key.iter().map(|b| format!("{b:02x}")).collect();
        env.retain(|(name, _)| name != SEAL_KEY);
        env.push((SEAL_KEY.into(), key));
    }
    Ok(env)
}

fn main() -> ExitCode {
    let mut component = None;
    let mut check = false;
    let mut listen = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "--version" | "-V" => {
                println!("rustpad-mcp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--check" => check = true,
            "--http" => match args.next().map(|a| http::parse_listen(&a)) {
                Some(Ok(address)) => listen = Some(address),
                Some(Err(problem)) => {
                    eprintln!("rustpad-mcp: {problem}");
                    return ExitCode::from(2);
                }
                None => {
                    eprintln!("rustpad-mcp: --http needs an address such as 127.0.0.1:8080");
                    return ExitCode::from(2);
                }
            },
            "--component" => match args.next() {
                Some(path) => component = Some(PathBuf::from(path)),
                None => {
                    eprintln!("rustpad-mcp: --component needs a file; see rustpad-mcp --help");
                    return ExitCode::from(2);
                }
            },
            other => {
                eprintln!("rustpad-mcp: unknown argument {other:?}; see rustpad-mcp --help");
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("rustpad-mcp: fatal error: {error}");
            return ExitCode::FAILURE;
        }
    };
    // Settings that cannot work stop the server before anything starts.
    let transport = match listen {
        None => Transport::Stdio,
        Some(address) => match http::Limits::from_env(address) {
            Ok(limits) => Transport::Http(address, limits),
            Err(problem) => {
                eprintln!("rustpad-mcp: {problem}");
                return ExitCode::from(2);
            }
        },
    };
    let code = runtime.block_on(run(component, check, transport));
    // A read of stdin may still be blocking a thread; do not wait for it.
    runtime.shutdown_background();
    code
}

/// `--check`: asks the component to try its connection and prints the report.
async fn check_connection(runtime: &Runtime) -> ExitCode {
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"rustpad-mcp/check"}"#;
    let reply = match runtime.handle(request, None, None).await {
        Ok(reply) => reply,
        Err(failure) => {
            eprintln!("rustpad-mcp: the check failed: {}", failure.0);
            return ExitCode::FAILURE;
        }
    };
    let result: serde_json::Value = reply
        .response
        .and_then(|r| serde_json::from_str(&r).ok())
        .map(|r: serde_json::Value| r["result"].clone())
        .unwrap_or_default();
    for line in result["report"].as_array().into_iter().flatten() {
        println!("{}", line.as_str().unwrap_or_default());
    }
    if result["ok"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Locks `mutex`, carrying on after a panic elsewhere: every structure the
/// host guards stays consistent between statements.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where the MCP client is.
enum Transport {
    Stdio,
    Http(std::net::SocketAddr, http::Limits),
}

async fn run(component: Option<PathBuf>, check: bool, transport: Transport) -> ExitCode {
    let loaded = component_env().and_then(|env| match &component {
        None => Runtime::load(env),
        Some(path) => std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))
            .and_then(|wasm| Runtime::load_bytes(&wasm, env)),
    });
    let mut runtime = match loaded {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("rustpad-mcp: fatal error: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    let startup = match runtime.configure().await {
        Ok(Ok(startup)) => startup,
        Ok(Err(message)) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
        Err(failure) => {
            eprintln!("rustpad-mcp: fatal error: {}", failure.0);
            return ExitCode::FAILURE;
        }
    };
    let names = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    let serving_http = matches!(transport, Transport::Http(..));
    for notice in startup
        .notices
        .iter()
        .chain(&host_notices(names, serving_http))
    {
        eprintln!("{notice}");
    }
    runtime.set_egress(egress::Egress::new(
        startup.origin.as_deref(),
        startup.insecure_tls,
    ));
    if check {
        return check_connection(&runtime).await;
    }
    let trace = std::env::var_os("RUSTPAD_MCP_TRACE").is_some_and(|v| v == "1");
    let runtime = Arc::new(runtime);
    let serving = async move {
        match transport {
            Transport::Stdio => stdio::serve(runtime, trace).await,
            Transport::Http(address, limits) => http::serve(runtime, address, limits, trace).await,
        }
    };
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(error) => {
                eprintln!("rustpad-mcp: fatal error: {error}");
                return ExitCode::FAILURE;
            }
        };
    tokio::select! {
        outcome = serving => match outcome {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("rustpad-mcp: fatal error: {error:#}");
                ExitCode::FAILURE
            }
        },
        _ = tokio::signal::ctrl_c() => ExitCode::SUCCESS,
        _ = terminate.recv() => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_variables_that_do_nothing_are_named() {
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let given = names(&[
            "RUSTPAD_MCP_HTTP_TOKNE",
            "RUSTPAD_MCP_HTTP_TOKEN",
            "RUSTPAD_MCP_TRACE",
            "RUSTPAD_URL",
            "HOME",
        ]);
        let on_stdio = host_notices(given.clone().into_iter(), false);
        assert_eq!(on_stdio.len(), 2, "{on_stdio:?}");
        assert!(on_stdio[0].contains("RUSTPAD_MCP_HTTP_TOKNE is not a setting"));
        assert!(on_stdio[0].contains("RUSTPAD_MCP_HTTP_MAX_CALLS"));
        assert!(on_stdio[1].contains("RUSTPAD_MCP_HTTP_TOKEN applies only with --http"));
        let on_http = host_notices(given.into_iter(), true);
        assert_eq!(on_http.len(), 1, "{on_http:?}");
    }
}
