//! Stored callbacks as an operator reads them (`GET /admin/receipts`, a proposal's story, the
//! console's callback log), and the checks of the receipts' filter, written once: the JSON
//! routes answer a [`FilterRefusal`] as problem+json, the console says it in pt-BR.

use chrono::{DateTime, Utc};
use common::Problem;
use diesel_async::AsyncPgConnection;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::code::ErrorCode;
use crate::domain::insurer::Insurer;
use crate::domain::status::ReceiptStatus;
use crate::error::Error;
use crate::store::receipts::{self, ReceiptFilter, ReceiptRow};

/// The error codes a failed receipt can carry, as the console's callback log offers them.
pub const FAILURE_CODES: [ErrorCode; 4] = [
    ErrorCode::ProposalNotFound,
    ErrorCode::InvalidTransition,
    ErrorCode::InvalidPayload,
    ErrorCode::MissingField,
];

/// Why a receipts filter names nothing there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterRefusal {
    /// Not a receipt status.
    UnknownStatus,
    /// Neither a receipt status nor the code of a failed receipt ([`FAILURE_CODES`]).
    UnknownOutcome,
    /// Not one of [`Insurer::ALL`].
    UnknownInsurer,
}

impl From<FilterRefusal> for Error {
    /// 400 `invalid_parameter`, naming the parameter and what it may be.
    fn from(r: FilterRefusal) -> Self {
        let statuses = || -> Vec<&str> { ReceiptStatus::ALL.iter().map(|s| s.as_str()).collect() };
        let (field, may_be) = match r {
            FilterRefusal::UnknownStatus => ("status", statuses()),
            FilterRefusal::UnknownOutcome => (
                "status",
                statuses()
                    .into_iter()
                    .chain(FAILURE_CODES.iter().map(|c| c.as_str()))
                    .collect(),
            ),
            FilterRefusal::UnknownInsurer => {
                ("insurer", Insurer::ALL.map(Insurer::as_str).to_vec())
            }
        };
        Problem::invalid_parameter(field, format!("must be one of {}", may_be.join(", "))).into()
    }
}

/// The receipt status a filter names.
pub fn status(raw: Option<&str>) -> Result<Option<ReceiptStatus>, FilterRefusal> {
    raw.map(|s| ReceiptStatus::parse(s).ok_or(FilterRefusal::UnknownStatus))
        .transpose()
}

/// The outcome a filter names: a receipt status, or the code of a failed receipt (as a
/// failed status with that code).
pub fn outcome(raw: &str) -> Result<(ReceiptStatus, Option<ErrorCode>), FilterRefusal> {
    if let Some(status) = ReceiptStatus::parse(raw) {
        return Ok((status, None));
    }
    FAILURE_CODES
        .into_iter()
        .find(|c| c.as_str() == raw)
        .map(|code| (ReceiptStatus::Failed, Some(code)))
        .ok_or(FilterRefusal::UnknownOutcome)
}

/// The insurer a filter names.
pub fn insurer(raw: Option<String>) -> Result<Option<Insurer>, FilterRefusal> {
    raw.map(|i| Insurer::parse(&i).ok_or(FilterRefusal::UnknownInsurer))
        .transpose()
}

/// A stored callback as an operator sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptView {
    pub id: i64,
    #[schema(value_type = String)]
    pub insurer: Insurer,
    pub received_at: DateTime<Utc>,
    pub status: ReceiptStatus,
    /// What to show in one column: the error code of a failed receipt (`proposal_not_found`,
    /// `invalid_transition`, ...), its status otherwise.
    #[schema(example = "proposal_not_found")]
    pub outcome: String,
    /// The answer's HTTP status (202 for `deferred`); null while `received`.
    pub http_status: Option<i16>,
    pub error_code: Option<String>,
    /// Why it failed, as the insurer was told.
    pub error_detail: Option<String>,
    /// The proposal it concerned, when the body names one (also for a body that failed).
    pub proposal_id: Option<String>,
    /// The insurer's event time, once the body was read.
    pub event_at: Option<DateTime<Utc>>,
    /// How many times it was processed (live, swept, replayed).
    pub attempts: i32,
    /// When its last outcome was recorded.
    pub processed_at: Option<DateTime<Utc>>,
    /// The headers kept (never `Authorization`).
    pub headers: serde_json::Value,
    /// The body exactly as received (invalid UTF-8 replaced); empty once erased.
    pub body: String,
    /// When the body was erased, past its tenant's retention (LGPD); null while it is kept.
    /// Everything else about the receipt stays; it can no longer be replayed.
    pub body_erased_at: Option<DateTime<Utc>>,
}

impl From<ReceiptRow> for ReceiptView {
    fn from(r: ReceiptRow) -> Self {
        Self {
            id: r.id,
            insurer: r.insurer,
            received_at: r.received_at,
            status: r.status,
            outcome: match (&r.error_code, r.status) {
                (Some(code), ReceiptStatus::Failed) => code.clone(),
                _ => r.status.as_str().to_owned(),
            },
            http_status: r.http_status,
            error_code: r.error_code,
            error_detail: r.error_detail,
            proposal_id: r.proposal_id,
            event_at: r.event_at,
            attempts: r.attempts,
            processed_at: r.processed_at,
            headers: r.headers,
            body: String::from_utf8_lossy(&r.body).into_owned(),
            body_erased_at: r.body_erased_at,
        }
    }
}

/// `tenant`'s receipts that `filter` matches, newest first, with ids below `before_id`, at
/// most `limit`.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    filter: &ReceiptFilter,
    before_id: Option<i64>,
    limit: i64,
) -> Result<Vec<ReceiptView>, Error> {
    let rows = receipts::list(conn, tenant, filter, before_id, limit).await?;
    Ok(rows.into_iter().map(ReceiptView::from).collect())
}

/// `tenant`'s receipt `id`; `not_found` for none, or another tenant's.
pub async fn find(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
) -> Result<ReceiptView, Error> {
    receipts::find_row(conn, tenant, id)
        .await?
        .map(ReceiptView::from)
        .ok_or(Error::ReceiptNotFound(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_the_filter_names_is_a_receipt_status() {
        assert_eq!(status(Some("failed")), Ok(Some(ReceiptStatus::Failed)));
        assert_eq!(status(None), Ok(None));
        assert_eq!(status(Some("lost")), Err(FilterRefusal::UnknownStatus));
    }

    #[test]
    fn an_outcome_is_a_status_or_the_code_of_a_failed_receipt() {
        assert_eq!(outcome("stale"), Ok((ReceiptStatus::Stale, None)));
        assert_eq!(
            outcome("missing_field"),
            Ok((ReceiptStatus::Failed, Some(ErrorCode::MissingField)))
        );
        assert_eq!(outcome("internal"), Err(FilterRefusal::UnknownOutcome));
    }

    #[test]
    fn an_insurer_the_filter_names_is_a_known_one() {
        assert_eq!(insurer(Some("too".into())), Ok(Some(Insurer::Too)));
        assert_eq!(
            insurer(Some("acme".into())),
            Err(FilterRefusal::UnknownInsurer)
        );
    }

    #[test]
    fn a_refusal_answers_400_naming_the_parameter_and_what_it_may_be() {
        let p = Error::from(FilterRefusal::UnknownInsurer).problem();
        assert_eq!((p.status, p.code.as_ref()), (400, "invalid_parameter"));
        assert!(
            p.detail.contains("must be one of porto, tokio, too"),
            "{}",
            p.detail
        );
        let p = Error::from(FilterRefusal::UnknownStatus).problem();
        assert!(p.detail.contains("`status`"), "{}", p.detail);
    }
}
