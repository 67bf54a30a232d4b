//! TCP to Rustpad over `wasi:sockets`, for the component in WebAssembly
//! hosts: connecting within a deadline, non-blocking `Read + Write`, waits
//! that are polls with a deadline, and closing that never waits for a peer
//! that stopped reading (see [`Tcp`]'s `Drop`). The host's refusals are said
//! in words that name its policy.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use rustpad_mcp_rules::egress::Origin;
use wasip2::clocks::monotonic_clock;
use wasip2::io::poll::{Pollable, poll};
use wasip2::io::streams::{InputStream, OutputStream, StreamError};
use wasip2::sockets::network::{
    ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, Ipv6SocketAddress,
    Network,
};
use wasip2::sockets::tcp::{ShutdownType, TcpSocket};
use wasip2::sockets::{instance_network, ip_name_lookup, tcp_create_socket};

use super::{ErrorKind, HostError};

/// The setting that names the socket's address apart from RUSTPAD_URL.
pub const SOCKET_ADDRESS_VARIABLE: &str = "RUSTPAD_SOCKET_ADDRESS";

/// `RUSTPAD_SOCKET_ADDRESS`: an IP address and port, or nothing when unset.
pub fn socket_address() -> Result<Option<SocketAddr>, String> {
    let Some(raw) = super::setting(SOCKET_ADDRESS_VARIABLE).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    raw.trim().parse().map(Some).map_err(|_| {
        format!(
            "rustpad-mcp: {SOCKET_ADDRESS_VARIABLE} must be an IP address and a port, such as 10.0.0.5:3030 or [fd00::5]:3030: the collaboration socket connects to it as it is, without looking a name up, while TLS still checks the host name in RUSTPAD_URL"
        )
    })
}

/// A connected TCP socket as non-blocking `Read + Write`. Its parts are
/// `Some` until it is dropped (see `Drop`).
pub(super) struct Tcp {
    input: Option<InputStream>,
    output: Option<OutputStream>,
    socket: Option<TcpSocket>,
    /// The last write found no room: the peer has not yet taken what was sent.
    pub(super) write_blocked: Cell<bool>,
}

/// Closing without waiting. wasmtime-wasi's TCP output stream, dropped, waits
/// until every byte handed to it has reached the peer (wasmtime
/// `crates/wasi/src/p2/tcp.rs`, `cancel`), which a Rustpad that stopped
/// reading never lets happen, and nothing a component can call ends that
/// wait (its `shutdown` waits behind the same write). So the socket is shut
/// down first (which closes an idle output stream at once), the input
/// stream dropped (that never waits), and the output stream and socket
/// dropped only when no write is pending; otherwise they are left to the
/// host, which frees them, write and all, with the instance. The streams
/// are children of the socket, so they go first.
impl Drop for Tcp {
    fn drop(&mut self) {
        let (Some(input), Some(output), Some(socket)) =
            (self.input.take(), self.output.take(), self.socket.take())
        else {
            return;
        };
        let _ = socket.shutdown(ShutdownType::Both);
        drop(input);
        let idle = output.subscribe().ready();
        if idle {
            drop(output);
            drop(socket);
        } else {
            std::mem::forget(output);
            std::mem::forget(socket);
        }
    }
}

impl Tcp {
    /// Connects to `RUSTPAD_SOCKET_ADDRESS`, else to the first of the
    /// origin's addresses that answers.
    pub(super) fn connect(origin: &Origin, deadline: Instant) -> Result<Tcp, HostError> {
        let network = instance_network::instance_network();
        if let Some(address) =
            socket_address().map_err(|reason| HostError::new(ErrorKind::Invalid, reason))?
        {
            return Tcp::connect_to(&network, ip_address(address.ip()), address.port(), deadline);
        }
        let host = origin.host.trim_start_matches('[').trim_end_matches(']');
        let mut failure = HostError::new(ErrorKind::Unreachable, format!("{host} has no address"));
        for address in resolve(&network, host, deadline)? {
            match Tcp::connect_to(&network, address, origin.port, deadline) {
                Ok(tcp) => return Ok(tcp),
                Err(reason) => failure = reason,
            }
        }
        Err(failure)
    }

    fn connect_to(
        network: &Network,
        address: IpAddress,
        port: u16,
        deadline: Instant,
    ) -> Result<Tcp, HostError> {
        let (family, socket_address) = match address {
            IpAddress::Ipv4(address) => (
                IpAddressFamily::Ipv4,
                IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address }),
            ),
            IpAddress::Ipv6(address) => (
                IpAddressFamily::Ipv6,
                IpSocketAddress::Ipv6(Ipv6SocketAddress {
                    port,
                    address,
                    flow_info: 0,
                    scope_id: 0,
                }),
            ),
        };
        let socket = tcp_create_socket::create_tcp_socket(family)
            .map_err(|code| network_failure(code, "could not open a TCP socket"))?;
        socket
            .start_connect(network, socket_address)
            .map_err(|code| network_failure(code, "could not connect"))?;
        let watch = socket.subscribe();
        loop {
            match socket.finish_connect() {
                Ok((input, output)) => {
                    drop(watch);
                    return Ok(Tcp {
                        input: Some(input),
                        output: Some(output),
                        socket: Some(socket),
                        write_blocked: Cell::new(false),
                    });
                }
                Err(ErrorCode::WouldBlock) => {
                    if !wait_for(&[&watch], deadline) {
                        return Err(HostError::new(
                            ErrorKind::TimedOut,
                            "connecting to Rustpad timed out",
                        ));
                    }
                }
                Err(code) => return Err(network_failure(code, "could not connect")),
            }
        }
    }

    /// Ready once the peer has sent something (or the connection ended), for
    /// a caller that waits on several sockets at once in one poll.
    pub(super) fn readable(&self) -> Pollable {
        self.input().subscribe()
    }

    /// Waits until the socket may be readable (`read`) or writable (`write`),
    /// or the deadline passes; false when it passed.
    pub(super) fn wait(&self, read: bool, write: bool, deadline: Instant) -> bool {
        let readable = read.then(|| self.input().subscribe());
        let writable = write.then(|| self.output().subscribe());
        let watched: Vec<&Pollable> = readable.iter().chain(writable.iter()).collect();
        wait_for(&watched, deadline)
    }
}

