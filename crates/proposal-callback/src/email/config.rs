//! The email configuration: `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at
//! start (docs/operations.md lists the variables).

use std::time::Duration;

use common::config::ConfigError;
use lettre::message::Mailbox;
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
}
