//! `GET /ws`: one socket per browser tab (docs/dispatch-realtime.md, "WebSocket protocol").
//! The token comes in `Authorization: Bearer` or, for browsers, the `access_token` query
//! parameter (the request log shows the path only, never the query). Client messages:
//! `protocol::ClientMessage`; server messages: `protocol::ServerMessage`.
//!
//! What the server sends goes through the socket's outbox (`realtime::outbox`), which the
//! HTTP connection reads as the response's body: the hub queues events there itself, so a
//! delivery involves no task of the socket's. Each socket runs one task for the rest. It
//! reads the client's frames and answers each request in order, queuing the answer behind
//! the events already queued and waiting until the connection has taken it: meanwhile the
//! task reads no further request, so a burst of requests is slowed to the pace the client
//! reads its answers (flow control), never refused. It collects what the hub held back while
//! the outbox was full once it has room. It pings the client when idle and ends the socket:
//! - when the client stays silent past the idle timeout (`1001`, "idle");
//! - when queued frames wait for the send timeout without the connection taking any: the
//!   client stopped reading (`1008`, "not reading", if that close frame can still be
//!   written; otherwise the connection is dropped);
//! - when its authority ends: the token expires, or the user is deactivated, deleted or
//!   given another profile (`4401` with the reason, see `authority::Ending`);
//! - when the server shuts down (`1001`).

use std::time::{Duration, Instant};

use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason};
use common::Problem;
use common::auth::{authorization, now_secs};
use common::db::Pool;
use serde::Deserialize;

use crate::domain::incident::State;
use crate::domain::queue::{self, QUEUES, Queue};
use crate::domain::user::{CurrentUser, Profile, may, titles};
use crate::realtime::authority::Ending;
use crate::realtime::hub::{Client, Hub};
use crate::realtime::notice::OffloadNotice;
use crate::realtime::outbox::{self, Opcode, Outbox};
use crate::realtime::protocol::{ClientMessage, ServerMessage, Target};
use crate::state::AppState;
use crate::store;

#[derive(Deserialize)]
struct WsQuery {
    access_token: Option<String>,
}

/// Upgrades to a WebSocket after authenticating (401 before the upgrade otherwise).
#[utoipa::path(get, path = "/ws", tag = "realtime",
    description = "After the upgrade the socket carries JSON text frames: the client sends \
        `WsClientMessage`, the server `WsServerMessage` (schemas in `components`); close codes \
        and flow control are in docs/dispatch-realtime.md.",
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
    let crate::auth::Authenticated { user, expires_at } =
        crate::auth::authenticate_with_expiry(&state, &token).await?;
    let expires = expiry(expires_at);
    // A plain GET (no upgrade headers) is a client error, answered like every other. What
    // the server sends goes through the outbox, which the connection reads as the body;
    // actix-ws's own body is kept beside it, unused, so that its end (the connection's)
    // still ends the stream of the client's frames.
    let (res, _session, stream) = actix_ws::handle(&req, body).map_err(|e| {
        Problem::new(
            actix_web::http::StatusCode::BAD_REQUEST,
            "websocket_upgrade_required",
            format!("this route upgrades to a WebSocket: {e}"),
        )
    })?;
    let hub = state.hub.clone();
    let (client, outbox) = hub.connect(&user);
    let res = res.map_body(|_, own| outbox.body(own));
    let stream = stream
        .max_frame_size(hub.settings.max_frame)
        .aggregate_continuations()
        .max_continuation_size(hub.settings.max_frame);
    actix_web::rt::spawn(run(
        client,
        outbox,
        stream,
        user,
        expires,
        hub,
        state.pool.clone(),
    ));
    Ok(res)
}

/// When the token stops being valid: its `exp` as `auth` verified it (whichever kind of
/// token, a fractional `exp` floored), on the runtime's clock.
fn expiry(exp: i64) -> tokio::time::Instant {
    let left = u64::try_from(exp.saturating_sub(now_secs())).unwrap_or(0);
    tokio::time::Instant::now() + Duration::from_secs(left)
}

/// Why a frame could not be written.
enum Stop {
    /// The connection is gone.
    Gone,
    /// Not taken within the send timeout: the client stopped reading.
    Stalled,
}

/// The task's own frames (answers, pings, pongs): queued behind the events already queued,
/// then awaited until the connection has taken them, within the send timeout, so a client
/// that stopped reading cannot leave the task deaf to its other duties.
struct Out {
    outbox: Outbox,
    timeout: Duration,
}

impl Out {
    async fn send(&self, frames: impl IntoIterator<Item = Bytes>) -> Result<(), Stop> {
        for frame in frames {
            self.outbox.push(frame).map_err(|_| Stop::Gone)?;
        }
        within(self.outbox.flushed(), self.timeout).await
    }

