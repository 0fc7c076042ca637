//! `GET /ws`: one socket per browser tab. The token comes in `Authorization: Bearer` or, for
//! browsers, the `access_token` query parameter (the request log shows the path only, never
//! the query). Client messages: `{"type":"subscribe","incident_id":N}` and
//! `{"type":"unsubscribe","incident_id":N}`; server messages: see `hub::ServerMessage`.
//!
//! Each socket runs on one task: it reads the client's frames, writes what the hub queued
//! for it, pings it when idle and drops it when it stays silent past the idle timeout, when
//! the hub kicks it for being too slow (its queue is full: `1008`), when a frame cannot be
//! written within the send timeout (dropped without a close frame, which could not be written
//! either), or when the server shuts down (close frame `1001`).

use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use common::Problem;
use common::auth::authorization;
use common::db::Pool;
use serde::Deserialize;

pub use super::hub::WsSettings;
use super::hub::{Client, Hub, ServerMessage};
use crate::domain::user::{CurrentUser, may};
use crate::state::AppState;
use crate::store;

#[derive(Deserialize)]
struct WsQuery {
    access_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum ClientMessage {
    #[serde(rename = "subscribe")]
    Subscribe { incident_id: i64 },
    #[serde(rename = "unsubscribe")]
    Unsubscribe { incident_id: i64 },
}

/// Upgrades to a WebSocket after authenticating (401 before the upgrade otherwise).
#[utoipa::path(get, path = "/ws", tag = "realtime",
    params(("access_token" = Option<String>, Query,
        description = "the token, for browsers that cannot set Authorization")),
    responses((status = 101, description = "Switching to the WebSocket protocol"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json",
            description = "`websocket_upgrade_required`: the request is not a WebSocket handshake")))]
pub async fn ws(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, actix_web::Error> {
    let token = match authorization(&req, "Bearer") {
        Some(t) => Some(t.to_owned()),
        None => common::extract::Query::<WsQuery>::parse(req.query_string())
            .ok()
            .and_then(|q| q.access_token),
    };
    let token = token.ok_or_else(|| {
        Problem::unauthorized("a token is required: `Authorization: Bearer` or `access_token`")
    })?;
    let user = crate::auth::authenticate(&state, &token).await?;
    // A plain GET (no upgrade headers) is a client error, answered like every other.
    let (res, session, stream) = actix_ws::handle(&req, body).map_err(|e| {
        Problem::new(
            actix_web::http::StatusCode::BAD_REQUEST,
            "websocket_upgrade_required",
            format!("this route upgrades to a WebSocket: {e}"),
        )
    })?;
    let hub = state.hub.clone();
    let stream = stream
        .max_frame_size(hub.settings.max_frame)
        .aggregate_continuations()
        .max_continuation_size(hub.settings.max_frame);
    actix_web::rt::spawn(run(session, stream, user, hub, state.pool.clone()));
    Ok(res)
}

async fn run(
    mut session: Session,
    mut stream: actix_ws::AggregatedMessageStream,
    user: CurrentUser,
    hub: Hub,
    pool: Pool,
) {
    let settings = hub.settings;
    let (client, mut queue) = hub.client();
    let mut closing = hub.closing();
    let mut last_heard = Instant::now();
    let mut ping = tokio::time::interval(settings.ping_interval);
    ping.tick().await;
    let reason: Option<CloseReason> = loop {
        tokio::select! {
            frame = stream.recv() => match frame {
                Some(Ok(AggregatedMessage::Text(text))) => {
                    last_heard = Instant::now();
                    handle(&text, &client, &user, &hub, &pool).await;
                }
                Some(Ok(AggregatedMessage::Binary(_))) => {
                    last_heard = Instant::now();
                    client.send(&ServerMessage::error("invalid_message", "send JSON text frames"));
                }
                Some(Ok(AggregatedMessage::Ping(bytes))) => {
                    last_heard = Instant::now();
                    if !sent(session.pong(&bytes), settings.send_timeout, user.id).await {
                        break None;
                    }
                }
                Some(Ok(AggregatedMessage::Pong(_))) => last_heard = Instant::now(),
                Some(Ok(AggregatedMessage::Close(_))) => break Some(CloseCode::Normal.into()),
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "websocket protocol error");
                    break Some(CloseReason { code: CloseCode::Protocol, description: Some(e.to_string()) });
                }
                None => break None,
            },
            Some(text) = queue.recv() => {
                if !sent(session.text(&*text), settings.send_timeout, user.id).await {
                    break None;
                }
            }
            () = client.kicked.notified() => {
                tracing::info!(user = user.id, "websocket client too slow; disconnected");
                break Some(CloseReason {
                    code: CloseCode::Policy,
                    description: Some("too slow: messages were not read".to_owned()),
                });
            }
            _ = ping.tick() => {
                if last_heard.elapsed() >= settings.idle_timeout {
                    tracing::debug!(user = user.id, "websocket idle; dropped");
                    break Some(CloseReason { code: CloseCode::Away, description: Some("idle".to_owned()) });
                }
                if last_heard.elapsed() >= settings.ping_interval
                    && !sent(session.ping(b""), settings.send_timeout, user.id).await
                {
                    break None;
                }
            }
            _ = closing.changed() => {
                break Some(CloseReason {
                    code: CloseCode::Away,
                    description: Some("server shutting down".to_owned()),
                });
            }
        }
    };
    hub.remove_client(client.id);
    // A stalled client cannot take a close frame either: it is dropped without one.
    sent(session.close(reason), settings.send_timeout, user.id).await;
}

