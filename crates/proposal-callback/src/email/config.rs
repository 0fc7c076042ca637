//! The email configuration: `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at
//! start (docs/operations.md lists the variables).

use std::time::Duration;

use common::config::ConfigError;
use lettre::message::Mailbox;
use lettre::transport::smtp::extension::ClientId;
use secrecy::SecretString;

common::text_enum! {
    /// How the connection to the relay is secured (docs/proposal-callback.md, "Email").
    pub enum Security {
        /// Plain SMTP (`smtp://`): only for a relay on this machine or a private network
        /// that needs no credentials (credentials are refused unless the relay is loopback).
        Plain = "plain",
        /// `smtp://...?tls=required`: plain connection upgraded with STARTTLS before anything
        /// else is said; a relay that does not offer it gets nothing.
        StartTls = "starttls",
        /// `smtps://`: TLS from the first byte (implicit TLS, RFC 8314).
        Implicit = "implicit_tls",
    }
}

/// Where `SMTP_URL` points: `smtp://[user:password@]host[:port]` (port 25),
/// `smtp://...?tls=required` (STARTTLS, port 587) or `smtps://...` (implicit TLS, port 465).
/// User and password are percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpTarget {
    /// The host as the certificate must name it (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub credentials: Option<(String, String)>,
}

const SCHEMES: &str = "must be smtp://host[:port] (plain), smtp://host[:port]?tls=required (STARTTLS) or smtps://host[:port] (implicit TLS)";

impl SmtpTarget {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let url = reqwest::Url::parse(raw.trim()).map_err(|e| format!("{e}; {SCHEMES}"))?;
        let mut security = match url.scheme() {
            "smtp" => Security::Plain,
            "smtps" => Security::Implicit,
            _ => return Err(SCHEMES.into()),
        };
        for (key, value) in url.query_pairs() {
            match (key.as_ref(), value.as_ref(), security) {
                ("tls", "required", Security::Plain | Security::StartTls) => {
                    security = Security::StartTls
                }
                ("tls", _, Security::Implicit) => {
                    return Err("smtps:// is TLS already; drop the tls parameter".into());
                }
                ("tls", other, _) => {
                    return Err(format!(
                        "tls={other:?} is not supported: tls=required (STARTTLS) or smtps://"
                    ));
                }
                (other, _, _) => return Err(format!("unknown parameter {other:?}; {SCHEMES}")),
            }
        }
        let host = match url.host_str() {
            Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']'),
            _ => return Err(format!("no host; {SCHEMES}")),
        }
        .to_owned();
        if !matches!(url.path(), "" | "/") || url.fragment().is_some() {
            return Err(format!("no path or fragment expected; {SCHEMES}"));
        }
        let port = url.port().unwrap_or(match security {
            Security::Plain => 25,
            Security::StartTls => 587,
            Security::Implicit => 465,
        });
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| "the user or password is not UTF-8 once percent-decoded".to_owned())
        };
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            (user, password) => Some((decode(user)?, decode(password.unwrap_or(""))?)),
        };
        let target = Self {
            host,
            port,
            security,
            credentials,
        };
        if target.credentials.is_some() && security == Security::Plain && !target.is_loopback() {
            return Err(format!(
                "credentials would cross the network in clear to {}: use smtps:// or \
                 smtp://...?tls=required (plain SMTP with credentials only to a loopback relay)",
                target.host
            ));
        }
        Ok(target)
    }

    /// The relay is this machine (`localhost`, 127.0.0.0/8, `::1`).
    pub fn is_loopback(&self) -> bool {
        self.host.eq_ignore_ascii_case("localhost")
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// What the logs say of the relay: never the credentials.
impl std::fmt::Display for SmtpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "{host}:{} ({}{})",
            self.port,
            self.security,
            if self.credentials.is_some() {
                ", with credentials"
            } else {
                ""
            }
        )
    }
}