    async fn ping(&self) -> Result<(), Stop> {
        self.send([outbox::frame(Opcode::Ping, b"")]).await
    }

    async fn pong(&self, bytes: &[u8]) -> Result<(), Stop> {
        // A control frame carries at most 125 bytes (RFC 6455, section 5.5).
        self.send([outbox::frame(Opcode::Pong, &bytes[..bytes.len().min(125)])])
            .await
    }

    /// Queues the close frame behind everything queued and waits (the send timeout at
    /// most) for the connection to take it.
    async fn close(&self, reason: CloseReason) {
        let code: u16 = reason.code.into();
        let mut payload = code.to_be_bytes().to_vec();
        if let Some(text) = &reason.description {
            // A close frame's reason is at most 123 bytes (RFC 6455, section 5.5).
            let mut end = text.len().min(123);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            payload.extend_from_slice(&text.as_bytes()[..end]);
        }
        self.outbox.close(outbox::frame(Opcode::Close, &payload));
        let _ = tokio::time::timeout(self.timeout, self.outbox.flushed()).await;
    }
}

async fn within<E>(
    send: impl Future<Output = Result<(), E>>,
    timeout: Duration,
) -> Result<(), Stop> {
    match tokio::time::timeout(timeout, send).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Stop::Gone),
        Err(_) => Err(Stop::Stalled),
    }
}

fn close(code: impl Into<CloseCode>, reason: &str) -> Option<CloseReason> {
    Some(CloseReason {
        code: code.into(),
        description: Some(reason.to_owned()),
    })
}

/// The close frame for a write that failed (none when the connection is gone).
fn stopped(stop: Stop, user: i64) -> Option<CloseReason> {
    match stop {
        Stop::Gone => None,
        Stop::Stalled => {
            tracing::info!(user, "websocket client stopped reading; disconnected");
            close(CloseCode::Policy, "not reading")
        }
    }
}

fn ended(ending: Ending, user: i64) -> Option<CloseReason> {
    tracing::info!(user, reason = ending.reason(), "websocket authority ended");
    close(ending.code(), ending.reason())
}

async fn run(
    client: Client,
    outbox: Outbox,
    mut stream: actix_ws::AggregatedMessageStream,
    user: CurrentUser,
    expires: tokio::time::Instant,
    hub: Hub,
    pool: Pool,
) {
    let settings = hub.settings;
    let out = Out {
        outbox,
        timeout: settings.send_timeout,
    };
    let mut authority = client.ended();
    let mut closing = hub.closing();
    let mut last_heard = Instant::now();
    // Often enough to ping on time and to notice, within half the send timeout more, a
    // client that stopped reading.
    let mut tick = tokio::time::interval(settings.ping_interval.min(settings.send_timeout / 2));
    tick.tick().await;
    let expired = tokio::time::sleep_until(expires);
    tokio::pin!(expired);
    // The user as the database has it now: a change committed before the socket was
    // registered with the hub (and so not seen by `listener::check_users`) is seen here.
    // The database reads (here and in `handle`) are boxed: their futures are large and
    // short-lived, and the socket's task, held as long as the socket, would otherwise be as
    // large as the largest of them (bench/dispatch/README.md, "Memory per idle socket").
    let reason: Option<CloseReason> = if let Some(ending) = Box::pin(confirm(&pool, &user)).await {
        ended(ending, user.id)
    } else {
        'socket: loop {
            tokio::select! {
                Some(ending) = async { authority.wait_for(Option::is_some).await.ok().and_then(|e| *e) } => {
                    break ended(ending, user.id);
                }
                () = &mut expired => break ended(Ending::TokenExpired, user.id),
                _ = closing.changed() => break close(CloseCode::Away, "server shutting down"),
                frame = stream.recv() => match frame {
                    Some(Ok(AggregatedMessage::Text(text))) => {
                        last_heard = Instant::now();
                        let replies = Box::pin(handle(&text, &client, &user, &hub, &pool)).await;
                        // Behind what the hub queued before the request was handled.
                        if !replies.is_empty()
                            && let Err(stop) = out.send(replies.iter().map(ServerMessage::frame)).await
                        {
                            break 'socket stopped(stop, user.id);
                        }
                    }
                    Some(Ok(AggregatedMessage::Binary(_))) => {
                        last_heard = Instant::now();
                        let reply = ServerMessage::error("invalid_message", "send JSON text frames");
                        if let Err(stop) = out.send([reply.frame()]).await {
                            break stopped(stop, user.id);
                        }
                    }
                    Some(Ok(AggregatedMessage::Ping(bytes))) => {
                        last_heard = Instant::now();
                        if let Err(stop) = out.pong(&bytes).await {
                            break stopped(stop, user.id);
                        }
                    }
                    Some(Ok(AggregatedMessage::Pong(_))) => last_heard = Instant::now(),
                    Some(Ok(AggregatedMessage::Close(_))) => break Some(CloseCode::Normal.into()),
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "websocket protocol error");
                        break close(CloseCode::Protocol, &e.to_string());
                    }
                    None => break None,
                },
                () = out.outbox.room() => hub.catch_up(&client),
                _ = tick.tick() => {
                    if out.outbox.stalled_for() >= settings.send_timeout {
                        break stopped(Stop::Stalled, user.id);
                    }
                    if last_heard.elapsed() >= settings.idle_timeout {
                        tracing::debug!(user = user.id, "websocket idle; dropped");
                        break close(CloseCode::Away, "idle");
                    }
                    if last_heard.elapsed() >= settings.ping_interval
                        && let Err(stop) = out.ping().await
                    {
                        break stopped(stop, user.id);
                    }
                }
            }
        }
    };
    // Nothing more is queued for this socket from here on.
    hub.remove_client(client.id);
    if let Some(reason) = reason {
        // A client that stopped reading may take it still if it reads again in time;
        // otherwise the connection is dropped without one.
        out.close(reason).await;
    }
    out.outbox.finish();
}

