//! What the database announces on the channels the hub follows, read from their payloads
//! (docs/dispatch-realtime.md, "Fan-out across replicas").

use crate::domain::incident::State;

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
}
