//! A unit's progress on an incident: `assigned`, `en_route`, `on_scene`, `transporting`,
//! `at_destination`, `released`, in that order. `transporting` and `at_destination` may be
//! skipped (no transport); nothing goes back; `released` is final and frees the unit.

use common::text_enum;

use super::Refusal;

text_enum! {
    /// A unit's step on its dispatch, in order.
    pub enum Status {
        Assigned = "assigned",
        EnRoute = "en_route",
        OnScene = "on_scene",
        Transporting = "transporting",
        AtDestination = "at_destination",
        Released = "released",
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

pub fn transition(from: Status, to: Status) -> Result<Status, Refusal> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(to)
    } else {
        Err(Refusal::InvalidTransition {
            what: "dispatch",
            from: from.as_str(),
            requested: to.as_str().to_owned(),
        })
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
