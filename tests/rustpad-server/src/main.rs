//! Command line: run the test server, or run a typist against any Rustpad server.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rustpad_test_server::misbehave::MODE_NAMES;
use rustpad_test_server::person::{self, Person};
use rustpad_test_server::typist::{Typist, TypistOptions, splits_occurrence};
use rustpad_test_server::{ServerOptions, serve};
use tokio::net::TcpListener;

const USAGE: &str = "\
rustpad-test-server: a Rustpad server for tests, speaking upstream's wire protocol

USAGE:
    rustpad-test-server [--port N] [--bind ADDR] [--tls-cert FILE --tls-key FILE] [--verbose]
    rustpad-test-server type --url ws://HOST:PORT/api/socket/ID [--seed S] [--count N]
                             [--delay-us D] [--settle-ms M] [--name NAME]
                             [--avoid STRING]... [--stay]
    rustpad-test-server set --url ws://HOST:PORT/api/socket/ID [--name NAME] < TEXT
    rustpad-test-server person --url ws://HOST:PORT/api/socket/ID [--name NAME] < SCRIPT
    rustpad-test-server steady --url ws://HOST:PORT/api/socket/ID [--name NAME] [--every-ms MS]

SERVER OPTIONS:
    --port N       TCP port; 0 (the default) picks a free one
    --bind ADDR    address to bind (default 127.0.0.1)
    --tls-cert FILE  serve HTTPS and WSS with this PEM certificate chain (leaf first);
    --tls-key FILE   and this PEM private key. Both or neither
    --verbose, -v  log connections, edits and dropped connections to stderr

    Prints one line, `listening on http://ADDR:PORT` (https:// with TLS), to stdout once ready;
    logs go to stderr.
    Stops on SIGINT or SIGTERM.

ROUTES:
    /api/text/{id}, /api/stats, /api/socket/{id}      as upstream
    POST   /_test/seed/{id}   JSON {\"text\": S, \"ops\": N, \"char\": C, \"language\": L}
                              (all optional) -> {\"revision\": R, \"length\": L}
    PUT    /_test/mode/{id}   body: a mode name below; empty body = faithful
    GET    /_test/mode/{id}   the pad's mode, empty if faithful
    GET    /_test/log/{id}    JSON array of every client text frame received for the pad
    DELETE /_test/log/{id}    forget that log

TYPE OPTIONS:
    --url URL      the pad's WebSocket URL (required)
    --seed S       keystroke generator seed (default 1)
    --count N      keystrokes to type (default 20)
    --delay-us D   pause between keystrokes in microseconds (default 1000)
    --settle-ms M  quiet time to wait for after the last ack (default 300)
    --name NAME    name sent in ClientInfo (default typist)
    --avoid STRING never type strictly inside an occurrence of STRING in the typist's current
                   text (its edges are fine); repeat for several strings. A keystroke with no
                   allowed position is counted as skipped

    --stay         after printing the report, stay in the pad until stdin ends, then leave

    Prints a JSON report: identity, typed (strings in order), skipped, final_text, revision.

SET:
    Joins the pad as NAME (default person), makes its text stdin in one edit (replacing what
    lies between the ends the two texts share), and leaves, as a person editing by hand would
    (unlike /_test/seed, the pad's history keeps what it had). Prints
    {\"identity\": N, \"text\": T}.

PERSON:
    Joins the pad as NAME (default person) and follows a script: it prints {\"identity\", \"text\"} once in, then each server message as {\"server\": M}, and
    {\"done\": {\"revision\", \"text\"}} after each stdin line has taken effect: {\"text\": T}
    (make the text T, as set does), {\"append\": T} (add T at the end) or {\"cursor\": {\"cursors\": [..], \"selections\": [[a, b]]}}.
    Leaves when stdin ends.

STEADY:
    Joins the pad as NAME (default person) and types a letter at the end of its first line every
    MS milliseconds (default 200), each acknowledged before the next, reading all the server sends
    meanwhile; joins again whenever the connection ends. When stdin ends it leaves and prints
    {\"acknowledged\", \"typed\", \"disconnections\", \"reasons\"}.

MODES:
";

enum Command {
    Serve {
        bind: String,
        port: u16,
        verbose: bool,
        tls: Option<(PathBuf, PathBuf)>,
    },
    Type {
        options: TypistOptions,
        avoid: Vec<String>,
        stay: bool,
    },
    Set {
        url: String,
        name: String,
    },
    Person {
        url: String,
        name: String,
    },
    Steady {
        url: String,
        name: String,
        every: Duration,
    },
    Help,
}

/// `set|person|steady --url URL [--name NAME]`, and steady's `[--every-ms MS]`.
fn parse_person(
    command: &str,
    mut args: impl Iterator<Item = String>,
) -> Result<(String, String, Duration), String> {
    let (mut url, mut name, mut every) = (None, "person".to_owned(), Duration::from_millis(200));
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => url = Some(value),
            "--name" => name = value,
            "--every-ms" if command == "steady" => {
                let ms = value
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| ms > 0)
                    .ok_or(format!(
                        "--every-ms: {value:?} is not a positive whole number"
                    ))?;
                every = Duration::from_millis(ms);
            }
            _ => return Err(format!("{command} does not take {flag}")),
        }
    }
    let url = url.ok_or(format!("{command} needs --url"))?;
    Ok((url, name, every))
}

fn parse(args: Vec<String>) -> Result<Command, String> {
    let mut args = args.into_iter();
    match args.as_slice().first().map(String::as_str) {
        Some("set") => {
            args.next();
            let (url, name, _) = parse_person("set", args)?;
            return Ok(Command::Set { url, name });
        }
        Some("person") => {
            args.next();
            let (url, name, _) = parse_person("person", args)?;
            return Ok(Command::Person { url, name });
        }
        Some("steady") => {
            args.next();
            let (url, name, every) = parse_person("steady", args)?;
            return Ok(Command::Steady { url, name, every });
        }
        _ => {}
    }
    let typing = args.as_slice().first().map(String::as_str) == Some("type");
    if typing {
        args.next();
    }
    let mut options = TypistOptions::new(String::new());
    let mut bind = "127.0.0.1".to_owned();
    let mut port = 0;
    let mut verbose = false;
    let mut tls_cert = None;
    let mut tls_key = None;
    let mut avoid = Vec::new();
    let mut stay = false;
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Ok(Command::Help);
        }
        if typing && flag == "--stay" {
            stay = true;
            continue;
        }
        if flag == "--verbose" || flag == "-v" {
            verbose = true;
            continue;
        }
        let known: &[&str] = if typing {
            &[
                "--url",
                "--seed",
                "--count",
                "--delay-us",
                "--settle-ms",
                "--name",
                "--avoid",
            ]
        } else {
            &["--bind", "--port", "--tls-cert", "--tls-key"]
        };
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag}"));
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: {value:?} is not a whole number"))
        };
        match (typing, flag.as_str()) {
            (false, "--bind") => bind = value,
            (false, "--tls-cert") => tls_cert = Some(PathBuf::from(value)),
            (false, "--tls-key") => tls_key = Some(PathBuf::from(value)),
            (false, "--port") => {
                port = u16::try_from(number()?)
                    .map_err(|_| format!("--port: {value} is not a port number"))?;
            }
            (true, "--url") => options.url = value,
            (true, "--seed") => options.seed = number()?,
            (true, "--count") => options.count = number()? as usize,
            (true, "--delay-us") => options.delay = Duration::from_micros(number()?),
            (true, "--settle-ms") => options.settle = Duration::from_millis(number()?),
            (true, "--name") => options.name = value,
            (true, "--avoid") => {
                if value.is_empty() {
                    return Err("--avoid needs a non-empty string".into());
                }
                avoid.push(value);
            }
            _ => unreachable!("checked against the known options"),
        }
    }
    if !typing {
        let tls = match (tls_cert, tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err("--tls-cert and --tls-key go together".into()),
        };
        return Ok(Command::Serve {
            bind,
            port,
            verbose,
            tls,
        });
    }
    if options.url.is_empty() {
        return Err("type needs --url".into());
    }
    Ok(Command::Type {
        options,
        avoid,
        stay,
    })
}

fn main() -> ExitCode {
    let command = match parse(std::env::args().skip(1).collect()) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("rustpad-test-server: {e}\n(try --help)");
            return ExitCode::from(2);
        }
    };
    if let Command::Help = command {
        print!("{USAGE}");
        for name in MODE_NAMES {
            println!("    {name}");
        }
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rustpad-test-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Serve {
                bind,
                port,
                verbose,
                tls,
            } => run_server(&bind, port, verbose, tls).await,
            Command::Type {
                options,
                avoid,
                stay,
            } => run_typist(options, avoid, stay).await,
            Command::Set { url, name } => set_text(&url, &name).await,
            Command::Person { url, name } => person::converse(&url, &name)
                .await
                .map_err(|e| e.to_string()),
            Command::Steady { url, name, every } => {
                let stdin_ends = async {
                    let mut sink = Vec::new();
                    tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink)
                        .await
                        .ok();
                };
                let report = person::type_steadily(&url, &name, every, stdin_ends).await;
                println!("{}", serde_json::json!(report));
                Ok(())
            }
            Command::Help => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rustpad-test-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run_server(
    bind: &str,
    port: u16,
    verbose: bool,
    tls: Option<(PathBuf, PathBuf)>,
) -> Result<(), String> {
    // Loaded before binding, so a bad certificate stops the server before it claims to listen.
    let tls = match tls {
        Some((cert, key)) => Some(rustpad_test_server::tls::load(&cert, &key)?),
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let listener = TcpListener::bind((bind, port))
        .await
        .map_err(|e| format!("cannot listen on {bind}:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    {
        // Harnesses block on this line to learn the port, so it must not sit in a buffer.
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {scheme}://{addr}").map_err(|e| e.to_string())?;
        stdout.flush().map_err(|e| e.to_string())?;
    }
    let server = serve(listener, ServerOptions { verbose, tls });
    tokio::select! {
        result = server => result.map_err(|e| e.to_string()),
        () = shutdown_signal() => Ok(()),
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                tokio::signal::ctrl_c().await.ok();
            }
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.ok();
    }
}

async fn set_text(url: &str, name: &str) -> Result<(), String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| e.to_string())?;
    let mut person = Person::join(url, name).await.map_err(|e| e.to_string())?;
    let identity = person.identity();
    person.set_text(&text).await.map_err(|e| e.to_string())?;
    let report = serde_json::json!({ "identity": identity, "text": person.text() });
    person.leave().await;
    println!("{report}");
    Ok(())
}

async fn run_typist(options: TypistOptions, avoid: Vec<String>, stay: bool) -> Result<(), String> {
    let mut typist = Typist::new(options);
    if !avoid.is_empty() {
        typist = typist.only_where(move |text, position| {
            !avoid
                .iter()
                .any(|needle| splits_occurrence(text, position, needle))
        });
    }
    let print = |report: &rustpad_test_server::typist::TypistReport| {
        let json = serde_json::to_string(report).unwrap_or_default();
        let mut stdout = std::io::stdout().lock();
        // A harness reads this line while the typist stays, so it must not sit in a buffer.
        writeln!(stdout, "{json}")
            .and_then(|()| stdout.flush())
            .ok();
    };
    if !stay {
        let report = typist.run().await.map_err(|e| e.to_string())?;
        print(&report);
        return Ok(());
    }
    typist
        .run_and_stay(|report| {
            print(report);
            async {
                let mut sink = Vec::new();
                tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink)
                    .await
                    .ok();
            }
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}
