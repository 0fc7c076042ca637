//! The hub's rules, one per test. Every socket's outbox is read here as its connection
//! would read it (`Outbox::try_recv`).

use super::*;
use crate::domain::incident::State;
use crate::domain::queue::Queue::Work;
use crate::domain::user::UserStatus;

const ACTIVE: &str = UserStatus::Active.as_str();

fn recv(rx: &mut Outbox) -> Option<serde_json::Value> {
    rx.try_recv().map(|t| serde_json::from_str(&t).unwrap())
}

fn user(id: i64, profile: Profile) -> CurrentUser {
    CurrentUser {
        id,
        descriptive_name: format!("u{id}"),
        profile,
    }
}

fn notice(incident_id: i64, version: i32, changed: &[&'static str]) -> IncidentNotice<'static> {
    IncidentNotice {
        incident_id,
        version,
        changed: changed.to_vec(),
    }
}

fn moved(incident_id: i64, version: i32, from: Option<State>, to: State) -> QueueNotice {
    QueueNotice {
        incident_id,
        version,
        from,
        to,
    }
}

type Queue = Outbox;

/// Two sockets; the first subscribed to incident 1 while version 3 was announced during its
/// read of version 2. Returns the hub, both sockets and the `subscribed` answer.
fn subscribed_during_a_change() -> (Hub, (Client, Queue), (Client, Queue), Option<ServerMessage>) {
    let hub = Hub::new(8, WsSettings::default());
    let a = hub.connect(&user(1, Profile::Tarm));
    let b = hub.connect(&user(2, Profile::Tarm));
    hub.begin_subscribe(&a.0, 1);
    hub.publish(&notice(1, 3, &["patient"])); // during the read: remembered, not sent
    let answer = hub.finish_subscribe(&a.0, 1, 2);
    (hub, a, b, answer)
}

#[test]
fn a_version_announced_during_the_subscriptions_read_is_the_one_answered() {
    let (_, _, _, answer) = subscribed_during_a_change();
    assert_eq!(
        answer,
        Some(ServerMessage::Subscribed {
            incident_id: 1,
            version: 3
        })
    );
}

#[test]
fn a_version_the_subscriber_knows_is_not_sent_again() {
    let (hub, _a, _b, _answer) = subscribed_during_a_change();
    assert_eq!(hub.publish(&notice(1, 3, &["patient"])), 0, "already known");
}

#[test]
fn a_newer_version_reaches_the_subscriber() {
    let (hub, (_a, mut ra), _b, _answer) = subscribed_during_a_change();
    assert_eq!(hub.publish(&notice(1, 4, &["patient"])), 1);
    assert_eq!(
        recv(&mut ra).unwrap(),
        serde_json::json!({"type": "incident.updated", "incident_id": 1, "version": 4,
                           "changed": ["patient"]})
    );
}

#[test]
fn an_incident_nobody_follows_reaches_nobody() {
    let (hub, _a, (_b, mut rb), _answer) = subscribed_during_a_change();
    assert_eq!(hub.publish(&notice(2, 9, &[])), 0);
    assert!(recv(&mut rb).is_none());
}

#[test]
fn nothing_is_sent_for_an_incident_after_unsubscribing() {
    let (hub, (a, mut ra), _b, _answer) = subscribed_during_a_change();
    hub.unsubscribe(&a, 1);
    assert_eq!(hub.publish(&notice(1, 5, &[])), 0);
    assert!(recv(&mut ra).is_none());
}

/// A slow and a fast socket (queues of two) following incident 7 at version 1, after
/// versions 2 to 6 were published; the fast one read each as it came.
fn a_slow_and_a_fast_subscriber() -> (Hub, (Client, Queue), (Client, Queue)) {
    let hub = Hub::new(2, WsSettings::default());
    let slow = hub.connect(&user(1, Profile::Tarm));
    let mut fast = hub.connect(&user(2, Profile::Tarm));
    for c in [&slow.0, &fast.0] {
        hub.begin_subscribe(c, 7);
        hub.finish_subscribe(c, 7, 1);
    }
    for (v, group) in (2..7).zip(["state", "patient", "state", "conclusion", "state"]) {
        hub.publish(&notice(7, v, &[group]));
        assert_eq!(
            recv(&mut fast.1).unwrap()["version"],
            v,
            "the fast one gets all"
        );
    }
    (hub, slow, fast)
}

#[test]
fn a_full_queue_drops_no_subscriber() {
    let (hub, (slow, _rs), _fast) = a_slow_and_a_fast_subscriber();
    assert_eq!(hub.subscription_count(), 2, "nobody is dropped");
    assert!(slow.is_behind());
}

#[test]
fn a_full_queue_is_caught_up_with_the_newest_version_and_every_group() {
    let (hub, (slow, mut rs), _fast) = a_slow_and_a_fast_subscriber();
    // Versions 2 and 3 were queued; 4, 5 and 6 missed.
    assert_eq!(recv(&mut rs).unwrap()["version"], 2);
    hub.catch_up(&slow);
    assert_eq!(recv(&mut rs).unwrap()["version"], 3);
    assert_eq!(
        recv(&mut rs).unwrap(),
        serde_json::json!({"type": "incident.updated", "incident_id": 7, "version": 6,
                           "changed": ["state", "conclusion"]})
    );
    assert!(!slow.is_behind());
}

#[test]
fn a_version_caught_up_is_never_sent_twice() {
    let (hub, (slow, mut rs), _fast) = a_slow_and_a_fast_subscriber();
    recv(&mut rs);
    hub.catch_up(&slow);
    while recv(&mut rs).is_some() {}
    assert_eq!(hub.publish(&notice(7, 6, &["state"])), 0, "never twice");
    assert_eq!(hub.publish(&notice(7, 7, &["state"])), 2);
    assert_eq!(recv(&mut rs).unwrap()["version"], 7);
}

/// A regulator following `awaiting_regulation` and a fleet operator following `regulated`,
/// each with a queue of two.
fn two_queue_followers() -> (Hub, (Client, Queue), (Client, Queue)) {
    let hub = Hub::new(2, WsSettings::default());
    let reg = hub.connect(&user(1, Profile::MedicoRegulador));
    let other = hub.connect(&user(2, Profile::OperadorFrota));
    hub.follow_queue(&reg.0, Work(State::AwaitingRegulation));
    hub.follow_queue(&other.0, Work(State::Regulated));
    (hub, reg, other)
}

#[test]
fn following_a_queue_is_answered_subscribed() {
    let hub = Hub::new(2, WsSettings::default());
    let (reg, _rr) = hub.connect(&user(1, Profile::MedicoRegulador));
    assert_eq!(
        hub.follow_queue(&reg, Work(State::AwaitingRegulation))
            .text()
            .as_str(),
        r#"{"type":"subscribed","queue":"awaiting_regulation"}"#
    );
}

#[test]
fn a_move_into_a_queue_nobody_follows_reaches_nobody() {
    let (hub, _reg, _other) = two_queue_followers();
    assert_eq!(
        hub.publish_queue(&moved(5, 1, None, State::Registering)),
        0,
        "nobody follows registering"
    );
}

#[test]
fn a_queue_follower_hears_an_incident_enter_it() {
    let (hub, (_reg, mut rr), _other) = two_queue_followers();
    hub.publish_queue(&moved(
        5,
        2,
        Some(State::Registering),
        State::AwaitingRegulation,
    ));
    assert_eq!(
        recv(&mut rr).unwrap(),
        serde_json::json!({"type": "queue.changed", "queue": "awaiting_regulation",
                           "incident_id": 5, "version": 2, "state": "awaiting_regulation"})
    );
}

#[test]
fn a_move_between_two_queues_reaches_the_followers_of_both() {
    let (hub, (_reg, mut rr), (_other, mut ro)) = two_queue_followers();
    assert_eq!(
        hub.publish_queue(&moved(
            5,
            3,
            Some(State::AwaitingRegulation),
            State::Regulated
        )),
        2
    );
    assert_eq!(recv(&mut rr).unwrap()["state"], "regulated");
    assert_eq!(recv(&mut ro).unwrap()["queue"], "regulated");
}

#[test]
fn moves_a_full_queue_missed_are_owed_as_one_resync() {
    let (hub, (reg, mut rr), _other) = two_queue_followers();
    // Three moves into a queue of two: the third is owed as a resync, the fourth folded
    // into it.
    for id in 10..14 {
        hub.publish_queue(&moved(
            id,
            2,
            Some(State::Registering),
            State::AwaitingRegulation,
        ));
    }
    assert!(reg.is_behind());
    assert_eq!(recv(&mut rr).unwrap()["incident_id"], 10);
    hub.catch_up(&reg);
    assert_eq!(recv(&mut rr).unwrap()["incident_id"], 11);
    assert_eq!(
        recv(&mut rr).unwrap(),
        serde_json::json!({"type": "queue.resync", "queue": "awaiting_regulation"})
    );
    assert!(recv(&mut rr).is_none());
}

#[test]
fn nothing_is_sent_for_a_queue_after_unfollowing_it() {
    let (hub, (reg, mut rr), _other) = two_queue_followers();
    hub.unfollow_queue(&reg, Work(State::AwaitingRegulation));
    hub.publish_queue(&moved(
        20,
        2,
        Some(State::Registering),
        State::AwaitingRegulation,
    ));
    assert!(recv(&mut rr).is_none(), "nothing after unsubscribing");
    assert_eq!(hub.queue_follower_count(), 1);
}

#[test]
fn a_removed_socket_follows_no_queue() {
    let (hub, (reg, _rr), (other, _ro)) = two_queue_followers();
    hub.unfollow_queue(&reg, Work(State::AwaitingRegulation));
    assert_eq!(hub.queue_follower_count(), 1);
    hub.remove_client(other.id);
    assert_eq!(hub.queue_follower_count(), 0);
}

/// A regulator (user 1) and a fleet operator (user 2), one socket each, and the watches of
/// their sockets' endings.
#[allow(clippy::type_complexity)]
fn two_users_sockets() -> (
    Hub,
    (
        watch::Receiver<Option<Ending>>,
        watch::Receiver<Option<Ending>>,
    ),
    (Queue, Queue),
) {
    let hub = Hub::default();
    let (a, ra) = hub.connect(&user(1, Profile::MedicoRegulador));
    let (b, rb) = hub.connect(&user(2, Profile::OperadorFrota));
    (hub, (a.ended(), b.ended()), (ra, rb))
}

/// The user as the database has it now: a regulator with `status`.
fn now(status: &str, profile: Profile) -> Option<Ending> {
    Ending::judge(profile, Some((status, Profile::MedicoRegulador)))
}

#[test]
fn an_unchanged_user_keeps_its_sockets() {
    let (hub, (ea, _eb), _queues) = two_users_sockets();
    assert_eq!(hub.end_sockets_of(1, |p| now(ACTIVE, p)), 0);
    assert!(!ea.has_changed().unwrap());
}

#[test]
fn a_profile_change_ends_that_users_sockets_only() {
    let (hub, (ea, eb), _queues) = two_users_sockets();
    assert_eq!(hub.end_sockets_of(2, |p| now(ACTIVE, p)), 1);
    assert_eq!(*eb.borrow(), Some(Ending::ProfileChanged));
    assert!(!ea.has_changed().unwrap());
}

#[test]
fn a_deactivated_users_sockets_end() {
    let (hub, (mut ea, _eb), _queues) = two_users_sockets();
    assert_eq!(hub.end_sockets_of(1, |p| now("inativo", p)), 1);
    assert_eq!(*ea.borrow_and_update(), Some(Ending::UserDeactivated));
}

#[test]
fn the_connected_users_are_those_with_a_socket() {
    let (hub, _endings, _queues) = two_users_sockets();
    let mut users = hub.connected_users();
    users.sort();
    assert_eq!(users, [1, 2]);
}

fn alert(dispatch_id: i64) -> OffloadAlert {
    let at = chrono::DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    OffloadAlert {
        hold: crate::views::OffloadHold {
            dispatch_id,
            incident: crate::views::IncidentRef {
                id: 10 + dispatch_id,
                number: format!("2030-{dispatch_id:06}"),
            },
            mobile_unit: crate::views::OffloadUnit {
                id: 7,
                name: "USA 07".into(),
            },
            health_unit: None,
            at_destination_at: at,
        },
        target_seconds: 1200,
        alerted_at: at + chrono::Duration::minutes(20),
    }
}

fn cleared(dispatch_id: i64) -> OffloadNotice {
    let a = alert(dispatch_id);
    OffloadNotice::Cleared(crate::views::OffloadCleared {
        hold: a.hold,
        by: crate::domain::dispatch::Status::HandedOver,
        cleared_at: a.alerted_at,
        held_seconds: 1500.0,
    })
}

/// Following the offload queue: what was open when it was read, with what was heard while
/// reading applied on top; then each alert once, and a clearing only after its alert.
#[test]
fn an_offload_follower_hears_each_alert_once_and_its_clearing_after_it() {
    let hub = Hub::new(8, WsSettings::default());
    let (fleet, mut rx) = hub.connect(&user(1, Profile::OperadorFrota));
    hub.begin_follow_offload(&fleet);
    // While the open alerts are read: alert 2 raised, alert 1 (read as open) cleared.
    hub.publish_offload(&OffloadNotice::Alert(alert(2)));
    hub.publish_offload(&cleared(1));
    assert_eq!(recv(&mut rx), None, "nothing before the answer");
    let answer: Vec<String> = hub
        .finish_follow_offload(&fleet, vec![alert(1), alert(3)])
        .iter()
        .map(ServerMessage::text)
        .collect();
    let ids: Vec<serde_json::Value> = answer
        .iter()
        .map(|t| serde_json::from_str::<serde_json::Value>(t).unwrap()["dispatch_id"].clone())
        .collect();
    assert_eq!(answer[0], r#"{"type":"subscribed","queue":"offload"}"#);
    assert_eq!(ids[1..], [serde_json::json!(3), serde_json::json!(2)]);
    // Live: a repeated alert is not told twice; a clearing of one never told is not told.
    assert_eq!(hub.publish_offload(&OffloadNotice::Alert(alert(2))), 0);
    assert_eq!(hub.publish_offload(&cleared(9)), 0);
    assert_eq!(hub.publish_offload(&cleared(3)), 1);
    let told = recv(&mut rx).unwrap();
    assert_eq!(told["type"], "offload.cleared");
    assert_eq!(told["dispatch_id"], 3);
    assert_eq!(told["by"], "handed_over");
    assert_eq!(hub.publish_offload(&OffloadNotice::Alert(alert(4))), 1);
    assert_eq!(recv(&mut rx).unwrap()["type"], "offload.alert");
    hub.unfollow_queue(&fleet, crate::domain::queue::Queue::OFFLOAD);
    assert_eq!(hub.publish_offload(&cleared(4)), 0);
}

/// Queue `mine` (docs/dispatch-realtime.md, "Personal work"): each socket hears only its
/// own user's incidents, `held: true` when one comes to them and `held: false` when it
/// leaves them; a socket of the same user not following `mine` hears nothing.
#[test]
fn mine_is_told_to_its_own_user_only() {
    let hub = Hub::new(8, WsSettings::default());
    let (from, mut from_rx) = hub.connect(&user(3, Profile::MedicoRegulador));
    let (to, mut to_rx) = hub.connect(&user(4, Profile::MedicoRegulador));
    let (other, mut other_rx) = hub.connect(&user(5, Profile::MedicoRegulador));
    let (_unfollowing, mut unfollowing_rx) = hub.connect(&user(4, Profile::MedicoRegulador));
    for c in [&from, &to, &other] {
        hub.follow_queue(c, crate::domain::queue::Queue::MINE);
    }
    let sent = hub.publish_mine(&MineNotice {
        incident_id: 12,
        version: 5,
        state: State::Regulated,
        came: vec![4],
        left: vec![3],
    });
    assert_eq!(sent, 2);
    let told = |held| {
        serde_json::json!({"type": "queue.changed", "queue": "mine", "incident_id": 12,
            "version": 5, "state": "regulated", "held": held})
    };
    assert_eq!(recv(&mut to_rx), Some(told(true)));
    assert_eq!(recv(&mut from_rx), Some(told(false)));
    assert_eq!(recv(&mut other_rx), None);
    assert_eq!(recv(&mut unfollowing_rx), None);
    hub.unfollow_queue(&to, crate::domain::queue::Queue::MINE);
    let again = MineNotice {
        incident_id: 13,
        version: 2,
        state: State::Dispatched,
        came: vec![4],
        left: vec![],
    };
    assert_eq!(hub.publish_mine(&again), 0);
    assert_eq!(recv(&mut to_rx), None);
}

/// A unit's step reaches the fleet's followers only, as its message; a step that did not
/// fit in its notice is a `queue.resync` for `fleet`.
#[test]
fn a_units_step_reaches_the_fleet_followers_and_a_resync_tells_them_to_read_again() {
    let hub = Hub::new(8, WsSettings::default());
    let (fleet, mut rf) = hub.connect(&user(1, Profile::OperadorFrota));
    let (other, mut ro) = hub.connect(&user(2, Profile::OperadorFrota));
    hub.follow_queue(&fleet, crate::domain::queue::Queue::FLEET);
    hub.follow_queue(&other, crate::domain::queue::Queue::OFFLOAD);
    let step: crate::views::UnitStep = serde_json::from_value(serde_json::json!({
        "step": "released", "at": "2030-01-01T10:00:00Z", "dispatch_id": 4,
        "unit": {"id": 7, "name": "USA 07", "base": "Centro",
                 "vehicle_type": {"id": 1, "name": "USA"}, "dispatch": null,
                 "step_since": null}}))
    .unwrap();
    assert_eq!(hub.publish_fleet(&FleetNotice::Step(Box::new(step))), 1);
    let heard = recv(&mut rf).unwrap();
    assert_eq!(
        (&heard["type"], &heard["step"], &heard["unit"]["id"]),
        (
            &serde_json::json!("unit.step"),
            &serde_json::json!("released"),
            &serde_json::json!(7)
        )
    );
    assert_eq!(recv(&mut ro), None);
    assert_eq!(hub.publish_fleet(&FleetNotice::Resync), 1);
    assert_eq!(
        recv(&mut rf).unwrap(),
        serde_json::json!({"type": "queue.resync", "queue": "fleet"})
    );
}
