//! The outbox worker: sends the emails transitions queued (docs/proposal-callback.md,
//! "Email").
//!
//! One email at a time, each in three short steps that hold no transaction across the SMTP
//! conversation: claim it ([`outbox::claim_next`]: a lease, committed at once; several
//! replicas never take one row together), hand it to the relay, mark it sent (or schedule a
//! retry with a doubling delay). A crash between the relay's answer and the mark sends that
//! one email again once its lease is over: SMTP offers no exactly-once, so each message
//! carries a Message-ID derived from its outbox row, which lets mail systems drop the repeat.
//!
//! Every step of the SMTP conversation has a time limit (`SMTP_TIMEOUT`): a relay that
//! accepts the connection and never answers fails the attempt like a refusal does.
//!
//! The connection is secured as `SMTP_URL` says ([`Security`]): implicit TLS, or STARTTLS
//! before anything else is said (a relay that does not offer it gets nothing), with the
//! relay's certificate checked against the public roots and `SMTP_TLS_CA_FILE`.

use std::time::Duration;

use common::Clock;
use common::db::Pool;
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, Certificate, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use secrecy::ExposeSecret;

use crate::email::config::{EmailConfig, Security, SmtpTarget};
use crate::error::Error;
use crate::metrics::OutboxMetrics;
use crate::store::outbox::{self, OutboxRow};

/// Sends the outbox. Cheap to clone.
#[derive(Clone)]
pub struct Mailer {
    target: SmtpTarget,
    /// The relay's name to check its certificate against, and the roots to trust; none for
    /// plain SMTP.
    tls: Option<TlsParameters>,
    hello: ClientId,
    config: EmailConfig,
    metrics: OutboxMetrics,
    /// What "due", "sent at" and "retry at" are measured by.
    clock: Clock,
}

/// How many emails one round handles at most before it looks again.
const BATCH: usize = 10;

/// The timed steps of one conversation: connect (TCP, TLS for `smtps://`, greeting, EHLO),
/// STARTTLS (and EHLO again), AUTH, the message (MAIL, RCPT, DATA), QUIT.
const STEPS: u32 = 5;

/// How often [`watch_queue`] reads the outbox for `/metrics`.
pub const QUEUE_METRICS_EVERY: Duration = Duration::from_secs(5);

impl Mailer {
    /// None without `SMTP_URL`.
    pub fn new(config: &EmailConfig) -> Result<Option<Self>, Error> {
        let Some(url) = &config.smtp_url else {
            return Ok(None);
        };
        let target = SmtpTarget::parse(url.expose_secret())
            .map_err(|e| Error::Internal(format!("SMTP_URL: {e}")))?;
        let tls = match target.security {
            Security::Plain => None,
            Security::StartTls | Security::Implicit => {
                let mut tls = TlsParameters::builder(target.host.clone());
                if let Some(pem) = &config.tls_ca_pem {
                    let ca = Certificate::from_pem(pem)
                        .map_err(|e| Error::Internal(format!("SMTP_TLS_CA_FILE: {e}")))?;
                    tls = tls.add_root_certificate(ca);
                }
                Some(
                    tls.build_rustls()
                        .map_err(|e| Error::Internal(format!("SMTP TLS settings: {e}")))?,
                )
            }
        };
        Ok(Some(Self {
            target,
            tls,
            hello: ClientId::default(),
            config: config.clone(),
            metrics: OutboxMetrics::new(),
            clock: Clock::system(),
        }))
    }

