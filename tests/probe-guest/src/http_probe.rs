//! The probe for WebAssembly hosts: a `wasi:http/proxy` component whose
//! routes try one thing each and answer, in plain text, what the host let
//! happen (`ok …`) or the exact WASI error it gave (`refused: …`):
//!
//! - `/http?url=URL`: a GET through `wasi:http/outgoing-handler`;
//! - `/lookup?name=NAME`: `wasi:sockets/ip-name-lookup`;
//! - `/tcp?address=IP:PORT`: a TCP connect through `wasi:sockets`;
//! - `/memory?mib=N`: take and touch N MiB of linear memory.

use std::net::{IpAddr, SocketAddr};

use wasip2::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use wasip2::sockets::network::{
    ErrorCode, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, Ipv6SocketAddress,
};
use wasip2::sockets::{instance_network, ip_name_lookup, tcp_create_socket};

struct Probe;

wasip2::http::proxy::export!(Probe);

impl wasip2::exports::http::incoming_handler::Guest for Probe {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let target = request.path_with_query().unwrap_or_default();
        let (route, query) = target.split_once('?').unwrap_or((&target, ""));
        let argument = |name: &str| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
                .unwrap_or_default()
                .to_string()
        };
        let outcome = match route {
            "/http" => super::http_get(&argument("url")),
            "/lookup" => lookup(&argument("name")),
            "/tcp" => connect(&argument("address")),
            "/memory" => take_memory(argument("mib").parse().unwrap_or(0)),
            other => format!("unknown probe {other}"),
        };
        let response = OutgoingResponse::new(Fields::new());
        let body = response.body().expect("a new response has a body");
        ResponseOutparam::set(out, Ok(response));
        if let Ok(stream) = body.write() {
            let _ = stream.blocking_write_and_flush(format!("{outcome}\n").as_bytes());
        }
        let _ = OutgoingBody::finish(body, None);
    }
}

fn lookup(name: &str) -> String {
    let network = instance_network::instance_network();
    let lookup = match ip_name_lookup::resolve_addresses(&network, name) {
        Ok(lookup) => lookup,
        Err(code) => return format!("refused: {}", code.name()),
    };
    let mut addresses = Vec::new();
    loop {
        match lookup.resolve_next_address() {
            Ok(Some(address)) => addresses.push(format!("{address:?}")),
            Ok(None) => return format!("ok {}", addresses.join(" ")),
            Err(ErrorCode::WouldBlock) => lookup.subscribe().block(),
            Err(code) => return format!("refused: {}", code.name()),
        }
    }
}

fn connect(address: &str) -> String {
    let Ok(address) = address.parse::<SocketAddr>() else {
        return "not an IP:port".into();
    };
    let port = address.port();
    let (family, target) = match address.ip() {
        IpAddr::V4(ip) => {
            let [a, b, c, d] = ip.octets();
            let address = (a, b, c, d);
            (
                IpAddressFamily::Ipv4,
                IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address }),
            )
        }
        IpAddr::V6(ip) => {
            let [a, b, c, d, e, f, g, h] = ip.segments();
            let address = (a, b, c, d, e, f, g, h);
            let target = Ipv6SocketAddress {
                port,
                address,
                flow_info: 0,
                scope_id: 0,
            };
            (IpAddressFamily::Ipv6, IpSocketAddress::Ipv6(target))
        }
    };
    let network = instance_network::instance_network();
    let socket = match tcp_create_socket::create_tcp_socket(family) {
        Ok(socket) => socket,
        Err(code) => return format!("refused: {}", code.name()),
    };
    if let Err(code) = socket.start_connect(&network, target) {
        return format!("refused: {}", code.name());
    }
    loop {
        match socket.finish_connect() {
            Ok(_streams) => return format!("ok connected to {address}"),
            Err(ErrorCode::WouldBlock) => socket.subscribe().block(),
            Err(code) => return format!("refused: {}", code.name()),
        }
    }
}

fn take_memory(mib: usize) -> String {
    let mut held: Vec<u8> = Vec::new();
    match held.try_reserve_exact(mib << 20) {
        Ok(()) => {
            held.resize(mib << 20, 1);
            let touched = held.iter().step_by(4096).count();
            format!("ok {mib} MiB, {touched} pages touched")
        }
        Err(error) => format!("refused: {error}"),
    }
}
