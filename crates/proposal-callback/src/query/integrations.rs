//! An integration as its tenant's admin reads it (`GET /admin/integrations`, the answers of
//! its actions, the console's integrations page), with its last registration attempt, its
//! last callback and whether its insurer is silent.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::insurer::Insurer;
use crate::error::Error;
use crate::registration::config::Environment;
use crate::store::integrations::{self, IntegrationRow};
use crate::store::registration_attempts::{self, AttemptRow};
use crate::store::silences::{self, Watched};

/// An integration as its tenant's admin sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntegrationView {
    pub id: i64,
    /// `porto`, `tokio` or `too`.
    #[schema(value_type = String, example = "porto")]
    pub insurer: Insurer,
    /// `homologation` or `production`: which of the insurer's URLs registration uses.
    #[schema(example = "homologation")]
    pub environment: Environment,
    /// True once the insurer accepted our callback registration (HTTP 200).
    pub is_callback_active: bool,
    /// When the insurer last accepted it.
    pub callback_registered_at: Option<DateTime<Utc>>,
    /// Since when it is paused (its callbacks are stored and answered 202 `deferred`); null
    /// when it is not.
    pub paused_at: Option<DateTime<Utc>>,
    /// The last RegisterCallback attempt and how it ended; null before the first.
    pub last_registration: Option<RegistrationAttemptView>,
    /// When its newest callback arrived; null before the first.
    pub last_callback_at: Option<DateTime<Utc>>,
    /// Since when its insurer is silent: the arrival of the last callback before a silence
    /// longer than its rhythm allows (docs/proposal-callback.md, "Silent insurers"); null
    /// when it is not silent (a callback that arrives clears it at once here).
    pub silent_since: Option<DateTime<Utc>>,
    /// How long a silence of it could last before it was flagged (`max(k x usual gap,
    /// floor)`, in seconds); null when it is not silent.
    pub silence_threshold_seconds: Option<f64>,
}

/// One RegisterCallback attempt and how it ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegistrationAttemptView {
    /// When it was asked for.
    pub started_at: DateTime<Utc>,
    /// When its outcome was recorded.
    pub finished_at: DateTime<Utc>,
    /// `registered`, or the error code: `insurer_rejected`, `insurer_timeout`,
    /// `insurer_unreachable`, `insurer_error`, `not_configured`, `registration_superseded`.
    #[schema(example = "insurer_rejected")]
    pub outcome: String,
    /// The insurer's HTTP status when it answered (200 when registered); null when it did
    /// not answer or was not called.
    #[schema(example = 503)]
    pub insurer_status: Option<i16>,
    /// Why it failed, as the operator was told; null when registered.
    pub detail: Option<String>,
    /// Who asked for it (the admin token's `sub`).
    #[schema(example = "operator")]
    pub requested_by: String,
}

impl From<AttemptRow> for RegistrationAttemptView {
    fn from(a: AttemptRow) -> Self {
        Self {
            started_at: a.started_at,
            finished_at: a.finished_at,
            outcome: a.outcome,
            insurer_status: a.insurer_status,
            detail: a.detail,
            requested_by: a.admin,
        }
    }
}

impl IntegrationView {
    pub fn new(
        r: IntegrationRow,
        last_registration: Option<AttemptRow>,
        watched: Option<&Watched>,
    ) -> Self {
        let last_callback_at = watched.and_then(|w| w.last_callback_at);
        // Flagged, and no callback since: still silent.
        let silence = watched
            .filter(|w| {
                w.silent_since
                    .is_some_and(|since| last_callback_at.is_none_or(|last| last <= since))
            })
            .and_then(|w| w.silent_since.zip(w.silence_threshold_seconds));
        Self {
            id: r.id,
            insurer: r.insurer,
            environment: r.environment,
            is_callback_active: r.is_callback_active,
            callback_registered_at: r.callback_registered_at,
            paused_at: r.paused_at,
            last_registration: last_registration.map(RegistrationAttemptView::from),
            last_callback_at,
            silent_since: silence.map(|(since, _)| since),
            silence_threshold_seconds: silence.map(|(_, threshold)| threshold),
        }
    }

    /// The integration with its last registration attempt read from the database.
    pub async fn load(
        conn: &mut diesel_async::AsyncPgConnection,
        r: IntegrationRow,
    ) -> Result<Self, Error> {
        let last = registration_attempts::latest(conn, r.id).await?;
        let watched = silences::watched(conn, Some(&r.tenant_id)).await?;
        let watched = watched.iter().find(|w| w.integration_id == r.id);
        Ok(Self::new(r, last, watched))
    }

    /// The tenant's integrations, by id, each with its last registration attempt.
    pub async fn list(
        conn: &mut diesel_async::AsyncPgConnection,
        tenant: &str,
    ) -> Result<Vec<Self>, Error> {
        let rows = integrations::list(conn, tenant).await?;
        let mut last = registration_attempts::latest_of_tenant(conn, tenant).await?;
        let watched = silences::watched(conn, Some(tenant)).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let attempt = last.remove(&r.id);
                let w = watched.iter().find(|w| w.integration_id == r.id);
                Self::new(r, attempt, w)
            })
            .collect())
    }
}
