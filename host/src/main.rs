//! rustpad-mcp: the host that runs the rustpad-mcp component.
//!
//! The host knows the transports (stdio, Streamable HTTP), wasmtime and
//! egress policy, and nothing about pads. It hands the component its
//! configuration (the `RUSTPAD_*` variables but the host's own
//! `RUSTPAD_MCP_*`, and `ELICITATION`; nothing else), lets it reach only
//! RUSTPAD_URL's origin, and carries MCP messages between the client and a
//! fresh instance per message.
// One `unsafe` block, loading the component this binary embeds (runtime::built_in).
#![deny(unsafe_code)]

mod egress;
mod limits;
mod runtime;
mod settings;
mod state;
mod sync;
mod transport;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use limits::open_files;
use runtime::{NotStarted, Runtime, Source};
use state::seal_key;
use transport::route::Router;
use transport::{http, stdio};

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
                     (builds with the `compiler` feature only)

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
                         tokens. Unset: on stdio a key kept for this user in
                         $XDG_STATE_HOME/rustpad-mcp (or ~/.local/state/rustpad-mcp),
                         so tokens survive a restart; with --http random per
                         process. Give replicas behind one gateway the same key.
  RUSTPAD_MCP_TRACE      1: one JSON line per call on stderr with its timing
                         (total, instantiation, waiting on Rustpad, guest fuel)
  RUSTPAD_MCP_CACHE_DIR  with --component, where the compiled component is cached
                         (default: $XDG_CACHE_HOME/rustpad-mcp or ~/.cache/rustpad-mcp)
  RUSTPAD_MCP_MAX_MEMORY MiB all running calls may hold together (default 2048);
                         a call past it is refused
  RUSTPAD_MCP_MAX_CALLS  tool calls served at once on stdio (default 16);
                         more are refused until one finishes
  RUSTPAD_MCP_TALLY_PADS pads whose recent removals this process counts
                         (default 100000); past it every removal asks
  RUSTPAD_MCP_TALLY_SECONDS  how long it keeps them, 1 to 900 (default 900)

With --http:
  RUSTPAD_MCP_HTTP_TOKEN    bearer token every request must carry (32+ characters);
                            required unless ADDRESS is loopback
  RUSTPAD_MCP_HTTP_ORIGINS  comma-separated browser origins allowed (with CORS)
                            besides localhost, e.g. https://chat.example.net
  RUSTPAD_MCP_HTTP_MAX_CALLS  tool calls served at once, dialogs waiting included
                            (default 64); more get 503 and Retry-After
";

/// The variable that carries the key sealing confirmation state, and the
/// one telling the component who holds that key.
const SEAL_KEY: &str = "RUSTPAD_SEAL_KEY";
const SEAL_KEY_SCOPE: &str = "RUSTPAD_SEAL_KEY_SCOPE";

/// The environment the component sees: its configuration and nothing else,
/// with the seal key `seal` chose and who holds it.
fn component_env(seal: &seal_key::Seal) -> Vec<(String, String)> {
    // vars_os: a stray variable that is not UTF-8 must not stop the server.
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| {
            (name.starts_with("RUSTPAD_") && !name.starts_with(settings::HOST_ONLY))
                || name == "ELICITATION"
        })
        .filter(|(name, _)| name != SEAL_KEY && name != SEAL_KEY_SCOPE)
        .collect();
    env.push((SEAL_KEY.into(), seal.key.clone()));
    env.push((SEAL_KEY_SCOPE.into(), seal.scope.name().into()));
    env
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
                println!(
                    "rustpad-mcp {} (component sha256 {})",
                    env!("CARGO_PKG_VERSION"),
                    runtime::GUEST_SHA256
                );
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
    let limits = match settings::Limits::read(|name| std::env::var(name).ok()) {
        Ok(limits) => limits,
        Err(problem) => {
            eprintln!("rustpad-mcp: {problem}");
            return ExitCode::from(2);
        }
    };
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
    // A socket per watched pad, per call (with its client's, over HTTP), and per kept write.
    let kept = state::held_writes::IN_ALL;
    let calls = kept
        + match &transport {
            Transport::Stdio => limits.stdio_calls,
            Transport::Http(_, http) => 2 * http.max_calls(),
        };
    if let Some(notice) = open_files::raise_limit((limits.watches.pads + calls) as u64, kept) {
        eprintln!("{notice}");
    }
    let code = runtime.block_on(run(component, check, transport, limits));
    // A read of stdin may still be blocking a thread; do not wait for it.
    runtime.shutdown_background();
    code
}

/// `--check`: asks the component to try its connection and prints the report.
async fn check_connection(runtime: &Runtime) -> ExitCode {
    match runtime.check().await {
        Ok((ok, lines)) => {
            for line in lines {
                println!("{line}");
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(failure) => {
            eprintln!("rustpad-mcp: the check failed: {}", failure.0);
            ExitCode::FAILURE
        }
    }
}

/// `--component FILE`: another component, when this build can compile one.
#[cfg(feature = "compiler")]
fn read_component(path: &std::path::Path) -> anyhow::Result<Source> {
    let wasm =
        std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    Ok(Source::Wasm(wasm))
}

#[cfg(not(feature = "compiler"))]
fn read_component(_: &std::path::Path) -> anyhow::Result<Source> {
    anyhow::bail!(
        "--component needs a build that can compile components; this one only runs the component it carries. Build with the compiler: cargo install rustpad-mcp --features compiler"
    )
}

/// Where the MCP client is.
enum Transport {
    Stdio,
    Http(std::net::SocketAddr, http::Limits),
}

async fn run(
    component: Option<PathBuf>,
    check: bool,
    transport: Transport,
    limits: settings::Limits,
) -> ExitCode {
    let serving_http = matches!(transport, Transport::Http(..));
    let seal = match seal_key::seal(std::env::var(SEAL_KEY).ok(), serving_http, |name| {
        std::env::var(name).ok()
    }) {
        Ok(seal) => seal,
        Err(problem) => {
            eprintln!("rustpad-mcp: fatal error: {problem}");
            return ExitCode::FAILURE;
        }
    };
    let env = component_env(&seal);
    let source = match &component {
        None => Ok(Source::BuiltIn),
        Some(path) => read_component(path),
    };
    let started = match source {
        Ok(source) => Runtime::start(source, env, &limits).await,
        Err(error) => Err(NotStarted::Load(error)),
    };
    let (runtime, startup) = match started {
        Ok(started) => started,
        Err(NotStarted::Load(error)) => {
            eprintln!("rustpad-mcp: fatal error: {error:#}");
            return ExitCode::FAILURE;
        }
        Err(NotStarted::Configuration(message)) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
        Err(NotStarted::Failed(failure)) => {
            eprintln!("rustpad-mcp: fatal error: {}", failure.0);
            return ExitCode::FAILURE;
        }
    };
    let names = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    for notice in startup
        .notices
        .iter()
        .chain(&seal.notice)
        .chain(&settings::notices(names, serving_http))
    {
        eprintln!("{notice}");
    }
    if check {
        return check_connection(&runtime).await;
    }
    let trace = std::env::var_os(settings::TRACE).is_some_and(|v| v == "1");
    let runtime = Arc::new(runtime);
    let router = Router::new(startup.session_openers);
    let serving = async move {
        match transport {
            Transport::Stdio => {
                stdio::serve(runtime, limits.stdio_calls, limits.watches, router, trace).await
            }
            Transport::Http(address, http_limits) => {
                http::serve(runtime, address, http_limits, router, limits.watches, trace).await
            }
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
