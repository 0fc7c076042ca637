//! The process's one `LISTEN` connection (one per replica: docs/dispatch-realtime.md,
//! "Fan-out across replicas"), shared by everything that follows the database: the user
//! cache, the WebSocket hub (incidents, work queues, and the authority of each socket's
//! user) and the reference data. Each follows its own receiver of one broadcast channel and
//! picks its own channel's notifications; each treats `Reconnected` (and a lagging
//! receiver) as "anything may have been missed" and re-reads what it holds.

use std::time::Duration;

use common::db::{self, Pool};
use common::listen::{ListenEvent, ListenSettings};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::catalog::Catalog;
use crate::domain::history::ChangeGroup;
use crate::realtime::authority::Ending;
use crate::realtime::hub::Hub;
use crate::realtime::notice::OffloadNotice;
use crate::realtime::notice::{FleetNotice, IncidentNotice, MineNotice, QueueNotice};
use crate::state::AppState;
use crate::store::calls::{CALLS_CHANNEL, CallNotice};
use crate::store::holders::MINE_CHANNEL;
use crate::store::offload::OFFLOAD_CHANNEL;
use crate::store::{self, FLEET_CHANNEL, INCIDENT_CHANNEL, QUEUE_CHANNEL, REFERENCE_CHANNEL};
use crate::user_cache;

/// `application_name` of the listening connection (find it in `pg_stat_activity`).
pub const APPLICATION_NAME: &str = "dispatch-api-listener";

/// The listener's settings: a heartbeat after 1 s of silence with `DATABASE_TIMEOUT` as its
/// deadline, and reconnection attempts at most 2 s apart, so a healed link is heard again
/// within a few seconds (docs/operations.md, "Network faults").
pub fn settings() -> ListenSettings {
    ListenSettings {
        application_name: APPLICATION_NAME.to_owned(),
        max_backoff: Duration::from_secs(2),
        ..ListenSettings::default()
    }
}

/// Starts the listener and its followers. Abort the returned handle to stop them all (the
/// followers end when the listener's channel closes).
pub fn spawn(database_url: String, state: &AppState, settings: ListenSettings) -> JoinHandle<()> {
    let (tx, _) = broadcast::channel(4096);
    // The user cache is trusted only while this listener is known to hear, and `/readyz`
    // says when it is not (docs/operations.md, "Network faults").
    state.users.heard_through(settings.health.clone());
    tokio::spawn(user_cache::follow(tx.subscribe(), state.users.clone()));
    tokio::spawn(follow_incidents(
        tx.subscribe(),
        state.hub.clone(),
        state.pool.clone(),
    ));
    tokio::spawn(follow_users(
        tx.subscribe(),
        state.hub.clone(),
        state.pool.clone(),
    ));
    tokio::spawn(follow_reference(
        tx.subscribe(),
        state.catalog.clone(),
        state.pool.clone(),
    ));
    let channels = [
        user_cache::CHANNEL,
        INCIDENT_CHANNEL,
        QUEUE_CHANNEL,
        REFERENCE_CHANNEL,
        OFFLOAD_CHANNEL,
        MINE_CHANNEL,
        FLEET_CHANNEL,
        CALLS_CHANNEL,
    ]
    .map(str::to_owned)
    .to_vec();
    common::listen::spawn(database_url, channels, settings, tx)
}

/// Incident changes, work-queue moves, incidents coming to users or leaving them, units'
/// steps and hospital offload alerts, on one task so that a
/// socket following several hears them in the order they were committed.
async fn follow_incidents(mut rx: broadcast::Receiver<ListenEvent>, hub: Hub, pool: Pool) {
    loop {
        match rx.recv().await {
            Ok(ListenEvent::Notification { channel, payload }) if channel == INCIDENT_CHANNEL => {
                match IncidentNotice::parse(&payload) {
                    Some(notice) => {
                        hub.publish(&notice);
                    }
                    None => tracing::warn!(%payload, "unreadable incident notification"),
                }
            }
            Ok(ListenEvent::Notification { channel, payload }) if channel == QUEUE_CHANNEL => {
                match QueueNotice::parse(&payload) {
                    Some(notice) => {
                        hub.publish_queue(&notice);
                    }
                    None => tracing::warn!(%payload, "unreadable queue notification"),
                }
            }
            Ok(ListenEvent::Notification { channel, payload }) if channel == MINE_CHANNEL => {
                match MineNotice::parse(&payload) {
                    Some(notice) => {
                        hub.publish_mine(&notice);
                    }
                    None => tracing::warn!(%payload, "unreadable personal queue notification"),
                }
            }
            Ok(ListenEvent::Notification { channel, payload }) if channel == FLEET_CHANNEL => {
                if let Some(notice) = FleetNotice::parse(&payload) {
                    hub.publish_fleet(&notice);
                }
            }
            Ok(ListenEvent::Notification { channel, payload }) if channel == OFFLOAD_CHANNEL => {
                match serde_json::from_str::<OffloadNotice>(&payload) {
                    Ok(notice) => {
                        hub.publish_offload(&notice);
                    }
                    Err(e) => {
                        tracing::warn!(%payload, error = %e, "unreadable offload notification")
                    }
                }
            }
            Ok(ListenEvent::Notification { channel, payload }) if channel == CALLS_CHANNEL => {
                match serde_json::from_str::<CallNotice>(&payload) {
                    Ok(notice) => {
                        hub.publish_call(&notice);
                    }
                    Err(e) => tracing::warn!(%payload, error = %e, "unreadable call notification"),
                }
            }
            Ok(ListenEvent::Reconnected) | Err(broadcast::error::RecvError::Lagged(_)) => {
                let told = hub.resync_queues();
                tracing::info!(told, "queue followers told to re-read their queues");
                resync(&hub, &pool).await;
                hub.set_listening(true);
            }
            Ok(ListenEvent::Disconnected) => hub.set_listening(false),
            Ok(_) => {}
            Err(broadcast::error::RecvError::Closed) => {
                hub.set_listening(false);
                return;
            }
        }
    }
}

