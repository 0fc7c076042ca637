//! Retention of personal data in raw bodies (LGPD; docs/proposal-callback.md, "Retention of
//! raw bodies"). A callback's stored body names the tenant's customer; once its receipt has
//! an outcome and is older than its tenant's retention (`tenants.body_retention_days`, 90 by
//! default), the body is erased and everything else about the receipt stays: its outcome,
//! answer, event time, proposal, kept headers, the body's SHA-256 and every reference to it.
//! `serve` erases at start and then every [`ERASE_EVERY`]; `proposal-callback erase-bodies`
//! does it at once. A receipt whose body is gone cannot be processed again
//! (`flow::pause::process` answers 409 `body_erased`).

use std::collections::BTreeMap;
use std::time::Duration;

use common::Clock;
use common::db::Pool;
use diesel_async::AsyncPgConnection;
use serde::Serialize;

use crate::error::Error;
use crate::store::{receipts, tenants};

/// A tenant's retention when nobody set one (the column's default).
pub const DEFAULT_BODY_RETENTION_DAYS: i32 = 90;

/// How often `serve` erases the bodies that went past their retention. An hour late on a
/// retention counted in days is nothing, and a round that finds nothing costs an index
/// lookup per tenant.
pub const ERASE_EVERY: Duration = Duration::from_secs(3600);

/// Bodies erased per statement (each its own transaction: no long lock on the receipts).
const BATCH: i64 = 1000;

/// What one erasure did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Erased {
    /// Bodies erased, in all.
    pub erased_bodies: usize,
    /// Bodies erased per tenant that had any.
    pub per_tenant: BTreeMap<String, usize>,
}

/// Erases every body past its tenant's retention, as of `clock`'s now.
pub async fn erase_expired_bodies(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
) -> Result<Erased, Error> {
    let now = clock.now();
    let mut erased = Erased::default();
    for (tenant, days) in tenants::body_retention(conn).await? {
        let cutoff = now - chrono::Duration::days(i64::from(days));
        let mut n = 0;
        loop {
            let batch = receipts::erase_bodies(conn, &tenant, cutoff, now, BATCH).await?;
            n += batch;
            if (batch as i64) < BATCH {
                break;
            }
        }
        if n > 0 {
            tracing::info!(
                tenant,
                erased = n,
                retention_days = days,
                "raw bodies erased after their retention"
            );
            erased.per_tenant.insert(tenant, n);
            erased.erased_bodies += n;
        }
    }
    Ok(erased)
}

/// Starts the erasure inside `serve`: a round now, then one every [`ERASE_EVERY`].
pub fn start(pool: &Pool, clock: &Clock) {
    let pool = pool.clone();
    let clock = clock.clone();
    tokio::spawn(async move {
        loop {
            let round = async {
                let mut conn = pool.get().await?;
                erase_expired_bodies(&mut conn, &clock).await
            };
            if let Err(e) = round.await {
                tracing::warn!(error = %e, "raw bodies past their retention not erased; tried again later");
            }
            tokio::time::sleep(ERASE_EVERY).await;
        }
    });
}
