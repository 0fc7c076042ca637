//! What the database announces on the channels the hub follows, read from their payloads
//! (docs/dispatch-realtime.md, "Fan-out across replicas").

use crate::domain::incident::State;
use crate::store::fleet::FLEET_RESYNC;
use crate::views::{OffloadAlert, OffloadCleared, UnitStep};

/// A committed change to an incident: `dispatch_incident`, `<id>:<version>:<group,...>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentNotice<'a> {
    pub incident_id: i64,
    pub version: i32,
    /// The groups that moved (`patient`, `state`, ...), as the write named them: the
    /// payload's words are passed on as they are (a `domain::history::ChangeGroup` on the
    /// writing replica), so a replica of an older release forwards a group it does not know
    /// yet instead of dropping the change during a rolling deploy.
    pub changed: Vec<&'a str>,
}

impl<'a> IncidentNotice<'a> {
    pub fn parse(payload: &'a str) -> Option<Self> {
        let mut parts = payload.splitn(3, ':');
        let incident_id = parts.next()?.parse().ok()?;
        let version = parts.next()?.parse().ok()?;
        let changed = parts
            .next()
            .unwrap_or("")
            .split(',')
            .filter(|g| !g.is_empty())
            .collect();
        Some(Self {
            incident_id,
            version,
            changed,
        })
    }
}

/// An incident that entered a state, and left another unless it is new: `dispatch_queue`,
/// `<id>:<version>:<from>:<to>` (`<from>` empty for a new incident).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueNotice {
    pub incident_id: i64,
    /// The incident's version once it moved.
    pub version: i32,
    /// The state it left (`None`: a new incident).
    pub from: Option<State>,
    /// The state it is in now.
    pub to: State,
}

impl QueueNotice {
    pub fn parse(payload: &str) -> Option<Self> {
        let mut parts = payload.split(':');
        let incident_id = parts.next()?.parse().ok()?;
        let version = parts.next()?.parse().ok()?;
        let from = match parts.next()? {
            "" => None,
            s => Some(State::parse(s)?),
        };
        let to = State::parse(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            incident_id,
            version,
            from,
            to,
        })
    }
}

/// An incident that came to some users or left them (send-to, transfer, a technical
/// decision): `dispatch_mine`, `<id>:<version>:<state>:<came,...>:<left,...>`, for the
/// followers of their own queue `mine` (docs/dispatch-realtime.md, "Personal work").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MineNotice {
    pub incident_id: i64,
    pub version: i32,
    /// The incident's state after the write.
    pub state: State,
    /// The users who hold it now and did not before.
    pub came: Vec<i64>,
    /// The users who held it and no longer do.
    pub left: Vec<i64>,
}

impl MineNotice {
    pub fn parse(payload: &str) -> Option<Self> {
        let mut parts = payload.split(':');
        let incident_id = parts.next()?.parse().ok()?;
        let version = parts.next()?.parse().ok()?;
        let state = State::parse(parts.next()?)?;
        let users = |s: &str| -> Option<Vec<i64>> {
            s.split(',')
                .filter(|u| !u.is_empty())
                .map(|u| u.parse().ok())
                .collect()
        };
        let came = users(parts.next()?)?;
        let left = users(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            incident_id,
            version,
            state,
            came,
            left,
        })
    }
}

/// What the `dispatch_offload` channel carries (the JSON a watcher's alert or a unit's
/// hand-over sends), read by every replica's listener.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum OffloadNotice {
    #[serde(rename = "offload.alert")]
    Alert(OffloadAlert),
    #[serde(rename = "offload.cleared")]
    Cleared(OffloadCleared),
}

impl OffloadNotice {
    pub fn dispatch_id(&self) -> i64 {
        match self {
            OffloadNotice::Alert(a) => a.hold.dispatch_id,
            OffloadNotice::Cleared(c) => c.hold.dispatch_id,
        }
    }

