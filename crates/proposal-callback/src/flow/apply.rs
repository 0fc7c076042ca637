//! ProcessProposalCallback: parses a stored receipt with its insurer's parser and applies it
//! to the proposal in one transaction (docs/proposal-callback.md, "The callback, in order",
//! step 9). Live callbacks and replays both come here, so they follow the same rules.

use chrono::{DateTime, Utc};
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::json;

use crate::domain::email::{About, compose};
use crate::domain::insurer::{Callback, Insurer, Notification};
use crate::domain::machine::{Transition, transition};
use crate::domain::status::{Outcome, Status};
use crate::error::Error;
use crate::hex::hex;
use crate::store::applied::{self, Accepted};
use crate::store::integrations;
use crate::store::proposals::{self as p, Event, Locked, ProposalRow};
use crate::store::receipts::{self, Answered, Failure, Receipt};

/// What applying one callback did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub outcome: Outcome,
    /// None for an `ignored` event (it names no proposal we read).
    pub proposal_id: Option<String>,
    /// The proposal's status after this callback; none for an `ignored` event.
    pub status: Option<Status>,
    /// The outbox row queued by this callback, if it queued one.
    pub email_id: Option<i64>,
}

impl Processed {
    /// A receipt of a paused integration, stored for later (docs/proposal-callback.md,
    /// "Pause and resume").
    pub fn deferred() -> Self {
        Self {
            outcome: Outcome::Deferred,
            proposal_id: None,
            status: None,
            email_id: None,
        }
    }
}

/// The redelivery key of a callback: the insurer's event id, or the body's SHA-256 for an
/// insurer that sends none (too). Prefixed so the two kinds can never collide.
pub fn dedup_key(callback: &Callback, body_sha256: &[u8]) -> String {
    match &callback.event_id {
        Some(id) => format!("event:{id}"),
        None => format!("sha256:{}", hex(body_sha256)),
    }
}

/// Parses and applies `receipt` in one transaction (a savepoint inside one), processed at
/// `at` (every row it writes carries that time). The receipt's outcome is recorded: in the
/// applying transaction on success, afterwards on a failure the sender caused.
pub async fn handle_receipt(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    at: DateTime<Utc>,
) -> Result<Processed, Error> {
    let result = conn
        .transaction::<_, Error, _>(async |conn| apply_receipt(conn, receipt, None, at).await)
        .await;
    record_failure(conn, receipt, result, at).await
}

/// Counts a callback or a replay under `tenant` and `insurer` in `/metrics`: its outcome, or
/// the error's code.
pub fn count(tenant: &str, insurer: Insurer, result: &Result<Processed, Error>) {
    let ended = match result {
        Ok(p) => Ok(p.outcome),
        Err(e) => Err(e.code()),
    };
    crate::metrics::count_callback(tenant, insurer, ended);
}

/// Records on the receipt a failure the sender caused (`result` is the answer of a rolled
/// back transaction), processed at `at`, and passes `result` on.
pub async fn record_failure(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    result: Result<Processed, Error>,
    at: DateTime<Utc>,
) -> Result<Processed, Error> {
    if let Err(e) = &result
        && e.is_client_error()
    {
        // Best effort: the callback's answer does not depend on this note being written,
        // and an outage here is reported by the answer itself.
        if let Err(db) = receipts::record_failure(conn, receipt.id, &failure(receipt, e), at).await
        {
            tracing::warn!(receipt = receipt.id, error = %db, "could not record a receipt's failure");
        }
    }
    result
}

/// What a receipt keeps of the answer to a failed callback, with the proposal it concerned
/// when the body names one (even a body that could not be applied or parsed).
fn failure(receipt: &Receipt, e: &Error) -> Failure {
    let problem = e.problem();
    Failure {
        http_status: problem.status as i16,
        code: problem.code.to_string(),
        detail: problem.detail,
        proposal_id: match e {
            Error::ProposalNotFound { proposal_id } => Some(proposal_id.clone()),
            _ => receipt.insurer.proposal_hint(&receipt.body),
        },
    }
}

/// Parses `receipt` and applies it at `at`, inside the caller's transaction: on an error the
/// caller rolls back, so nothing is half written. With `pause_of` (the receipt's integration:
/// a live callback, the sweeper, a replay), its row is held shared until the transaction ends
/// and the receipt is deferred instead while it is paused, whatever its body
/// (docs/proposal-callback.md, "Pause and resume"); a resume step, which holds the row alone,
/// passes none.
pub async fn apply_receipt(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    pause_of: Option<i64>,
    at: DateTime<Utc>,
) -> Result<Processed, Error> {
    let parsed = receipt.insurer.parser().parse(&receipt.body);
    // A callback to apply reads the pause with the proposal's lock; any other body reads it
    // on its own.
    if !matches!(parsed, Ok(Notification::Result(_)))
        && let Some(integration) = pause_of
        && integrations::hold_shared_is_paused(conn, integration).await?
    {
        return defer(conn, receipt, at).await;
    }
    let callback = match parsed? {
        Notification::Result(callback) => callback,
        Notification::Ignored { event } => {
            tracing::info!(
                receipt = receipt.id,
                event,
                "event without a result: ignored"
            );
            let answered = Answered {
                outcome: Outcome::Ignored,
                proposal_id: None,
                dedup_key: None,
                event_at: None,
            };
            receipts::record_outcome(conn, receipt.id, &answered, at).await?;
            return Ok(Processed {
                outcome: Outcome::Ignored,
                proposal_id: None,
                status: None,
                email_id: None,
            });
        }
    };
    // The tenant comes from the URL the callback arrived on (stored on the receipt), never
    // from the payload.
    let key = dedup_key(&callback, &receipt.body_sha256);
    apply(conn, receipt, &callback, &key, pause_of, at).await
}

