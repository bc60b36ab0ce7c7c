//! No request forgery through webhooks: where an endpoint's URL may lead. Its host must
//! resolve to public addresses only (never loopback, private, link-local such as the
//! cloud metadata address 169.254.169.254, multicast, unspecified or otherwise reserved,
//! nor the service's own listeners), and its scheme must be `https`; the operator's
//! allowed networks (`RACING_WEBHOOK_ALLOW_NETWORKS`) open the addresses in them, over
//! plain `http` too, and nothing else does. The rules are checked at registration and
//! again at every delivery, whose connection goes to the very addresses checked here
//! ([`Target::addrs`]): nothing resolves the name a second time between the check and
//! the connect.
//!
//! Names are resolved through [`Resolve`], the system's resolver unless a test gives one
//! of its own (a name resolving to each refused class without touching `/etc/hosts`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use ipnet::IpNet;
use url::Url;

/// Resolves a host name to its addresses.
pub trait Resolve: Send + Sync {
    /// Every address `host` resolves to now.
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>>;
}

/// The system's resolver (`getaddrinfo`, as every other client of the machine).
#[derive(Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// Why an address may not be reached: the class it is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, `fc00::/7`.
    Private,
    /// `169.254.0.0/16` (the cloud metadata address among them), `fe80::/10`.
    LinkLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// Shared (`100.64.0.0/10`), documentation, benchmarking, broadcast, the IETF's and
    /// the future's blocks, and the IPv6 tunnels that carry an IPv4 address.
    Reserved,
}

impl Class {
    /// Its name, as a refusal says it.
    pub fn name(self) -> &'static str {
        match self {
            Class::Loopback => "loopback",
            Class::Private => "private",
            Class::LinkLocal => "link-local",
            Class::Multicast => "multicast",
            Class::Unspecified => "unspecified",
            Class::Reserved => "reserved",
        }
    }
}

/// The class of an address that is not public; `None` for a public one.
pub fn class(ip: IpAddr) -> Option<Class> {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => class_v6(v6),
    }
}

fn class_v4(ip: Ipv4Addr) -> Option<Class> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() {
        Some(Class::Unspecified)
    } else if ip.is_loopback() {
        Some(Class::Loopback)
    } else if ip.is_private() {
        Some(Class::Private)
    } else if ip.is_link_local() {
        Some(Class::LinkLocal)
    } else if ip.is_multicast() {
        Some(Class::Multicast)
    } else if a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || ip.is_documentation()
        || ip.is_broadcast()
        || a >= 240
    {
        Some(Class::Reserved)
    } else {
        None
    }
}

fn class_v6(ip: Ipv6Addr) -> Option<Class> {
    let segments = ip.segments();
    // An IPv4 address written as IPv6 is that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return class_v4(v4);
    }
    if ip.is_unspecified() {
        Some(Class::Unspecified)
    } else if ip.is_loopback() {
        Some(Class::Loopback)
    } else if ip.is_multicast() {
        Some(Class::Multicast)
    } else if segments[0] & 0xffc0 == 0xfe80 {
        Some(Class::LinkLocal)
    } else if segments[0] & 0xfe00 == 0xfc00 {
        Some(Class::Private)
    } else if segments[0] == 0x2001 && segments[1] == 0x0db8
        // NAT64, 6to4, Teredo and the IPv4-compatible form carry an IPv4 address a
        // gateway may take anywhere; the discard and ORCHID blocks lead nowhere.
        || (segments[0] == 0x64 && segments[1] == 0xff9b)
        || segments[0] == 0x2002
        || (segments[0] == 0x2001 && segments[1] < 0x0200)
        || segments[..6] == [0; 6]
        || segments[..4] == [0x100, 0, 0, 0]
        || segments[0] & 0xe000 != 0x2000
    {
        Some(Class::Reserved)
    } else {
        None
    }
}

/// Why a URL may not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a URL this service posts to (a scheme other than `https` or `http`, no host,
    /// credentials in it, a fragment, too long).
    Url(String),
    /// Plain `http` to an address outside the allowed networks.
    Plain(SocketAddr),
    /// An address of a class that is not public, outside the allowed networks.
    NotPublic(SocketAddr, Class),
    /// One of the service's own listeners.
    Own(SocketAddr),
    /// The host resolves to no address, or could not be resolved.
    Unresolved(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Url(why) => write!(f, "{why}"),
            Refusal::Plain(addr) => write!(
                f,
                "plain http to {addr}: only https is allowed outside the operator's allowed networks"
            ),
            Refusal::NotPublic(addr, class) => write!(
                f,
                "the host resolves to {}, a {} address; only public addresses may be reached",
                addr.ip(),
                class.name()
            ),
            Refusal::Own(addr) => write!(f, "{addr} is one of this service's own listeners"),
            Refusal::Unresolved(why) => write!(f, "the host does not resolve: {why}"),
        }
    }
}

/// Longest URL an endpoint may have.
pub const MAX_URL_BYTES: usize = 2048;

