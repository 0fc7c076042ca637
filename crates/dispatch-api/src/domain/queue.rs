//! Work queues: the incidents in one open state, which a socket can follow
//! (docs/dispatch-realtime.md, "Work queues"). A queue is named by its state; a final state
//! is not a queue, since nothing ever leaves it.
//!
//! Who may follow a queue: the profiles that make the next move of its incidents, and the
//! administrator, who supervises every queue.
//!
//! | queue | next move | followed by |
//! |---|---|---|
//! | `registering` | submit | TARM |
//! | `awaiting_regulation` | technical decision | MEDICO_REGULADOR |
//! | `regulated` | dispatch a unit, or close | OPERADOR_FROTA, MEDICO_REGULADOR |
//! | `dispatched` | unit statuses, close | OPERADOR_FROTA, MEDICO_REGULADOR |

use common::text_enum;
use serde::{Deserialize, Serialize};

use super::incident::State;
use super::user::Profile::{self, *};

text_enum! {
    /// The hospital offload queue's name (docs/dispatch-realtime.md, "Hospital offload"): its
    /// followers hear `offload.alert` and `offload.cleared`, not incidents' moves.
    pub enum OffloadQueue {
        Offload = "offload",
    }
}

text_enum! {
    /// The personal queue's name (docs/dispatch-realtime.md, "Personal work"): the incidents
    /// the socket's own user holds, as regulator (send-to, technical decision) or as the
    /// one it was transferred to; its followers hear when one comes to them or leaves them.
    pub enum MineQueue {
        Mine = "mine",
    }
}

text_enum! {
    /// The fleet queue's name (docs/dispatch-realtime.md, "The fleet board"): its followers
    /// hear `unit.step` each time a unit takes a step of its dispatch, with the unit as the
    /// fleet board (`GET /mobile-unit/board`) shows it.
    pub enum FleetQueue {
        Fleet = "fleet",
    }
}

text_enum! {
    /// The telephone's queue (docs/dispatch-realtime.md, "The telephone"): its followers hear
    /// each call ring (with the caller's prank-call count), be answered and end.
    pub enum CallsQueue {
        Calls = "calls",
    }
}

/// What a socket may follow by name: a work queue (an open state), the hospital offload
/// queue, the user's own incidents, the fleet or the telephone. On the wire, the state's word,
/// `offload`, `mine`, `fleet` or `calls`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(untagged)]
pub enum Queue {
    Work(State),
    Offload(OffloadQueue),
    Mine(MineQueue),
    Fleet(FleetQueue),
    Calls(CallsQueue),
}

impl Queue {
    pub const OFFLOAD: Queue = Queue::Offload(OffloadQueue::Offload);
    pub const MINE: Queue = Queue::Mine(MineQueue::Mine);
    pub const FLEET: Queue = Queue::Fleet(FleetQueue::Fleet);
    pub const CALLS: Queue = Queue::Calls(CallsQueue::Calls);

    pub fn as_str(self) -> &'static str {
        match self {
            Queue::Work(s) => s.as_str(),
            Queue::Offload(o) => o.as_str(),
            Queue::Mine(m) => m.as_str(),
            Queue::Fleet(f) => f.as_str(),
            Queue::Calls(c) => c.as_str(),
        }
    }
}

impl std::fmt::Display for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who may follow the offload queue: whoever reads incidents (the board,
/// `GET /health-unit/offload`, serves every profile).
pub const OFFLOAD_FOLLOWERS: &[Profile] = &[Admin, Tarm, MedicoRegulador, OperadorFrota];

/// Who may follow their own incidents (`mine`): whoever an incident can be sent or
/// transferred to reads incidents, so every profile that reads them.
pub const MINE_FOLLOWERS: &[Profile] = OFFLOAD_FOLLOWERS;

/// Who may follow the fleet (`fleet`): whoever reads the fleet board, which serves every
/// profile that reads incidents.
pub const FLEET_FOLLOWERS: &[Profile] = OFFLOAD_FOLLOWERS;

/// Who may follow the telephone's queue (`calls`): the call takers, the regulators (who
/// answer the centre's telephone too) and the administrator.
pub const CALLS_FOLLOWERS: &[Profile] = &[Admin, Tarm, MedicoRegulador];

/// The states that are queues, in the order of an incident's life.
pub const QUEUES: [State; 4] = [
    State::Registering,
    State::AwaitingRegulation,
    State::Regulated,
    State::Dispatched,
];

/// Who may follow `queue` besides the administrator (empty for a state that is no queue).
pub fn followers(queue: State) -> &'static [Profile] {
    match queue {
        State::Registering => &[Tarm],
        State::AwaitingRegulation => &[MedicoRegulador],
        State::Regulated | State::Dispatched => &[OperadorFrota, MedicoRegulador],
        State::Closed | State::Cancelled | State::Prank => &[],
    }
}

/// Whether `profile` may follow `queue` (which must be one of [`QUEUES`]).
pub fn may_follow(profile: Profile, queue: State) -> bool {
    QUEUES.contains(&queue) && (profile == Admin || followers(queue).contains(&profile))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_is_named_by_its_state_or_offload() {
        let q: Queue = serde_json::from_str(r#""offload""#).unwrap();
        assert_eq!(q, Queue::OFFLOAD);
        let q: Queue = serde_json::from_str(r#""mine""#).unwrap();
        assert_eq!(q, Queue::MINE);
        assert_eq!(q.to_string(), "mine");
        let q: Queue = serde_json::from_str(r#""fleet""#).unwrap();
        assert_eq!(q, Queue::FLEET);
        assert_eq!(q.to_string(), "fleet");
        let q: Queue = serde_json::from_str(r#""calls""#).unwrap();
        assert_eq!(q, Queue::CALLS);
        let q: Queue = serde_json::from_str(r#""regulated""#).unwrap();
        assert_eq!(q, Queue::Work(State::Regulated));
        assert_eq!(serde_json::to_string(&q).unwrap(), r#""regulated""#);
        assert!(serde_json::from_str::<Queue>(r#""nowhere""#).is_err());
    }

    #[test]
    fn each_open_state_is_a_queue_with_its_profiles_and_final_states_are_none() {
        for state in State::ALL {
            assert_eq!(QUEUES.contains(&state), !state.is_final(), "{state}");
            assert_eq!(may_follow(Admin, state), !state.is_final(), "{state}");
            assert!(!may_follow(Other, state));
        }
        assert!(may_follow(Tarm, State::Registering));
        assert!(!may_follow(Tarm, State::AwaitingRegulation));
        assert!(may_follow(MedicoRegulador, State::AwaitingRegulation));
        assert!(!may_follow(OperadorFrota, State::AwaitingRegulation));
        assert!(may_follow(OperadorFrota, State::Regulated));
        assert!(may_follow(MedicoRegulador, State::Dispatched));
        assert!(!may_follow(MedicoRegulador, State::Registering));
    }
}
