//! The proposal state machine and ProcessProposalCallback: what a parsed callback does to a
//! proposal. No HTTP here; the queries live in `store`.

use std::fmt;

use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::Error;
use crate::insurer::{self, Callback};
use crate::store::{self, receipts::Receipt};

/// Internal proposal statuses (CONTRACT §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    UnderAnalysis,
    Pending,
    Approved,
    Refused,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::UnderAnalysis,
        Status::Pending,
        Status::Approved,
        Status::Refused,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::UnderAnalysis => "under_analysis",
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Refused => "refused",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A proposal waits in the insurer queue while the insurer still has to decide.
    pub fn in_queue(self) -> bool {
        matches!(self, Status::UnderAnalysis | Status::Pending)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a callback's status does to a proposal in a given status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The proposal already has that status: nothing to do, answered 200 `unchanged`.
    Unchanged,
    /// Apply it.
    Allowed,
    /// 409 `invalid_transition`.
    Forbidden,
}

/// The allowed moves by callback, as data: from each status, where a callback may take it.
/// `approved` and `refused` are final.
const ALLOWED: [(Status, &[Status]); 4] = [
    (
        Status::UnderAnalysis,
        &[Status::Pending, Status::Approved, Status::Refused],
    ),
    (
        Status::Pending,
        &[Status::Approved, Status::Refused, Status::UnderAnalysis],
    ),
    (Status::Approved, &[]),
    (Status::Refused, &[]),
];

pub fn transition(from: Status, to: Status) -> Transition {
    if from == to {
        return Transition::Unchanged;
    }
    let allowed = ALLOWED
        .iter()
        .find(|(f, _)| *f == from)
        .is_some_and(|(_, to_list)| to_list.contains(&to));
    if allowed {
        Transition::Allowed
    } else {
        Transition::Forbidden
    }
}

/// How a callback ended, as the 200 body's `result` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The transition was applied (and its email queued).
    Processed,
    /// The same notification was applied before; nothing changed.
    Duplicate,
    /// The proposal already had that status; nothing changed.
    Unchanged,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Processed => "processed",
            Outcome::Duplicate => "duplicate",
            Outcome::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub outcome: Outcome,
    pub proposal_id: String,
    pub status: Status,
    /// The outbox row queued by this callback, if it queued one.
    pub email_id: Option<i64>,
}

