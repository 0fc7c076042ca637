//! The process's one `LISTEN` connection (one per replica: docs/dispatch-realtime.md, "Fan-out across replicas"), shared by everything
//! that follows the database: the user cache, the WebSocket hub and the reference data.
//! Each follows its own receiver of one broadcast channel and picks its own channel's
//! notifications; each treats `Reconnected` (and a lagging receiver) as "anything may have
//! been missed" and re-reads what it holds.

use common::db::{self, Pool};
use common::listen::{ListenEvent, ListenSettings};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::hub::{ALL_GROUPS, Hub, parse_payload};
use crate::catalog::Catalog;
use crate::schema::dispatch::incidents;
use crate::state::AppState;
use crate::store::{INCIDENT_CHANNEL, REFERENCE_CHANNEL};
use crate::user_cache;

/// `application_name` of the listening connection (find it in `pg_stat_activity`).
pub const APPLICATION_NAME: &str = "dispatch-api-listener";

pub fn settings() -> ListenSettings {
    ListenSettings {
        application_name: APPLICATION_NAME.to_owned(),
        ..ListenSettings::default()
    }
}

/// Starts the listener and its three followers. Abort the returned handle to stop them all
/// (the followers end when the listener's channel closes).
pub fn spawn(database_url: String, state: &AppState, settings: ListenSettings) -> JoinHandle<()> {
    let (tx, _) = broadcast::channel(4096);
    tokio::spawn(user_cache::follow(tx.subscribe(), state.users.clone()));
    tokio::spawn(follow_incidents(
        tx.subscribe(),
        state.hub.clone(),
        state.pool.clone(),
    ));
    tokio::spawn(follow_reference(
        tx.subscribe(),
        state.catalog.clone(),
        state.pool.clone(),
    ));
    let channels = [user_cache::CHANNEL, INCIDENT_CHANNEL, REFERENCE_CHANNEL]
        .map(str::to_owned)
        .to_vec();
    common::listen::spawn(database_url, channels, settings, tx)
}

async fn follow_incidents(mut rx: broadcast::Receiver<ListenEvent>, hub: Hub, pool: Pool) {
    loop {
        match rx.recv().await {
            Ok(ListenEvent::Notification { channel, payload }) if channel == INCIDENT_CHANNEL => {
                match parse_payload(&payload) {
                    Some((id, version, changed)) => {
                        hub.publish(id, version, &changed);
                    }
                    None => tracing::warn!(%payload, "unreadable incident notification"),
                }
            }
            Ok(ListenEvent::Reconnected) | Err(broadcast::error::RecvError::Lagged(_)) => {
                resync(&hub, &pool).await;
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Closed) => return,
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
    let rows: Result<Vec<(i64, i32)>, _> = async {
        let mut conn = db::conn(pool).await.map_err(|p| p.to_string())?;
        incidents::table
            .filter(incidents::id.eq_any(&ids))
            .select((incidents::id, incidents::version))
            .load(&mut conn)
            .await
            .map_err(|e| e.to_string())
    }
    .await;
    match rows {
        Ok(rows) => {
            let sent: usize = rows
                .into_iter()
                .map(|(id, v)| hub.publish(id, v, ALL_GROUPS))
                .sum();
            tracing::info!(incidents = ids.len(), sent, "re-read followed incidents");
        }
        Err(e) => tracing::warn!(error = %e, "cannot re-read followed incidents"),
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
