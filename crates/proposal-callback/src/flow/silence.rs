//! The silence watch (docs/proposal-callback.md, "Silent insurers"): every
//! `SILENCE_CHECK_INTERVAL`, each replica looks at every integration's last callback; a
//! silence past its threshold (`domain::silence`) is flagged, and a flagged one whose
//! insurer called back is cleared. Each flag and each clearing is one row written under a
//! unique index or a conditional update (`store::silences`), with the operator's email queued
//! in the same transaction: however many replicas check at once, one of them flags an episode
//! and one clears it, so the operator gets one email each way. The gauge
//! `proposal_callback_integration_silent` is set from what the database says, the same on
//! every replica.
//!
//! Only silences past the floor need the integration's rhythm, so a busy, healthy
//! integration costs one index lookup per round; the threshold of a silence is learned once
//! (its start does not move while it lasts) and kept in memory until the silence ends.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::Clock;
use common::db::Pool;
use diesel_async::{AsyncConnection, AsyncPgConnection};

use crate::domain::insurer::Insurer;
use crate::domain::silence::{
    SilenceNotice, SilenceRule, Slot, Threshold, resumed_email, silent_email,
};
use crate::domain::zone;
use crate::error::Error;
use crate::metrics;
use crate::store::outbox;
use crate::store::silences::{self, NewSilence, SilenceRow, Watched};

/// `SILENCE_CHECK_INTERVAL` when unset.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// The watch's settings (read by `crate::settings`).
#[derive(Debug, Clone, PartialEq)]
pub struct WatchConfig {
    /// Between two rounds (`SILENCE_CHECK_INTERVAL`).
    pub interval: Duration,
    pub rule: SilenceRule,
    /// The console's integrations page, linked from the operator's emails.
    pub console_url: String,
}

/// What one round saw and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Round {
    /// Silences this round flagged (their ids).
    pub flagged: Vec<i64>,
    /// Silences this round cleared.
    pub cleared: Vec<i64>,
    /// Operator emails this round queued.
    pub emails: usize,
    /// Integrations silent after the round.
    pub silent: Vec<i64>,
}

/// The watch of one replica: its settings and the thresholds of the silences going on.
pub struct SilenceWatch {
    config: WatchConfig,
    thresholds: HashMap<(i64, DateTime<Utc>), Threshold>,
}

impl SilenceWatch {
    pub fn new(config: WatchConfig) -> Self {
        Self {
            config,
            thresholds: HashMap::new(),
        }
    }

    /// One round at `clock`'s now.
    pub async fn check_once(&mut self, pool: &Pool, clock: &Clock) -> Result<Round, Error> {
        let mut conn = pool.get().await?;
        let now = clock.now();
        let mut round = Round::default();
        let mut going_on = HashSet::new();
        let mut gauge: BTreeMap<(String, Insurer), bool> = BTreeMap::new();
        for w in silences::watched(&mut conn, None).await? {
            let silent = self
                .judge(&mut conn, &w, now, &mut round, &mut going_on)
                .await?;
            if silent {
                round.silent.push(w.integration_id);
            }
            // Only integrations that have called back are watched (and get a series).
            if w.last_callback_at.is_some() {
                *gauge.entry((w.tenant_id, w.insurer)).or_default() |= silent;
            }
        }
        self.thresholds.retain(|key, _| going_on.contains(key));
        for ((tenant, insurer), silent) in gauge {
            metrics::set_integration_silent(&tenant, insurer, silent);
        }
        Ok(round)
    }

    /// Whether `w` is silent after this round (flagging or clearing it as it finds).
    async fn judge(
        &mut self,
        conn: &mut AsyncPgConnection,
        w: &Watched,
        now: DateTime<Utc>,
        round: &mut Round,
        going_on: &mut HashSet<(i64, DateTime<Utc>)>,
    ) -> Result<bool, Error> {
        let Some(last) = w.last_callback_at else {
            // Never called back: no rhythm to judge.
            return Ok(false);
        };
        if let (Some(id), Some(since)) = (w.open_silence, w.silent_since) {
            if last <= since {
                return Ok(true);
            }
            if let Some(row) = self.clear(conn, w, id, now, round).await? {
                round.cleared.push(row.id);
            }
            return Ok(false);
        }
        let rule = self.config.rule;
        if !rule.past_floor(last, now) {
            return Ok(false);
        }
        let key = (w.integration_id, last);
        going_on.insert(key);
        let threshold = match self.thresholds.get(&key) {
            Some(t) => *t,
            None => {
                let from = chrono::Duration::from_std(rule.learning_window)
                    .ok()
                    .and_then(|window| now.checked_sub_signed(window))
                    .unwrap_or(DateTime::<Utc>::MIN_UTC);
                let gaps = silences::gaps(
                    conn,
                    w.integration_id,
                    Slot::of(last, zone::stored(&w.time_zone)),
                    from,
                    now,
                )
                .await?;
                let t = rule.threshold(&gaps);
                self.thresholds.insert(key, t);
                t
            }
        };
        if !threshold.is_passed(last, now) {
            return Ok(false);
        }
        if let Some(id) = self.flag(conn, w, last, threshold, now, round).await? {
            round.flagged.push(id);
        }
        Ok(true)
    }