    /// The notice a payload of the channel carries (`store::offload::OFFLOAD_CHANNEL`), or
    /// none, logged, when it cannot be read.
    pub fn parse(payload: &str) -> Option<Self> {
        match serde_json::from_str(payload) {
            Ok(n) => Some(n),
            Err(e) => {
                tracing::warn!(error = %e, json = %payload, "unreadable offload message");
                None
            }
        }
    }
}

/// What the `dispatch_fleet` channel carries: a unit's step (the JSON of its `unit.step`
/// message), or `resync` when the message would not fit in a payload
/// (docs/dispatch-realtime.md, "The fleet board").
#[derive(Debug, Clone, PartialEq)]
pub enum FleetNotice {
    Step(Box<UnitStep>),
    Resync,
}

impl FleetNotice {
    /// The notice a payload of the channel carries, or none, logged, when it cannot be read.
    pub fn parse(payload: &str) -> Option<Self> {
        if payload == FLEET_RESYNC {
            return Some(FleetNotice::Resync);
        }
        match serde_json::from_str(payload) {
            Ok(step) => Some(FleetNotice::Step(Box::new(step))),
            Err(e) => {
                tracing::warn!(error = %e, json = %payload, "unreadable unit step");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incident_notices_parse() {
        assert_eq!(
            IncidentNotice::parse("12:3:patient,state"),
            Some(IncidentNotice {
                incident_id: 12,
                version: 3,
                changed: vec!["patient", "state"]
            })
        );
        assert_eq!(IncidentNotice::parse("12:3:").unwrap().changed.len(), 0);
        assert_eq!(IncidentNotice::parse("x:3:"), None);
    }

    #[test]
    fn queue_notices_parse() {
        assert_eq!(
            QueueNotice::parse("7:2:registering:awaiting_regulation"),
            Some(QueueNotice {
                incident_id: 7,
                version: 2,
                from: Some(State::Registering),
                to: State::AwaitingRegulation
            })
        );
        assert_eq!(
            QueueNotice::parse("7:1::registering").map(|n| n.from),
            Some(None)
        );
        for bad in [
            "7:1:registering",
            "7:1::nowhere",
            "7:x::registering",
            "7:1::registering:more",
        ] {
            assert_eq!(QueueNotice::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn mine_notices_parse() {
        assert_eq!(
            MineNotice::parse("12:5:regulated:4:3"),
            Some(MineNotice {
                incident_id: 12,
                version: 5,
                state: State::Regulated,
                came: vec![4],
                left: vec![3],
            })
        );
        let n = MineNotice::parse("12:5:dispatched:8,9:").unwrap();
        assert_eq!((n.came, n.left), (vec![8, 9], vec![]));
        for bad in [
            "12:5:regulated:4",
            "12:5:nowhere:4:3",
            "12:5:regulated:x:3",
            "12:5:regulated:4:3:1",
        ] {
            assert_eq!(MineNotice::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn fleet_notices_parse() {
        let payload = r#"{"step":"en_route","at":"2026-11-30T10:00:00Z","dispatch_id":4,
            "unit":{"id":7,"name":"USA 01","base":"Centro","vehicle_type":{"id":1,"name":"USA"},
            "dispatch":{"id":4,"status":"en_route","assigned_at":"2026-11-30T09:59:00Z",
            "incident":{"id":12,"number":"2026-000012"}},"step_since":"2026-11-30T10:00:00Z"}}"#;
        let Some(FleetNotice::Step(step)) = FleetNotice::parse(payload) else {
            panic!("not a step");
        };
        assert_eq!(
            (step.step, step.dispatch_id, step.unit.id),
            (crate::domain::dispatch::Status::EnRoute, 4, 7)
        );
        assert_eq!(FleetNotice::parse("resync"), Some(FleetNotice::Resync));
        assert_eq!(FleetNotice::parse("{}"), None);
    }
}
