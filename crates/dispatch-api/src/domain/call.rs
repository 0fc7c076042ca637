//! The telephone (docs/dispatch-telephony.md): a call as the switch announces it, ringing,
//! answered, ended, kept by its SIP Call-ID; which event may follow which; and the
//! softphones' short-lived SIP credentials.
//!
//! An event is idempotent: the same event sent again (the switch retrying) changes nothing
//! and is answered as before. An event that contradicts what was recorded (answered twice by
//! two people, ended before it rang, answered after it ended) is refused and changes nothing.

use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use common::text_enum;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::refusal::{FieldFault, Refusal};

text_enum! {
    /// What the switch tells of a call.
    pub enum CallEventKind {
        /// The phone rings at the centre: who calls, which number, when.
        Ringing = "ringing",
        /// Someone picked it up: which softphone (a user's login, or an extension), when.
        Answered = "answered",
        /// The call ended, answered or not.
        Ended = "ended",
    }
}

text_enum! {
    /// How a call ended: `answered`, or `abandoned` when the caller hung up (or the switch
    /// gave up) before anyone answered.
    pub enum CallOutcome {
        Answered = "answered",
        Abandoned = "abandoned",
    }
}

/// A call as recorded: what the switch told, and the prank calls its number had when it
/// rang.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Call {
    /// The SIP Call-ID.
    pub call_id: String,
    /// The caller's number as the switch sent it (null: withheld).
    pub caller: Option<String>,
    /// The number called (the centre's).
    pub called: String,
    /// Prank calls recorded from the caller's number when it rang.
    pub prank_calls: i32,
    pub rang_at: DateTime<Utc>,
    pub answered_at: Option<DateTime<Utc>>,
    /// The softphone that answered: a user's login, or an extension.
    pub answered_by: Option<String>,
    /// The user whose login answered, when it is one.
    pub answered_user_id: Option<i64>,
    pub ended_at: Option<DateTime<Utc>>,
    /// Set once the call ended.
    pub outcome: Option<CallOutcome>,
    /// The incident the call became (`POST /incident` with `call_id`).
    pub incident_id: Option<i64>,
}

/// One event of the switch, its shape checked.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    Ringing {
        caller: Option<String>,
        called: String,
    },
    Answered {
        by: String,
    },
    Ended,
}

impl CallEvent {
    pub fn kind(&self) -> CallEventKind {
        match self {
            CallEvent::Ringing { .. } => CallEventKind::Ringing,
            CallEvent::Answered { .. } => CallEventKind::Answered,
            CallEvent::Ended => CallEventKind::Ended,
        }
    }
}

/// How far an event's time may lie ahead of the centre's clock (two machines' clocks).
pub const EVENT_MAX_SKEW: Duration = Duration::seconds(5);
/// How old an event may be: the switch retries for minutes, never a day later.
pub const EVENT_MAX_AGE: Duration = Duration::hours(24);

/// An event's time, judged against the centre's clock `now`.
pub fn event_time(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, Refusal> {
    let fault = |message: &str| {
        Refusal::InvalidFields(vec![FieldFault {
            field: "at".into(),
            message: message.into(),
        }])
    };
    if at > now + EVENT_MAX_SKEW {
        Err(fault("must not be in the future"))
    } else if now - at > EVENT_MAX_AGE {
        Err(fault("must be within the last 24 hours"))
    } else {
        Ok(at)
    }
}

/// What an event does to the call recorded so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// The call as it is after the event: to be written and told.
    Changed(Call),
    /// The event was received before: nothing changes, the call is answered as it is.
    Replayed,
}

/// The refusal of an event that contradicts the call (409 `call_out_of_order`).
fn out_of_order(call_id: &str, message: String) -> Refusal {
    Refusal::CallOutOfOrder(format!("call `{call_id}`: {message}"))
}

