//! The access log's writer (docs/dispatch-access-log.md): every read of an incident's patient
//! data is recorded before its answer leaves. A route hands its entry to the writer
//! ([`AccessLog::record`]) and waits until the batch holding it is committed: group commit,
//! as PostgreSQL's own. One task per process takes the batches in order and writes each in one
//! INSERT (`store::access_log::append`) on one of its [`AccessLogSettings::writers`]
//! connections (one unless told); while they write, the next batch gathers the reads answered
//! meanwhile, and a batch may linger [`AccessLogSettings::linger`] from its first entry to
//! gather more. With two connections a batch's INSERT runs while the one before it is still
//! being flushed, and the outcomes are told in the batches' order all the same. One wake
//! tells every read of a batch its outcome. An entry that cannot be written within
//! [`AccessLogSettings::give_up`] makes its read a 503: no answered read without its entry.
//! Once an hour of the log's own time, a task of its own removes the entries past the
//! retention, beside the writer.
//!
//! A batch lingers only while a request in flight may still join it: once every HTTP request
//! the process is serving ([`InFlight`]) is already waiting for a commit, nobody else can
//! come, and the batch is written at once (PostgreSQL's `commit_siblings` rule for its
//! `commit_delay`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::db::Pool;
use common::in_flight::InFlight;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::AsyncPgConnection;
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use tokio::sync::{Notify, OwnedMutexGuard, watch};
use tokio::time::Instant;

use crate::error::Error;
use crate::store::access_log::{self, Access};

/// How long entries are kept when `ACCESS_LOG_RETENTION` is unset: five years.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(5 * 365 * 24 * 3600);
/// The most entries one INSERT carries.
pub const BATCH: usize = 1_000;
/// How long a batch may gather from its first entry when `ACCESS_LOG_LINGER` is unset, while
/// requests in flight may still join it (bench/access_log/README.md, 2026-11-29 "Lingering
/// while a request can join").
pub const LINGER: Duration = Duration::from_millis(2);
/// The writer's connections when `ACCESS_LOG_WRITERS` is unset: one, each batch written once
/// the one before it is committed; two did not measure better on this project's machine
/// (bench/access_log/README.md, "Two writer connections").
pub const WRITERS: usize = 1;
/// The most connections `ACCESS_LOG_WRITERS` may ask for.
pub const MAX_WRITERS: usize = 8;
/// How long a batch is tried while the database cannot be reached, from its first entry,
/// before its reads are answered 503.
pub const GIVE_UP: Duration = Duration::from_secs(5);
/// How often (in the entries' own time) the retention runs.
const PRUNE_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// Pause after a failed write before it is tried again.
const RETRY: Duration = Duration::from_millis(250);
/// The least time an attempt's statement is given, even past [`AccessLogSettings::give_up`]
/// (a batch that waited behind a failing one is tried once).
const ATTEMPT: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy)]
pub struct AccessLogSettings {
    /// Entries older than this (against the newest entry written) are removed.
    pub retention: Duration,
    /// The most entries one INSERT carries.
    pub batch: usize,
    /// How long a batch that is not full gathers entries from its first one before it is
    /// written (zero: as soon as the writer is free). The reads it holds wait that long.
    pub linger: Duration,
    /// How long a batch is tried while the database cannot be reached before its reads fail.
    pub give_up: Duration,
    /// How many batches may be written at once, each on a connection of its own beside the
    /// pool (1 to [`MAX_WRITERS`]); their outcomes are told in order.
    pub writers: usize,
}

impl Default for AccessLogSettings {
    fn default() -> Self {
        Self {
            retention: DEFAULT_RETENTION,
            batch: BATCH,
            linger: LINGER,
            give_up: GIVE_UP,
            writers: WRITERS,
        }
    }
}

/// What became of a batch, told once to every read it holds.
#[derive(Debug, Clone)]
enum Outcome {
    Written,
    /// Not written (the cause, for the log): its reads are not answered.
    Failed(Arc<str>),
}