    fn notice<'a>(&'a self, w: &'a Watched, row: &SilenceRow) -> SilenceNotice<'a> {
        SilenceNotice {
            tenant_name: &w.tenant_name,
            insurer: w.insurer,
            environment: &w.environment,
            since: row.since,
            flagged_at: row.flagged_at,
            threshold_seconds: row.threshold_seconds,
            usual_gap_seconds: row.usual_gap_seconds,
            from: row.learned_from,
            console_url: &self.config.console_url,
            zone: zone::stored(&w.time_zone),
        }
    }

    /// Opens the silence of `w` that began at `since`, and queues the operator's email, in
    /// one transaction; the silence's id when this replica opened it.
    async fn flag(
        &self,
        conn: &mut AsyncPgConnection,
        w: &Watched,
        since: DateTime<Utc>,
        threshold: Threshold,
        now: DateTime<Utc>,
        round: &mut Round,
    ) -> Result<Option<i64>, Error> {
        let Threshold::Learned {
            seconds,
            usual_gap_seconds,
            from,
            samples,
        } = threshold
        else {
            return Ok(None);
        };
        let new = NewSilence {
            integration_id: w.integration_id,
            since,
            flagged_at: now,
            threshold_seconds: seconds,
            usual_gap_seconds,
            learned_from: from,
            samples,
        };
        let emailed = conn
            .transaction::<_, Error, _>(async |conn| {
                let Some(id) = silences::open(conn, &new).await? else {
                    return Ok(None);
                };
                let row = SilenceRow {
                    id,
                    integration_id: w.integration_id,
                    since,
                    flagged_at: now,
                    threshold_seconds: seconds,
                    usual_gap_seconds,
                    learned_from: from,
                    samples: i32::try_from(samples).unwrap_or(i32::MAX),
                    ended_at: None,
                    cleared_at: None,
                    alert_email_id: None,
                    resume_email_id: None,
                };
                let email = match &w.operator_email {
                    Some(to) => {
                        let email = silent_email(&self.notice(w, &row))
                            .map_err(|e| Error::Internal(format!("rendering an email: {e}")))?;
                        let email_id =
                            outbox::enqueue_operator(conn, &w.tenant_id, to, &email, now).await?;
                        silences::set_email(conn, id, email_id, true).await?;
                        Some(email_id)
                    }
                    None => None,
                };
                Ok(Some((id, email)))
            })
            .await?;
        let Some((id, email)) = emailed else {
            return Ok(None);
        };
        round.emails += usize::from(email.is_some());
        tracing::warn!(
            integration = w.integration_id,
            tenant = %w.tenant_id,
            insurer = %w.insurer,
            since = %since,
            threshold_seconds = seconds,
            email = email,
            "integration silent: no callback for longer than its rhythm allows"
        );
        if email.is_none() {
            tracing::warn!(tenant = %w.tenant_id, "the tenant has no operator address: nobody was emailed (PATCH /admin/tenant)");
        }
        Ok(Some(id))
    }

    /// Closes `w`'s open silence `id` (a callback arrived after its start) and queues the
    /// operator's second email, in one transaction; the row when this replica closed it.
    async fn clear(
        &self,
        conn: &mut AsyncPgConnection,
        w: &Watched,
        id: i64,
        now: DateTime<Utc>,
        round: &mut Round,
    ) -> Result<Option<SilenceRow>, Error> {
        let closed = conn
            .transaction::<_, Error, _>(async |conn| {
                let Some(row) = silences::close(conn, id, now).await? else {
                    return Ok(None);
                };
                let ended = row.ended_at.unwrap_or(now);
                let email = match &w.operator_email {
                    Some(to) => {
                        let email = resumed_email(&self.notice(w, &row), ended)
                            .map_err(|e| Error::Internal(format!("rendering an email: {e}")))?;
                        let email_id =
                            outbox::enqueue_operator(conn, &w.tenant_id, to, &email, now).await?;
                        silences::set_email(conn, id, email_id, false).await?;
                        Some(email_id)
                    }
                    None => None,
                };
                Ok(Some((row, email)))
            })
            .await?;
        let Some((row, email)) = closed else {
            return Ok(None);
        };
        round.emails += usize::from(email.is_some());
        tracing::info!(
            integration = w.integration_id,
            tenant = %w.tenant_id,
            insurer = %w.insurer,
            since = %row.since,
            ended_at = %row.ended_at.unwrap_or(now),
            email = email,
            "integration callbacks resumed"
        );
        Ok(Some(row))
    }
}

/// Starts the watch inside `serve`: a round now, then one every `interval`.
pub fn start(pool: &Pool, clock: &Clock, config: WatchConfig) {
    let pool = pool.clone();
    let clock = clock.clone();
    tracing::info!(
        interval = ?config.interval,
        k = config.rule.k,
        floor = ?config.rule.floor,
        learning_window = ?config.rule.learning_window,
        "silence watch started"
    );
    let interval = config.interval;
    let mut watch = SilenceWatch::new(config);
    tokio::spawn(async move {
        loop {
            if let Err(e) = watch.check_once(&pool, &clock).await {
                tracing::warn!(error = %e, "silence watch: database not reachable");
            }
            tokio::time::sleep(interval).await;
        }
    });
}
