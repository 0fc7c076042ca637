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

/// The check of writes that change an incident without moving it (PATCH, send-to,
/// intercurrence, transfer, a further unit): the incident must still be open, and, when
/// `allowed` is given, in one of those states.
pub fn edit(from: State, what: &str, allowed: Option<&[State]>) -> Result<State, Refusal> {
    let ok = !from.is_final() && allowed.is_none_or(|a| a.contains(&from));
    if ok {
        Ok(from)
    } else {
        Err(invalid_transition(from, what))
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
            assert_eq!(edit(s, "patch", None).is_ok(), !s.is_final());
        }
        assert!(edit(State::Registering, "x", Some(&[State::Dispatched])).is_err());
    }
}
