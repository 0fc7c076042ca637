//! The email of a transition and the outbox worker that sends it over SMTP.
//!
//! An email is written to the outbox in the transaction of its transition, so it exists
//! exactly when the transition does. The worker claims due rows with `FOR UPDATE SKIP
//! LOCKED` (several replicas never send one row at once), sends, and marks the row sent in
//! the same transaction. A crash between the SMTP answer and the commit sends that email
//! again: SMTP offers no exactly-once, so each message carries a Message-ID derived from its
//! outbox row, which lets mail systems drop the repeat.

use std::time::Duration;

use common::config::{ConfigError, Source, parse_duration, secret};
use common::db::Pool;
use diesel_async::AsyncConnection;
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::{ExposeSecret, SecretString};

use crate::error::Error;
use crate::insurer::Callback;
use crate::proposal::Status;
use crate::store::outbox::{self, OutboxRow};

/// A message to a proposal's contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    pub subject: String,
    pub body: String,
}

fn label(status: Status) -> &'static str {
    match status {
        Status::UnderAnalysis => "under analysis",
        Status::Pending => "pending",
        Status::Approved => "approved",
        Status::Refused => "refused",
    }
}

/// Which proposal, its new status and, for pending, what the insurer asks for.
pub fn compose(proposal_id: &str, status: Status, callback: &Callback) -> Email {
    let mut body = format!("Proposal {proposal_id} is now {}.\n", label(status));
    if status == Status::Pending {
        body.push_str("\nThe insurer asks for:\n");
        if let Some(note) = &callback.note {
            body.push_str(&format!("- {note}\n"));
        }
        for r in &callback.requirements {
            if r.description.is_empty() {
                body.push_str(&format!("- {}\n", r.document));
            } else {
                body.push_str(&format!("- {}: {}\n", r.document, r.description));
            }
        }
        if callback.note.is_none() && callback.requirements.is_empty() {
            body.push_str("- (the insurer did not say; contact the insurer)\n");
        }
    } else if let Some(note) = &callback.note {
        body.push_str(&format!("\nThe insurer's note: {note}\n"));
    }
    Email {
        subject: format!("Proposal {proposal_id}: {}", label(status)),
        body,
    }
}

/// `smtp://[user:password@]host[:port]` (port 25 by default). Only plain SMTP: lettre's
/// TLS would pull in a TLS stack this service does not otherwise need.
#[derive(Debug, PartialEq, Eq)]
struct SmtpTarget {
    host: String,
    port: u16,
    credentials: Option<(String, String)>,
}

impl SmtpTarget {
    fn parse(url: &str) -> Result<Self, String> {
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
}

pub const DEFAULT_FROM: &str = "Proposals <proposals@localhost>";

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
        let duration = |name: &str, default: Duration| -> Result<Duration, ConfigError> {
            src.get(name)
                .map(|raw| parse_duration(&raw).map_err(|e| invalid(name, e)))
                .transpose()
                .map(|d| d.unwrap_or(default))
        };
        let smtp_url = secret(src, "SMTP_URL")?;
        if let Some(url) = &smtp_url {
            // Validated now so a typo stops `serve` instead of silently queueing forever.
            SmtpTarget::parse(url.expose_secret()).map_err(|e| invalid("SMTP_URL", e))?;
        }
        Ok(Self {
            smtp_url,
            from,
            retry_base: duration("EMAIL_RETRY_BASE", Duration::from_secs(2))?,
            retry_max: duration("EMAIL_RETRY_MAX", Duration::from_secs(600))?,
            poll_interval: duration("EMAIL_POLL_INTERVAL", Duration::from_secs(1))?,
        })
    }
}

/// Sends the outbox. Cheap to clone.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    config: EmailConfig,
}

/// How many due emails one transaction claims.
const BATCH: i64 = 10;