/// Records `receipt` deferred at `at`: not parsed until the resume, but an operator can
/// already find it by proposal.
async fn defer(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    at: DateTime<Utc>,
) -> Result<Processed, Error> {
    let proposal = receipt.insurer.proposal_hint(&receipt.body);
    receipts::record_deferred(conn, receipt.id, proposal.as_deref(), at).await?;
    Ok(Processed::deferred())
}

/// Is `callback` older than the last callback applied to the proposal? Equal times are not
/// stale: the insurers' clocks count whole seconds, so two real decisions can share one, and
/// then arrival order is the best evidence (docs/proposal-callback.md, "Order").
fn is_stale(proposal: &ProposalRow, callback: &Callback) -> bool {
    proposal
        .last_event_at
        .is_some_and(|last| callback.occurred_at < last)
}

/// In the caller's transaction: unless `pause_of` is paused, lock the proposal and claim the
/// dedup key (one statement, `proposals::lock_for_callback`), drop it if stale, validate the
/// transition, write the proposal, history, events, outbox and the receipt's outcome, all
/// timestamped `at`.
async fn apply(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    callback: &Callback,
    key: &str,
    pause_of: Option<i64>,
    at: DateTime<Utc>,
) -> Result<Processed, Error> {
    // The proposal row is locked, so a racing twin waits there and then finds the key taken;
    // a racing older callback waits there too and then finds the newer time recorded.
    let (proposal, tenant_name, claimed) =
        match p::lock_for_callback(conn, pause_of, receipt, callback, key, at).await? {
            Locked::Paused => return defer(conn, receipt, at).await,
            Locked::NotFound => {
                return Err(Error::ProposalNotFound {
                    proposal_id: callback.proposal_id.clone(),
                });
            }
            Locked::Found {
                proposal,
                tenant_name,
                claimed,
            } => (proposal, tenant_name, claimed),
        };
    let current = proposal.status;
    let (outcome, status, email_id) = if !claimed {
        // Checked before the time: the same event id with another `sent_at` is the same
        // event delivered again.
        (Outcome::Duplicate, current, None)
    } else if is_stale(&proposal, callback) {
        // The key stays claimed: this event can never be applied later (the proposal's time
        // only moves forward), and a redelivery of it is a `duplicate`.
        (Outcome::Stale, current, None)
    } else {
        match transition(current, callback.status) {
            Transition::Forbidden => {
                return Err(Error::InvalidTransition {
                    from: current,
                    to: callback.status,
                });
            }
            Transition::Unchanged => {
                // The insurer confirmed the status at this time: an older callback is stale.
                // Its writes record the receipt's outcome too.
                let event = p::received_event(receipt, callback);
                applied::write_unchanged(conn, proposal.id, receipt, callback, key, &event, at)
                    .await?;
                return Ok(Processed {
                    outcome: Outcome::Unchanged,
                    proposal_id: Some(callback.proposal_id.clone()),
                    status: Some(current),
                    email_id: None,
                });
            }
            Transition::Allowed => {
                // Its writes record the receipt's outcome too.
                let email_id = apply_transition(
                    conn,
                    receipt,
                    &proposal,
                    tenant_name.as_deref(),
                    callback,
                    key,
                    at,
                )
                .await?;
                return Ok(Processed {
                    outcome: Outcome::Processed,
                    proposal_id: Some(callback.proposal_id.clone()),
                    status: Some(callback.status),
                    email_id: Some(email_id),
                });
            }
        }
    };
    let answered = Answered {
        outcome,
        proposal_id: Some(&callback.proposal_id),
        dedup_key: Some(key),
        event_at: Some(callback.occurred_at),
    };
    receipts::record_outcome(conn, receipt.id, &answered, at).await?;
    Ok(Processed {
        outcome,
        proposal_id: Some(callback.proposal_id.clone()),
        status: Some(status),
        email_id,
    })
}

/// The writes of an accepted transition from the proposal's current status, made at `at` in
/// one statement (`store::applied`), the receipt's outcome included; returns the queued
/// email's id.
async fn apply_transition(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    proposal: &ProposalRow,
    tenant_name: Option<&str>,
    callback: &Callback,
    key: &str,
    at: DateTime<Utc>,
) -> Result<i64, Error> {
    let (from, to) = (proposal.status, callback.status);
    let about = About {
        proposal_id: &proposal.proposal_id,
        tenant_name: tenant_name.unwrap_or(&proposal.tenant_id),
        insurer: receipt.insurer,
    };
    let email = compose(about, to, callback)
        .map_err(|e| Error::Internal(format!("rendering the email: {e}")))?;
    let mut events = vec![
        p::received_event(receipt, callback),
        Event::new("status_changed", json!({"from": from, "to": to})),
    ];
    if from.in_queue() && !to.in_queue() {
        events.push(Event::new("left_queue", json!({"status": to})));
    }
    // `email_queued` follows them, written by the statement that queues the email.
    let accepted = Accepted {
        proposal_pk: proposal.id,
        tenant: &proposal.tenant_id,
        receipt,
        callback,
        from,
        key,
        recipient: &proposal.contact_email,
        email: &email,
        events: &events,
    };
    Ok(applied::write_transition(conn, &accepted, at).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_keys_prefer_the_event_id() {
        let mut cb = Callback {
            proposal_id: "1".into(),
            status: Status::Approved,
            event_id: Some("e1".into()),
            occurred_at: chrono::DateTime::UNIX_EPOCH,
            note: None,
            requirements: vec![],
        };
        assert_eq!(dedup_key(&cb, &[0xab, 0x01]), "event:e1");
        cb.event_id = None;
        assert_eq!(dedup_key(&cb, &[0xab, 0x01]), "sha256:ab01");
    }
}