/// Where one delivery goes: the URL's host (for `Host` and TLS) and the addresses it
/// resolved to, every one of them checked.
#[derive(Debug, Clone)]
pub struct Target {
    /// Whether it is `https`.
    pub tls: bool,
    /// The host as the URL names it (a name, or an address without brackets).
    pub host: String,
    /// The port.
    pub port: u16,
    /// What the `Host` header says: the host, and the port where it is not the scheme's.
    pub authority: String,
    /// The path and query, as the request line sends them.
    pub path: String,
    /// The addresses to connect to, in the resolver's order.
    pub addrs: Vec<SocketAddr>,
}

/// The rules, with the networks the operator opened and the service's own listeners.
pub struct Guard {
    allowed: Vec<IpNet>,
    own: Vec<SocketAddr>,
    resolver: Arc<dyn Resolve>,
}

impl Guard {
    /// Rules that open `allowed` and refuse `own`, resolving through `resolver`.
    pub fn new(allowed: Vec<IpNet>, own: Vec<SocketAddr>, resolver: Arc<dyn Resolve>) -> Guard {
        Guard {
            allowed,
            own,
            resolver,
        }
    }

    /// Whether `addr` may be reached, and over plain `http` too (`true`) or only `https`.
    pub fn check(&self, addr: SocketAddr) -> Result<bool, Refusal> {
        let ip = match addr.ip() {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        let allowed = self.allowed.iter().any(|net| net.contains(&ip));
        // A listener on every address (`0.0.0.0`, `::`) answers at the host's own, which
        // cannot be listed: at its port, every address that plain `http` may reach (one
        // not public, or in an allowed network, which may hold the host's public one)
        // counts as the listener's. A public address is reached over `https` only, which
        // the service's plain listeners do not speak.
        let own = self.own.iter().any(|o| {
            o.port() == addr.port()
                && (o.ip() == ip || (o.ip().is_unspecified() && (allowed || class(ip).is_some())))
        });
        if own {
            return Err(Refusal::Own(addr));
        }
        if allowed {
            return Ok(true);
        }
        match class(ip) {
            Some(class) => Err(Refusal::NotPublic(addr, class)),
            None => Ok(false),
        }
    }

    /// The URL as read for an endpoint, before any address is looked at: `https` or
    /// `http`, a host, no credentials or fragment, at most [`MAX_URL_BYTES`].
    pub fn parse(url: &str) -> Result<Url, Refusal> {
        if url.len() > MAX_URL_BYTES {
            return Err(Refusal::Url(format!(
                "the url is over {MAX_URL_BYTES} bytes"
            )));
        }
        let parsed = Url::parse(url).map_err(|e| Refusal::Url(format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err(Refusal::Url("the url must be https".into()));
        }
        if parsed.host().is_none() {
            return Err(Refusal::Url("the url has no host".into()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(Refusal::Url(
                "the url may not carry credentials; the signature authenticates each delivery"
                    .into(),
            ));
        }
        if parsed.fragment().is_some() {
            return Err(Refusal::Url("the url may not have a fragment".into()));
        }
        Ok(parsed)
    }

    /// Resolves `url`'s host now and checks every address it gives: the target of one
    /// delivery, or the check of a registration.
    pub async fn target(&self, url: &Url) -> Result<Target, Refusal> {
        let tls = match url.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(Refusal::Url("the url must be https".into())),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| Refusal::Url("the url has no port".into()))?;
        let (host, ips) = match url.host() {
            Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![IpAddr::V4(ip)]),
            Some(url::Host::Ipv6(ip)) => (ip.to_string(), vec![IpAddr::V6(ip)]),
            Some(url::Host::Domain(name)) => {
                let ips = self
                    .resolver
                    .lookup(name)
                    .await
                    .map_err(|e| Refusal::Unresolved(e.to_string()))?;
                (name.to_owned(), ips)
            }
            None => return Err(Refusal::Url("the url has no host".into())),
        };
        if ips.is_empty() {
            return Err(Refusal::Unresolved("no address".into()));
        }
        let mut addrs = Vec::with_capacity(ips.len());
        for ip in ips {
            let addr = SocketAddr::new(ip, port);
            let plain_allowed = self.check(addr)?;
            if !tls && !plain_allowed {
                return Err(Refusal::Plain(addr));
            }
            if !addrs.contains(&addr) {
                addrs.push(addr);
            }
        }
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        Ok(Target {
            tls,
            host,
            port,
            authority,
            path,
            addrs,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Names and their addresses, as a test wants them.
    struct Stub(HashMap<&'static str, Vec<IpAddr>>);

    impl Resolve for Stub {
        fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
            let found =
                self.0.get(host).cloned().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such name")
                });
            Box::pin(async move { found })
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn each_address_is_of_its_class() {
        for (addr, expected) in [
            ("93.184.216.34", None),
            ("2606:2800:220:1:248:1893:25c8:1946", None),
            ("127.0.0.1", Some(Class::Loopback)),
            ("127.8.9.10", Some(Class::Loopback)),
            ("::1", Some(Class::Loopback)),
            ("::ffff:127.0.0.1", Some(Class::Loopback)),
            ("10.1.2.3", Some(Class::Private)),
            ("172.16.0.1", Some(Class::Private)),
            ("192.168.1.1", Some(Class::Private)),
            ("fd00::1", Some(Class::Private)),
            ("169.254.169.254", Some(Class::LinkLocal)),
            ("fe80::1", Some(Class::LinkLocal)),
            ("224.0.0.1", Some(Class::Multicast)),
            ("ff02::1", Some(Class::Multicast)),
            ("0.0.0.0", Some(Class::Unspecified)),
            ("::", Some(Class::Unspecified)),
            ("100.64.0.1", Some(Class::Reserved)),
            ("255.255.255.255", Some(Class::Reserved)),
            ("240.0.0.1", Some(Class::Reserved)),
            ("192.0.2.1", Some(Class::Reserved)),
            ("64:ff9b::a9fe:a9fe", Some(Class::Reserved)),
            ("2002:a9fe:a9fe::1", Some(Class::Reserved)),
            ("::127.0.0.1", Some(Class::Reserved)),
        ] {
            assert_eq!(class(ip(addr)), expected, "{addr}");
        }
    }

    #[tokio::test]
    async fn a_host_is_refused_if_any_of_its_addresses_is_not_public() {
        let stub = Stub(HashMap::from([
            ("public.example", vec![ip("93.184.216.34")]),
            (
                "mixed.example",
                vec![ip("93.184.216.34"), ip("169.254.169.254")],
            ),
            ("nowhere.example", vec![]),
        ]));
        let guard = Guard::new(Vec::new(), Vec::new(), Arc::new(stub));
        let target = |u: &str| {
            let url = Guard::parse(u).expect("a URL");
            let guard = &guard;
            async move { guard.target(&url).await }
        };
        let ok = target("https://public.example:8443/hook?x=1")
            .await
            .expect("public");
        assert_eq!(ok.addrs, [SocketAddr::from(([93, 184, 216, 34], 8443))]);
        assert_eq!(
            (ok.authority.as_str(), ok.path.as_str()),
            ("public.example:8443", "/hook?x=1")
        );
        assert!(matches!(
            target("https://mixed.example/").await,
            Err(Refusal::NotPublic(_, Class::LinkLocal))
        ));
        assert!(matches!(
            target("https://nowhere.example/").await,
            Err(Refusal::Unresolved(_))
        ));
        assert!(matches!(
            target("https://unknown.example/").await,
            Err(Refusal::Unresolved(_))
        ));
        assert!(matches!(
            target("http://public.example/").await,
            Err(Refusal::Plain(_))
        ));
        assert!(matches!(
            target("https://[::1]/").await,
            Err(Refusal::NotPublic(_, Class::Loopback))
        ));
    }

    #[tokio::test]
    async fn the_allowed_networks_open_plain_http_there_but_never_the_services_own_listeners() {
        let own = SocketAddr::from(([127, 0, 0, 1], 8080));
        let guard = Guard::new(
            vec!["127.0.0.0/8".parse().expect("a network")],
            vec![own, SocketAddr::from(([0, 0, 0, 0], 9090))],
            Arc::new(SystemResolver),
        );
        let target = |u: &str| {
            let url = Guard::parse(u).expect("a URL");
            let guard = &guard;
            async move { guard.target(&url).await }
        };
        assert!(target("http://127.0.0.1:8081/").await.is_ok());
        assert!(target("https://127.9.9.9/").await.is_ok());
        assert_eq!(
            target("http://127.0.0.1:8080/").await.map(|t| t.addrs),
            Err(Refusal::Own(own))
        );
        assert!(matches!(
            target("http://127.0.0.2:9090/").await,
            Err(Refusal::Own(_))
        ));
        assert!(matches!(
            target("http://10.0.0.1/").await,
            Err(Refusal::NotPublic(_, Class::Private))
        ));
    }

    #[test]
    fn a_listener_on_every_address_is_refused_at_the_allowed_networks_too() {
        // An allowed network that holds the host's public address, and the admin's
        // listener on every address.
        let guard = Guard::new(
            vec!["8.8.8.0/24".parse().expect("a network")],
            vec![SocketAddr::from(([0, 0, 0, 0], 9090))],
            Arc::new(SystemResolver),
        );
        let at = |port| SocketAddr::from(([8, 8, 8, 8], port));
        assert_eq!(guard.check(at(9090)), Err(Refusal::Own(at(9090))));
        assert_eq!(guard.check(at(8081)), Ok(true));
        // A public address outside them: `https` only, which the listener does not speak.
        let outside = SocketAddr::from(([8, 8, 4, 4], 9090));
        assert_eq!(guard.check(outside), Ok(false));
    }

    #[test]
    fn a_url_needs_a_web_scheme_and_a_host_and_carries_no_credentials() {
        for bad in [
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "https://example.com/#frag",
            "not a url",
            "file:///etc/passwd",
        ] {
            assert!(Guard::parse(bad).is_err(), "{bad}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(Guard::parse(&long).is_err());
        assert!(Guard::parse("https://example.com/hook").is_ok());
    }
}
