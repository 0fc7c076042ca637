//! A proposal's whole story and the tenant's emails as an operator reads them (the admin
//! routes and the console; docs/proposal-callback.md, "Operators"). Every list is oldest
//! first in a story (it reads as a timeline).

use chrono::{DateTime, Utc};
use diesel_async::AsyncPgConnection;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::insurer::Insurer;
use crate::domain::status::Status;
use crate::error::Error;
use crate::query::receipts::{self, ReceiptView};
use crate::store::outbox::{self, Delivery, EmailRow};
use crate::store::proposals::{self, EventRow, HistoryRow};
use crate::store::receipts::ReceiptFilter;

/// The most rows of each kind a story shows (the latest ones); a proposal has a handful.
pub const STORY_MAX: i64 = 500;

/// A proposal as an operator sees it: where it stands and how it got there.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProposalStory {
    /// The proposal's id as the tenant knows it.
    #[schema(example = "99121")]
    pub proposal_id: String,
    pub status: Status,
    /// Whether it waits in the insurer queue (`under_analysis` or `pending`).
    pub in_queue: bool,
    /// Where its emails go.
    pub contact_email: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The insurer's event time of the last callback applied (older ones are `stale`).
    pub last_event_at: Option<DateTime<Utc>>,
    /// Every accepted transition, oldest first.
    pub history: Vec<HistoryView>,
    /// What happened to it (`callback_received`, `status_changed`, `left_queue`,
    /// `email_queued`), oldest first.
    pub events: Vec<EventView>,
    /// The emails its transitions sent, oldest first, with their delivery state.
    pub emails: Vec<EmailView>,
    /// The callbacks that named it (applied, duplicate, stale, failed...), oldest first.
    pub receipts: Vec<ReceiptView>,
}

/// One accepted transition (`integration_history`).
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryView {
    pub id: i64,
    pub from: Status,
    pub to: Status,
    #[schema(value_type = String, example = "too")]
    pub insurer: Insurer,
    /// The insurer's id of the notification, when it sends one.
    pub insurer_event_id: Option<String>,
    /// The insurer's free text.
    pub insurer_note: Option<String>,
    /// The insurer's event time.
    pub insurer_time: Option<DateTime<Utc>>,
    /// The receipt that brought it (null once receipts are pruned).
    pub receipt_id: Option<i64>,
    pub recorded_at: DateTime<Utc>,
}

impl From<HistoryRow> for HistoryView {
    fn from(h: HistoryRow) -> Self {
        Self {
            id: h.id,
            from: h.from_status,
            to: h.to_status,
            insurer: h.insurer,
            insurer_event_id: h.insurer_event_id,
            insurer_note: h.insurer_note,
            insurer_time: h.insurer_time,
            receipt_id: h.receipt_id,
            recorded_at: h.created_at,
        }
    }
}

/// One event recorded on the proposal.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventView {
    pub id: i64,
    /// `callback_received`, `status_changed`, `left_queue` or `email_queued`.
    #[schema(example = "status_changed")]
    pub kind: String,
    /// What the event says, e.g. `{"from": "under_analysis", "to": "pending"}`.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    pub receipt_id: Option<i64>,
    pub recorded_at: DateTime<Utc>,
}

impl From<EventRow> for EventView {
    fn from(e: EventRow) -> Self {
        Self {
            id: e.id,
            kind: e.kind,
            data: e.data,
            receipt_id: e.receipt_id,
            recorded_at: e.created_at,
        }
    }
}

/// An email and where its delivery stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailView {
    pub id: i64,
    /// The proposal it is about.
    pub proposal_id: String,
    /// The transition it announces.
    pub history_id: i64,
    pub recipient: String,
    pub subject: String,
    /// `queued`, `retrying` (the last attempt failed for a reason that may pass; tried
    /// again at `next_attempt_at`), `failed` (the relay refused it for good: not tried again
    /// unless an operator retries it, `POST /admin/emails/{id}/retry`) or `sent`.
    pub status: Delivery,
    /// Attempts so far (each try to hand it to the relay).
    pub attempts: i32,
    /// Why the last attempt failed, with the relay's answer (null once sent).
    pub last_error: Option<String>,
    /// When the worker tries it next; null once sent or failed.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub queued_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// When the relay refused it for good; null unless `failed`.
    pub failed_at: Option<DateTime<Utc>>,
    /// Its `Message-ID` header (`<uuid@domain>`), the same on every attempt; null before the
    /// first. What a mail system's logs or a forwarded copy show of it.
    #[schema(example = "<0b6f2a8e-3c1d-4f5e-9a7b-2c8d1e4f6a90@demo-a.example.com>")]
    pub message_id: Option<String>,
}

impl From<EmailRow> for EmailView {
    fn from(e: EmailRow) -> Self {
        let status = e.delivery();
        Self {
            id: e.id,
            proposal_id: e.proposal,
            history_id: e.history_id,
            recipient: e.recipient,
            subject: e.subject,
            status,
            attempts: e.attempts,
            last_error: e.last_error,
            next_attempt_at: matches!(status, Delivery::Queued | Delivery::Retrying)
                .then_some(e.next_attempt_at),
            queued_at: e.created_at,
            sent_at: e.sent_at,
            failed_at: e.failed_at,
            message_id: e.message_id,
        }
    }
}

impl ProposalStory {
    /// `tenant`'s proposal `proposal_id` and its story (the latest [`STORY_MAX`] rows of each
    /// kind, oldest first); `proposal_not_found` for none, or another tenant's.
    pub async fn load(
        conn: &mut AsyncPgConnection,
        tenant: &str,
        proposal_id: String,
    ) -> Result<Self, Error> {
        let p = proposals::find_detail(conn, tenant, &proposal_id)
            .await?
            .ok_or(Error::ProposalNotFound { proposal_id })?;
        let history = proposals::history(conn, p.id, STORY_MAX).await?;
        let events = proposals::events(conn, p.id, STORY_MAX).await?;
        let mut emails =
            outbox::list(conn, tenant, Some(&p.proposal_id), None, None, STORY_MAX).await?;
        emails.reverse();
        let filter = ReceiptFilter {
            proposal_id: Some(p.proposal_id.clone()),
            ..ReceiptFilter::default()
        };
        let mut receipts = receipts::list(conn, tenant, &filter, None, STORY_MAX).await?;
        receipts.reverse();
        Ok(ProposalStory {
            proposal_id: p.proposal_id,
            status: p.status,
            in_queue: p.in_queue,
            contact_email: p.contact_email,
            created_at: p.created_at,
            updated_at: p.updated_at,
            last_event_at: p.last_event_at,
            history: history.into_iter().map(HistoryView::from).collect(),
            events: events.into_iter().map(EventView::from).collect(),
            emails: emails.into_iter().map(EmailView::from).collect(),
            receipts,
        })
    }
}
