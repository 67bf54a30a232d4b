//! Where an HTTP client connects from, as far as the transport can tell:
//! the one identity a client cannot multiply for free (sessions cost
//! nothing to open, and `--http` has one bearer token for everyone), which
//! bounds what one client may hold of what the process shares (the pads it
//! watches, `watches`).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// A client's IP address, an IPv6 one cut to its /64 (what one machine is
/// usually given, so that it cannot take a new address for every session).
/// Clients behind one proxy share the proxy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddress(IpAddr);

impl ClientAddress {
    pub fn of(address: IpAddr) -> ClientAddress {
        match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientAddress(IpAddr::V4(v4)),
                None => {
                    let [a, b, c, d, ..] = v6.segments();
                    ClientAddress(IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0)))
                }
            },
            v4 => ClientAddress(v4),
        }
    }
}

impl fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            IpAddr::V6(_) => write!(f, "{}/64", self.0),
            IpAddr::V4(_) => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> String {
        ClientAddress::of(text.parse().unwrap()).to_string()
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_one_its_ipv4() {
        assert_eq!(of("127.0.0.2"), "127.0.0.2");
        assert_eq!(of("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
        assert_eq!(of("2001:db8:1:2:ffff::1"), of("2001:db8:1:2::9"));
        assert_ne!(of("2001:db8:1:3::1"), of("2001:db8:1:2::1"));
        assert_eq!(of("::ffff:192.0.2.7"), "192.0.2.7");
    }
}
