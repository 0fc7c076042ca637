//! The proposal state machine: what a callback's status does to a proposal in a given
//! status. Data and a pure function; applying it is `flow::apply`'s job.

use crate::domain::status::Status;

/// What a callback's status does to a proposal in a given status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The proposal already has that status: nothing to do, answered 200 `unchanged`.
    Unchanged,
    /// Apply it.
    Allowed,
    /// 409 `invalid_transition`.
    Forbidden,
}

/// The allowed moves by callback, as data: from each status, where a callback may take it.
/// `approved` and `refused` are final.
const ALLOWED: [(Status, &[Status]); 4] = [
    (
        Status::UnderAnalysis,
        &[Status::Pending, Status::Approved, Status::Refused],
    ),
    (
        Status::Pending,
        &[Status::Approved, Status::Refused, Status::UnderAnalysis],
    ),
    (Status::Approved, &[]),
    (Status::Refused, &[]),
];

pub fn transition(from: Status, to: Status) -> Transition {
    if from == to {
        return Transition::Unchanged;
    }
    let allowed = ALLOWED
        .iter()
        .find(|(f, _)| *f == from)
        .is_some_and(|(_, to_list)| to_list.contains(&to));
    if allowed {
        Transition::Allowed
    } else {
        Transition::Forbidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    #[test]
    fn transition_table_every_pair() {
        let expected = |from: Status, to: Status| -> Transition {
            match (from, to) {
                _ if from == to => Transition::Unchanged,
                (UnderAnalysis, Pending | Approved | Refused) => Transition::Allowed,
                (Pending, Approved | Refused | UnderAnalysis) => Transition::Allowed,
                _ => Transition::Forbidden,
            }
        };
        let mut seen = 0;
        for from in Status::ALL {
            for to in Status::ALL {
                assert_eq!(transition(from, to), expected(from, to), "{from} -> {to}");
                seen += 1;
            }
        }
        assert_eq!(seen, 16);
        assert_eq!(transition(Approved, Refused), Transition::Forbidden);
        assert_eq!(transition(Refused, Pending), Transition::Forbidden);
        assert_eq!(transition(Approved, Approved), Transition::Unchanged);
    }
}