    /// Asks `clock` for the time (`serve` gives the service's clock; tests a manual one).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Counts into `metrics` (the ones registered for `/metrics`).
    pub fn with_metrics(mut self, metrics: OutboxMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    pub fn metrics(&self) -> &OutboxMetrics {
        &self.metrics
    }

    fn backoff(&self, attempts: i32) -> Duration {
        // `attempts` includes the one that just failed; the first retry waits `retry_base`.
        let factor = 2u32.saturating_pow((attempts - 1).clamp(0, 20) as u32);
        self.config
            .retry_base
            .saturating_mul(factor)
            .min(self.config.retry_max)
    }

    /// How long a claim keeps other workers off a row: longer than the slowest conversation
    /// the timeouts allow, so only a dead worker's email is taken over.
    pub fn lease(&self) -> Duration {
        self.config.smtp_timeout.saturating_mul(STEPS + 1)
    }

    /// The relay this mailer sends to (for the logs: no credentials).
    pub fn target(&self) -> &SmtpTarget {
        &self.target
    }

    /// The message of an outbox row: text and HTML alternatives (text only for rows queued
    /// before emails had an HTML part). lettre encodes the subject (RFC 2047) and the bodies
    /// (quoted-printable or base64) so that any UTF-8 text travels intact.
    fn message(&self, row: &OutboxRow) -> Result<Message, String> {
        let to: Mailbox = row
            .recipient
            .parse()
            .map_err(|e| format!("bad recipient address: {e}"))?;
        let builder = Message::builder()
            .from(self.config.from.clone())
            .to(to)
            .subject(&row.subject)
            .message_id(Some(format!("<outbox-{}@proposal-callback>", row.id)));
        match &row.html_body {
            Some(html) => builder.multipart(MultiPart::alternative_plain_html(
                row.body.clone(),
                html.clone(),
            )),
            None => builder
                .header(ContentType::TEXT_PLAIN)
                .body(row.body.clone()),
        }
        .map_err(|e| format!("cannot build the message: {e}"))
    }

    /// One SMTP conversation, each step bounded by `SMTP_TIMEOUT`. Ok once the relay has
    /// accepted the message (a slow or failed QUIT after that changes nothing).
    async fn deliver(&self, message: &Message) -> Result<(), String> {
        let limit = self.config.smtp_timeout;
        async fn step<T>(
            what: &str,
            limit: Duration,
            fut: impl Future<Output = Result<T, lettre::transport::smtp::Error>>,
        ) -> Result<T, String> {
            match tokio::time::timeout(limit, fut).await {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(format!("SMTP {what}: {e}")),
                Err(_) => Err(format!("SMTP {what}: no answer within {limit:?}")),
            }
        }
        let implicit_tls = match self.target.security {
            Security::Implicit => self.tls.clone(),
            Security::Plain | Security::StartTls => None,
        };
        let mut conn = step(
            "connect (greeting, EHLO)",
            limit,
            AsyncSmtpConnection::connect_tokio1(
                (self.target.host.as_str(), self.target.port),
                Some(limit),
                &self.hello,
                implicit_tls,
                None,
            ),
        )
        .await?;
        if let (Security::StartTls, Some(tls)) = (self.target.security, &self.tls) {
            // Required, not opportunistic: without it nothing (credentials, message) is sent.
            if !conn.can_starttls() {
                conn.abort().await;
                return Err(
                    "SMTP STARTTLS: the relay does not offer STARTTLS; nothing was sent".into(),
                );
            }
            step("STARTTLS", limit, conn.starttls(tls.clone(), &self.hello)).await?;
        }
        if let Some((user, password)) = &self.target.credentials {
            let credentials = Credentials::new(user.clone(), password.clone());
            step(
                "AUTH",
                limit,
                conn.auth(&[Mechanism::Plain, Mechanism::Login], &credentials),
            )
            .await?;
        }
        step(
            "message (MAIL, RCPT, DATA)",
            limit,
            conn.send(message.envelope(), &message.formatted()),
        )
        .await?;
        if let Err(e) = step("QUIT", limit, conn.quit()).await {
            tracing::debug!(error = %e, "SMTP QUIT after a delivered message");
        }
        Ok(())
    }

    /// Sends one claimed email and records the outcome on its row; whether it was sent.
    async fn send_claimed(&self, pool: &Pool, row: &OutboxRow) -> Result<bool, Error> {
        let outcome = match self.message(row) {
            Ok(message) => self.deliver(&message).await,
            Err(e) => Err(e),
        };
        let mut conn = pool.get().await?;
        match outcome {
            Ok(()) => {
                self.metrics.sent.inc();
                if let Err(e) = outbox::mark_sent(&mut conn, row.id, self.clock.now()).await {
                    tracing::error!(email = row.id, error = %e, "email sent but not marked sent; it is sent again once its lease ends");
                    return Err(e.into());
                }
                tracing::info!(email = row.id, attempts = row.attempts, "email sent");
                Ok(true)
            }
            Err(why) => {
                self.metrics.attempts_failed.inc();
                let delay = self.backoff(row.attempts);
                let next = self.clock.now()
                    + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::seconds(600));
                tracing::warn!(email = row.id, attempts = row.attempts, retry_in_ms = delay.as_millis() as u64, error = %why, "email not sent; will retry");
                outbox::mark_retry(&mut conn, row.id, &why, next).await?;
                Ok(false)
            }
        }
    }