impl Mailer {
    /// None without `SMTP_URL`.
    pub fn new(config: &EmailConfig) -> Result<Option<Self>, Error> {
        let Some(url) = &config.smtp_url else {
            return Ok(None);
        };
        let target = SmtpTarget::parse(url.expose_secret())
            .map_err(|e| Error::Internal(format!("SMTP_URL: {e}")))?;
        // Plain SMTP (no TLS): the relay is expected on a trusted network or localhost.
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&target.host)
            .port(target.port)
            .timeout(Some(Duration::from_secs(10)));
        if let Some((user, password)) = target.credentials {
            builder = builder.credentials(Credentials::new(user, password));
        }
        let transport = builder.build();
        Ok(Some(Self {
            transport,
            config: config.clone(),
        }))
    }

    fn backoff(&self, attempts: i32) -> Duration {
        let factor = 2u32.saturating_pow(attempts.clamp(0, 20) as u32);
        self.config
            .retry_base
            .saturating_mul(factor)
            .min(self.config.retry_max)
    }

    async fn send(&self, row: &OutboxRow) -> Result<(), String> {
        let to: Mailbox = row
            .recipient
            .parse()
            .map_err(|e| format!("bad recipient address: {e}"))?;
        let message = Message::builder()
            .from(self.config.from.clone())
            .to(to)
            .subject(&row.subject)
            .message_id(Some(format!("<outbox-{}@proposal-callback>", row.id)))
            .header(ContentType::TEXT_PLAIN)
            .body(row.body.clone())
            .map_err(|e| format!("cannot build the message: {e}"))?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| format!("SMTP: {e}"))
    }

    /// Sends what is due in one batch; returns how many were sent.
    pub async fn run_once(&self, pool: &Pool) -> Result<usize, Error> {
        let mut conn = pool.get().await?;
        conn.transaction::<_, Error, _>(async |conn| {
            let rows = outbox::claim_due(conn, BATCH).await?;
            let mut sent = 0;
            for row in rows {
                match self.send(&row).await {
                    Ok(()) => {
                        outbox::mark_sent(conn, row.id).await?;
                        tracing::info!(email = row.id, "email sent");
                        sent += 1;
                    }
                    Err(why) => {
                        let delay = self.backoff(row.attempts);
                        let next = chrono::Utc::now()
                            + chrono::Duration::from_std(delay)
                                .unwrap_or(chrono::Duration::seconds(600));
                        tracing::warn!(email = row.id, attempts = row.attempts + 1, retry_in_ms = delay.as_millis() as u64, error = %why, "email not sent; will retry");
                        outbox::mark_retry(conn, row.id, &why, next).await?;
                    }
                }
            }
            Ok(sent)
        })
        .await
    }

    /// Runs until the process ends. Database outages are logged and waited out.
    pub async fn run(self, pool: Pool) {
        loop {
            match self.run_once(&pool).await {
                // A full batch: there may be more due right away.
                Ok(n) if n as i64 >= BATCH => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "email worker: database not reachable"),
            }
            tokio::time::sleep(self.config.poll_interval).await;
        }
    }
}

/// Starts the worker inside `serve`, or says why mail stays queued.
pub async fn start(pool: &Pool, config: &EmailConfig) -> anyhow::Result<()> {
    match Mailer::new(config)? {
        Some(mailer) => {
            tracing::info!(from = %config.from, "email worker started");
            tokio::spawn(mailer.run(pool.clone()));
        }
        None => {
            let queued = match pool.get().await {
                Ok(mut conn) => outbox::count_queued(&mut conn).await.ok(),
                Err(_) => None,
            };
            tracing::warn!(
                ?queued,
                "SMTP_URL is not set: emails stay queued in the outbox and are sent once it is"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insurer::Requirement;
    use std::collections::HashMap;

    fn callback(status: Status, note: Option<&str>, reqs: Vec<Requirement>) -> Callback {
        Callback {
            proposal_id: "P1".into(),
            status,
            event_id: None,
            occurred_at: None,
            note: note.map(str::to_owned),
            requirements: reqs,
        }
    }

    #[test]
    fn pending_says_what_the_insurer_asks_for() {
        let e = compose(
            "99121",
            Status::Pending,
            &callback(
                Status::Pending,
                Some("Aguardando documentos"),
                vec![Requirement {
                    document: "RG".into(),
                    description: "Documento de identidade do fiador".into(),
                }],
            ),
        );
        assert_eq!(e.subject, "Proposal 99121: pending");
        assert_eq!(
            e.body,
            "Proposal 99121 is now pending.\n\nThe insurer asks for:\n- Aguardando documentos\n- RG: Documento de identidade do fiador\n"
        );
    }

    #[test]
    fn approved_names_the_proposal_and_status() {
        let e = compose(
            "548812",
            Status::Approved,
            &callback(Status::Approved, None, vec![]),
        );
        assert_eq!(e.subject, "Proposal 548812: approved");
        assert_eq!(e.body, "Proposal 548812 is now approved.\n");
    }

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
