//! The outbox worker: sends the emails transitions queued (docs/proposal-callback.md,
//! "Email").
//!
//! One email at a time, each in three short steps that hold no transaction across the SMTP
//! conversation: claim it ([`outbox::claim_next`]: a lease, committed at once; several
//! replicas never take one row together), hand it to the relay, mark it sent (or schedule a
//! retry with a doubling delay, or mark it refused for good). A crash between the relay's
//! answer and the mark sends that one email again once its lease is over: SMTP offers no
//! exactly-once, so each message carries a `Message-ID` given at its first attempt and kept
//! for every later one (`<uuid@domain of its sender>`), which lets mail systems recognise the
//! repeat. Its `From` (and `Reply-To`) is its tenant's sender as it was when it was queued
//! (`EMAIL_FROM` without one).
//!
//! **One connection for a burst.** The emails due together go over one SMTP session: one
//! connection, one TLS handshake, one login, then MAIL, RCPT, DATA per email (RSET after a
//! refused one). `run` keeps the session while full rounds follow each other and says QUIT
//! when the outbox has nothing more due. lettre's pooled transport would also reuse
//! connections, but its errors do not say which command the relay refused (a 535 to AUTH and
//! a 550 to RCPT are both "permanent"), and only that tells an email the relay refuses from a
//! relay that refuses us; so the session is driven here through lettre's connection, one
//! command at a time.
//!
//! **Who is refused.** A 5xx answer to an email's recipient or content (RCPT, DATA, the
//! message) ends that email as `failed` with the relay's text, for an operator to retry; a
//! 4xx answer to them retries it with the backoff. Anything else is the relay's trouble, not
//! the email's: connecting, TLS, EHLO (`SMTP_HELO_NAME`), AUTH (a wrong password), the sender
//! refused (at MAIL FROM, or at RCPT as Postfix does: enhanced codes 5.1.7, 5.1.8, 5.7.1
//! naming the sender, or two emails of a session refused with one reply; [`SENDER_REFUSED`]),
//! no answer, a broken connection. Then the email is retried with its backoff and the
//! worker does not connect again before the relay's own backoff (the same doubling delay,
//! counted over consecutive failures) is over: a wrong password costs one login per backoff
//! step, never one per queued email, and a silent relay one `SMTP_TIMEOUT`.
//!
//! Every step of the SMTP conversation has a time limit (`SMTP_TIMEOUT`): a relay that
//! accepts the connection and never answers fails the attempt like a refusal does.
//!
//! The connection is secured as `SMTP_URL` says ([`Security`]): implicit TLS, or STARTTLS
//! before anything else is said (a relay that does not offer it gets nothing), with the
//! relay's certificate checked against the public roots and `SMTP_TLS_CA_FILE`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::Clock;
use common::db::Pool;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, Certificate, TlsParameters};
use lettre::transport::smtp::commands::Rset;
use lettre::transport::smtp::extension::ClientId;
use secrecy::ExposeSecret;

use crate::email::config::{EmailConfig, Security, SmtpTarget};
use crate::error::Error;
use crate::metrics::OutboxMetrics;
use crate::store::outbox::{self, OutboxRow};

mod smtp;
pub use smtp::{AutoResponseSuppress, AutoSubmitted, SENDER_REFUSED};
use smtp::{Failure, step};

/// Sends the outbox. Cheap to clone; the clones share the relay's backoff.
#[derive(Clone)]
pub struct Mailer {
    target: SmtpTarget,
    /// The relay's name to check its certificate against, and the roots to trust; none for
    /// plain SMTP.
    tls: Option<TlsParameters>,
    hello: ClientId,
    config: EmailConfig,
    /// The right-hand side of every `Message-ID`: `EMAIL_FROM`'s domain.
    id_domain: String,
    metrics: OutboxMetrics,
    /// What "due", "sent at" and "retry at" are measured by.
    clock: Clock,
    /// When the worker may connect to the relay again after it failed us.
    relay: Arc<Mutex<RelayBackoff>>,
}