/// Whether the socket's user still stands as it was authenticated (`None` also when the
/// database cannot say: the user-change listener covers that case).
async fn confirm(pool: &Pool, user: &CurrentUser) -> Option<Ending> {
    let conn = pool.get().await.ok()?;
    let now = store::users::caller(&conn, user.id).await.ok()?;
    Ending::judge(
        user.profile,
        now.as_ref().map(|c| (c.status.as_str(), c.profile)),
    )
}

/// Handles one request; the answers to write, in order (an `unsubscribe` has none; following
/// the offload queue is answered `subscribed` and then the alerts open).
async fn handle(
    text: &str,
    client: &Client,
    user: &CurrentUser,
    hub: &Hub,
    pool: &Pool,
) -> Vec<ServerMessage> {
    let message: ClientMessage = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            return vec![ServerMessage::error(
                "invalid_message",
                format!(
                    "expected {{\"type\":\"subscribe\"|\"unsubscribe\",\"incident_id\":N}} \
                     or {{\"type\":\"subscribe\"|\"unsubscribe\",\"queue\":\"<state>\"|\"offload\"|\"mine\"|\"fleet\"|\"calls\"}}: {e}"
                ),
            )];
        }
    };
    match message {
        ClientMessage::Subscribe { incident_id, queue } => match Target::of(incident_id, queue) {
            Ok(Target::Incident(id)) => vec![subscribe(id, client, user, hub, pool).await],
            Ok(Target::Queue(Queue::Work(q))) => vec![follow(q, client, user, hub)],
            Ok(Target::Queue(Queue::Offload(_))) => follow_offload(client, user, hub, pool).await,
            Ok(Target::Queue(q @ Queue::Mine(_))) => {
                vec![follow_named(q, queue::MINE_FOLLOWERS, client, user, hub)]
            }
            Ok(Target::Queue(q @ Queue::Fleet(_))) => {
                vec![follow_named(q, queue::FLEET_FOLLOWERS, client, user, hub)]
            }
            Ok(Target::Queue(q @ Queue::Calls(_))) => {
                vec![follow_named(q, queue::CALLS_FOLLOWERS, client, user, hub)]
            }
            Err(refused) => vec![refused],
        },
        ClientMessage::Unsubscribe { incident_id, queue } => match Target::of(incident_id, queue) {
            Ok(Target::Incident(id)) => {
                hub.unsubscribe(client, id);
                vec![]
            }
            Ok(Target::Queue(q)) => {
                hub.unfollow_queue(client, q);
                vec![]
            }
            Err(refused) => vec![refused],
        },
    }
}

/// Follows a queue that tells from now on, with nothing to read first: the user's own
/// incidents (`mine`, docs/dispatch-realtime.md, "Personal work": each incident sent or
/// transferred to them, or leaving them), the fleet (`fleet`, "The fleet board": each
/// unit's step) or the telephone (`calls`, "The telephone": each call that rings, is
/// answered or ends), when the profile is one of `followers`.
fn follow_named(
    queue: Queue,
    followers: &[Profile],
    client: &Client,
    user: &CurrentUser,
    hub: &Hub,
) -> ServerMessage {
    if !followers.contains(&user.profile) {
        return ServerMessage::error(
            "forbidden",
            format!(
                "the {} profile may not follow the `{queue}` queue (followed by {})",
                user.profile.title(),
                titles(followers)
            ),
        );
    }
    hub.follow_queue(client, queue)
}

