//! The access log's writer (docs/dispatch-access-log.md): every read of an incident's patient
//! data is recorded off the request path. A route hands its [`Access`] to a bounded queue
//! (`record`, which waits only when the queue is full); one task per process drains the
//! queue into `store::access_log::append`, as many entries per INSERT as have arrived while
//! the previous one ran (at most [`AccessLogSettings::batch`]), and removes the entries past
//! the retention once an hour of the log's own time.

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::db::Pool;
use tokio::sync::{mpsc, oneshot};

use crate::error::Error;
use crate::store::access_log::{self, Access};

/// How long entries are kept when `ACCESS_LOG_RETENTION` is unset: five years.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(5 * 365 * 24 * 3600);
/// Entries waiting before `record` waits for the writer.
pub const QUEUE_CAPACITY: usize = 65_536;
/// The most entries one INSERT carries.
pub const BATCH: usize = 1_000;
/// How often (in the entries' own time) the retention runs.
const PRUNE_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// Pause after a failed write before it is tried again.
const RETRY: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy)]
pub struct AccessLogSettings {
    /// Entries older than this (against the newest entry written) are removed.
    pub retention: Duration,
    pub queue_capacity: usize,
    pub batch: usize,
}

impl Default for AccessLogSettings {
    fn default() -> Self {
        Self {
            retention: DEFAULT_RETENTION,
            queue_capacity: QUEUE_CAPACITY,
            batch: BATCH,
        }
    }
}

enum Message {
    Record(Access),
    /// Answered once everything queued before it is written.
    Flush(oneshot::Sender<()>),
}

/// The routes' handle on the writer; cheap to clone. [`AccessLog::off`] records nothing (the
/// benchmark's baseline).
#[derive(Clone, Debug)]
pub struct AccessLog {
    tx: Option<mpsc::Sender<Message>>,
}

impl AccessLog {
    /// Starts the writer on the current runtime; it ends when the last handle is dropped,
    /// after writing what was queued.
    pub fn start(pool: Pool, settings: AccessLogSettings) -> Self {
        let (tx, rx) = mpsc::channel(settings.queue_capacity.max(1));
        tokio::spawn(write(rx, pool, settings));
        Self { tx: Some(tx) }
    }

    pub fn off() -> Self {
        Self { tx: None }
    }

    pub fn is_on(&self) -> bool {
        self.tx.is_some()
    }

    /// Records that `user_id` read incident `incident_id`'s patient data through `route` at
    /// `at`. Returns at once unless the queue is full.
    pub async fn record(
        &self,
        user_id: i64,
        incident_id: i64,
        route: &'static str,
        at: DateTime<Utc>,
    ) {
        let Some(tx) = &self.tx else { return };
        let access = Access {
            incident_id,
            user_id,
            route,
            at,
        };
        if let Err(e) = tx.try_send(Message::Record(access)) {
            let message = match e {
                mpsc::error::TrySendError::Full(m) | mpsc::error::TrySendError::Closed(m) => m,
            };
            if tx.send(message).await.is_err() {
                tracing::error!(
                    user_id,
                    incident_id,
                    route,
                    "access log writer gone: read not recorded"
                );
            }
        }
    }

    /// Waits until everything recorded before is written (the listings call it first, so
    /// they show this replica's reads up to the moment they are asked).
    pub async fn flush(&self) {
        let Some(tx) = &self.tx else { return };
        let (done, wait) = oneshot::channel();
        if tx.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// The writer: drains the queue in batches until every handle is gone.
async fn write(mut rx: mpsc::Receiver<Message>, pool: Pool, settings: AccessLogSettings) {
    let retention =
        chrono::TimeDelta::from_std(settings.retention).unwrap_or(chrono::TimeDelta::MAX);
    let mut pruned_at: Option<DateTime<Utc>> = None;
    let mut batch: Vec<Access> = Vec::with_capacity(settings.batch);
    let mut flushes: Vec<oneshot::Sender<()>> = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Record(a) => batch.push(a),
                Message::Flush(done) => flushes.push(done),
            }
            if batch.len() < settings.batch {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            append(&pool, &batch).await;
            let newest = batch.iter().map(|a| a.at).max();
            batch.clear();
            if let Some(newest) = newest
                && pruned_at.is_none_or(|p| newest - p >= PRUNE_EVERY)
            {
                pruned_at = Some(newest);
                prune(&pool, newest - retention).await;
            }
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Writes one batch, trying again while the database is unreachable; a batch the database
/// refuses is logged and dropped (it cannot succeed by trying again).
async fn append(pool: &Pool, batch: &[Access]) {
    loop {
        let written = async {
            let conn = pool.get().await?;
            access_log::append(&conn, batch).await
        }
        .await;
        match written {
            Ok(_) => return,
            Err(e) if unavailable(&e) => {
                tracing::warn!(error = %e, entries = batch.len(), "access log not written yet; trying again");
                tokio::time::sleep(RETRY).await;
            }
            Err(e) => {
                tracing::error!(error = %e, entries = batch.len(), "access log entries refused: not recorded");
                return;
            }
        }
    }
}

/// The database cannot be reached now (the pool, or a connection lost): worth trying again.
fn unavailable(e: &Error) -> bool {
    match e {
        Error::Pool(_) => true,
        Error::Db(e) => common::db::is_unavailable(e),
        _ => false,
    }
}

async fn prune(pool: &Pool, before: DateTime<Utc>) {
    let pruned = async {
        let conn = pool.get().await?;
        access_log::prune(&conn, before).await
    }
    .await;
    match pruned {
        Ok(0) => {}
        Ok(n) => tracing::info!(removed = n, %before, "access log past its retention removed"),
        Err(e) => tracing::warn!(error = %e, "access log retention not applied"),
    }
}