/// The entries of one INSERT and the readers waiting for it.
struct Batch {
    entries: Vec<Access>,
    /// The reads whose last entry is in this batch (told by it).
    reads: usize,
    done: watch::Sender<Option<Outcome>>,
    /// When its first entry came: its linger and its give-up count from then.
    opened: Instant,
}

impl Batch {
    fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity.min(64)),
            reads: 0,
            done: watch::Sender::new(None),
            opened: Instant::now(),
        }
    }
}

/// What the routes and the writer share.
struct Queue {
    /// The batch gathering entries.
    open: Batch,
    /// Batches to write before `open`, oldest first: full ones, and those a flush closed.
    closed: VecDeque<Batch>,
    /// Entries handed to the writer whose outcome is not told yet.
    waiting: usize,
    /// Reads (calls of `record_all`) whose outcome is not told yet.
    reads: usize,
    /// The writer lingers over the open batch: a read that makes every request in flight a
    /// waiting one wakes it.
    lingering: bool,
    /// Every handle is gone: write what is left and end.
    ending: bool,
    /// The writer has ended (or failed): nothing more is taken.
    stopped: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the writer: a first entry, a batch closed, a flush, the end.
    wake: Notify,
    batch: usize,
    /// The process's HTTP requests in flight (counted by its `App`).
    in_flight: Arc<InFlight>,
    /// Held while the retention runs.
    pruning: Arc<tokio::sync::Mutex<()>>,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // Nothing is left half done under the lock; a panic elsewhere does not poison it.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The routes' handle on the writer; cheap to clone. Without a writer (`AccessLog::off`, the
/// benchmark's baseline, built only with the `bench` feature) it records nothing.
#[derive(Clone, Debug)]
pub struct AccessLog {
    writer: Option<Arc<Handle>>,
}

/// The writer ends when the last handle is dropped, after writing what it holds.
struct Handle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLogWriter")
            .field("waiting", &self.shared.queue().waiting)
            .finish_non_exhaustive()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.queue().ending = true;
        self.shared.wake.notify_one();
    }
}