/// The relay's own backoff: consecutive failures to reach it (or to be let in), and the time
/// before which the worker does not connect again.
#[derive(Debug, Default)]
struct RelayBackoff {
    failures: i32,
    until: Option<DateTime<Utc>>,
}

/// How many emails one round handles at most before it looks again.
const BATCH: usize = 10;

/// The timed steps of one email's conversation, at most: connect (TCP, TLS for `smtps://`,
/// greeting, EHLO), STARTTLS (and EHLO again), AUTH, the message (MAIL, RCPT, DATA), RSET.
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
            hello: config.hello.clone(),
            id_domain: config.from.email.domain().to_ascii_lowercase(),
            config: config.clone(),
            metrics: OutboxMetrics::new(),
            clock: Clock::system(),
            relay: Arc::default(),
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

    /// The delay after `failures` failures in a row: `EMAIL_RETRY_BASE` after the first,
    /// doubling, at most `EMAIL_RETRY_MAX`.
    fn backoff(&self, failures: i32) -> Duration {
        let factor = 2u32.saturating_pow((failures - 1).clamp(0, 20) as u32);
        self.config
            .retry_base
            .saturating_mul(factor)
            .min(self.config.retry_max)
    }

    fn later(&self, delay: Duration) -> DateTime<Utc> {
        self.clock.now() + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::MAX)
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

    /// The unique left part of a new `Message-ID` (RFC 5322 section 3.6.4): a random UUID,
    /// put at the sender's domain (`EMAIL_FROM`'s for an email without a sender of its own)
    /// when the email is first claimed.
    fn new_message_unique() -> String {
        uuid::Uuid::new_v4().to_string()
    }

    /// Whether the relay's backoff keeps the worker off it at the moment.
    fn relay_waiting(&self) -> bool {
        let relay = self.relay.lock().unwrap_or_else(|p| p.into_inner());
        relay.until.is_some_and(|until| self.clock.now() < until)
    }

    /// The relay failed us once more: no connection before its backoff is over.
    fn relay_failed(&self) -> Duration {
        let mut relay = self.relay.lock().unwrap_or_else(|p| p.into_inner());
        relay.failures = relay.failures.saturating_add(1);
        let delay = self.backoff(relay.failures);
        relay.until = Some(self.later(delay));
        delay
    }

    fn relay_answered(&self) {
        *self.relay.lock().unwrap_or_else(|p| p.into_inner()) = RelayBackoff::default();
    }

    /// A new session: connected, secured, logged in; each step bounded by `SMTP_TIMEOUT`.
    async fn open(&self) -> Result<AsyncSmtpConnection, String> {
        let limit = self.config.smtp_timeout;
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
            if let Err(e) = step(
                "AUTH",
                limit,
                conn.auth(&[Mechanism::Plain, Mechanism::Login], &credentials),
            )
            .await
            {
                conn.abort().await;
                return Err(e);
            }
        }
        Ok(conn)
    }

    /// The open session, or a new one (connected, secured, logged in).
    async fn session<'s>(
        &self,
        session: &'s mut Option<AsyncSmtpConnection>,
    ) -> Result<&'s mut AsyncSmtpConnection, String> {
        if session.is_none() {
            *session = Some(self.open().await?);
        }
        Ok(session.as_mut().expect("a session is open"))
    }

    /// Sends one claimed email over `session` (opened first when there is none).
    async fn attempt(
        &self,
        row: &OutboxRow,
        session: &mut Option<AsyncSmtpConnection>,
    ) -> Result<(), Failure> {
        match smtp::message(row, &self.config.from) {
            Err(e) => Err(Failure::Permanent(e)),
            Ok(message) => match self.session(session).await {
                Ok(conn) => smtp::transmit(conn, &message, self.config.smtp_timeout).await,
                Err(why) => Err(Failure::Relay(why)),
            },
        }
    }

    /// Records the outcome of a claimed email's attempt on its row: `Some(sent)`, or `None`
    /// when the relay failed us (the round ends there).
    async fn record(
        &self,
        pool: &Pool,
        row: &OutboxRow,
        outcome: Result<(), Failure>,
        session: &mut Option<AsyncSmtpConnection>,
    ) -> Result<Option<bool>, Error> {
        match &outcome {
            Err(Failure::Relay(_)) => self.metrics.attempts_failed.inc(),
            Err(_) => {
                // A refusal of this email (or one that cannot be built) says nothing against
                // the relay.
                self.relay_answered();
                self.metrics.attempts_failed.inc();
            }
            // Only a relay that took a message ends its backoff: one that lets us log in and
            // then refuses every sender (MAIL FROM) keeps backing off.
            Ok(()) => self.relay_answered(),
        }
        let mut conn = pool.get().await?;
        match outcome {
            Ok(()) => {
                self.metrics.sent.inc();
                if let Err(e) = outbox::mark_sent(&mut conn, row.id, self.clock.now()).await {
                    tracing::error!(email = row.id, error = %e, "email sent but not marked sent; it is sent again once its lease ends");
                    return Err(e.into());
                }
                tracing::info!(email = row.id, attempts = row.attempts, message_id = %row.message_id, "email sent");
                Ok(Some(true))
            }
            Err(Failure::Relay(why)) => {
                if let Some(mut broken) = session.take() {
                    broken.abort().await;
                }
                let delay = self.backoff(row.attempts);
                let relay_in = self.relay_failed();
                tracing::warn!(email = row.id, attempts = row.attempts, retry_in_ms = delay.as_millis() as u64, relay_retry_in_ms = relay_in.as_millis() as u64, error = %why, "email not sent; will retry");
                outbox::mark_retry(&mut conn, row.id, &why, self.later(delay)).await?;
                Ok(None)
            }
            Err(Failure::Transient(why)) => {
                let delay = self.backoff(row.attempts);
                tracing::warn!(email = row.id, attempts = row.attempts, retry_in_ms = delay.as_millis() as u64, error = %why, "email not sent; will retry");
                outbox::mark_retry(&mut conn, row.id, &why, self.later(delay)).await?;
                drop(conn);
                self.reset(session).await;
                Ok(Some(false))
            }
            Err(Failure::Permanent(why) | Failure::RcptRefused { text: why, .. }) => {
                tracing::warn!(email = row.id, attempts = row.attempts, error = %why, "email refused for good; not retried (an operator may retry it)");
                outbox::mark_failed(&mut conn, row.id, &why, self.clock.now()).await?;
                drop(conn);
                self.reset(session).await;
                Ok(Some(false))
            }
        }
    }

    /// After a refused email: RSET ends its transaction so the session takes the next one;
    /// a session that does not answer is dropped (the next email opens another).
    async fn reset(&self, session: &mut Option<AsyncSmtpConnection>) {
        if let Some(conn) = session.as_mut()
            && let Err(e) = step("RSET", self.config.smtp_timeout, conn.command(Rset)).await
        {
            tracing::debug!(error = %e, "SMTP session dropped after RSET failed");
            if let Some(mut broken) = session.take() {
                broken.abort().await;
            }
        }
    }

    /// Ends the session with QUIT (a slow or failed QUIT changes nothing: every message was
    /// answered already).
    async fn close(&self, session: &mut Option<AsyncSmtpConnection>) {
        if let Some(mut conn) = session.take()
            && let Err(e) = step("QUIT", self.config.smtp_timeout, conn.quit()).await
        {
            tracing::debug!(error = %e, "SMTP QUIT at the end of a session");
        }
    }

    /// One round over `session`: up to a batch of due emails, each claimed, sent and marked
    /// on its own, none twice. Nothing while the relay's backoff runs; stops at the first
    /// failure of the relay. How many were handled and how many of them sent.
    async fn round(
        &self,
        pool: &Pool,
        session: &mut Option<AsyncSmtpConnection>,
    ) -> Result<(usize, usize), Error> {
        let (mut handled, mut sent) = (0, 0);
        if self.relay_waiting() {
            return Ok((handled, sent));
        }
        let mut seen = Vec::with_capacity(BATCH);
        // The first email whose recipient the session refused (5xx) before any other email
        // went otherwise: held until the next one tells whether the relay refuses every
        // recipient alike (its refusal of the sender) or only this one.
        let mut held: Option<(OutboxRow, String, String)> = None;
        let mut told = false;
        while handled < BATCH {
            let row = {
                let mut conn = pool.get().await?;
                let unique = Self::new_message_unique();
                let (now, lease) = (self.clock.now(), self.lease());
                outbox::claim_next(&mut conn, now, lease, &seen, &unique, &self.id_domain).await?
            };
            let Some(row) = row else { break };
            seen.push(row.id);
            handled += 1;
            let outcome = self.attempt(&row, session).await;
            if let Err(Failure::RcptRefused { text, reply }) = &outcome
                && !told
            {
                match held.take() {
                    None => {
                        self.reset(session).await;
                        held = Some((row, text.clone(), reply.clone()));
                        continue;
                    }
                    Some((first, _, first_reply)) if first_reply == *reply => {
                        // Two emails, two recipients, one reply: the relay refuses the sender.
                        let why = format!(
                            "{SENDER_REFUSED} (every recipient refused with the same reply): {text}"
                        );
                        self.record(pool, &first, Err(Failure::Transient(why.clone())), session)
                            .await?;
                        self.record(pool, &row, Err(Failure::Relay(why)), session)
                            .await?;
                        break;
                    }
                    Some((first, first_text, _)) => {
                        self.record(pool, &first, Err(Failure::Permanent(first_text)), session)
                            .await?;
                    }
                }
            }
            if let Some((first, first_text, _)) = held.take() {
                // The next email went otherwise: the refusal was the first one's recipient's.
                self.record(pool, &first, Err(Failure::Permanent(first_text)), session)
                    .await?;
            }
            told = true;
            match self.record(pool, &row, outcome, session).await? {
                Some(true) => sent += 1,
                Some(false) => {}
                None => break,
            }
        }
        if let Some((first, first_text, _)) = held.take() {
            // Alone in its session: nothing tells it from a bad recipient.
            self.record(pool, &first, Err(Failure::Permanent(first_text)), session)
                .await?;
        }
        Ok((handled, sent))
    }

    /// Sends what is due (up to a batch) over one session; returns how many were sent.
    pub async fn run_once(&self, pool: &Pool) -> Result<usize, Error> {
        let mut session = None;
        let result = self.round(pool, &mut session).await;
        self.close(&mut session).await;
        result.map(|(_, sent)| sent)
    }

    /// Sends everything due over one session: rounds follow each other while they are full
    /// (there may be more due right away), then the session ends with QUIT. How many were
    /// sent.
    pub async fn drain(&self, pool: &Pool) -> Result<usize, Error> {
        let mut session = None;
        let mut sent = 0;
        let result = loop {
            match self.round(pool, &mut session).await {
                Ok((handled, n)) => {
                    sent += n;
                    if handled < BATCH {
                        break Ok(sent);
                    }
                }
                Err(e) => break Err(e),
            }
        };
        self.close(&mut session).await;
        result
    }

    /// Runs until the process ends: [`Mailer::drain`], then a wait of
    /// `EMAIL_POLL_INTERVAL`, again and again. Database outages are logged and waited out.
    pub async fn run(self, pool: Pool) {
        loop {
            if let Err(e) = self.drain(&pool).await {
                tracing::warn!(error = %e, "email worker: database not reachable");
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
    metrics.failed.set(stats.failed);
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
            if !mailer.id_domain.contains('.') {
                tracing::warn!(
                    from = %config.from,
                    "EMAIL_FROM's domain is not a fully qualified domain name: receiving \
                     systems score such a sender (and the Message-IDs made from it) as spam \
                     or refuse it; set EMAIL_FROM to the tenant's real address"
                );
            }
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
