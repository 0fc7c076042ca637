//! The incident's life: `registering` -> `awaiting_regulation` -> `regulated` ->
//! `dispatched` -> `closed`; `regulated` -> `closed` (a decision without a unit); any open
//! state -> `cancelled`; `registering`/`awaiting_regulation` -> `prank`. `closed`,
//! `cancelled` and `prank` are final.

use common::text_enum;

use super::Refusal;

text_enum! {
    /// Where an incident is in its life (the table below says how it moves).
    pub enum State {
        Registering = "registering",
        AwaitingRegulation = "awaiting_regulation",
        Regulated = "regulated",
        Dispatched = "dispatched",
        Closed = "closed",
        Cancelled = "cancelled",
        Prank = "prank",
    }
}

impl State {
    /// Closed, cancelled and prank incidents take no further write.
    pub fn is_final(self) -> bool {
        matches!(self, State::Closed | State::Cancelled | State::Prank)
    }
}

text_enum! {
    /// The Occurrence form's priority.
    pub enum Priority {
        Low = "low",
        Medium = "medium",
        High = "high",
        Critical = "critical",
    }
}

text_enum! {
    /// The Patient form's sex.
    pub enum Sex {
        F = "F",
        M = "M",
        X = "X",
    }
}

/// Every allowed move, and nothing else (docs/dispatch-realtime.md, "State machines").
pub const TRANSITIONS: &[(State, State)] = &[
    (State::Registering, State::AwaitingRegulation),
    (State::AwaitingRegulation, State::Regulated),
    (State::Regulated, State::Dispatched),
    (State::Dispatched, State::Closed),
    (State::Regulated, State::Closed),
    (State::Registering, State::Cancelled),
    (State::AwaitingRegulation, State::Cancelled),
    (State::Regulated, State::Cancelled),
    (State::Dispatched, State::Cancelled),
    (State::Registering, State::Prank),
    (State::AwaitingRegulation, State::Prank),
];

/// The one check every state-changing write makes: `Ok(to)` or 409 `invalid_transition`
/// naming both states.
pub fn transition(from: State, to: State) -> Result<State, Refusal> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(to)
    } else {
        Err(invalid_transition(from, to.as_str()))
    }
}

/// A write that changes an incident without moving it; [`State::allows`] says in which
/// states (docs/dispatch-realtime.md, "State machines").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// `PATCH /incident/{id}`: the forms, while the incident is open.
    Update,
    /// `POST /incident/{id}/send-to`: another regulating physician takes it.
    SendTo,
    /// `POST /incident/{id}/intercurrence`: something that happened during the attendance.
    Intercurrence,
    /// `POST /incident/{id}/transfer`: another employee takes the attendance.
    Transfer,
    /// `POST /incident/{id}/dispatch` on a dispatched incident: one more unit.
    FurtherUnit,
}

impl Edit {
    pub const ALL: [Edit; 5] = [
        Edit::Update,
        Edit::SendTo,
        Edit::Intercurrence,
        Edit::Transfer,
        Edit::FurtherUnit,
    ];

    /// How a refusal names the write (`requested` of `invalid_transition`).
    pub fn as_str(self) -> &'static str {
        match self {
            Edit::Update => "update",
            Edit::SendTo => "send_to",
            Edit::Intercurrence => "intercurrence",
            Edit::Transfer => "transfer",
            Edit::FurtherUnit => "dispatch",
        }
    }
}

impl State {
    /// Whether an incident in this state takes `edit`: never a final one.
    pub fn allows(self, edit: Edit) -> bool {
        use State::*;
        !self.is_final()
            && match edit {
                Edit::Update => true,
                Edit::SendTo => matches!(self, AwaitingRegulation | Regulated | Dispatched),
                Edit::Intercurrence | Edit::Transfer => matches!(self, Regulated | Dispatched),
                Edit::FurtherUnit => self == Dispatched,
            }
    }
}

/// The check of writes that change an incident without moving it: `Ok(from)` when the state
/// allows `edit`, else 409 `invalid_transition` naming the state and the write.
pub fn edit(from: State, edit: Edit) -> Result<State, Refusal> {
    if from.allows(edit) {
        Ok(from)
    } else {
        Err(invalid_transition(from, edit.as_str()))
    }
}

pub fn invalid_transition(from: State, requested: &str) -> Refusal {
    Refusal::InvalidTransition {
        what: "incident",
        from: from.as_str(),
        requested: requested.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_allowed_exactly_when_the_table_says() {
        let mut allowed = 0;
        for from in State::ALL {
            for to in State::ALL {
                let ok = transition(from, to).is_ok();
                assert_eq!(ok, TRANSITIONS.contains(&(from, to)), "{from} -> {to}");
                if ok {
                    allowed += 1;
                    assert!(!from.is_final(), "nothing leaves a final state");
                } else {
                    // The refusal names both states (`error` maps it to 409 `invalid_transition`).
                    let refusal = transition(from, to).unwrap_err();
                    assert!(matches!(refusal, Refusal::InvalidTransition { .. }));
                    let detail = refusal.to_string();
                    assert!(detail.contains(from.as_str()) && detail.contains(to.as_str()));
                }
            }
        }
        assert_eq!(allowed, 11);
    }

    #[test]
    fn names_round_trip() {
        for s in State::ALL {
            assert_eq!(State::parse(s.as_str()), Some(s));
        }
        assert_eq!(State::parse("open"), None);
    }

    #[test]
    fn edits_only_while_open() {
        for s in State::ALL {
            assert_eq!(edit(s, Edit::Update).is_ok(), !s.is_final());
        }
        assert!(edit(State::Registering, Edit::FurtherUnit).is_err());
    }

    #[test]
    fn each_edit_is_allowed_in_its_states_only() {
        use State::*;
        let allowed =
            |e: Edit| -> Vec<State> { State::ALL.into_iter().filter(|s| s.allows(e)).collect() };
        assert_eq!(
            allowed(Edit::Update),
            [Registering, AwaitingRegulation, Regulated, Dispatched]
        );
        assert_eq!(
            allowed(Edit::SendTo),
            [AwaitingRegulation, Regulated, Dispatched]
        );
        assert_eq!(allowed(Edit::Intercurrence), [Regulated, Dispatched]);
        assert_eq!(allowed(Edit::Transfer), [Regulated, Dispatched]);
        assert_eq!(allowed(Edit::FurtherUnit), [Dispatched]);
        for e in Edit::ALL {
            for s in State::ALL {
                if let Err(refusal) = edit(s, e) {
                    let detail = refusal.to_string();
                    assert!(detail.contains(s.as_str()) && detail.contains(e.as_str()));
                }
            }
        }
    }
}
