//! A unit's progress on an incident: `assigned`, `en_route`, `on_scene`, `transporting`,
//! `at_destination`, `released`, in that order. `transporting` and `at_destination` may be
//! skipped (no transport); nothing goes back; `released` is final and frees the unit.

use std::fmt;

use actix_web::http::StatusCode;
use common::Problem;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Assigned,
    EnRoute,
    OnScene,
    Transporting,
    AtDestination,
    Released,
}

impl Status {
    pub const ALL: [Status; 6] = [
        Status::Assigned,
        Status::EnRoute,
        Status::OnScene,
        Status::Transporting,
        Status::AtDestination,
        Status::Released,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Assigned => "assigned",
            Status::EnRoute => "en_route",
            Status::OnScene => "on_scene",
            Status::Transporting => "transporting",
            Status::AtDestination => "at_destination",
            Status::Released => "released",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every allowed step: the next one, or a skip over the transport steps.
pub const TRANSITIONS: &[(Status, Status)] = &[
    (Status::Assigned, Status::EnRoute),
    (Status::EnRoute, Status::OnScene),
    (Status::OnScene, Status::Transporting),
    (Status::OnScene, Status::Released),
    (Status::Transporting, Status::AtDestination),
    (Status::AtDestination, Status::Released),
    // Called off before arrival: the unit goes back to the base.
    (Status::Assigned, Status::Released),
    (Status::EnRoute, Status::Released),
];

pub fn transition(from: Status, to: Status) -> Result<Status, Problem> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(to)
    } else {
        Err(Problem::new(
            StatusCode::CONFLICT,
            "invalid_transition",
            format!("the dispatch is `{from}`; `{to}` is not allowed from there"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_allowed_exactly_when_the_table_says_and_never_backwards() {
        for from in Status::ALL {
            for to in Status::ALL {
                let ok = transition(from, to).is_ok();
                assert_eq!(ok, TRANSITIONS.contains(&(from, to)), "{from} -> {to}");
                if ok {
                    assert!(to > from, "{from} -> {to} goes backwards");
                }
            }
        }
        assert!(transition(Status::Released, Status::EnRoute).is_err());
    }
}