/// The redelivery key of a callback: the insurer's event id, or the body's SHA-256 for an
/// insurer that sends none (too). Prefixed so the two kinds can never collide.
pub fn dedup_key(callback: &Callback, body_sha256: &[u8]) -> String {
    match &callback.event_id {
        Some(id) => format!("event:{id}"),
        None => format!("sha256:{}", hex(body_sha256)),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Parses a stored receipt with its insurer's parser and applies it (ProcessProposalCallback).
/// Live callbacks and replays both come here, so they follow the same rules. The receipt's
/// outcome is recorded: in the applying transaction on success, afterwards on a failure.
pub async fn handle_receipt(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
) -> Result<Processed, Error> {
    let result = parse_and_apply(conn, receipt).await;
    if let Err(e) = &result
        && e.is_client_error()
    {
        // Best effort: the callback's answer does not depend on this note being written,
        // and an outage here is reported by the answer itself.
        if let Err(db) = store::receipts::record_failure(conn, receipt.id, e).await {
            tracing::warn!(receipt = receipt.id, error = %db, "could not record a receipt's failure");
        }
    }
    result
}

async fn parse_and_apply(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
) -> Result<Processed, Error> {
    let parser = insurer::parser_for(&receipt.insurer)
        .ok_or_else(|| Error::UnknownInsurer(receipt.insurer.clone()))?;
    let callback = parser.parse(&receipt.body)?;
    // The tenant comes from the URL the callback arrived on (stored on the receipt), never
    // from the payload.
    let key = dedup_key(&callback, &receipt.body_sha256);
    conn.transaction::<_, Error, _>(async |conn| apply(conn, receipt, &callback, &key).await)
        .await
}

/// One transaction: lock the proposal, claim the dedup key, validate the transition, write
/// the proposal, history, events, outbox and the receipt's outcome.
async fn apply(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    callback: &Callback,
    key: &str,
) -> Result<Processed, Error> {
    use store::proposals as p;
    let proposal = p::lock(conn, &receipt.tenant_id, &callback.proposal_id)
        .await?
        .ok_or_else(|| Error::ProposalNotFound {
            proposal_id: callback.proposal_id.clone(),
        })?;
    let current = Status::parse(&proposal.status)
        .ok_or_else(|| Error::Internal(format!("unknown stored status {:?}", proposal.status)))?;
    // The proposal row is locked, so a racing twin waits here and then finds the key taken.
    let claimed = p::claim_dedup_key(conn, receipt, proposal.id, key, callback.status).await?;
    let (outcome, status, email_id) = if !claimed {
        (Outcome::Duplicate, current, None)
    } else {
        match transition(current, callback.status) {
            Transition::Forbidden => {
                return Err(Error::InvalidTransition {
                    from: current,
                    to: callback.status,
                });
            }
            Transition::Unchanged => {
                let event = p::received_event(receipt, callback);
                p::insert_events(conn, proposal.id, receipt.id, &[event]).await?;
                (Outcome::Unchanged, current, None)
            }
            Transition::Allowed => {
                let email_id =
                    apply_transition(conn, receipt, &proposal, current, callback).await?;
                (Outcome::Processed, callback.status, Some(email_id))
            }
        }
    };
    store::receipts::record_outcome(conn, receipt.id, outcome, &callback.proposal_id, key).await?;
    Ok(Processed {
        outcome,
        proposal_id: callback.proposal_id.clone(),
        status,
        email_id,
    })
}

/// The writes of an accepted transition; returns the queued email's id.
async fn apply_transition(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    proposal: &store::proposals::ProposalRow,
    from: Status,
    callback: &Callback,
) -> Result<i64, Error> {
    use serde_json::json;
    use store::proposals as p;
    let to = callback.status;
    p::set_status(conn, proposal.id, to).await?;
    let history_id = p::insert_history(conn, proposal.id, receipt, from, callback).await?;
    let email = crate::email::compose(&proposal.proposal_id, to, callback);
    let email_id = store::outbox::enqueue(
        conn,
        proposal.id,
        history_id,
        &proposal.contact_email,
        &email,
    )
    .await?;
    let mut events = vec![
        p::received_event(receipt, callback),
        p::Event::new("status_changed", json!({"from": from, "to": to})),
    ];
    if from.in_queue() && !to.in_queue() {
        events.push(p::Event::new("left_queue", json!({"status": to})));
    }
    events.push(p::Event::new("email_queued", json!({"email_id": email_id})));
    p::insert_events(conn, proposal.id, receipt.id, &events).await?;
    Ok(email_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    #[test]
    fn transition_table_every_pair() {
        let expected = |from: Status, to: Status| -> Transition {
            match (from, to) {
                _ if from == to => Transition::Unchanged,
                (UnderAnalysis, Pending | Approved | Refused) => Transition::Allowed,
                (Pending, Approved | Refused | UnderAnalysis) => Transition::Allowed,
                _ => Transition::Forbidden,
            }
        };
        let mut seen = 0;
        for from in Status::ALL {
            for to in Status::ALL {
                assert_eq!(transition(from, to), expected(from, to), "{from} -> {to}");
                seen += 1;
            }
        }
        assert_eq!(seen, 16);
        assert_eq!(transition(Approved, Refused), Transition::Forbidden);
        assert_eq!(transition(Refused, Pending), Transition::Forbidden);
        assert_eq!(transition(Approved, Approved), Transition::Unchanged);
    }

    #[test]
    fn queue_membership_and_names() {
        assert!(UnderAnalysis.in_queue() && Pending.in_queue());
        assert!(!Approved.in_queue() && !Refused.in_queue());
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(Status::parse("APPROVED"), None);
    }

    #[test]
    fn dedup_keys_prefer_the_event_id() {
        let mut cb = Callback {
            proposal_id: "1".into(),
            status: Approved,
            event_id: Some("e1".into()),
            occurred_at: None,
            note: None,
            requirements: vec![],
        };
        assert_eq!(dedup_key(&cb, &[0xab, 0x01]), "event:e1");
        cb.event_id = None;
        assert_eq!(dedup_key(&cb, &[0xab, 0x01]), "sha256:ab01");
    }
}
