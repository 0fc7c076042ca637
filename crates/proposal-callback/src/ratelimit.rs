//! Slows down token guessing on `/callback/auth` (docs/proposal-callback.md,
//! "Authentication"): after `max_failures` failed attempts from one client within `window`,
//! that client is answered 429 until the window ends.
//!
//! - **Which client.** The TCP peer, unless the peer is one of `TRUSTED_PROXIES` (CIDRs; none
//!   by default): then `X-Forwarded-For` is read from the right, skipping trusted proxies, and
//!   the first address that is not one is the client. Without trusted proxies the header is
//!   ignored (anyone can write it). An IPv6 client is counted by its /64, the block one
//!   subscriber usually holds, so rotating addresses inside it does not buy fresh attempts.
//! - **Shared by the replicas.** Counts live in PostgreSQL ([`crate::store::auth_failures`]):
//!   one primary-key lookup per attempt, one upsert per failure.
//! - **A success wipes nothing.** A right token does not reset the client's earlier
//!   failures, so interleaving good and bad tokens does not reopen the door.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use diesel::QueryResult;
use diesel_async::AsyncPgConnection;
use ipnet::{IpNet, Ipv6Net};
use rand::RngCore;

use crate::store::auth_failures;

/// The proxies whose `X-Forwarded-For` is believed: `TRUSTED_PROXIES`, comma-separated CIDRs
/// (a bare address is one host).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn none() -> Self {
        Self::default()
    }

    /// `TRUSTED_PROXIES` (read by `crate::settings`): none when empty.
    pub fn parse(raw: &str) -> Result<Self, String> {
        raw.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map(|n| n.trunc())
                    .map_err(|_| format!("{s:?} is not an address or a CIDR block"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The real client of a request from `peer` carrying `forwarded_for` (the
    /// `X-Forwarded-For` values in header order). The peer itself unless it is a trusted
    /// proxy; then the right-most forwarded address that is not a trusted proxy. When an
    /// entry cannot be read, the hop that handed it over (the last trusted one) is the
    /// client: a client must not pick its key by writing garbage.
    pub fn client_address<'a>(
        &self,
        peer: IpAddr,
        forwarded_for: impl DoubleEndedIterator<Item = &'a str>,
    ) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        let entries: Vec<&str> = forwarded_for
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        for entry in entries.into_iter().rev() {
            let Some(ip) = parse_forwarded(entry) else {
                return client;
            };
            client = ip.to_canonical();
            if !self.contains(client) {
                return client;
            }
        }
        // Every hop is a trusted proxy: the left-most one is the closest to the client.
        client
    }
}

/// An `X-Forwarded-For` entry: `addr`, `v4:port`, `[v6]` or `[v6]:port`.
fn parse_forwarded(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            entry
                .strip_prefix('[')
                .and_then(|e| e.strip_suffix(']'))
                .and_then(|e| e.parse().ok())
        })
}

/// What failures are counted under: an IPv4 address, or the /64 of an IPv6 one.
pub fn client_key(ip: Option<IpAddr>) -> String {
    match ip.map(|ip| ip.to_canonical()) {
        Some(IpAddr::V4(v4)) => v4.to_string(),
        Some(IpAddr::V6(v6)) => Ipv6Net::new(v6, 64)
            .map(|n| n.trunc().to_string())
            .unwrap_or_else(|_| v6.to_string()),
        None => "unknown".to_owned(),
    }
}

/// One in this many failures also deletes the windows that have ended.
const PRUNE_ONE_IN: u32 = 64;

/// The `/callback/auth` failure limiter. Cheap to clone; the counts are in the database.
#[derive(Clone)]
pub struct FailureLimiter {
    trusted: Arc<TrustedProxies>,
    max_failures: u32,
    window: Duration,
}

impl FailureLimiter {
    pub fn new(max_failures: u32, window: Duration, trusted: TrustedProxies) -> Self {
        Self {
            trusted: Arc::new(trusted),
            max_failures,
            window,
        }
    }

    pub fn trusted_proxies(&self) -> &TrustedProxies {
        &self.trusted
    }