/// Re-reads the version of every followed incident and tells the sockets that are behind
/// (what changed is unknown, so every group is named).
pub async fn resync(hub: &Hub, pool: &Pool) {
    let ids = hub.subscribed_incidents();
    if ids.is_empty() {
        return;
    }
    let read = async {
        let conn = db::conn(pool).await.map_err(|p| p.to_string())?;
        store::incidents::versions(&conn, &ids)
            .await
            .map_err(|e| e.to_string())
    };
    match read.await {
        Ok(rows) => {
            let sent: usize = rows
                .into_iter()
                .map(|row| {
                    hub.publish(&IncidentNotice {
                        incident_id: row.id,
                        version: row.version,
                        changed: ChangeGroup::ALL.iter().map(|g| g.as_str()).collect(),
                    })
                })
                .sum();
            tracing::info!(incidents = ids.len(), sent, "re-read followed incidents");
        }
        Err(e) => tracing::warn!(error = %e, "cannot re-read followed incidents"),
    }
}

/// The authority of each socket's user: on a user change (the same notice that evicts the
/// user cache) the user is read again, once for all their sockets, and the sockets whose
/// user is no longer active or no longer has the profile they were opened with are ended.
/// A profile change (`*`) or a reconnection re-reads every connected user.
async fn follow_users(mut rx: broadcast::Receiver<ListenEvent>, hub: Hub, pool: Pool) {
    loop {
        let users = match rx.recv().await {
            Ok(ListenEvent::Notification { channel, payload })
                if channel == user_cache::CHANNEL =>
            {
                match payload.parse::<i64>() {
                    Ok(id) => vec![id],
                    Err(_) => hub.connected_users(),
                }
            }
            Ok(ListenEvent::Reconnected) | Err(broadcast::error::RecvError::Lagged(_)) => {
                hub.connected_users()
            }
            Ok(_) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        check_users(&hub, &pool, users).await;
    }
}

/// How often, and how far apart, a user change is read again when the database fails.
const CHECK_ATTEMPTS: u32 = 3;
const CHECK_RETRY: Duration = Duration::from_millis(300);

/// Ends the sockets of `users` that lost their authority. When the users cannot be read,
/// their sockets end with [`Ending::Unconfirmed`]: a change was announced and cannot be
/// confirmed, and the client's reconnection authenticates afresh.
pub async fn check_users(hub: &Hub, pool: &Pool, mut users: Vec<i64>) {
    let connected = hub.connected_users();
    users.retain(|u| connected.contains(u));
    if users.is_empty() {
        return;
    }
    for attempt in 1..=CHECK_ATTEMPTS {
        let read = async {
            let conn = db::conn(pool).await.map_err(|p| p.to_string())?;
            store::users::callers(&conn, &users)
                .await
                .map_err(|e| e.to_string())
        };
        match read.await {
            Ok(found) => {
                let mut ended = 0;
                for &id in &users {
                    let now = found
                        .iter()
                        .find(|c| c.id == id)
                        .map(|c| (c.status.as_str(), c.profile));
                    ended += hub.end_sockets_of(id, |profile| Ending::judge(profile, now));
                }
                if ended > 0 {
                    tracing::info!(ended, "sockets ended: their user changed");
                }
                return;
            }
            Err(e) if attempt < CHECK_ATTEMPTS => {
                tracing::warn!(error = %e, attempt, "cannot read changed users; retrying");
                tokio::time::sleep(CHECK_RETRY).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read changed users; ending their sockets");
                for &id in &users {
                    hub.end_sockets_of(id, |_| Some(Ending::Unconfirmed));
                }
            }
        }
    }
}

async fn follow_reference(mut rx: broadcast::Receiver<ListenEvent>, catalog: Catalog, pool: Pool) {
    loop {
        let refresh = match rx.recv().await {
            Ok(ListenEvent::Notification { channel, .. }) => channel == REFERENCE_CHANNEL,
            Ok(ListenEvent::Reconnected) | Err(broadcast::error::RecvError::Lagged(_)) => true,
            Ok(ListenEvent::Disconnected) => false,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if refresh && let Err(e) = catalog.refresh(&pool).await {
            tracing::warn!(error = %e, "reference data not refreshed");
        }
    }
}
