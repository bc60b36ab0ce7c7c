//! Who posts a form, for the per-client limit: the peer's address, or behind a trusted
//! proxy the address it forwards, taken as a network an attacker cannot spread over
//! cheaply. An IPv6 client holds a /64 (one host's or one customer's usual share), so its
//! addresses count as one; an IPv4 client one address. Wider networks are also counted
//! together, each under a looser limit ([`Prefix`]), so that a site or a provider cannot
//! spread over the clients it holds: an IPv4 /24, an IPv6 /48 (one site's usual share)
//! and an IPv6 /32 (one provider's).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The forwarding header a trusted proxy appends the address it received from to.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The proxies whose forwarding header is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of addresses and networks (`10.0.0.0/8, ::1`); empty:
    /// none, so the header is ignored and every client is its peer address.
    pub fn parse(list: &str) -> anyhow::Result<TrustedProxies> {
        let mut nets = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => match item.parse::<IpAddr>() {
                    Ok(ip) => IpNet::from(ip),
                    Err(_) => anyhow::bail!(
                        "RACING_TRUSTED_PROXIES: `{item}` is neither an address nor a network"
                    ),
                },
            };
            nets.push(net);
        }
        Ok(TrustedProxies(nets))
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client a request counts against: the peer, unless the peer is a trusted
    /// proxy; then the nearest address in its `X-Forwarded-For` that is not a trusted
    /// proxy (the header's right end is what the nearest proxy saw; what lies left of the
    /// first untrusted hop may be made up by the client, so it is never read).
    pub fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> Client {
        let mut client = peer.ip();
        if self.trusts(client) {
            let hops = headers
                .get_all(FORWARDED_FOR)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .collect::<Vec<_>>();
            for hop in hops.iter().rev() {
                let Ok(ip) = hop.parse::<IpAddr>() else {
                    // A hop a trusted proxy did not write: stop at the last one believed.
                    break;
                };
                client = ip;
                if !self.trusts(ip) {
                    break;
                }
            }
        }
        Client::of(client)
    }
}

/// A client as the per-client limit counts it: an IPv4 address, or an IPv6 /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Client(IpAddr);

impl Client {
    /// The client that `ip` belongs to.
    pub fn of(ip: IpAddr) -> Client {
        match canonical(ip) {
            IpAddr::V6(v6) => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                Client(IpAddr::V6(Ipv6Addr::from(bits)))
            }
            v4 => Client(v4),
        }
    }

    /// The network of `prefix` the client is in, counted as one under that prefix's
    /// limit; `None` where the prefix is of the other address family.
    pub fn network(&self, prefix: Prefix) -> Option<Network> {
        let bits = u32::from(prefix.bits());
        match (self.0, prefix) {
            (IpAddr::V4(v4), Prefix::Ipv4_24) => {
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                Some(Network(IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))))
            }
            (IpAddr::V6(v6), Prefix::Ipv6_48 | Prefix::Ipv6_32) => {
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                Some(Network(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))))
            }
            _ => None,
        }
    }
}

/// A network wider than a client whose clients' posts are also counted together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// An IPv4 /24: 256 addresses, each a client.
    Ipv4_24,
    /// An IPv6 /48, one site's usual share: 65,536 /64 clients.
    Ipv6_48,
    /// An IPv6 /32, one provider's usual allocation: 65,536 /48s.
    Ipv6_32,
}

impl Prefix {
    /// Every prefix counted.
    pub const ALL: [Prefix; 3] = [Prefix::Ipv4_24, Prefix::Ipv6_48, Prefix::Ipv6_32];

    /// Its name in metrics: `ipv4_24`, `ipv6_48`, `ipv6_32`.
    pub fn name(self) -> &'static str {
        match self {
            Prefix::Ipv4_24 => "ipv4_24",
            Prefix::Ipv6_48 => "ipv6_48",
            Prefix::Ipv6_32 => "ipv6_32",
        }
    }

    /// Its length in bits.
    pub fn bits(self) -> u8 {
        match self {
            Prefix::Ipv4_24 => 24,
            Prefix::Ipv6_48 => 48,
            Prefix::Ipv6_32 => 32,
        }
    }
}

