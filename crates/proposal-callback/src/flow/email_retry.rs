//! An operator's retry of emails the relay refused for good (`POST /admin/emails/{id}/retry`,
//! `POST /admin/emails/retry`, the console's "Reenviar"): each goes back to the outbox with
//! its `Message-ID`, and the worker (`flow::email_worker`) sends it on its next round.

use common::Clock;

use crate::error::Error;
use crate::store::outbox;

/// An operator's retry of `tenant`'s email `id` (`POST /admin/emails/{id}/retry`, the
/// console's "Reenviar"): an email the relay refused for good goes back to the queue, due at
/// `clock`'s now, and the worker sends it on its next round (with the same `Message-ID`).
/// 404 for none, or another tenant's; 409 for an email that is not `failed` (sent, or still
/// in the worker's hands: it must not be sent twice at once).
pub async fn retry(
    conn: &mut diesel_async::AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    id: i64,
) -> Result<outbox::EmailRow, Error> {
    let requeued = outbox::requeue_failed(conn, tenant, id, clock.now()).await?;
    let row = outbox::find(conn, tenant, id)
        .await?
        .ok_or(Error::EmailNotFound(id))?;
    if requeued {
        tracing::info!(
            email = id,
            tenant,
            "email put back in the queue by an operator"
        );
        return Ok(row);
    }
    let delivery = row.delivery();
    let why = match delivery {
        outbox::Delivery::Sent => "the relay accepted it already",
        outbox::Delivery::Queued => "it waits for its first attempt",
        outbox::Delivery::Retrying => {
            "the worker tries it again by itself at its next_attempt_at, with the backoff"
        }
        outbox::Delivery::Failed => "another retry took it at the same moment",
    };
    Err(Error::EmailNotFailed { id, delivery, why })
}

/// The most emails one bulk retry sends again.
pub const RETRY_MAX: i64 = 500;

/// What a bulk retry did (or, as a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkRetry {
    /// The emails put back in the queue (or that would be), oldest refusal first.
    pub ids: Vec<i64>,
    /// More `failed` emails match than one call takes: call again.
    pub more: bool,
}

/// An operator's bulk retry (`POST /admin/emails/retry`, the console's "Reenviar todos"):
/// `tenant`'s `failed` emails matching `filter`, at most `limit`, go back to the queue, due
/// at `clock`'s now, each with its `Message-ID`. With `dry_run`, nothing changes: the answer
/// names the emails it would retry.
pub async fn retry_many(
    conn: &mut diesel_async::AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    filter: &outbox::FailedFilter,
    limit: i64,
    dry_run: bool,
) -> Result<BulkRetry, Error> {
    let mut ids = outbox::failed_matching(conn, tenant, filter, limit + 1).await?;
    let more = ids.len() as i64 > limit;
    ids.truncate(limit as usize);
    if !dry_run {
        ids = outbox::requeue_failed_many(conn, tenant, &ids, clock.now()).await?;
        ids.sort_unstable();
        tracing::info!(
            tenant,
            retried = ids.len(),
            more,
            "failed emails put back in the queue by an operator"
        );
    }
    Ok(BulkRetry { ids, more })
}
