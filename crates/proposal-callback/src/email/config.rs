//! The email configuration: `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at
//! start (docs/operations.md lists the variables).

use std::time::Duration;

use common::config::{ConfigError, Source, duration, positive_duration, secret};
use lettre::message::Mailbox;
use secrecy::{ExposeSecret, SecretString};

/// `smtp://[user:password@]host[:port]` (port 25 by default). Only plain SMTP: lettre's
/// TLS would pull in a TLS stack this service does not otherwise need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpTarget {
    pub host: String,
    pub port: u16,
    pub credentials: Option<(String, String)>,
}

impl SmtpTarget {
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("smtp://")
            .ok_or("must start with smtp:// (TLS is not supported)")?;
        let rest = rest.trim_end_matches('/');
        let (userinfo, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| "the port is not a number".to_owned())?,
            ),
            None => (hostport, 25),
        };
        if host.is_empty() || host.contains(['/', '?', '#']) {
            return Err("no valid host".into());
        }
        let credentials = userinfo.map(|u| match u.split_once(':') {
            Some((user, pass)) => (user.to_owned(), pass.to_owned()),
            None => (u.to_owned(), String::new()),
        });
        Ok(Self {
            host: host.to_owned(),
            port,
            credentials,
        })
    }
}

/// `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at start.
#[derive(Clone)]
pub struct EmailConfig {
    /// `smtp://host:port` (may carry credentials, hence secret). None: mail stays queued.
    pub smtp_url: Option<SecretString>,
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

pub const DEFAULT_FROM: &str = "Proposals <proposals@localhost>";

/// `SMTP_TIMEOUT` when unset.
pub const DEFAULT_SMTP_TIMEOUT: Duration = Duration::from_secs(30);

impl EmailConfig {
    pub fn from_source(src: &dyn Source) -> Result<Self, ConfigError> {
        let invalid = |name: &str, reason: String| ConfigError::Invalid {
            name: name.to_owned(),
            reason,
        };
        let from_raw = src
            .get("EMAIL_FROM")
            .unwrap_or_else(|| DEFAULT_FROM.to_owned());
        let from = from_raw
            .parse::<Mailbox>()
            .map_err(|e| invalid("EMAIL_FROM", format!("{from_raw:?}: {e}")))?;
        let smtp_url = secret(src, "SMTP_URL")?;
        if let Some(url) = &smtp_url {
            // Validated now so a typo stops `serve` instead of silently queueing forever.
            SmtpTarget::parse(url.expose_secret()).map_err(|e| invalid("SMTP_URL", e))?;
        }
        Ok(Self {
            smtp_url,
            from,
            retry_base: duration(src, "EMAIL_RETRY_BASE", Duration::from_secs(2))?,
            retry_max: duration(src, "EMAIL_RETRY_MAX", Duration::from_secs(600))?,
            poll_interval: duration(src, "EMAIL_POLL_INTERVAL", Duration::from_secs(1))?,
            smtp_timeout: positive_duration(src, "SMTP_TIMEOUT", DEFAULT_SMTP_TIMEOUT)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn smtp_urls() {
        let t = SmtpTarget::parse("smtp://127.0.0.1:2525").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.credentials),
            ("127.0.0.1", 2525, None)
        );
        let t = SmtpTarget::parse("smtp://u:p@mail.local").unwrap();
        assert_eq!(t.port, 25);
        assert_eq!(t.credentials, Some(("u".into(), "p".into())));
        for bad in ["http://x", "smtp://", "smtp://h:port", "smtps://h:465"] {
            assert!(SmtpTarget::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn config_defaults_and_errors_name_the_variable() {
        let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        let c = EmailConfig::from_source(&env(&[])).unwrap();
        assert!(c.smtp_url.is_none());
        assert_eq!(c.smtp_timeout, DEFAULT_SMTP_TIMEOUT);
        let err = EmailConfig::from_source(&env(&[("SMTP_TIMEOUT", "0s")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("SMTP_TIMEOUT"));
        assert_eq!(c.from.email.to_string(), "proposals@localhost");
        let err = EmailConfig::from_source(&env(&[("EMAIL_FROM", "not an address")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("EMAIL_FROM"));
        let err = EmailConfig::from_source(&env(&[("SMTP_URL", "http://x")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("SMTP_URL"));
        let ok = EmailConfig::from_source(&env(&[("SMTP_URL", "smtp://127.0.0.1:2525")])).unwrap();
        assert!(ok.smtp_url.is_some());
    }
}
