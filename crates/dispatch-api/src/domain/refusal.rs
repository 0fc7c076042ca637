//! Why the dispatch centre's rules refuse a request. Each refusal is a client error with a
//! stable `code` (docs/dispatch-realtime.md, "Writes"); `crate::error` maps them to responses.

use super::dispatch::VehicleType;
use super::user::{Profile, titles};

/// One named wrong field: which one, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldFault {
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `what` (incident, dispatch) is in `from`; `requested` is not allowed from there.
    #[error("the {what} is `{from}`; `{requested}` is not allowed from there")]
    InvalidTransition {
        what: &'static str,
        from: &'static str,
        requested: String,
    },
    /// The caller read an older version than the incident's `current` one.
    #[error("the incident changed since you read it (it is at version {current}); read it again")]
    VersionConflict { current: i32 },
    /// A record named in the path does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A body field names a record that does not exist or may not be used.
    #[error("body field `{}`: {}", .0.field, .0.message)]
    InvalidReference(FieldFault),
    /// Body fields that break the form's rules (all of them, so the client fixes them at once).
    #[error("{}", describe(.0))]
    InvalidFields(Vec<FieldFault>),
    /// `occurrence.type` names no active occurrence type; `allowed` are the active ones.
    #[error(
        "body field `occurrence.type`: `{value}` is not an occurrence type (one of: {})",
        allowed.join(", ")
    )]
    UnknownOccurrenceType { value: String, allowed: Vec<String> },
    /// A PATCH that names no field.
    #[error("send at least one field to change")]
    NothingToChange,
    #[error("mobile unit {0} is inactive")]
    UnitInactive(i64),
    /// The unit is on a dispatch that is not released: of `holder` (the incident's id and
    /// number) when it was read before the write, unknown when a simultaneous dispatch took
    /// it first.
    #[error("mobile unit {unit} is {}", busy_on(holder))]
    UnitBusy {
        unit: i64,
        holder: Option<(i64, String)>,
    },
    #[error("a mobile unit is still assigned to this incident; release it first")]
    UnitAssigned,
    /// The unit is not of the vehicle type the latest technical decision asks for, and no
    /// `override_reason` was given.
    #[error(
        "the latest technical decision asks for a {} (type {}) but mobile unit {unit} is a {} \
         (type {}); send `override_reason` to dispatch it anyway",
        requested.name, requested.id, offered.name, offered.id
    )]
    VehicleTypeMismatch {
        unit: i64,
        requested: VehicleType,
        offered: VehicleType,
    },
    /// The caller's `profile` may not use this route; `allowed` may.
    #[error(
        "the {} profile may not use this route (used by {})",
        profile.title(),
        titles(allowed)
    )]
    Forbidden {
        profile: Profile,
        allowed: &'static [Profile],
    },
    /// The token is fine but its user may not call (inactive, gone).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// A unit on a dispatch that is not released may not be deactivated, moved or re-crewed.
    #[error("mobile unit {0} is on a dispatch that is not released; change it once released")]
    UnitDispatched(i64),
    /// The person is already in a team: release them first.
    #[error("user {user} is already allocated to team {team}; release them first")]
    AlreadyAllocated { user: i64, team: i32 },
    /// The person is not in the team named.
    #[error("user {user} is not allocated to team {team}")]
    NotAllocated { user: i64, team: i32 },
    /// A telephone event that contradicts the call as recorded (docs/dispatch-telephony.md).
    #[error("{0}")]
    CallOutOfOrder(String),
    /// An `Idempotency-Key` sent again with another request.
    #[error("this Idempotency-Key was used for another request; use a new key per request")]
    IdempotencyKeyReused,
}

impl Refusal {
    pub fn not_found(what: &str, id: i64) -> Self {
        Refusal::NotFound(format!("{what} {id} does not exist"))
    }

    /// 422 naming the body field whose reference is not usable.
    pub fn unusable(field: &str, message: impl Into<String>) -> Self {
        Refusal::InvalidReference(FieldFault {
            field: field.to_owned(),
            message: message.into(),
        })
    }
}

fn describe(faults: &[FieldFault]) -> String {
    match faults {
        [one] => format!("body field `{}`: {}", one.field, one.message),
        many => format!(
            "body fields {}",
            many.iter()
                .map(|e| format!("`{}`: {}", e.field, e.message))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// Where a busy unit is, for [`Refusal::UnitBusy`]'s message.
pub fn busy_on(holder: &Option<(i64, String)>) -> String {
    match holder {
        Some((id, number)) => {
            format!("on incident {number} (id {id}), whose dispatch is not released")
        }
        None => "on another dispatch that is not released".to_owned(),
    }
}