impl AccessLog {
    /// Starts the writer on the current runtime; it ends when the last handle is dropped,
    /// after writing what it holds.
    pub fn start(pool: Pool, settings: AccessLogSettings) -> Self {
        // A row holds at most BATCH entries (the table's check).
        let batch = settings.batch.clamp(1, BATCH);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                open: Batch::new(batch),
                closed: VecDeque::new(),
                waiting: 0,
                reads: 0,
                lingering: false,
                ending: false,
                stopped: false,
            }),
            wake: Notify::new(),
            batch,
            in_flight: InFlight::new(),
            pruning: Arc::default(),
        });
        tokio::spawn(write(shared.clone(), pool, settings));
        Self {
            writer: Some(Arc::new(Handle { shared })),
        }
    }

    /// A log that records nothing: the benchmark's baseline (bench/access_log), only in the
    /// `bench` feature's build, so a production build has no way to skip the record.
    #[cfg(feature = "bench")]
    pub fn off() -> Self {
        Self { writer: None }
    }

    /// Records that `user_id` read incident `incident_id`'s patient data through `route` at
    /// `at`, and returns once the entry is committed. `Err` (a 503) when it could not be
    /// written: the read must not be answered.
    pub async fn record(
        &self,
        user_id: i64,
        incident_id: i64,
        route: &'static str,
        at: DateTime<Utc>,
    ) -> Result<(), Error> {
        self.record_all(user_id, &[incident_id], route, at).await
    }

    /// [`AccessLog::record`] for several incidents read at once (one entry each), with one
    /// wait for them all.
    pub async fn record_all(
        &self,
        user_id: i64,
        incident_ids: &[i64],
        route: &'static str,
        at: DateTime<Utc>,
    ) -> Result<(), Error> {
        let Some(handle) = &self.writer else {
            return Ok(());
        };
        let shared = &handle.shared;
        // The batches these entries went into (more than one only past a batch's size).
        let mut waits = Vec::with_capacity(1);
        let wake = {
            let mut q = shared.queue();
            if q.stopped {
                return Err(unrecorded("the access log's writer has stopped"));
            }
            let mut wake = false;
            for &incident_id in incident_ids {
                if q.open.entries.is_empty() {
                    // The writer may be idle, or lingering for another batch's time.
                    q.open.opened = Instant::now();
                    wake = true;
                }
                q.open.entries.push(Access {
                    incident_id,
                    user_id,
                    route,
                    at,
                });
                q.waiting += 1;
                if q.open.entries.len() >= shared.batch {
                    waits.push(q.open.done.subscribe());
                    let full = std::mem::replace(&mut q.open, Batch::new(shared.batch));
                    q.closed.push_back(full);
                    wake = true;
                }
            }
            if !q.open.entries.is_empty() && !incident_ids.is_empty() {
                waits.push(q.open.done.subscribe());
            }
            if !incident_ids.is_empty() {
                // Told by the batch its last entry went into: the open one, or the one it
                // filled.
                if !q.open.entries.is_empty() {
                    q.open.reads += 1;
                } else if let Some(filled) = q.closed.back_mut() {
                    filled.reads += 1;
                }
                q.reads += 1;
                // The last request that could join the lingering batch has: write it now.
                wake |= q.lingering && q.reads >= shared.in_flight.count();
            }
            wake
        };
        if wake {
            shared.wake.notify_one();
        }
        for wait in waits {
            outcome(wait).await?;
        }
        Ok(())
    }

    /// Waits until everything recorded before is written, ending a batch's linger, and the
    /// retention those writes started has run (the stop calls it, and the listings, so they
    /// show this replica's reads up to the moment).
    pub async fn flush(&self) {
        let Some(handle) = &self.writer else {
            return;
        };
        let shared = &handle.shared;
        let wait = {
            let mut q = shared.queue();
            if q.stopped {
                return;
            }
            // Closes the open batch, even empty: the writer writes in order, so when this one
            // is told, every batch before it has been.
            let open = std::mem::replace(&mut q.open, Batch::new(shared.batch));
            let wait = open.done.subscribe();
            q.closed.push_back(open);
            wait
        };
        shared.wake.notify_one();
        let _ = outcome(wait).await;
        // A retention a batch before it started has ended too.
        drop(shared.pruning.lock().await);
    }

    /// Entries handed to the writer whose reads wait for their commit.
    pub fn waiting(&self) -> usize {
        self.writer.as_ref().map_or(0, |h| h.shared.queue().waiting)
    }

    /// The count of the process's HTTP requests in flight that a batch's linger looks at
    /// (none without a writer): the `App` counts its requests into it.
    pub fn in_flight(&self) -> Option<Arc<InFlight>> {
        self.writer.as_ref().map(|h| h.shared.in_flight.clone())
    }
}

/// Waits for a batch's outcome.
async fn outcome(mut wait: watch::Receiver<Option<Outcome>>) -> Result<(), Error> {
    match wait.wait_for(Option::is_some).await.as_deref() {
        Ok(Some(Outcome::Written)) => Ok(()),
        Ok(Some(Outcome::Failed(why))) => Err(unrecorded(why)),
        // The writer dropped the batch untold: it failed.
        Ok(None) | Err(_) => Err(unrecorded("the access log's writer has stopped")),
    }
}

/// The error a read whose entry was not written answers with: the database unavailable
/// (503, and the cause in the service's log).
fn unrecorded(why: &str) -> Error {
    Error::Db(DieselError::DatabaseError(
        DatabaseErrorKind::UnableToSendCommand,
        Box::new(format!("access log entry not written: {why}")),
    ))
}

