//! How the subscription pages behave.

use std::time::Duration;

use super::clients;
use super::plans::Plans;

/// How the subscription pages behave.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The plans on offer.
    pub plans: Plans,
    /// `None`: mail goes to an outbox under the data directory.
    pub smtp_url: Option<String>,
    /// The sender of every message.
    pub mail_from: String,
    /// The base of the links in messages and of the pricing page's example, e.g.
    /// `https://racing.example.com`.
    pub public_url: String,
    /// How the pricing page tells visitors to reach the operator about the plans sold by
    /// contact: an e-mail or web address, or any text; `None`: "the operator of this
    /// service".
    pub contact: Option<String>,
    /// How long a link in a message may be followed; at most the link bucket's age, which
    /// keeps a link that long (the service takes the lesser at start).
    pub link_ttl: Duration,
    /// Most keys one address may hold (one per plan).
    pub max_keys_per_address: usize,
    /// How long a replaced key keeps working when not compromised.
    pub grace: Duration,
    /// Form posts per client address per hour.
    pub posts_per_client_hour: u32,
    /// Form posts per IPv6 /48 per hour, its /64 clients together.
    pub posts_per_network_hour: u32,
    /// Form posts per IPv6 /32 per hour, its /48s together.
    pub posts_per_ipv6_32_hour: u32,
    /// Form posts per IPv4 /24 per hour, its addresses together.
    pub posts_per_ipv4_24_hour: u32,
    /// Percent of the link bucket that subscription posts leave free, for replacement
    /// links: sign-ups that fill the rest never close key replacement.
    pub reserve_percent: u32,
    /// Replacement links that may wait to be followed for one subscriber at once, so that
    /// replacement posts cannot fill the reserve either.
    pub replacement_links: usize,
    /// Messages per e-mail address per hour (its sub-addresses, `name+tag@`, counted
    /// as one).
    pub mails_per_address_hour: u32,
    /// The proxies whose forwarding header names the client of a form post.
    pub trusted_proxies: clients::TrustedProxies,
}

impl Settings {
    /// Form posts an hour allowed from one network of `prefix`, its clients together.
    pub fn per_network_hour(&self, prefix: clients::Prefix) -> u32 {
        match prefix {
            clients::Prefix::Ipv4_24 => self.posts_per_ipv4_24_hour,
            clients::Prefix::Ipv6_48 => self.posts_per_network_hour,
            clients::Prefix::Ipv6_32 => self.posts_per_ipv6_32_hour,
        }
    }
}
