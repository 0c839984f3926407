//! Network addresses as a config writes them: the `host:port` of a listener, and `Cidr`, an
//! IP network (`10.0.0.0/8`, `::1`) such as `trustedProxies` lists, and `Network`, what a
//! client's address counts as wherever clients are counted. The text is parsed once,
//! at load; a request only asks a parsed `Cidr` whether it holds an address. Pure: no
//! sockets, no name lookups.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Checks `host:port` (`[v6]:port` for IPv6); the host is an IP address or a host name.
/// The network a client address stands for, wherever clients are counted (their share of the
/// connections and event streams, their failed logins): an IPv4 address alone, an IPv6 address by its /64,
/// since one host picks any address of its /64 (a phone has several at once); an IPv4-mapped
/// IPv6 address as the IPv4 address it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    V4(u32),
    V6(u64),
}

impl Network {
    pub fn of(ip: IpAddr) -> Network {
        match ip {
            IpAddr::V4(v4) => Network::V4(v4.into()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Network::V4(v4.into()),
                None => Network::V6((u128::from(v6) >> 64) as u64),
            },
        }
    }

    /// Reads the text [`Display`](fmt::Display) writes: an IPv4 address, or an IPv6 network
    /// as `2001:db8:0:1::/64`. `None` for anything else.
    pub fn parse(text: &str) -> Option<Network> {
        match text.strip_suffix("/64") {
            Some(v6) => {
                let v6: Ipv6Addr = v6.parse().ok()?;
                let bits = u128::from(v6);
                // Only a /64's own address: nothing past its prefix.
                (bits as u64 == 0).then_some(Network::V6((bits >> 64) as u64))
            }
            None => text
                .parse::<Ipv4Addr>()
                .ok()
                .map(|v4| Network::V4(v4.into())),
        }
    }
}

/// How a network is written where it is kept (the history file names a guest's run by it):
/// an IPv4 address as itself, an IPv6 /64 as its first address and `/64`.
impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Network::V4(v4) => write!(f, "{}", Ipv4Addr::from(v4)),
            Network::V6(prefix) => write!(f, "{}/64", Ipv6Addr::from(u128::from(prefix) << 64)),
        }
    }
}

/// Why a listen address is not `HOST:PORT`. Its `Display` is what the config's problem and
/// `--listen`'s usage error say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadHostPort {
    /// `[` without `]:port`.
    Unclosed,
    NotIpv6(String),
    NoPort,
    /// An IPv6 address without brackets.
    Unbracketed,
    NoHost,
    NotHost(String),
    NotPort(String),
}

impl std::fmt::Display for BadHostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadHostPort::Unclosed => f.write_str("an IPv6 address needs ]:port after it"),
            BadHostPort::NotIpv6(host) => write!(f, "{host:?} is not an IPv6 address"),
            BadHostPort::NoPort => f.write_str("the port is missing"),
            BadHostPort::Unbracketed => f.write_str("write an IPv6 address in brackets"),
            BadHostPort::NoHost => f.write_str("the host is missing"),
            BadHostPort::NotHost(host) => {
                write!(f, "{host:?} is not an IP address or host name")
            }
            BadHostPort::NotPort(port) => {
                write!(f, "{port:?} is not a port number (0 to 65535)")
            }
        }
    }
}

impl std::error::Error for BadHostPort {}