    /// The key a request's failures count under (see [`TrustedProxies::client_address`]).
    pub fn client<'a>(
        &self,
        peer: Option<IpAddr>,
        forwarded_for: impl DoubleEndedIterator<Item = &'a str>,
    ) -> String {
        client_key(peer.map(|p| self.trusted.client_address(p, forwarded_for)))
    }

    /// `Ok(Err(seconds to wait))` while `client` is blocked.
    pub async fn check(
        &self,
        conn: &mut AsyncPgConnection,
        client: &str,
    ) -> QueryResult<Result<(), u32>> {
        let max = i32::try_from(self.max_failures).unwrap_or(i32::MAX);
        Ok(
            match auth_failures::blocked_for(conn, client, max, self.window.as_secs_f64()).await? {
                Some(left) => Err(left.ceil().max(1.0) as u32),
                None => Ok(()),
            },
        )
    }

    /// Counts a failure of `client`; now and then also prunes ended windows.
    pub async fn record_failure(
        &self,
        conn: &mut AsyncPgConnection,
        client: &str,
    ) -> QueryResult<()> {
        let window = self.window.as_secs_f64();
        let failures = auth_failures::record_failure(conn, client, window).await?;
        if failures as u32 == self.max_failures {
            tracing::warn!(
                client,
                failures,
                window_secs = self.window.as_secs(),
                "callback auth: client blocked after repeated failures"
            );
        }
        if rand::rng().next_u32().is_multiple_of(PRUNE_ONE_IN) {
            auth_failures::prune(conn, window).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn without_trusted_proxies_the_header_is_ignored() {
        let t = TrustedProxies::none();
        assert_eq!(
            t.client_address(ip("10.0.0.9"), ["1.2.3.4"].into_iter()),
            ip("10.0.0.9")
        );
    }

    #[test]
    fn the_right_most_untrusted_address_is_the_client() {
        let t = TrustedProxies::parse("10.0.0.0/8, 192.168.1.1").unwrap();
        // A client forged the first entry; the ingress appended the address it saw.
        let xff = ["6.6.6.6, 203.0.113.7", "192.168.1.1"];
        assert_eq!(
            t.client_address(ip("10.1.2.3"), xff.into_iter()),
            ip("203.0.113.7")
        );
        // The peer is not a proxy: whatever it says, the peer is the client.
        assert_eq!(
            t.client_address(ip("198.51.100.1"), xff.into_iter()),
            ip("198.51.100.1")
        );
        // Ports and brackets, IPv4-mapped addresses.
        assert_eq!(
            t.client_address(ip("10.0.0.1"), ["203.0.113.8:5123"].into_iter()),
            ip("203.0.113.8")
        );
        assert_eq!(
            t.client_address(ip("10.0.0.1"), ["[2001:db8::1]:443"].into_iter()),
            ip("2001:db8::1")
        );
        assert_eq!(
            t.client_address(ip("::ffff:10.0.0.1"), ["::ffff:203.0.113.9"].into_iter()),
            ip("203.0.113.9")
        );
        // No header, or only proxies: the left-most hop.
        assert_eq!(
            t.client_address(ip("10.0.0.1"), std::iter::empty()),
            ip("10.0.0.1")
        );
        assert_eq!(
            t.client_address(ip("10.0.0.1"), ["10.0.0.5, 10.0.0.6"].into_iter()),
            ip("10.0.0.5")
        );
        // Garbage stops the walk at the last trusted hop.
        assert_eq!(
            t.client_address(ip("10.0.0.1"), ["1.2.3.4, unknown, 10.0.0.7"].into_iter()),
            ip("10.0.0.7")
        );
    }

    #[test]
    fn keys_group_an_ipv6_subscriber_by_its_64() {
        assert_eq!(client_key(Some(ip("203.0.113.7"))), "203.0.113.7");
        assert_eq!(client_key(Some(ip("::ffff:203.0.113.7"))), "203.0.113.7");
        assert_eq!(
            client_key(Some(ip("2001:db8:1:2:aaaa::1"))),
            client_key(Some(ip("2001:db8:1:2:bbbb::2")))
        );
        assert_eq!(client_key(Some(ip("2001:db8:1:2::9"))), "2001:db8:1:2::/64");
        assert_eq!(client_key(None), "unknown");
    }

    #[test]
    fn configuration_names_the_bad_entry() {
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        assert!(
            TrustedProxies::parse("10.0.0.0/8,::1")
                .unwrap()
                .contains(ip("::1"))
        );
        let err = TrustedProxies::parse("10.0.0.0/8, ingress").unwrap_err();
        assert!(err.contains("\"ingress\""), "{err}");
    }
}