/// Whether a frame was handed to the socket within `timeout`. Every frame goes through this:
/// a client that stopped reading fills the buffers on the way, and a send that waited on it
/// without bound would leave this task deaf to kicks, pings and shutdown.
async fn sent<E>(send: impl Future<Output = Result<(), E>>, timeout: Duration, user: i64) -> bool {
    match tokio::time::timeout(timeout, send).await {
        Ok(result) => result.is_ok(),
        Err(_) => {
            tracing::info!(user, "websocket client stalled; dropped");
            false
        }
    }
}

async fn handle(text: &str, client: &Client, user: &CurrentUser, hub: &Hub, pool: &Pool) {
    let message: ClientMessage = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            client.send(&ServerMessage::error(
                "invalid_message",
                format!(
                    "expected {{\"type\":\"subscribe\"|\"unsubscribe\",\"incident_id\":N}}: {e}"
                ),
            ));
            return;
        }
    };
    match message {
        ClientMessage::Subscribe { incident_id } => {
            if !may::READ.contains(&user.profile) {
                client.send(&ServerMessage::error(
                    "forbidden",
                    format!(
                        "the {} profile may not read incidents",
                        user.profile.title()
                    ),
                ));
                return;
            }
            // Registered before the read, so nothing committed in between is missed.
            hub.begin_subscribe(client, incident_id);
            match current_version(pool, incident_id).await {
                Ok(Some(v)) => hub.finish_subscribe(client, incident_id, v),
                Ok(None) => {
                    hub.unsubscribe(client, incident_id);
                    client.send(&ServerMessage::error(
                        "not_found",
                        format!("incident {incident_id} does not exist"),
                    ));
                }
                Err(e) => {
                    let p = e.problem();
                    hub.unsubscribe(client, incident_id);
                    client.send(&ServerMessage::error(&p.code, p.detail));
                }
            }
        }
        ClientMessage::Unsubscribe { incident_id } => hub.unsubscribe(client, incident_id),
    }
}

async fn current_version(pool: &Pool, id: i64) -> crate::error::Result<Option<i32>> {
    let conn = pool.get().await?;
    Ok(store::incidents::version(&conn, id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_send_that_cannot_complete_gives_up_after_the_timeout() {
        let timeout = Duration::from_millis(50);
        let started = Instant::now();
        let stalled = std::future::pending::<Result<(), ()>>();
        assert!(!sent(stalled, timeout, 1).await);
        assert!(started.elapsed() >= timeout);
        assert!(sent(async { Ok::<(), ()>(()) }, timeout, 1).await);
        assert!(!sent(async { Err::<(), ()>(()) }, timeout, 1).await);
    }
}
