//! The sweeper: processes the receipts a crash left `received` (stored, but the process or
//! the database went away before their outcome was written), under the same once-only rules
//! as a live callback (docs/proposal-callback.md, "Sweeper"; docs/operations.md).
//!
//! It runs at start and then every `SWEEP_INTERVAL`. Only receipts older than `SWEEP_GRACE`
//! are taken, so it does not race a request still being answered. Each receipt is processed
//! in its own transaction that holds its row lock (`FOR UPDATE SKIP LOCKED`), so several
//! replicas sweep side by side without taking the same receipt. A receipt of a paused
//! integration is deferred, as a live callback is.

use std::time::Duration;

use common::Clock;
use common::db::Pool;
use diesel_async::AsyncConnection;

use crate::error::Error;
use crate::flow::pause::process;
use crate::store::receipts;

/// `SWEEP_INTERVAL` and `SWEEP_GRACE` (read by `crate::settings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepConfig {
    /// Between two rounds (default 30 s).
    pub interval: Duration,
    /// How old a `received` receipt must be before the sweeper takes it (default 60 s):
    /// longer than a live request can take.
    pub grace: Duration,
}

/// `SWEEP_INTERVAL` when unset.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// `SWEEP_GRACE` when unset.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60);

impl Default for SweepConfig {
    fn default() -> Self {
        Self {
            interval: DEFAULT_INTERVAL,
            grace: DEFAULT_GRACE,
        }
    }
}

/// How many receipts one round looks at, at most.
const ROUND: i64 = 100;

/// What one round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Receipts given an outcome (any 200 outcome, or `failed` for a sender's error).
    pub settled: usize,
    /// Receipts left `received` after a server-side failure (retried next round).
    pub left: usize,
}

/// One round: every receipt left `received` for longer than `grace` by `clock`, oldest first.
pub async fn sweep_once(pool: &Pool, clock: &Clock, grace: Duration) -> Result<Swept, Error> {
    let mut conn = pool.get().await?;
    let cutoff = chrono::Duration::from_std(grace)
        .ok()
        .and_then(|grace| clock.now().checked_sub_signed(grace))
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    let ids = receipts::left_received(&mut conn, cutoff, ROUND).await?;
    let mut swept = Swept::default();
    for id in ids {
        let settled = conn
            .transaction::<_, Error, _>(async |conn| {
                let Some(receipt) = receipts::lock_if_received(conn, id).await? else {
                    return Ok(false);
                };
                match process(conn, clock, &receipt).await {
                    Ok(done) => {
                        tracing::info!(receipt = id, outcome = %done.outcome, "sweeper: receipt processed");
                        Ok(true)
                    }
                    // The sender's fault: the failure is recorded on the receipt; keep it.
                    Err(e) if e.is_client_error() => {
                        tracing::info!(receipt = id, code = %e.code(), "sweeper: receipt failed");
                        Ok(true)
                    }
                    Err(e) => Err(e),
                }
            })
            .await;
        match settled {
            Ok(true) => swept.settled += 1,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(receipt = id, error = %e, "sweeper: receipt left received; retried next round");
                swept.left += 1;
            }
        }
    }
    Ok(swept)
}

/// Starts the sweeper inside `serve`: a round now, then one every `interval`.
pub fn start(pool: &Pool, clock: &Clock, config: SweepConfig) {
    let pool = pool.clone();
    let clock = clock.clone();
    tracing::info!(interval = ?config.interval, grace = ?config.grace, "receipt sweeper started");
    tokio::spawn(async move {
        loop {
            match sweep_once(&pool, &clock, config.grace).await {
                Ok(s) if s.settled + s.left > 0 => {
                    tracing::warn!(
                        settled = s.settled,
                        left = s.left,
                        "sweeper: receipts a crash left received"
                    )
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "sweeper: database not reachable"),
            }
            tokio::time::sleep(config.interval).await;
        }
    });
}