/// A network of one [`Prefix`], as its limit counts it: the network's first address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Network(IpAddr);

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`, as a dual-stack socket reports
/// it) as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().expect("an address"), 40_000)
    }

    fn forwarded(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(FORWARDED_FOR, value.parse().expect("a header value"));
        headers
    }

    #[test]
    fn the_addresses_of_an_ipv6_64_are_one_client() {
        let a = Client::of("2001:db8:1:2::1".parse().expect("v6"));
        let b = Client::of("2001:db8:1:2:ffff:1:2:3".parse().expect("v6"));
        let c = Client::of("2001:db8:1:3::1".parse().expect("v6"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            Client::of("::ffff:192.0.2.7".parse().expect("mapped")),
            Client::of("192.0.2.7".parse().expect("v4"))
        );
        assert_ne!(
            Client::of("192.0.2.7".parse().expect("v4")),
            Client::of("192.0.2.8".parse().expect("v4"))
        );
    }

    #[test]
    fn the_64s_of_an_ipv6_48_are_one_network() {
        let network =
            |ip: &str| Client::of(ip.parse().expect("an address")).network(Prefix::Ipv6_48);
        assert_eq!(network("2001:db8:1:2::1"), network("2001:db8:1:ffff::9"));
        assert_ne!(network("2001:db8:1:2::1"), network("2001:db8:2:2::1"));
        assert!(network("2001:db8:1:2::1").is_some());
        assert_eq!(network("192.0.2.7"), None);
        assert_eq!(network("::ffff:192.0.2.7"), None);
    }

    #[test]
    fn the_48s_of_an_ipv6_32_and_the_addresses_of_an_ipv4_24_are_one_network() {
        let network =
            |ip: &str, prefix| Client::of(ip.parse().expect("an address")).network(prefix);
        let v6 = Prefix::Ipv6_32;
        assert_eq!(
            network("2001:db8:1::1", v6),
            network("2001:db8:ffff:9::1", v6)
        );
        assert_ne!(network("2001:db8:1::1", v6), network("2001:db9:1::1", v6));
        assert_eq!(network("192.0.2.7", v6), None);
        let v4 = Prefix::Ipv4_24;
        assert_eq!(network("192.0.2.7", v4), network("192.0.2.255", v4));
        assert_eq!(network("::ffff:192.0.2.7", v4), network("192.0.2.1", v4));
        assert_ne!(network("192.0.2.7", v4), network("192.0.3.7", v4));
        assert_eq!(network("2001:db8::1", v4), None);
    }

    #[test]
    fn only_a_trusted_proxy_s_forwarding_header_is_believed() {
        let none = TrustedProxies::default();
        let headers = forwarded("198.51.100.9");
        assert_eq!(
            none.client(peer("203.0.113.5"), &headers),
            Client::of("203.0.113.5".parse().expect("v4"))
        );
        let proxies = TrustedProxies::parse("10.0.0.0/8, ::1").expect("a list");
        assert_eq!(
            proxies.client(peer("10.1.2.3"), &headers),
            Client::of("198.51.100.9".parse().expect("v4"))
        );
        // What the client wrote itself, left of the first untrusted hop, is not read.
        let spoofed = forwarded("192.0.2.1, 198.51.100.9, 10.9.9.9");
        assert_eq!(
            proxies.client(peer("::1"), &spoofed),
            Client::of("198.51.100.9".parse().expect("v4"))
        );
        // A peer that is no proxy of ours is the client, whatever it says.
        assert_eq!(
            proxies.client(peer("203.0.113.5"), &spoofed),
            Client::of("203.0.113.5".parse().expect("v4"))
        );
        // No header: the proxy itself.
        assert_eq!(
            proxies.client(peer("10.1.2.3"), &HeaderMap::new()),
            Client::of("10.1.2.3".parse().expect("v4"))
        );
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse("proxy.example").is_err());
        assert_eq!(TrustedProxies::parse(" ").expect("empty"), none);
    }
}