impl Tcp {
    fn input(&self) -> &InputStream {
        self.input
            .as_ref()
            .expect("a live socket has its input stream")
    }

    fn output(&self) -> &OutputStream {
        self.output
            .as_ref()
            .expect("a live socket has its output stream")
    }
}

impl Read for Tcp {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self.input().read(buffer.len() as u64) {
            Ok(bytes) if bytes.is_empty() && !buffer.is_empty() => {
                Err(io::ErrorKind::WouldBlock.into())
            }
            Ok(bytes) => {
                buffer[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            Err(StreamError::Closed) => Ok(0),
            Err(StreamError::LastOperationFailed(error)) => {
                Err(io::Error::other(error.to_debug_string()))
            }
        }
    }
}

impl Write for Tcp {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let permitted = self.output().check_write().map_err(stream_error)?;
        self.write_blocked.set(permitted == 0);
        if permitted == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let taken = bytes.len().min(permitted as usize);
        self.output().write(&bytes[..taken]).map_err(stream_error)?;
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.output().flush().map_err(stream_error)
    }
}

fn stream_error(error: StreamError) -> io::Error {
    match error {
        StreamError::Closed => io::ErrorKind::BrokenPipe.into(),
        StreamError::LastOperationFailed(error) => io::Error::other(error.to_debug_string()),
    }
}

/// The addresses `host` resolves to, in the resolver's order; an IP is its
/// own address and is not looked up (some hosts allow no lookups at all).
fn resolve(network: &Network, host: &str, deadline: Instant) -> Result<Vec<IpAddress>, HostError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![ip_address(ip)]);
    }
    let lookup = ip_name_lookup::resolve_addresses(network, host)
        .map_err(|code| network_failure(code, &format!("could not look up {host}")))?;
    let watch = lookup.subscribe();
    let mut addresses = Vec::new();
    loop {
        match lookup.resolve_next_address() {
            Ok(Some(address)) => addresses.push(address),
            Ok(None) => return Ok(addresses),
            Err(ErrorCode::WouldBlock) => {
                if !wait_for(&[&watch], deadline) {
                    return Err(HostError::new(
                        ErrorKind::TimedOut,
                        format!("looking up {host} timed out"),
                    ));
                }
            }
            Err(code) => {
                return Err(network_failure(code, &format!("could not look up {host}")));
            }
        }
    }
}

fn ip_address(ip: IpAddr) -> IpAddress {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            IpAddress::Ipv4((a, b, c, d))
        }
        IpAddr::V6(v6) => {
            let [a, b, c, d, e, f, g, h] = v6.segments();
            IpAddress::Ipv6((a, b, c, d, e, f, g, h))
        }
    }
}

/// Polls `watched` together with a timer for `deadline`; false when only the timer fired.
pub fn wait_for(watched: &[&Pollable], deadline: Instant) -> bool {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return false;
    }
    let timer = monotonic_clock::subscribe_duration(left.as_nanos().min(u64::MAX as u128) as u64);
    let mut all: Vec<&Pollable> = watched.to_vec();
    all.push(&timer);
    let ready = poll(&all);
    ready.iter().any(|&index| (index as usize) < watched.len())
}

/// Why a network operation (`doing`) failed, by kind and in words. A
/// refusal is the WebAssembly host's policy, whichever host it is
/// (docs/deployment.md says, per host, what to grant).
fn network_failure(code: ErrorCode, doing: &str) -> HostError {
    let kind = match code {
        ErrorCode::AccessDenied | ErrorCode::NotSupported | ErrorCode::PermanentResolverFailure => {
            ErrorKind::Refused
        }
        ErrorCode::Timeout => ErrorKind::TimedOut,
        ErrorCode::ConnectionRefused
        | ErrorCode::RemoteUnreachable
        | ErrorCode::NameUnresolvable
        | ErrorCode::TemporaryResolverFailure => ErrorKind::Unreachable,
        ErrorCode::NewSocketLimit | ErrorCode::OutOfMemory | ErrorCode::WouldBlock => {
            ErrorKind::Busy
        }
        _ => ErrorKind::Closed,
    };
    HostError::new(kind, format!("{doing} ({})", network_error(code)))
}

fn network_error(code: ErrorCode) -> String {
    match code {
        ErrorCode::AccessDenied | ErrorCode::NotSupported => format!(
            "{}: the WebAssembly host refused this component the connection; {}",
            code.name(),
            super::ALLOW_SOCKETS
        ),
        ErrorCode::PermanentResolverFailure => format!(
            "the name could not be looked up: the WebAssembly host may not allow this component to look it up ({})",
            super::ALLOW_LOOKUPS
        ),
        ErrorCode::ConnectionRefused => "connection refused".into(),
        ErrorCode::NameUnresolvable => "the name does not resolve".into(),
        ErrorCode::Timeout => "timed out".into(),
        other => format!("{other:?}"),
    }
}