pub fn check_host_port(address: &str) -> Result<(), BadHostPort> {
    let port = if let Some(rest) = address.strip_prefix('[') {
        let (host, port) = rest.split_once("]:").ok_or(BadHostPort::Unclosed)?;
        host.parse::<Ipv6Addr>()
            .map_err(|_| BadHostPort::NotIpv6(host.to_string()))?;
        port
    } else {
        let (host, port) = address.rsplit_once(':').ok_or(BadHostPort::NoPort)?;
        if host.contains(':') {
            return Err(BadHostPort::Unbracketed);
        }
        if host.is_empty() {
            return Err(BadHostPort::NoHost);
        }
        let name_ok = host.parse::<IpAddr>().is_ok()
            || host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !name_ok {
            return Err(BadHostPort::NotHost(host.to_string()));
        }
        port
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err()
    {
        return Err(BadHostPort::NotPort(port.to_string()));
    }
    Ok(())
}

/// An IP network: an address and how many of its leading bits count. An address written
/// without a prefix length is the network of that address alone (`/32`, `/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Cidr {
    /// Loopback in both families (`127.0.0.1/8`, `::1/128`): the default `trustedProxies`.
    pub const LOOPBACK: [Cidr; 2] = [
        Cidr {
            addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
            bits: 8,
        },
        Cidr {
            addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
            bits: 128,
        },
    ];

    /// An IP address, or an address with a prefix length of plain decimal digits no larger
    /// than its family allows (`10.0.0.0/8`, `::1/128`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Cidr> {
        let (addr, bits) = match text.split_once('/') {
            None => (text, None),
            Some((addr, bits)) => (addr, Some(bits)),
        };
        let addr = addr.parse::<IpAddr>().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(bits) => {
                if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                bits.parse::<u8>().ok().filter(|b| *b <= max)?
            }
        };
        Some(Cidr { addr, bits })
    }

    /// Whether every address of this network is in `other` too (a reload that trusts a
    /// network not within the old ones widens the trust).
    pub fn within(&self, other: &Cidr) -> bool {
        other.bits <= self.bits && other.contains(self.addr)
    }

    /// Whether `ip` is in this network. Addresses of the other family never are: an IPv4
    /// peer seen as IPv4-mapped IPv6 is the caller's to convert.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (ip, self.addr) {
            (IpAddr::V4(ip), IpAddr::V4(net)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                u32::from(ip) & mask == u32::from(net) & mask
            }
            (IpAddr::V6(ip), IpAddr::V6(net)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                u128::from(ip) & mask == u128::from(net) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_and_cidr() {
        for good in [
            "127.0.0.1",
            "127.0.0.1/8",
            "::1",
            "::1/128",
            "10.0.0.0/0",
            "fe80::/10",
        ] {
            assert!(Cidr::parse(good).is_some(), "{good}");
        }
        for bad in [
            "",
            "localhost",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "1.2.3/8",
            "10.0.0.1/8/9",
        ] {
            assert!(Cidr::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_network_is_written_and_read_back() {
        // (client address, the network as written)
        let cases = [
            ("192.168.1.20", "192.168.1.20"),
            ("::ffff:10.0.0.7", "10.0.0.7"),
            ("2001:db8:0:1:aaaa:bbbb:cccc:dddd", "2001:db8:0:1::/64"),
            ("2001:db8:0:1::1", "2001:db8:0:1::/64"),
            ("fe80::1", "fe80::/64"),
            ("::1", "::/64"),
        ];
        for (ip, written) in cases {
            let network = Network::of(ip.parse().unwrap());
            assert_eq!(network.to_string(), written, "{ip}");
            assert_eq!(Network::parse(written), Some(network), "{written}");
        }
        for bad in [
            "",
            "guest",
            "10.0.0.256",
            "2001:db8::1",
            "2001:db8::1/64",
            "::/48",
        ] {
            assert_eq!(Network::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn networks_hold_their_addresses() {
        let cases: &[(&str, &str, bool)] = &[
            ("127.0.0.1/8", "127.9.9.9", true),
            ("127.0.0.1/8", "128.0.0.1", false),
            ("10.1.2.3", "10.1.2.3", true),
            ("10.1.2.3", "10.1.2.4", false),
            ("fd00::/8", "fd12::1", true),
            ("fd00::/8", "fe80::1", false),
            ("0.0.0.0/0", "8.8.8.8", true),
            ("::/0", "2001:db8::1", true),
            // The families never mix, even for a network of everything.
            ("0.0.0.0/0", "::1", false),
            ("::/0", "127.0.0.1", false),
        ];
        for (net, ip, want) in cases {
            let cidr = Cidr::parse(net).unwrap_or_else(|| panic!("{net}"));
            assert_eq!(cidr.contains(ip.parse().unwrap()), *want, "{net} {ip}");
        }
        let loopback: Vec<String> = Cidr::LOOPBACK.iter().map(Cidr::to_string).collect();
        assert_eq!(loopback, ["127.0.0.1/8", "::1/128"]);
        assert_eq!(
            Cidr::parse("192.168.1.1").unwrap().to_string(),
            "192.168.1.1/32"
        );
    }
}