/// Marks the writer stopped however it ends (a panic included), failing what it held.
struct Stopped(Arc<Shared>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let mut q = self.0.queue();
        q.stopped = true;
        // Dropped untold: their readers are answered 503.
        q.closed.clear();
        q.open = Batch::new(0);
        q.waiting = 0;
        q.reads = 0;
    }
}

/// The writer: takes the batches in order and writes each on a free connection of its own,
/// up to `settings.writers` at once, until every handle is gone; a batch's outcome is told
/// after those of every batch before it (a flush relies on it).
async fn write(shared: Arc<Shared>, pool: Pool, settings: AccessLogSettings) {
    let _stopped = Stopped(shared.clone());
    let retention =
        chrono::TimeDelta::from_std(settings.retention).unwrap_or(chrono::TimeDelta::MAX);
    let mut pruned_at: Option<DateTime<Utc>> = None;
    // The connections no batch is being written on (each made when first needed).
    let mut free: Vec<Own> = (0..settings.writers.clamp(1, MAX_WRITERS))
        .map(|_| None)
        .collect();
    let mut writing = FuturesOrdered::new();
    let mut taking = true;
    loop {
        let written = tokio::select! {
            // An outcome first: it frees a connection and tells its reads.
            biased;
            Some(written) = writing.next(), if !writing.is_empty() => written,
            batch = next(&shared, settings.linger), if taking && !free.is_empty() => {
                match batch {
                    Some(batch) => {
                        let conn = free.pop().flatten();
                        writing.push_back(write_one(pool.clone(), conn, batch, settings.give_up));
                    }
                    // Every handle is gone and nothing is left to take.
                    None => taking = false,
                }
                continue;
            }
            else => break,
        };
        // `next` may have been left waiting: nobody watches the requests in flight now.
        shared.in_flight.watch(false);
        let (batch, outcome, conn): (Batch, Outcome, Own) = written;
        free.push(conn);
        {
            let mut q = shared.queue();
            q.waiting -= batch.entries.len();
            q.reads -= batch.reads;
        }
        // The retention is due: it runs in a task of its own, so the reads of the next
        // batches never wait behind its DELETE. Its guard is taken before this batch's reads
        // are told, so a flush that follows them waits for it too; one runs at a time (a
        // retention still running when the next is due lets it wait for a later batch).
        let retain = match (&outcome, batch.entries.iter().map(|a| a.at).max()) {
            (Outcome::Written, Some(newest))
                if pruned_at.is_none_or(|p| newest - p >= PRUNE_EVERY) =>
            {
                shared
                    .pruning
                    .clone()
                    .try_lock_owned()
                    .ok()
                    .map(|guard| (guard, newest))
            }
            _ => None,
        };
        batch.done.send_replace(Some(outcome));
        if let Some((guard, newest)) = retain {
            pruned_at = Some(newest);
            tokio::spawn(prune(pool.clone(), newest - retention, guard));
        }
    }
}

/// Writes one batch on `conn` (or a new connection), handing the connection back with the
/// outcome unless it was lost.
async fn write_one(
    pool: Pool,
    mut conn: Own,
    batch: Batch,
    give_up: Duration,
) -> (Batch, Outcome, Own) {
    let outcome = if batch.entries.is_empty() {
        Outcome::Written
    } else {
        append(&pool, &mut conn, &batch.entries, batch.opened + give_up).await
    };
    (batch, outcome, conn)
}

