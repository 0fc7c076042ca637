//! The telephone's answers (docs/dispatch-telephony.md): a softphone's SIP credentials, and a
//! call as the switch announced it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::times::Phase;
use crate::store::calls::CallFigures;
use crate::store::read::{PhaseStats, within_target_share};

pub use crate::domain::call::{Call, CallEventKind, CallOutcome};

/// `GET /phone-credentials`: the caller's softphone account, valid until `expires_at`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneCredentials {
    /// `<expiry>:<login>`, the SIP authentication username.
    pub username: String,
    /// The SIP password: base64 of HMAC-SHA256(username) under the secret shared with the
    /// switch. Not stored; ask again before `expires_at`.
    pub password: String,
    /// The SIP domain (the realm, and the host of the softphone's address of record).
    pub domain: String,
    /// The softphone's address of record, `sip:<login>@<domain>`.
    pub uri: String,
    /// The switch's WebSocket URL for a WebRTC softphone (null when not configured).
    pub ws_url: Option<String>,
    pub expires_at: DateTime<Utc>,
}

/// `POST /telephony/events`' answer: the call after the event, and whether the event had
/// been received before (then nothing changed).
#[derive(Debug, Serialize, ToSchema)]
pub struct CallRecorded {
    pub call: Call,
    pub replayed: bool,
}

/// The report's telephone (docs/dispatch-routes.md, "Response times"): the calls that rang in
/// the range, all of them, by hour and by day (centre time).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TelephoneReport {
    pub all: CallGroup,
    pub by_hour: Vec<CallGroup>,
    pub by_day: Vec<CallGroup>,
}

/// One group of calls: how many rang, were answered and abandoned, and how fast they were
/// answered.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CallGroup {
    /// The hour (`HH`) or the day (`YYYY-MM-DD`); null for every call.
    #[schema(required = true)]
    pub key: Option<String>,
    /// Calls that rang.
    pub calls: i64,
    /// Calls someone answered.
    pub answered: i64,
    /// Calls that ended unanswered (the caller hung up, or the switch gave up).
    pub abandoned: i64,
    /// `abandoned / (answered + abandoned)`: calls still ringing count in neither; null when
    /// there is none.
    #[schema(required = true)]
    pub abandoned_share: Option<f64>,
    /// The phase `ring_to_answer` of the answered calls, against its target (NENA: 90 %
    /// within 15 s).
    pub ring_to_answer: PhaseStats,
}

impl From<CallFigures> for CallGroup {
    fn from(f: CallFigures) -> Self {
        let ended = f.answered + f.abandoned;
        CallGroup {
            key: f.key,
            calls: f.calls,
            answered: f.answered,
            abandoned: f.abandoned,
            abandoned_share: (ended > 0).then(|| f.abandoned as f64 / ended as f64),
            ring_to_answer: PhaseStats {
                phase: Phase::RingToAnswer,
                count: f.answered,
                p50_seconds: f.p50,
                p90_seconds: f.p90,
                max_seconds: f.max,
                with_target: f.with_target,
                within_target: f.within_target,
                within_target_share: within_target_share(f.within_target, f.with_target),
                missing: 0,
                out_of_order: 0,
            },
        }
    }
}

impl TelephoneReport {
    /// The report of the statement's rows (`store::calls::figures`: one `all`, then the
    /// hours and the days).
    pub fn of(rows: Vec<CallFigures>) -> Self {
        let mut report = TelephoneReport {
            all: CallGroup::from(CallFigures {
                grouping: "all".into(),
                key: None,
                calls: 0,
                answered: 0,
                abandoned: 0,
                p50: None,
                p90: None,
                max: None,
                with_target: 0,
                within_target: 0,
            }),
            by_hour: Vec::new(),
            by_day: Vec::new(),
        };
        for row in rows {
            match row.grouping.as_str() {
                "hour" => report.by_hour.push(row.into()),
                "day" => report.by_day.push(row.into()),
                _ => report.all = row.into(),
            }
        }
        report
    }
}