/// Judges `event` against the call recorded so far (`None`: never announced). The event
/// happened at `sent_at` as the switch stamped it, else when it is received, `now`; an event
/// sent again without a time is the same event whatever time it arrives. `user_id` is the
/// user whose login answered, if any.
pub fn apply(
    current: Option<&Call>,
    call_id: &str,
    event: &CallEvent,
    sent_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    prank_calls: i32,
    user_id: Option<i64>,
) -> Result<Applied, Refusal> {
    let at = sent_at.unwrap_or(now);
    let same_time = |recorded: DateTime<Utc>| sent_at.is_none_or(|a| a == recorded);
    let Some(call) = current else {
        return match event {
            CallEvent::Ringing { caller, called } => Ok(Applied::Changed(Call {
                call_id: call_id.to_owned(),
                caller: caller.clone(),
                called: called.clone(),
                prank_calls,
                rang_at: at,
                answered_at: None,
                answered_by: None,
                answered_user_id: None,
                ended_at: None,
                outcome: None,
                incident_id: None,
            })),
            _ => Err(Refusal::NotFound(format!(
                "call `{call_id}` was never announced ringing; send `ringing` first"
            ))),
        };
    };
    match event {
        CallEvent::Ringing { caller, called } => {
            if same_time(call.rang_at) && &call.caller == caller && &call.called == called {
                Ok(Applied::Replayed)
            } else {
                Err(out_of_order(
                    call_id,
                    format!("it already rang at {}", call.rang_at.to_rfc3339()),
                ))
            }
        }
        CallEvent::Answered { by } => match (&call.answered_at, &call.answered_by) {
            (Some(when), Some(who)) if same_time(*when) && who == by => Ok(Applied::Replayed),
            (Some(when), Some(who)) => Err(out_of_order(
                call_id,
                format!(
                    "it was already answered by `{who}` at {}",
                    when.to_rfc3339()
                ),
            )),
            _ if call.ended_at.is_some() => Err(out_of_order(
                call_id,
                "it already ended; an ended call is not answered".into(),
            )),
            _ if at < call.rang_at => Err(out_of_order(
                call_id,
                format!(
                    "`at` is before it rang ({}); a call is answered after it rings",
                    call.rang_at.to_rfc3339()
                ),
            )),
            _ => Ok(Applied::Changed(Call {
                answered_at: Some(at),
                answered_by: Some(by.clone()),
                answered_user_id: user_id,
                ..call.clone()
            })),
        },
        CallEvent::Ended => match call.ended_at {
            Some(when) if same_time(when) => Ok(Applied::Replayed),
            Some(when) => Err(out_of_order(
                call_id,
                format!("it already ended at {}", when.to_rfc3339()),
            )),
            None => {
                let since = call.answered_at.unwrap_or(call.rang_at);
                if at < since {
                    return Err(out_of_order(
                        call_id,
                        format!(
                            "`at` is before it {} ({})",
                            if call.answered_at.is_some() {
                                "was answered"
                            } else {
                                "rang"
                            },
                            since.to_rfc3339()
                        ),
                    ));
                }
                Ok(Applied::Changed(Call {
                    ended_at: Some(at),
                    outcome: Some(if call.answered_at.is_some() {
                        CallOutcome::Answered
                    } else {
                        CallOutcome::Abandoned
                    }),
                    ..call.clone()
                }))
            }
        },
    }
}

/// A softphone's SIP credentials in the shared-secret scheme of Kamailio's `auth_ephemeral`
/// and coturn (docs/dispatch-telephony.md, "Softphone credentials"): the username is
/// `<expiry>:<login>` (`expiry` in seconds since the epoch), the password the base64 of the
/// HMAC-SHA256 of the username under the shared secret. Nothing is stored: the switch
/// recomputes the password from the username and refuses it after `expiry`.
pub fn ephemeral_credentials(
    secret: &[u8],
    login: &str,
    expires_at: DateTime<Utc>,
) -> (String, String) {
    let username = format!("{}:{login}", expires_at.timestamp());
    let password = sip_password(secret, &username);
    (username, password)
}