/// The next batch to write: a closed one first, else the open one once its linger is over or
/// no request in flight is left to join it (at once when every handle is gone); None when
/// nothing is left and every handle is gone.
async fn next(shared: &Shared, linger: Duration) -> Option<Batch> {
    let in_flight = &shared.in_flight;
    loop {
        // On, and the wait enabled, before the count is read: a request that ends after the
        // look below wakes the wait.
        in_flight.watch(true);
        let left = in_flight.left();
        tokio::pin!(left);
        left.as_mut().enable();
        let until = {
            let mut q = shared.queue();
            q.lingering = false;
            if let Some(batch) = q.closed.pop_front() {
                in_flight.watch(false);
                return Some(batch);
            }
            if q.open.entries.is_empty() {
                if q.ending {
                    in_flight.watch(false);
                    return None;
                }
                None
            } else {
                let until = q.open.opened + linger;
                // Every request in flight waits for a commit already: none can join.
                let alone = q.reads >= in_flight.count();
                if q.ending || alone || Instant::now() >= until {
                    in_flight.watch(false);
                    let capacity = shared.batch;
                    return Some(std::mem::replace(&mut q.open, Batch::new(capacity)));
                }
                q.lingering = true;
                Some(until)
            }
        };
        // A wake between the look above and this wait is kept (`notify_one` stores it).
        match until {
            Some(until) => {
                tokio::select! {
                    () = tokio::time::sleep_until(until) => {}
                    () = shared.wake.notified() => {}
                    () = &mut left => {}
                }
            }
            None => {
                // Idle: an ending request has nothing to tell.
                in_flight.watch(false);
                shared.wake.notified().await;
            }
        }
    }
}

/// One of the writer's own connections, never a pooled one: the reads waiting for their
/// entries may hold every pooled connection, and the writer must not wait for one of them.
type Own = Option<AsyncPgConnection>;

/// A writer's connection: its own, or a new one made beside the pool (`common::db::
/// dedicated`: the process holds `writers` more than the pool's size).
async fn own(pool: &Pool, conn: &mut Own) -> Result<AsyncPgConnection, Error> {
    match conn.take() {
        Some(c) => Ok(c),
        None => Ok(common::db::dedicated(pool).await?),
    }
}

/// Writes one batch, trying again while the database cannot be reached until `give_up_at`;
/// a batch the database refuses is not tried again (it cannot succeed by trying again).
/// Once a batch is told failed it is never tried again: an entry may exist for a read
/// answered 503 (a commit whose answer was lost), never the other way round.
async fn append(pool: &Pool, own_conn: &mut Own, batch: &[Access], give_up_at: Instant) -> Outcome {
    loop {
        let written: Result<usize, Error> = async {
            let conn = own(pool, own_conn).await?;
            let bound = give_up_at.max(Instant::now() + ATTEMPT);
            let attempt = tokio::time::timeout_at(bound, access_log::append(&conn, batch)).await;
            match attempt {
                Ok(written) => {
                    let written = written.map_err(Error::from);
                    // A connection lost is not kept; one the database answered is.
                    if written.as_ref().map_or_else(|e| !unavailable(e), |_| true) {
                        *own_conn = Some(conn);
                    }
                    written
                }
                // The statement may still be running: the connection is dropped.
                Err(_) => Err(unrecorded("the INSERT did not answer in time")),
            }
        }
        .await;
        match written {
            Ok(_) => return Outcome::Written,
            Err(e) if unavailable(&e) && Instant::now() + RETRY < give_up_at => {
                tracing::warn!(error = %e, entries = batch.len(), "access log not written yet; trying again");
                tokio::time::sleep(RETRY).await;
            }
            Err(e) => {
                tracing::error!(error = %e, entries = batch.len(), "access log entries not written: their reads are answered 503");
                return Outcome::Failed(e.to_string().into());
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

/// Removes the entries older than `before`, on a pooled connection (off the reads' path),
/// holding `_running` until it is done.
async fn prune(pool: Pool, before: DateTime<Utc>, _running: OwnedMutexGuard<()>) {
    let pruned = async {
        let conn = pool.get().await?;
        access_log::prune(&conn, before).await.map_err(Error::from)
    }
    .await;
    match pruned {
        Ok(0) => {}
        Ok(n) => tracing::info!(removed = n, %before, "access log past its retention removed"),
        Err(e) => tracing::warn!(error = %e, "access log retention not applied"),
    }
}