/// `SMTP_TLS_CA_FILE` (`path`): PEM certificates of a private CA the relay's certificate may
/// chain to, trusted besides the public roots (Mozilla's, built in).
pub fn read_ca_file(path: &str) -> Result<Option<Vec<u8>>, ConfigError> {
    const NAME: &str = "SMTP_TLS_CA_FILE";
    if path.trim().is_empty() {
        return Ok(None);
    }
    let invalid = |reason: String| ConfigError::Invalid {
        name: NAME.into(),
        reason,
    };
    let pem = std::fs::read(path.trim()).map_err(|e| invalid(format!("{path}: {e}")))?;
    let has_certificate = String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----");
    if !has_certificate || lettre::transport::smtp::client::Certificate::from_pem(&pem).is_err() {
        return Err(invalid(format!(
            "{path}: not PEM certificates (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(Some(pem))
}

/// `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at start (`crate::settings`).
#[derive(Clone)]
pub struct EmailConfig {
    /// `smtp://host:port` (may carry credentials, hence secret). None: mail stays queued.
    pub smtp_url: Option<SecretString>,
    /// `SMTP_TLS_CA_FILE`'s certificates (PEM), trusted besides the public roots.
    pub tls_ca_pem: Option<Vec<u8>>,
    pub from: Mailbox,
    /// First retry delay; doubles per attempt up to `retry_max`.
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// How often the worker looks for due mail when the outbox was empty.
    pub poll_interval: Duration,
    /// The longest the worker waits on each step of an SMTP conversation: connecting (TCP
    /// connect, greeting, EHLO), authenticating, handing over the message (MAIL, RCPT,
    /// DATA), QUIT. A step that takes longer fails the attempt, which is retried later.
    pub smtp_timeout: Duration,
    /// The name the worker gives in EHLO: `SMTP_HELO_NAME`, or [`default_hello`].
    pub hello: ClientId,
}

/// The EHLO name without `SMTP_HELO_NAME`: never a bare host name, which relays with
/// `reject_non_fqdn_helo_hostname` (Postfix) refuse (`504 5.5.2 <vm>: Helo command
/// rejected`). The machine's name when it is fully qualified (has a dot), else the domain of
/// `EMAIL_FROM` when it is (a name that resolves, as relays checking the name in DNS want),
/// else `localhost.localdomain`.
pub fn default_hello(host: Option<&str>, from: &Mailbox) -> ClientId {
    let from_domain = from.email.domain().to_ascii_lowercase();
    let name = [host.map(str::to_ascii_lowercase), Some(from_domain)]
        .into_iter()
        .flatten()
        .find(|n| is_fqdn(n))
        .unwrap_or_else(|| "localhost.localdomain".to_owned());
    ClientId::Domain(name)
}

/// A fully qualified domain name as EHLO carries it: labels of letters, digits and hyphens
/// (none first or last), at least two, at most 253 characters.
pub fn is_fqdn(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// `SMTP_HELO_NAME`: a fully qualified domain name (`mail.imobiliaria.com.br`) or an address
/// literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`).
pub fn parse_hello(raw: &str) -> Result<ClientId, String> {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if let Some(v6) = inner.strip_prefix("IPv6:") {
            return v6
                .parse()
                .map(ClientId::Ipv6)
                .map_err(|_| format!("{raw:?}: not an IPv6 address literal ([IPv6:2001:db8::1])"));
        }
        return inner
            .parse()
            .map(ClientId::Ipv4)
            .map_err(|_| format!("{raw:?}: not an IPv4 address literal ([192.0.2.1])"));
    }
    if is_fqdn(raw) {
        Ok(ClientId::Domain(raw.to_ascii_lowercase()))
    } else {
        Err(format!(
            "{raw:?} is not a fully qualified domain name (mail.example.com) or an address \
             literal ([192.0.2.1]): relays refuse a bare host name"
        ))
    }
}

pub const DEFAULT_FROM: &str = "Propostas <propostas@localhost>";

/// `SMTP_TIMEOUT` when unset.
pub const DEFAULT_SMTP_TIMEOUT: Duration = Duration::from_secs(30);
/// `EMAIL_RETRY_BASE` when unset.
pub const DEFAULT_RETRY_BASE: Duration = Duration::from_secs(2);
/// `EMAIL_RETRY_MAX` when unset.
pub const DEFAULT_RETRY_MAX: Duration = Duration::from_secs(600);
/// `EMAIL_POLL_INTERVAL` when unset.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_urls() {
        let t = SmtpTarget::parse("smtp://127.0.0.1:2525").unwrap();
        assert_eq!(
            t,
            SmtpTarget {
                host: "127.0.0.1".into(),
                port: 2525,
                security: Security::Plain,
                credentials: None
            }
        );
        // Credentials in clear only to a loopback relay.
        let t = SmtpTarget::parse("smtp://u:p@localhost").unwrap();
        assert_eq!(
            (t.port, t.credentials),
            (25, Some(("u".into(), "p".into())))
        );
        let t = SmtpTarget::parse("smtp://u:p@[::1]:2525").unwrap();
        assert_eq!((t.host.as_str(), t.is_loopback()), ("::1", true));
        let err = SmtpTarget::parse("smtp://u:p@mail.example.com").unwrap_err();
        assert!(err.contains("in clear"), "{err}");
        let t =
            SmtpTarget::parse("smtp://apikey:s%40cr%3At@mail.example.com?tls=required").unwrap();
        assert_eq!(
            (t.port, t.security, t.credentials),
            (
                587,
                Security::StartTls,
                Some(("apikey".into(), "s@cr:t".into()))
            )
        );
        let t = SmtpTarget::parse("smtps://u:p@mail.example.com").unwrap();
        assert_eq!((t.port, t.security), (465, Security::Implicit));
        assert_eq!(
            t.to_string(),
            "mail.example.com:465 (implicit_tls, with credentials)"
        );
        for bad in [
            "http://x",
            "smtp://",
            "smtp://h:port",
            "smtp://h?tls=opportunistic",
            "smtps://h?tls=required",
            "smtp://h?ssl=1",
            "smtp://h/path",
        ] {
            assert!(SmtpTarget::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_ehlo_name_is_fully_qualified() {
        let from: Mailbox = "P <p@demo-a.example.com>".parse().unwrap();
        let local: Mailbox = DEFAULT_FROM.parse().unwrap();
        let name = |c: ClientId| c.to_string();
        assert_eq!(name(default_hello(Some("vm"), &from)), "demo-a.example.com");
        assert_eq!(
            name(default_hello(Some("VM.Example.org"), &from)),
            "vm.example.org"
        );
        assert_eq!(
            name(default_hello(Some("vm"), &local)),
            "localhost.localdomain"
        );
        assert_eq!(name(default_hello(None, &local)), "localhost.localdomain");
        assert_eq!(
            name(parse_hello(" Mail.Example.com ").unwrap()),
            "mail.example.com"
        );
        assert_eq!(name(parse_hello("[192.0.2.1]").unwrap()), "[192.0.2.1]");
        assert_eq!(
            name(parse_hello("[IPv6:2001:db8::1]").unwrap()),
            "[IPv6:2001:db8::1]"
        );
        for bad in ["vm", "", "a..b", "-a.b", "a_b.c", "[300.1.1.1]", "x.y z"] {
            assert!(parse_hello(bad).is_err(), "{bad:?}");
        }
    }
}