    /// One round: up to a batch of due emails, each claimed, sent and marked on its own,
    /// none twice. How many were handled and how many of them sent.
    async fn round(&self, pool: &Pool) -> Result<(usize, usize), Error> {
        let (mut handled, mut sent) = (0, 0);
        let mut seen = Vec::with_capacity(BATCH);
        while handled < BATCH {
            let row = {
                let mut conn = pool.get().await?;
                outbox::claim_next(&mut conn, self.clock.now(), self.lease(), &seen).await?
            };
            let Some(row) = row else { break };
            seen.push(row.id);
            handled += 1;
            if self.send_claimed(pool, &row).await? {
                sent += 1;
            }
        }
        Ok((handled, sent))
    }

    /// Sends what is due (up to a batch); returns how many were sent.
    pub async fn run_once(&self, pool: &Pool) -> Result<usize, Error> {
        self.round(pool).await.map(|(_, sent)| sent)
    }

    /// Runs until the process ends. Database outages are logged and waited out.
    pub async fn run(self, pool: Pool) {
        loop {
            match self.round(&pool).await {
                // A full batch: there may be more due right away.
                Ok((handled, _)) if handled >= BATCH => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "email worker: database not reachable"),
            }
            tokio::time::sleep(self.config.poll_interval).await;
        }
    }
}

/// Reads the outbox's queue into `metrics` once (ages as of `clock`'s now).
pub async fn refresh_queue_metrics(
    pool: &Pool,
    clock: &Clock,
    metrics: &OutboxMetrics,
) -> Result<(), Error> {
    let mut conn = pool.get().await?;
    let stats = outbox::queue_stats(&mut conn, clock.now()).await?;
    metrics.queued.set(stats.queued);
    metrics.oldest_queued_age.set(stats.oldest_age_secs);
    Ok(())
}

/// Keeps the outbox gauges of `/metrics` current, with or without a worker.
pub async fn watch_queue(pool: Pool, clock: Clock, metrics: OutboxMetrics) {
    loop {
        if let Err(e) = refresh_queue_metrics(&pool, &clock, &metrics).await {
            tracing::debug!(error = %e, "outbox metrics not refreshed");
        }
        tokio::time::sleep(QUEUE_METRICS_EVERY).await;
    }
}

/// Starts the worker inside `serve` (or says why mail stays queued), and the outbox gauges.
pub async fn start(
    pool: &Pool,
    clock: &Clock,
    config: &EmailConfig,
    metrics: &OutboxMetrics,
) -> anyhow::Result<()> {
    tokio::spawn(watch_queue(pool.clone(), clock.clone(), metrics.clone()));
    match Mailer::new(config)? {
        Some(mailer) => {
            tracing::info!(from = %config.from, relay = %mailer.target(), smtp_timeout = ?config.smtp_timeout, "email worker started");
            let mailer = mailer
                .with_metrics(metrics.clone())
                .with_clock(clock.clone());
            tokio::spawn(mailer.run(pool.clone()));
        }
        None => {
            let queued = match pool.get().await {
                Ok(mut conn) => outbox::queue_stats(&mut conn, clock.now())
                    .await
                    .ok()
                    .map(|s| s.queued),
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
