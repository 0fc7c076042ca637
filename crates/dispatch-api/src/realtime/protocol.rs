//! The WebSocket protocol's frames (docs/dispatch-realtime.md, "WebSocket protocol"): what a
//! client may ask ([`ClientMessage`]) and what the server sends ([`ServerMessage`]), both
//! JSON text frames, described in the OpenAPI document as `WsClientMessage` and
//! `WsServerMessage`.

use actix_web::web::Bytes;
use serde::{Deserialize, Serialize};

use super::notice::OffloadNotice;
use super::outbox::{self, Opcode};
use crate::domain::call::{Call, CallEventKind};
use crate::domain::incident::State;
use crate::domain::queue::Queue;
use crate::views::{OffloadAlert, OffloadCleared, UnitStep};

/// Client -> server messages: JSON text frames naming either an incident or a work queue
/// (an open state).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", deny_unknown_fields)]
#[schema(as = WsClientMessage)]
pub enum ClientMessage {
    /// Follow an incident (`incident_id`) or a queue (`queue`: a work queue, an open
    /// state, `offload`, `mine` or `fleet`); one of the two.
    #[serde(rename = "subscribe")]
    Subscribe {
        incident_id: Option<i64>,
        queue: Option<Queue>,
    },
    /// Stop following it; nothing more is sent for it.
    #[serde(rename = "unsubscribe")]
    Unsubscribe {
        incident_id: Option<i64>,
        queue: Option<Queue>,
    },
}

/// What a request names.
pub enum Target {
    Incident(i64),
    Queue(Queue),
}

impl Target {
    /// Exactly one of `incident_id` and `queue`; otherwise the error to answer.
    pub fn of(incident_id: Option<i64>, queue: Option<Queue>) -> Result<Target, ServerMessage> {
        match (incident_id, queue) {
            (Some(id), None) => Ok(Target::Incident(id)),
            (None, Some(q)) => Ok(Target::Queue(q)),
            _ => Err(ServerMessage::error(
                "invalid_message",
                "name exactly one of `incident_id` and `queue`",
            )),
        }
    }
}

/// Server -> client messages: JSON text frames (docs/dispatch-realtime.md, "WebSocket
/// protocol").
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "type")]
#[schema(as = WsServerMessage)]
pub enum ServerMessage {
    /// The answer to subscribing to an incident: its newest version when the subscription
    /// took effect.
    #[serde(rename = "subscribed")]
    Subscribed { incident_id: i64, version: i32 },
    /// The answer to subscribing to a queue: from now on its moves (or, for `offload`, its
    /// alerts) are sent.
    #[serde(rename = "subscribed")]
    QueueSubscribed { queue: Queue },
    /// A followed incident reached `version`; `changed` names the groups that moved.
    #[serde(rename = "incident.updated")]
    IncidentUpdated {
        incident_id: i64,
        version: i32,
        changed: Vec<String>,
    },
    /// An incident entered the queue (`state` is the queue) or left it (`state` is where it
    /// went), at `version`.
    #[serde(rename = "queue.changed")]
    QueueChanged {
        queue: State,
        incident_id: i64,
        version: i32,
        state: State,
    },
    /// Queue `mine` (docs/dispatch-realtime.md, "Personal work"): an incident came to the
    /// socket's user (`held: true`: sent or transferred to them, or they decided it) or left
    /// them (`held: false`: sent or transferred to someone else, or another regulator decided
    /// it), at `version`; `state` is the incident's state.
    #[serde(rename = "queue.changed")]
    MineChanged {
        queue: Queue,
        incident_id: i64,
        version: i32,
        state: State,
        held: bool,
    },
    /// Moves of this queue may have been missed: read the queue again
    /// (`GET /incident/mask?state=<queue>`); later moves apply on top of that read.
    #[serde(rename = "queue.resync")]
    QueueResync { queue: Queue },
    /// A unit has been at a hospital's door longer than the `hospital_hold` target (queue
    /// `offload`; on following it, one for every unit past it then).
    #[serde(rename = "offload.alert")]
    OffloadAlert(Box<OffloadAlert>),
    /// A unit alerted for left the door: handed over, or released.
    #[serde(rename = "offload.cleared")]
    OffloadCleared(Box<OffloadCleared>),
    /// Queue `fleet` (docs/dispatch-realtime.md, "The fleet board"): a unit took a step of
    /// its dispatch; `unit` is its row of `GET /mobile-unit/board` after it.
    #[serde(rename = "unit.step")]
    UnitStep(Box<UnitStep>),
    /// Queue `calls` (docs/dispatch-realtime.md, "The telephone"): the phone rings at the
    /// centre; `call.prank_calls` counts the prank calls recorded from its number.
    #[serde(rename = "call.ringing")]
    CallRinging(Box<CallMessage>),
    /// Queue `calls`, and `mine` of the user who answered: someone answered the call.
    #[serde(rename = "call.answered")]
    CallAnswered(Box<CallMessage>),
    /// Queue `calls`: the call ended, `call.outcome` `answered` or `abandoned`.
    #[serde(rename = "call.ended")]
    CallEnded(Box<CallMessage>),
    /// A request was refused; the socket stays open.
    #[serde(rename = "error")]
    Error { code: String, detail: String },
}

