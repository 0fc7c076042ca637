//! The telephone (docs/dispatch-telephony.md): `POST /telephony/events`, the switch's call
//! events, authenticated by the switch's bearer token and idempotent by the SIP Call-ID; and
//! `GET /telephony/calls/{call_id}`, one call as recorded.

use actix_web::http::StatusCode;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{HttpRequest, web};
use chrono::{DateTime, Utc};
use common::Problem;
use common::extract::{Path, parse_json, require_json};
use serde::Deserialize;
use utoipa::ToSchema;

use base64::Engine;

use crate::domain::Refusal;
use crate::domain::call::{self, CallEvent, CallEventKind};
use crate::domain::refusal::FieldFault;
use crate::error::Error;
use crate::routes::extract::{Caller, TarmOrRegulator};
use crate::routes::{Reply, Routes, ok};
use crate::state::AppState;
use crate::store;
use crate::views::{Call, CallRecorded};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_event, event).add(__path_call, call);
}

/// The longest Call-ID, number or softphone name taken.
const TEXT_MAX: usize = 255;

/// One event of the switch. `ringing` carries `called` and, unless withheld, `caller`;
/// `answered` carries `by`; `ended` nothing more.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallEventBody {
    pub event: CallEventKind,
    /// The SIP Call-ID: the call's key, and what makes the event idempotent.
    pub call_id: String,
    /// When it happened, as the switch stamps it (RFC 3339); default: when it is received.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub at: Option<DateTime<Utc>>,
    /// `ringing`: the caller's number (absent, empty or `anonymous`: withheld).
    pub caller: Option<String>,
    /// `ringing`: the number called.
    pub called: Option<String>,
    /// `answered`: the softphone that answered, a user's login or an extension.
    pub by: Option<String>,
}

/// A text field's trimmed value; none when absent or blank.
fn text(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl CallEventBody {
    /// The event its kind allows, or every field that is wrong for it at once.
    fn judge(self) -> Result<(String, CallEvent, Option<DateTime<Utc>>), Refusal> {
        let mut faults = Vec::new();
        let mut fault = |field: &str, message: &str| {
            faults.push(FieldFault {
                field: field.into(),
                message: message.into(),
            })
        };
        if self.call_id.trim().is_empty() || self.call_id.len() > TEXT_MAX {
            fault("call_id", "must be the SIP Call-ID, 1 to 255 characters");
        }
        for (name, value) in [
            ("caller", &self.caller),
            ("called", &self.called),
            ("by", &self.by),
        ] {
            if value.as_ref().is_some_and(|v| v.len() > TEXT_MAX) {
                fault(name, "must be at most 255 characters");
            }
        }
        let kind = self.event;
        let not_for = |name: &str, v: &Option<String>, faults: &mut Vec<FieldFault>| {
            if v.is_some() {
                faults.push(FieldFault {
                    field: name.into(),
                    message: format!("is not sent with `{}`", kind.as_str()),
                });
            }
        };
        let event = match kind {
            CallEventKind::Ringing => {
                let called = text(&self.called);
                if called.is_none() {
                    fault("called", "is required with `ringing`: the number called");
                }
                not_for("by", &self.by, &mut faults);
                CallEvent::Ringing {
                    caller: text(&self.caller)
                        .filter(|c| !c.eq_ignore_ascii_case("anonymous"))
                        .map(str::to_owned),
                    called: called.unwrap_or_default().to_owned(),
                }
            }
            CallEventKind::Answered => {
                let by = text(&self.by);
                if by.is_none() {
                    fault("by", "is required with `answered`: the login or extension");
                }
                not_for("caller", &self.caller, &mut faults);
                not_for("called", &self.called, &mut faults);
                CallEvent::Answered {
                    by: by.unwrap_or_default().to_owned(),
                }
            }
            CallEventKind::Ended => {
                for (name, v) in [
                    ("caller", &self.caller),
                    ("called", &self.called),
                    ("by", &self.by),
                ] {
                    not_for(name, v, &mut faults);
                }
                CallEvent::Ended
            }
        };
        if faults.is_empty() {
            Ok((self.call_id, event, self.at))
        } else {
            Err(Refusal::InvalidFields(faults))
        }
    }
}

/// The switch's token checked (docs/dispatch-telephony.md, "How the switch signs in"): as
/// `Authorization: Bearer <TELEPHONY_TOKEN>`, or as HTTP Basic with the user `switch` and the
/// token as password (what Kamailio's http_client sends). 503 when no token is configured,
/// 401 otherwise.
fn switch(req: &HttpRequest, state: &AppState) -> Result<(), Error> {
    if !state.telephony.takes_events() {
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "telephony_not_configured",
            "this centre takes no call events: TELEPHONY_TOKEN is not set",
        )
        .into());
    }
    let header = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let presented = if let Some(token) = header.strip_prefix("Bearer ") {
        Some(token.to_owned())
    } else if let Some(basic) = header.strip_prefix("Basic ") {
        base64::engine::general_purpose::STANDARD
            .decode(basic.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|pair| pair.strip_prefix("switch:").map(str::to_owned))
    } else {
        None
    };
    match presented {
        Some(token) if state.telephony.is_switch(&token) => Ok(()),
        Some(_) => Err(Problem::unauthorized("the switch's token is not valid").into()),
        None => Err(Problem::unauthorized(
            "send the switch's token as `Authorization: Bearer <TELEPHONY_TOKEN>` or as HTTP \
             Basic, user `switch`",
        )
        .into()),
    }
}

/// A call event of the telephone system (the switch's own token, not a user's). The same
/// event sent again is answered as before (`replayed`) and changes nothing; one that
/// contradicts the call is 409 `call_out_of_order`, an event for a call never announced
/// ringing 404.
#[utoipa::path(post, path = "/telephony/events", tag = "telephony",
    request_body = CallEventBody,
    responses((status = 200, body = CallRecorded),
        (status = 401, description = "no or a wrong switch token"),
        (status = 404, description = "a call never announced ringing"),
        (status = 409, description = "`call_out_of_order`: the event contradicts the call"),
        (status = 503, description = "`telephony_not_configured`")))]
pub async fn event(req: HttpRequest, state: web::Data<AppState>, body: web::Bytes) -> Reply {
    // The switch first: a forged request learns nothing about the body's rules.
    switch(&req, &state)?;
    require_json(&req)?;
    let body: CallEventBody = parse_json(&body)?;
    let (call_id, event, sent_at) = body.judge()?;
    let now = state.clock.now();
    let sent_at = sent_at.map(|at| call::event_time(at, now)).transpose()?;
    let mut conn = state.pool.get().await?;
    let (call, replayed) = store::calls::record(&mut conn, &call_id, &event, sent_at, now).await?;
    ok(&CallRecorded { call, replayed })
}

/// One call as the switch announced it (call takers and regulators).
#[utoipa::path(get, path = "/telephony/calls/{call_id}", tag = "telephony",
    params(("call_id" = String, Path, description = "the SIP Call-ID")),
    responses((status = 200, body = Call)))]
pub async fn call(
    state: web::Data<AppState>,
    _user: Caller<TarmOrRegulator>,
    call_id: Path<String>,
) -> Reply {
    let conn = state.pool.get().await?;
    match store::calls::find(&conn, &call_id.0).await? {
        Some(call) => ok(&call),
        None => Err(Problem::not_found(format!("call `{}` does not exist", call_id.0)).into()),
    }
}
