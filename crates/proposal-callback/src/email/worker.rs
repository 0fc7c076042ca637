//! The outbox worker: sends the emails transitions queued (docs/proposal-callback.md,
//! "Email").
//!
//! The worker claims due rows with `FOR UPDATE SKIP LOCKED` (several replicas never send one
//! row at once), sends, and marks the row sent in the same transaction. A crash between the
//! SMTP answer and the commit sends that email again: SMTP offers no exactly-once, so each
//! message carries a Message-ID derived from its outbox row, which lets mail systems drop the
//! repeat.

use std::time::Duration;

use common::db::Pool;
use diesel_async::AsyncConnection;
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::ExposeSecret;

use crate::email::config::{EmailConfig, SmtpTarget};
use crate::error::Error;
use crate::store::outbox::{self, OutboxRow};

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