/// A call's event as a queue tells it: the queue (`calls`, or `mine`) and the call after it.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
pub struct CallMessage {
    pub queue: Queue,
    pub call: Call,
}

impl ServerMessage {
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    /// The message as one WebSocket text frame, encoded once whoever it goes to.
    pub fn frame(&self) -> Bytes {
        outbox::frame(Opcode::Text, self.text().as_bytes())
    }

    pub fn offload(notice: &OffloadNotice) -> Self {
        match notice {
            OffloadNotice::Alert(a) => ServerMessage::OffloadAlert(Box::new(a.clone())),
            OffloadNotice::Cleared(c) => ServerMessage::OffloadCleared(Box::new(c.clone())),
        }
    }

    /// The message of a call's `event`, told on `queue`.
    pub fn call(event: CallEventKind, queue: Queue, call: Call) -> Self {
        let m = Box::new(CallMessage { queue, call });
        match event {
            CallEventKind::Ringing => ServerMessage::CallRinging(m),
            CallEventKind::Answered => ServerMessage::CallAnswered(m),
            CallEventKind::Ended => ServerMessage::CallEnded(m),
        }
    }

    pub fn error(code: &str, detail: impl Into<String>) -> Self {
        ServerMessage::Error {
            code: code.to_owned(),
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> serde_json::Result<ClientMessage> {
        serde_json::from_str::<ClientMessage>(s)
    }

    #[test]
    fn a_request_names_a_queue() {
        assert!(matches!(
            parse(r#"{"type":"subscribe","queue":"awaiting_regulation"}"#).unwrap(),
            ClientMessage::Subscribe {
                incident_id: None,
                queue: Some(Queue::Work(State::AwaitingRegulation))
            }
        ));
    }

    #[test]
    fn a_request_names_an_incident() {
        assert!(matches!(
            parse(r#"{"type":"unsubscribe","incident_id":4}"#).unwrap(),
            ClientMessage::Unsubscribe {
                incident_id: Some(4),
                queue: None
            }
        ));
    }

    #[test]
    fn a_request_naming_an_unknown_queue_or_field_is_refused() {
        assert!(parse(r#"{"type":"subscribe","queue":"nowhere"}"#).is_err());
        assert!(parse(r#"{"type":"subscribe","incident_id":1,"extra":2}"#).is_err());
    }

    #[test]
    fn a_request_names_exactly_one_target() {
        assert!(Target::of(Some(1), Some(Queue::Work(State::Regulated))).is_err());
        assert!(Target::of(None, None).is_err());
    }
}