/// Follows the hospital offload queue (docs/dispatch-realtime.md, "Hospital offload"):
/// registered before the open alerts are read, so an alert or a clearing committed in
/// between is neither lost nor told twice.
async fn follow_offload(
    client: &Client,
    user: &CurrentUser,
    hub: &Hub,
    pool: &Pool,
) -> Vec<ServerMessage> {
    if !queue::OFFLOAD_FOLLOWERS.contains(&user.profile) {
        return vec![ServerMessage::error(
            "forbidden",
            format!(
                "the {} profile may not follow the `offload` queue (followed by {})",
                user.profile.title(),
                titles(queue::OFFLOAD_FOLLOWERS)
            ),
        )];
    }
    hub.begin_follow_offload(client);
    let read: crate::error::Result<Vec<String>> = async {
        let mut conn = pool.get().await?;
        Ok(store::offload::open_alerts(&mut conn).await?)
    }
    .await;
    match read {
        Ok(open) => {
            let alerts = open
                .iter()
                .filter_map(|json| OffloadNotice::parse(json))
                .filter_map(|n| match n {
                    OffloadNotice::Alert(a) => Some(a),
                    OffloadNotice::Cleared(_) => None,
                })
                .collect();
            hub.finish_follow_offload(client, alerts)
        }
        Err(e) => {
            hub.unfollow_queue(client, Queue::OFFLOAD);
            let p = e.problem();
            vec![ServerMessage::error(&p.code, p.detail)]
        }
    }
}

async fn subscribe(
    incident_id: i64,
    client: &Client,
    user: &CurrentUser,
    hub: &Hub,
    pool: &Pool,
) -> ServerMessage {
    if !may::READ.contains(&user.profile) {
        return ServerMessage::error(
            "forbidden",
            format!(
                "the {} profile may not read incidents (read by {})",
                user.profile.title(),
                titles(may::READ)
            ),
        );
    }
    // Registered before the read, so nothing committed in between is missed.
    hub.begin_subscribe(client, incident_id);
    let refused = match current_version(pool, incident_id).await {
        Ok(Some(v)) => match hub.finish_subscribe(client, incident_id, v) {
            Some(answer) => return answer,
            None => ServerMessage::error("not_found", "the subscription was withdrawn"),
        },
        Ok(None) => ServerMessage::error(
            "not_found",
            format!("incident {incident_id} does not exist"),
        ),
        Err(e) => {
            let p = e.problem();
            ServerMessage::error(&p.code, p.detail)
        }
    };
    hub.unsubscribe(client, incident_id);
    refused
}

fn follow(queue: State, client: &Client, user: &CurrentUser, hub: &Hub) -> ServerMessage {
    if !QUEUES.contains(&queue) {
        let names: Vec<&str> = QUEUES.iter().map(|q| q.as_str()).collect();
        return ServerMessage::error(
            "invalid_message",
            format!(
                "`{queue}` is a final state, not a queue; the queues are {}",
                names.join(", ")
            ),
        );
    }
    if !queue::may_follow(user.profile, queue) {
        let mut who = queue::followers(queue).to_vec();
        who.push(Profile::Admin);
        return ServerMessage::error(
            "forbidden",
            format!(
                "the {} profile may not follow the `{queue}` queue (followed by {})",
                user.profile.title(),
                titles(&who)
            ),
        );
    }
    hub.follow_queue(client, Queue::Work(queue))
}

async fn current_version(pool: &Pool, id: i64) -> crate::error::Result<Option<i32>> {
    let conn = pool.get().await?;
    Ok(store::incidents::version(&conn, id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_that_cannot_complete_gives_up_after_the_timeout() {
        let timeout = Duration::from_millis(50);
        let started = Instant::now();
        let stalled = std::future::pending::<Result<(), ()>>();
        assert!(matches!(within(stalled, timeout).await, Err(Stop::Stalled)));
        assert!(started.elapsed() >= timeout);
        assert!(within(async { Ok::<(), ()>(()) }, timeout).await.is_ok());
        assert!(matches!(
            within(async { Err::<(), ()>(()) }, timeout).await,
            Err(Stop::Gone)
        ));
    }

    #[test]
    fn expiry_is_the_verified_exp_on_the_runtimes_clock() {
        let now = now_secs();
        let left = expiry(now + 120) - tokio::time::Instant::now();
        assert!(left > Duration::from_secs(110) && left <= Duration::from_secs(120));
        // An exp already past ends the socket at once.
        assert!(expiry(now - 5) <= tokio::time::Instant::now());
    }
}