/// The password of `username` under `secret`.
pub fn sip_password(secret: &[u8], username: &str) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(username.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn rang() -> Call {
        let Applied::Changed(call) = apply(
            None,
            "c1",
            &CallEvent::Ringing {
                caller: Some("+5511999990000".into()),
                called: "192".into(),
            },
            Some(t(0)),
            t(0),
            2,
            None,
        )
        .unwrap() else {
            panic!("a new call")
        };
        call
    }

    #[test]
    fn a_call_rings_is_answered_and_ends_answered() {
        let call = rang();
        assert_eq!(call.prank_calls, 2);
        let answered = CallEvent::Answered { by: "tarm".into() };
        let Applied::Changed(call) =
            apply(Some(&call), "c1", &answered, Some(t(7)), t(7), 0, Some(3)).unwrap()
        else {
            panic!()
        };
        assert_eq!(call.answered_user_id, Some(3));
        assert_eq!(
            apply(Some(&call), "c1", &answered, Some(t(7)), t(7), 0, Some(3)),
            Ok(Applied::Replayed)
        );
        let Applied::Changed(call) = apply(
            Some(&call),
            "c1",
            &CallEvent::Ended,
            Some(t(60)),
            t(60),
            0,
            None,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(call.outcome, Some(CallOutcome::Answered));
        assert!(matches!(
            apply(
                Some(&call),
                "c1",
                &CallEvent::Ended,
                Some(t(61)),
                t(61),
                0,
                None
            ),
            Err(Refusal::CallOutOfOrder(_))
        ));
        assert!(matches!(
            apply(
                Some(&call),
                "c1",
                &CallEvent::Answered { by: "x".into() },
                Some(t(61)),
                t(61),
                0,
                None
            ),
            Err(Refusal::CallOutOfOrder(_))
        ));
    }

    #[test]
    fn an_unanswered_call_is_abandoned_and_events_out_of_order_are_refused() {
        let call = rang();
        assert!(matches!(
            apply(None, "c2", &CallEvent::Ended, Some(t(1)), t(1), 0, None),
            Err(Refusal::NotFound(_))
        ));
        assert!(matches!(
            apply(
                Some(&call),
                "c1",
                &CallEvent::Answered { by: "x".into() },
                Some(t(-1)),
                t(-1),
                0,
                None
            ),
            Err(Refusal::CallOutOfOrder(_))
        ));
        let Applied::Changed(ended) = apply(
            Some(&call),
            "c1",
            &CallEvent::Ended,
            Some(t(20)),
            t(20),
            0,
            None,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(ended.outcome, Some(CallOutcome::Abandoned));
    }

    #[test]
    fn an_event_sent_again_without_a_time_is_a_replay_whenever_it_arrives() {
        let call = rang();
        let ringing = CallEvent::Ringing {
            caller: Some("+5511999990000".into()),
            called: "192".into(),
        };
        assert_eq!(
            apply(Some(&call), "c1", &ringing, None, t(30), 0, None),
            Ok(Applied::Replayed)
        );
        assert!(matches!(
            apply(Some(&call), "c1", &ringing, Some(t(30)), t(30), 0, None),
            Err(Refusal::CallOutOfOrder(_))
        ));
    }

    #[test]
    fn credentials_follow_the_shared_secret_scheme() {
        // The REST API for TURN services' example (username `<expiry>:<user>`, HMAC-SHA256).
        let (user, pass) = ephemeral_credentials(b"secret", "tarm", t(0));
        assert_eq!(user, "1800000000:tarm");
        assert_eq!(pass, sip_password(b"secret", "1800000000:tarm"));
        assert_ne!(pass, sip_password(b"other", "1800000000:tarm"));
        assert_eq!(pass.len(), 44);
    }
}
