//! The access log's writer (docs/dispatch-access-log.md): every read of an incident's patient
//! data is recorded off the request path. A route hands its [`Access`] to a bounded queue
//! (`record`, which waits only when the queue is full); one task per process drains the
//! queue into `store::access_log::append`. A batch that is not full when the writer takes its
//! first entry fills for up to [`AccessLogSettings::linger`] (less if it fills, or a listing
//! or the stop waits for it), so under load one INSERT carries up to
//! [`AccessLogSettings::batch`] entries: an INSERT's own cost (its statement, its
//! transaction, its commit) is shared by many reads. The writer also removes the entries
//! past the retention once an hour of the log's own time.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::db::Pool;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

use crate::error::Error;
use crate::store::access_log::{self, Access};

/// How long entries are kept when `ACCESS_LOG_RETENTION` is unset: five years.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(5 * 365 * 24 * 3600);
/// Entries waiting before `record` waits for the writer.
pub const QUEUE_CAPACITY: usize = 65_536;
/// The most entries one INSERT carries.
pub const BATCH: usize = 1_000;
/// How long a batch that is not full waits for more entries when `ACCESS_LOG_LINGER` is unset.
pub const LINGER: Duration = Duration::from_millis(100);
/// How often (in the entries' own time) the retention runs.
const PRUNE_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// How often a lingering batch looks whether it is full.
const LOOK: Duration = Duration::from_millis(10);
/// Pause after a failed write before it is tried again.
const RETRY: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy)]
pub struct AccessLogSettings {
    /// Entries older than this (against the newest entry written) are removed.
    pub retention: Duration,
    pub queue_capacity: usize,
    pub batch: usize,
    /// How long a batch that is not full waits for more entries before it is written (zero:
    /// written as soon as the writer is free). Up to this much of a replica's latest reads is
    /// held in memory only.
    pub linger: Duration,
}

impl Default for AccessLogSettings {
    fn default() -> Self {
        Self {
            retention: DEFAULT_RETENTION,
            queue_capacity: QUEUE_CAPACITY,
            batch: BATCH,
            linger: LINGER,
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
    writer: Option<Writer>,
}

#[derive(Clone, Debug)]
struct Writer {
    tx: mpsc::Sender<Message>,
    /// Ends the batch's linger: someone waits for what it holds.
    hurry: Arc<Notify>,
}

impl AccessLog {
    /// Starts the writer on the current runtime; it ends when the last handle is dropped,
    /// after writing what was queued.
    pub fn start(pool: Pool, settings: AccessLogSettings) -> Self {
        let (tx, rx) = mpsc::channel(settings.queue_capacity.max(1));
        let hurry = Arc::new(Notify::new());
        tokio::spawn(write(rx, hurry.clone(), pool, settings));
        Self {
            writer: Some(Writer { tx, hurry }),
        }
    }

    pub fn off() -> Self {
        Self { writer: None }
    }

    pub fn is_on(&self) -> bool {
        self.writer.is_some()
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
        let Some(Writer { tx, .. }) = &self.writer else {
            return;
        };
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

    /// Waits until everything recorded before is written, without waiting for a batch's
    /// linger (the listings call it first, so they show this replica's reads up to the moment
    /// they are asked).
    pub async fn flush(&self) {
        let Some(Writer { tx, hurry }) = &self.writer else {
            return;
        };
        let (done, wait) = oneshot::channel();
        if tx.send(Message::Flush(done)).await.is_ok() {
            // After the send: the writer, woken, finds the flush in the queue. A wake that
            // finds nobody lingering is kept, and the next linger, finding no flush, goes on.
            hurry.notify_one();
            let _ = wait.await;
        }
    }
}

/// The entries and flushes taken from the queue for the next INSERT.
struct Batch {
    entries: Vec<Access>,
    flushes: Vec<oneshot::Sender<()>>,
    size: usize,
}

impl Batch {
    fn is_full(&self) -> bool {
        self.entries.len() >= self.size
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Record(a) => self.entries.push(a),
            Message::Flush(done) => self.flushes.push(done),
        }
    }

    /// Takes what the queue holds now, until the batch is full.
    fn drain(&mut self, rx: &mut mpsc::Receiver<Message>) {
        while !self.is_full() {
            match rx.try_recv() {
                Ok(message) => self.take(message),
                Err(_) => return,
            }
        }
    }
}

/// The writer: drains the queue in batches until every handle is gone.
async fn write(
    mut rx: mpsc::Receiver<Message>,
    hurry: Arc<Notify>,
    pool: Pool,
    settings: AccessLogSettings,
) {
    let retention =
        chrono::TimeDelta::from_std(settings.retention).unwrap_or(chrono::TimeDelta::MAX);
    let mut pruned_at: Option<DateTime<Utc>> = None;
    let mut next = Batch {
        entries: Vec::with_capacity(settings.batch),
        flushes: Vec::new(),
        size: settings.batch.max(1),
    };
    while let Some(first) = rx.recv().await {
        next.take(first);
        next.drain(&mut rx);
        // The batch fills while it lingers. The writer looks at the queue every `LOOK`
        // rather than being woken by every read; it stops lingering when the batch is full
        // (a busy centre) or someone waits for it (a listing's or the stop's flush).
        let deadline = Instant::now() + settings.linger;
        while !next.is_full() && next.flushes.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline.min(now + LOOK)) => {}
                () = hurry.notified() => {}
            }
            next.drain(&mut rx);
        }
        let (batch, flushes) = (&mut next.entries, &mut next.flushes);
        if !batch.is_empty() {
            append(&pool, batch).await;
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
