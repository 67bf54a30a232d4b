//! What names this machine: the one rule for RUSTPAD_URL's warning, the HTTP
//! gate's `Host` and `Origin` checks, and anything else that asks.
//!
//! `localhost` and any name under it (RFC 6761 reserves them for loopback,
//! and browsers resolve them so without asking DNS), with or without the
//! trailing dot; IPv4 and IPv6 loopback addresses, IPv4-mapped ones included.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Whether a host name or address (brackets around IPv6 allowed) names this machine.
pub fn is_loopback_name(host: &str) -> bool {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .to_ascii_lowercase();
    let name = host.strip_suffix('.').unwrap_or(&host);
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    if let Ok(v4) = name.parse::<Ipv4Addr>() {
        return v4.is_loopback();
    }
    match name.parse::<Ipv6Addr>() {
        Ok(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Err(_) => false,
    }
}

/// Whether a `Host` header value (`name[:port]`, `[v6][:port]`) names this machine.
pub fn is_loopback_authority(authority: &str) -> bool {
    let is_port =
        |port: &str| (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit());
    let name = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((v6, "")) => v6,
            Some((v6, rest)) if rest.strip_prefix(':').is_some_and(is_port) => v6,
            _ => return false,
        },
        None => match authority.rsplit_once(':') {
            Some((name, port)) if is_port(port) => name,
            Some(_) => return false,
            None => authority,
        },
    };
    // A name may not hide anything else: no user info, no path, no spaces.
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:".contains(&b))
        && is_loopback_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_addresses_of_this_machine() {
        for local in [
            "localhost",
            "LOCALHOST",
            "localhost.",
            "pad.localhost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
            "::ffff:127.0.0.1",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_loopback_name(local), "{local}");
        }
        for other in [
            "example.net",
            "localhost.example.net",
            "127.example.com",
            "10.0.0.1",
            "::ffff:10.0.0.1",
            "",
        ] {
            assert!(!is_loopback_name(other), "{other}");
        }
    }

    #[test]
    fn host_header_values_of_this_machine() {
        for local in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "pad.localhost:1",
        ] {
            assert!(is_loopback_authority(local), "{local}");
        }
        for other in [
            "evil.example:8080",
            "127.0.0.1.nip.io:8080",
            "",
            "[::1]evil.example",
            "user@localhost",
            "localhost:99999x",
            "local host",
        ] {
            assert!(!is_loopback_authority(other), "{other}");
        }
    }
}
