//! The hospital offload watcher (docs/dispatch-realtime.md, "Hospital offload"): an alert is
//! due when a unit has stayed at a hospital's door for the `hospital_hold` target, a moment
//! at which nobody writes anything. So every replica runs this task: it raises the alerts
//! due (`store::offload::raise_due`, one statement whose insert only one replica can win,
//! announcing on `dispatch_offload` to every replica's listener), then sleeps until the next
//! one falls due, or at most [`CHECK_INTERVAL`] (a unit arriving, a target changed, or a
//! replica that was down are caught up by then). With any number of replicas, each alert is
//! raised once; with one replica down the others raise it; with all down, the first to start
//! raises what fell due meanwhile.

use std::time::Duration;

use common::Clock;
use common::db::Pool;
use tokio::task::JoinHandle;

use crate::store;

/// The longest the watcher sleeps between two looks.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// Starts the watcher on `clock` (the service's: the alert's time is the clock's), looking at
/// most every `check`. Abort the handle to stop it.
pub fn spawn(pool: Pool, clock: Clock, check: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let next = match look(&pool, &clock).await {
                Ok(next) => next,
                Err(e) => {
                    tracing::warn!(error = %e, "offload watcher: cannot look at the doors");
                    None
                }
            };
            let wait = next
                .and_then(|at| (at - clock.now()).to_std().ok())
                .map_or(check, |until| until.min(check));
            tokio::time::sleep(wait.max(Duration::from_millis(50))).await;
        }
    })
}

/// Raises what is due now; answers when the next alert falls due.
async fn look(
    pool: &Pool,
    clock: &Clock,
) -> crate::error::Result<Option<chrono::DateTime<chrono::Utc>>> {
    let mut conn = pool.get().await?;
    let raised = store::offload::raise_due(&mut conn, clock.now()).await?;
    if !raised.is_empty() {
        tracing::info!(alerts = raised.len(), "offload alerts raised");
    }
    Ok(store::offload::next_due(&mut conn).await?)
}
