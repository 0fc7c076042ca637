//! Real-time updates: two replicas in one process, each with its own server, hub and
//! listening connection, against one test database, driven over real sockets.

use std::net::SocketAddr;
use std::time::Duration;

use actix_web::HttpServer;
use actix_web::dev::ServerHandle;
use diesel_async::RunQueryDsl;
use dispatch_api::catalog::Catalog;
use dispatch_api::listener::{self, APPLICATION_NAME};
use dispatch_api::realtime::{Hub, WsSettings, hub::QUEUE_CAPACITY};
use dispatch_api::startup;
use dispatch_api::state::AppState;
use dispatch_api::user_cache::UserCache;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

use crate::support::Api;

pub(crate) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) struct Replica {
    addr: SocketAddr,
    server: ServerHandle,
    listener: JoinHandle<()>,
    hub: Hub,
}

impl Replica {
    pub(crate) async fn start(api: &Api, settings: WsSettings) -> Replica {
        let hub = Hub::new(QUEUE_CAPACITY, settings);
        let state = AppState {
            hub: hub.clone(),
            users: UserCache::default(),
            catalog: Catalog::default(),
            ..api.state().clone()
        };
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = tcp.local_addr().unwrap();
        let metrics = startup::metrics(&api.db.pool());
        let app_state = state.clone();
        let server =
            HttpServer::new(move || startup::app(app_state.clone(), metrics.clone(), None))
                .workers(1)
                .disable_signals()
                .listen(tcp)
                .unwrap()
                .run();
        let handle = server.handle();
        tokio::spawn(server);
        let listener = listener::spawn(api.db.url().to_owned(), &state, listener::settings());
        // Subscriptions made before the listener's first resync would be told to re-read
        // (`queue.resync`) when it connects: the replica is ready once it listens.
        tokio::time::timeout(Duration::from_secs(30), hub.listening())
            .await
            .expect("the replica's listener connects");
        Replica {
            addr,
            server: handle,
            listener,
            hub,
        }
    }

    pub(crate) async fn socket(&self, token: &str) -> Socket {
        let url = format!("ws://{}/ws?access_token={token}", self.addr);
        tokio_tungstenite::connect_async(url).await.unwrap().0
    }

    pub(crate) async fn stop(self) {
        self.listener.abort();
        self.server.stop(false).await;
    }
}

/// Waits until `n` listening connections of this database are up: named, and idle, so the
/// batch that names them and LISTENs has finished (`common::listen`).
pub(crate) async fn listeners_up(api: &Api, n: i64) {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    for _ in 0..100 {
        let c: Count = diesel::sql_query(format!(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}' \
             AND datname = current_database() AND state = 'idle'"
        ))
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
        if c.n >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the listeners did not connect");
}

/// The next JSON text message, within `secs`.
pub(crate) async fn next(ws: &mut Socket, secs: u64) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => return None,
            Ok(Some(Ok(Message::Text(t)))) => return Some(serde_json::from_str(&t).unwrap()),
            Ok(Some(Ok(Message::Close(c)))) => {
                return Some(match c {
                    Some(c) => json!({"closed": u16::from(c.code), "reason": c.reason.as_str()}),
                    None => json!({"closed": null}),
                });
            }
            Ok(Some(Ok(_))) => continue,
            Ok(other) => panic!("socket ended: {other:?}"),
        }
    }
}

pub(crate) async fn send(ws: &mut Socket, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

async fn subscribe(ws: &mut Socket, id: i64) -> Value {
    send(ws, json!({"type": "subscribe", "incident_id": id})).await;
    next(ws, 5).await.expect("an answer to subscribe")
}

/// PATCHes over HTTP on `replica`; returns the new version.
async fn patch(replica: &Replica, token: &str, id: i64, version: i64, body: Value) -> i64 {
    let r = reqwest::Client::new()
        .patch(format!("http://{}/incident/{id}", replica.addr))
        .bearer_auth(token)
        .header("If-Match", format!("\"{version}\""))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.json::<Value>().await.unwrap()["version"]
        .as_i64()
        .unwrap()
}

/// An incident to follow: the seeded one with the smallest id.
async fn an_incident(api: &Api) -> (i64, i64) {
    nth_incident(api, 0).await
}

/// The seeded incident `n` places after the first in the mask's order (id and version).
async fn nth_incident(api: &Api, n: usize) -> (i64, i64) {
    let d = api
        .get("tarm", &format!("/incident/mask?limit={}", n + 1))
        .await;
    let id = d.array()[n]["id"].as_i64().unwrap();
    let v = api.get("tarm", &format!("/incident/{id}")).await.ok()["version"]
        .as_i64()
        .unwrap();
    (id, v)
}

/// Two replicas listening, a token and the incident to follow (its id and version).
async fn two_replicas(api: &Api, login: &str) -> (Replica, Replica, String, (i64, i64)) {
    let (a, b) = (
        Replica::start(api, WsSettings::default()).await,
        Replica::start(api, WsSettings::default()).await,
    );
    listeners_up(api, 2).await;
    (a, b, api.token(login), an_incident(api).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_one_replica_reaches_a_subscriber_on_the_other() {
    let api = Api::new().await;
    let (a, b, token, (id, v)) = two_replicas(&api, "tarm").await;
    let mut ws = b.socket(&token).await;
    assert_eq!(
        subscribe(&mut ws, id).await,
        json!({"type": "subscribed", "incident_id": id, "version": v})
    );
    let v2 = patch(&a, &token, id, v, json!({"patient": {"name": "Rita"}})).await;
    assert_eq!(
        next(&mut ws, 5).await,
        Some(
            json!({"type": "incident.updated", "incident_id": id, "version": v2,
                    "changed": ["patient"]})
        )
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_request_is_an_error_message_and_the_socket_stays_open() {
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    let token = api.token("tarm");
    let mut ws = r.socket(&token).await;
    // Errors are messages, the socket stays open.
    assert_eq!(subscribe(&mut ws, 999_999_999).await["code"], "not_found");
    send(&mut ws, json!({"type": "subscribe"})).await;
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    ws.send(Message::text("not json")).await.unwrap();
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    r.stop().await;
}

/// Requests longer than a read buffer's small chunks (1 KiB, patches/actix-http/PATCHES.md)
/// and requests split over continuation frames are read whole, and a socket that idled (its
/// connection's buffers released) still hears a write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_and_fragmented_requests_are_read_whole_and_an_idle_socket_still_hears() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    listeners_up(&api, 1).await;
    let token = api.token("tarm");
    let (id, v) = an_incident(&api).await;
    let mut ws = r.socket(&token).await;
    // 3,000 bytes of one request (JSON allows the spaces).
    let long = format!(
        r#"{{"type": "subscribe",{}"incident_id": {id}}}"#,
        " ".repeat(3000)
    );
    ws.send(Message::text(long)).await.unwrap();
    assert_eq!(
        next(&mut ws, 5).await,
        Some(json!({"type": "subscribed", "incident_id": id, "version": v}))
    );
    // One request in three frames: text, then two continuations.
    let parts = [
        r#"{"type": "unsub"#,
        r#"scribe", "incident_"#,
        &format!(r#"id": {id}}}"#),
    ];
    for (i, part) in parts.iter().enumerate() {
        let opcode = OpCode::Data(if i == 0 { Data::Text } else { Data::Continue });
        let frame = Frame::message(part.as_bytes().to_vec(), opcode, i == parts.len() - 1);
        ws.send(Message::Frame(frame)).await.unwrap();
    }
    // Unsubscribed (no answer): a subscribe again is answered, after the idle pause a write is
    // heard.
    assert_eq!(subscribe(&mut ws, id).await["type"], "subscribed");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let v2 = patch(&r, &token, id, v, json!({"patient": {"name": "Rita"}})).await;
    assert_eq!(
        next(&mut ws, 5).await,
        Some(
            json!({"type": "incident.updated", "incident_id": id, "version": v2,
                    "changed": ["patient"]})
        )
    );
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_arrives_for_an_incident_after_unsubscribing() {
    let api = Api::new().await;
    let (a, b, token, (id, v)) = two_replicas(&api, "tarm").await;
    let mut ws = b.socket(&token).await;
    assert_eq!(subscribe(&mut ws, id).await["version"], v);
    // After unsubscribe nothing more arrives for it (the error answer proves the
    // unsubscribe, sent before it, was handled).
    send(&mut ws, json!({"type": "unsubscribe", "incident_id": id})).await;
    send(&mut ws, json!({"type": "nonsense"})).await;
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    assert_eq!(b.hub.subscription_count(), 0);
    let v2 = patch(&a, &token, id, v, json!({"patient": {"age": 33}})).await;
    assert_eq!(next(&mut ws, 1).await, None, "nothing after unsubscribe");
    patch(&a, &token, id, v2, json!({"city": "Jacareí"})).await;
    assert_eq!(next(&mut ws, 1).await, None);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_on_the_writing_replica_hears_the_write_too() {
    let api = Api::new().await;
    let (a, b, token, (id, v)) = two_replicas(&api, "tarm").await;
    let mut local = a.socket(&token).await;
    assert_eq!(subscribe(&mut local, id).await["version"], v);
    let v2 = patch(&a, &token, id, v, json!({"city": "Jacareí"})).await;
    assert_eq!(
        next(&mut local, 5).await.unwrap(),
        json!({"type": "incident.updated", "incident_id": id, "version": v2,
               "changed": ["basic_data"]})
    );
    a.stop().await;
    b.stop().await;
}

/// After the listening connections are killed, what was written meanwhile still arrives
/// (the followed incidents are re-read) and a queue's follower is told to read it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_listening_connection_misses_nothing() {
    let api = Api::new().await;
    let (a, b) = (
        Replica::start(&api, WsSettings::default()).await,
        Replica::start(&api, WsSettings::default()).await,
    );
    listeners_up(&api, 2).await;
    let token = api.token("regulador");
    let (id, v) = an_incident(&api).await;
    let mut ws = b.socket(&token).await;
    assert_eq!(subscribe(&mut ws, id).await["version"], v);
    let mut queue = b.socket(&token).await;
    assert_eq!(
        follow(&mut queue, "awaiting_regulation").await["type"],
        "subscribed"
    );
    diesel::sql_query(format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = '{APPLICATION_NAME}' AND datname = current_database()"
    ))
    .execute(&mut api.conn().await)
    .await
    .unwrap();
    // Written at once, probably while no listener runs: the reconnection re-reads it.
    let v2 = patch(&a, &token, id, v, json!({"patient": {"name": "Rita"}})).await;
    let got = next(&mut ws, 10)
        .await
        .expect("the event after the reconnection");
    assert_eq!(got["type"], "incident.updated");
    assert_eq!(got["incident_id"], id);
    assert_eq!(got["version"], v2);
    // Queue moves of that time are unknown: the queue's follower is told to read it again.
    assert_eq!(
        next(&mut queue, 10).await,
        Some(json!({"type": "queue.resync", "queue": "awaiting_regulation"}))
    );
    // And the next one, live.
    listeners_up(&api, 2).await;
    let v3 = patch(&a, &token, id, v2, json!({"patient": {"age": 50}})).await;
    let got = next(&mut ws, 10).await.unwrap();
    assert_eq!(got["version"], v3, "{got}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_authenticated_pinged_dropped_when_dead_and_closed_on_shutdown() {
    let api = Api::new().await;
    let fast = WsSettings {
        ping_interval: Duration::from_millis(100),
        idle_timeout: Duration::from_millis(400),
        ..WsSettings::default()
    };
    let r = Replica::start(&api, fast).await;
    // No token, a bad token: 401 before any upgrade.
    let no = tokio_tungstenite::connect_async(format!("ws://{}/ws", r.addr)).await;
    assert!(no.unwrap_err().to_string().contains("401"));
    let bad = tokio_tungstenite::connect_async(format!("ws://{}/ws?access_token=x", r.addr)).await;
    assert!(bad.unwrap_err().to_string().contains("401"));
    // A client that never reads (so never answers pings) is dropped as dead.
    let token = api.token("frota");
    let mut silent = r.socket(&token).await;
    // Not read until the server has ended it (one socket registered, then none): no pong
    // answered its pings within the idle timeout.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut seen = false;
    loop {
        let n = r.hub.socket_count();
        seen |= n == 1;
        if seen && n == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the silent socket was not dropped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        next(&mut silent, 2).await,
        Some(json!({"closed": 1001, "reason": "idle"}))
    );
    // A client that reads answers the pings and stays.
    let mut alive = r.socket(&token).await;
    assert_eq!(
        next(&mut alive, 1).await,
        None,
        "still open after the idle timeout"
    );
    // Shutdown: a close frame, "going away".
    r.hub.shutdown();
    assert_eq!(
        next(&mut alive, 2).await,
        Some(json!({"closed": 1001, "reason": "server shutting down"}))
    );
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_data_change_refreshes_every_replica() {
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    listeners_up(&api, 1).await;
    let token = api.token("regulador");
    let actions = async || -> Vec<i64> {
        let v: Value = reqwest::Client::new()
            .get(format!("http://{}/shared/default-values", r.addr))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["technical_decision_actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_i64().unwrap())
            .collect()
    };
    let before = actions().await;
    let gone = before[0];
    diesel::sql_query(format!(
        "UPDATE dispatch.technical_decision_actions SET active = false WHERE id = {gone}"
    ))
    .execute(&mut api.conn().await)
    .await
    .unwrap();
    for _ in 0..100 {
        if !actions().await.contains(&gone) {
            r.stop().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the replica still serves the deactivated action");
}

/// A subscriber that stops reading (a frozen tab, a stalled network) is never dropped for
/// being behind: the hub holds back what it misses. Only once a frame cannot be written for
/// the send timeout (every buffer on the way is full) is it closed, with `1008`; a
/// subscriber of the same incident that reads gets every version in order meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_closed_and_the_others_get_every_message() {
    const BATCH: i64 = 32; // below the queue's 64: the reader can never fall that far behind
    const MAX: i64 = 1_000_000;
    let api = Api::new().await;
    let settings = WsSettings {
        send_timeout: Duration::from_secs(2),
        ..WsSettings::default()
    };
    let r = Replica::start(&api, settings).await;
    listeners_up(&api, 1).await;
    let token = api.token("regulador");
    let (id, v0) = an_incident(&api).await;
    let mut reader = r.socket(&token).await;
    assert_eq!(subscribe(&mut reader, id).await["type"], "subscribed");
    // The stalled client: a small receive buffer, and after subscribing it reads nothing.
    let tcp = tokio::net::TcpSocket::new_v4().unwrap();
    tcp.set_recv_buffer_size(4096).unwrap();
    let tcp = tcp.connect(r.addr).await.unwrap();
    let url = format!("ws://{}/ws?access_token={token}", r.addr);
    let (mut stalled, _) =
        tokio_tungstenite::client_async(url, tokio_tungstenite::MaybeTlsStream::Plain(tcp))
            .await
            .unwrap();
    assert_eq!(subscribe(&mut stalled, id).await["type"], "subscribed");
    assert_eq!(r.hub.socket_count(), 2);

    // New versions announced as writes announce them, a batch per statement, until the
    // server gives up on the stalled client.
    let mut conn = api.conn().await;
    let mut version = v0;
    while r.hub.socket_count() == 2 {
        assert!(version - v0 < MAX, "still connected after {MAX} messages");
        diesel::sql_query(format!(
            "SELECT pg_notify('dispatch_incident', format('{id}:%s:patient', v))
               FROM generate_series({}, {}) AS v",
            version + 1,
            version + BATCH
        ))
        .execute(&mut conn)
        .await
        .unwrap();
        for _ in 0..BATCH {
            version += 1;
            let m = next(&mut reader, 5)
                .await
                .expect("the reader's next update");
            assert_eq!(
                (&m["type"], &m["version"]),
                (&json!("incident.updated"), &json!(version))
            );
        }
    }
    let sent = version - v0;
    // The stalled client, reading at last: what was written, versions rising, then 1008.
    let (mut buffered, mut last) = (0, v0);
    let closed = loop {
        match next(&mut stalled, 10)
            .await
            .expect("the stalled socket's close frame")
        {
            m if m["type"] == "incident.updated" => {
                buffered += 1;
                let v = m["version"].as_i64().unwrap();
                assert!(v > last, "version {v} after {last}");
                last = v;
            }
            m => break m,
        }
    };
    assert_eq!(
        closed,
        json!({"closed": 1008, "reason": "not reading"}),
        "after {buffered} of {sent}"
    );
    assert!(last < version, "{last} of {version}");
    // The reader is still subscribed and still served.
    assert_eq!(r.hub.subscription_count(), 1);
    diesel::sql_query(format!(
        "SELECT pg_notify('dispatch_incident', '{id}:{}:state')",
        version + 1
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        next(&mut reader, 5).await.unwrap()["version"],
        json!(version + 1)
    );
    eprintln!("stalled client closed after {sent} messages, {buffered} of them written");
    r.stop().await;
}

/// Many sockets share one encoded frame per event (docs/dispatch-realtime.md, "One outbox
/// per socket"): each still hears every version once, in order, with its answers in their
/// place, and a connection that vanishes (no close frame) neither stops the others nor
/// stays in the hub.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_subscriber_hears_each_version_in_order_and_a_vanished_one_holds_up_nobody() {
    const SOCKETS: usize = 20;
    const VERSIONS: i64 = 40;
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    listeners_up(&api, 1).await;
    let token = api.token("regulador");
    let (id, v0) = an_incident(&api).await;
    let mut sockets = Vec::new();
    for _ in 0..SOCKETS {
        let mut ws = r.socket(&token).await;
        assert_eq!(
            subscribe(&mut ws, id).await,
            json!({"type": "subscribed", "incident_id": id, "version": v0})
        );
        sockets.push(ws);
    }
    // One connection vanishes: its TCP connection closed, no close frame.
    drop(sockets.pop());
    let announce = async |from: i64, to: i64| {
        diesel::sql_query(format!(
            "SELECT pg_notify('dispatch_incident', format('{id}:%s:patient', v))
               FROM generate_series({from}, {to}) AS v"
        ))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    };
    announce(v0 + 1, v0 + VERSIONS / 2).await;
    // Once another socket heard the first half, each was queued for every socket (one
    // publish queues a version for all its followers under the hub's lock, which a
    // subscription takes too): a request now is answered after them.
    let mut early = Vec::new();
    for _ in 0..VERSIONS / 2 {
        early.push(next(&mut sockets[1], 10).await.expect("the first half")["version"].clone());
    }
    let (other, other_version) = nth_incident(&api, 1).await;
    send(
        &mut sockets[0],
        json!({"type": "subscribe", "incident_id": other}),
    )
    .await;
    announce(v0 + VERSIONS / 2 + 1, v0 + VERSIONS).await;
    for (n, ws) in sockets.iter_mut().enumerate() {
        let mut heard: Vec<i64> = if n == 1 {
            early.iter().map(|v| v.as_i64().unwrap()).collect()
        } else {
            Vec::new()
        };
        let mut answered = false;
        while heard.len() < VERSIONS as usize {
            let m = next(ws, 10)
                .await
                .unwrap_or_else(|| panic!("socket {n}: {} of {VERSIONS}", heard.len()));
            if m["type"] == "subscribed" {
                assert_eq!(n, 0, "only the first socket asked");
                assert_eq!(
                    m,
                    json!({"type": "subscribed", "incident_id": other, "version": other_version})
                );
                assert!(
                    heard.len() >= (VERSIONS / 2) as usize,
                    "the answer came after the {} versions queued before it, not after {}",
                    VERSIONS / 2,
                    heard.len()
                );
                answered = true;
                continue;
            }
            assert_eq!(
                (&m["type"], &m["incident_id"]),
                (&json!("incident.updated"), &json!(id))
            );
            heard.push(m["version"].as_i64().unwrap());
        }
        assert_eq!(
            heard,
            ((v0 + 1)..=(v0 + VERSIONS)).collect::<Vec<_>>(),
            "socket {n}"
        );
        if n == 0 && !answered {
            assert_eq!(
                next(ws, 10).await,
                Some(json!({"type": "subscribed", "incident_id": other, "version": other_version}))
            );
        }
    }
    // The vanished socket left the hub (its reader saw the connection end).
    for _ in 0..100 {
        if r.hub.socket_count() == SOCKETS - 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(r.hub.socket_count(), SOCKETS - 1);
    r.stop().await;
}

/// A client that reads everything but sends a burst of requests (a client reconnecting
/// with its open incidents) is answered at its own pace, every request in order: the
/// seeded incidents in turn, every fifth request naming one that does not exist (its
/// refusal names it, so the order shows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_500_subscribes_is_answered_in_order() {
    const BURST: usize = 500;
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    let rows: Vec<(i64, i32)> = {
        use diesel::QueryDsl;
        use dispatch_api::schema::dispatch::incidents;
        incidents::table
            .select((incidents::id, incidents::version))
            .order_by(incidents::id)
            .load(&mut api.conn().await)
            .await
            .unwrap()
    };
    let expected: Vec<(i64, Value)> = (0..BURST)
        .map(|i| {
            if i % 5 == 4 {
                let id = 900_000_000 + i as i64;
                let detail = format!("incident {id} does not exist");
                (
                    id,
                    json!({"type": "error", "code": "not_found", "detail": detail}),
                )
            } else {
                let (id, version) = rows[i % rows.len()];
                let answer = json!({"type": "subscribed", "incident_id": id, "version": version});
                (id, answer)
            }
        })
        .collect();
    let ws = r.socket(&api.token("regulador")).await;
    let (mut tx, mut rx) = ws.split();
    let ids: Vec<i64> = expected.iter().map(|(id, _)| *id).collect();
    let sender = tokio::spawn(async move {
        for id in ids {
            let m = json!({"type": "subscribe", "incident_id": id}).to_string();
            tx.feed(Message::text(m)).await.unwrap();
        }
        tx.flush().await.unwrap();
        tx
    });
    for (i, (_, answer)) in expected.iter().enumerate() {
        let m = match tokio::time::timeout(Duration::from_secs(30), rx.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => serde_json::from_str::<Value>(&t).unwrap(),
            other => panic!("answer {i} of {BURST}: {other:?}"),
        };
        assert_eq!(&m, answer, "answer {i} of {BURST}");
    }
    let subscribed: std::collections::HashSet<i64> = expected
        .iter()
        .filter(|(_, answer)| answer["type"] == "subscribed")
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(r.hub.subscription_count(), subscribed.len());
    drop(sender.await.unwrap());
    r.stop().await;
}

/// A `serve` process of this binary on the test's database: a replica as deployed.
struct ServeProcess {
    child: std::process::Child,
    addr: SocketAddr,
}

impl ServeProcess {
    async fn start(api: &Api) -> ServeProcess {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_dispatch-api"))
            .arg("serve")
            .env("DATABASE_URL", api.db.url())
            .env("JWT_SECRET", crate::support::SECRET)
            .env("BIND", addr.to_string())
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let process = ServeProcess { child, addr };
        for _ in 0..600 {
            if let Ok(r) = reqwest::get(format!("http://{addr}/readyz")).await
                && r.status() == 200
            {
                return process;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("serve did not become ready");
    }

    pub(crate) async fn socket(&self, token: &str) -> Socket {
        let url = format!("ws://{}/ws?access_token={token}", self.addr);
        tokio_tungstenite::connect_async(url).await.unwrap().0
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn follow(ws: &mut Socket, queue: &str) -> Value {
    send(ws, json!({"type": "subscribe", "queue": queue})).await;
    next(ws, 5).await.expect("an answer to subscribe")
}

fn moved(queue: &str, id: i64, version: i32, state: &str) -> Option<Value> {
    Some(
        json!({"type": "queue.changed", "queue": queue, "incident_id": id,
                "version": version, "state": state}),
    )
}

/// A regulator following "awaiting regulation" hears a call taker's new incident enter it
/// and leave it on the regulator's decision, on an in-process replica and on a separate
/// `serve` process alike; after unsubscribing, nothing more of that queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regulator_following_awaiting_regulation_hears_incidents_enter_and_leave_it() {
    const QUEUE: &str = "awaiting_regulation";
    let w = crate::client::W::new().await;
    let replica = Replica::start(&w.api, WsSettings::default()).await;
    let process = ServeProcess::start(&w.api).await;
    listeners_up(&w.api, 2).await;
    let token = w.api.token("regulador");
    let mut here = replica.socket(&token).await;
    let mut there = process.socket(&token).await;
    for ws in [&mut here, &mut there] {
        assert_eq!(
            follow(ws, QUEUE).await,
            json!({"type": "subscribed", "queue": QUEUE})
        );
    }

    // The call taker registers (not this queue) and submits (enters it).
    let (id, v1) = w.create().await;
    let v2 = w.step(id, v1, "submit").await;
    for ws in [&mut here, &mut there] {
        assert_eq!(
            next(ws, 10).await,
            moved(QUEUE, id, v2, "awaiting_regulation")
        );
    }
    // The regulator decides: it leaves the queue for `regulated`.
    let v3 = w.step(id, v2, "decide").await;
    for ws in [&mut here, &mut there] {
        assert_eq!(next(ws, 10).await, moved(QUEUE, id, v3, "regulated"));
    }

    // One socket unsubscribes (the error answer to the next frame proves it was handled)
    // and follows the next incident itself instead: its update is announced after the
    // queue move of the same write, so it arriving first shows the move was not sent.
    send(&mut there, json!({"type": "unsubscribe", "queue": QUEUE})).await;
    send(&mut there, json!({"type": "nonsense"})).await;
    assert_eq!(
        next(&mut there, 5).await.unwrap()["code"],
        "invalid_message"
    );
    let (id2, v1) = w.create().await;
    assert_eq!(subscribe(&mut there, id2).await["version"], v1);
    let v2 = w.step(id2, v1, "submit").await;
    assert_eq!(
        next(&mut here, 10).await,
        moved(QUEUE, id2, v2, "awaiting_regulation")
    );
    let got = next(&mut there, 10).await.unwrap();
    assert_eq!(
        (&got["type"], &got["incident_id"], &got["version"]),
        (&json!("incident.updated"), &json!(id2), &json!(v2)),
        "{got}"
    );
    assert_eq!(next(&mut there, 1).await, None, "nothing of the queue");
    replica.stop().await;
}

/// Who may follow which queue, and what is not a queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_are_the_open_states_followed_by_the_profiles_that_work_them() {
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    let mut tarm = r.socket(&api.token("tarm")).await;
    let refused = follow(&mut tarm, "awaiting_regulation").await;
    assert_eq!(refused["code"], "forbidden", "{refused}");
    assert_eq!(
        refused["detail"],
        "the TARM profile may not follow the `awaiting_regulation` queue \
         (followed by MEDICO_REGULADOR, ADMIN)"
    );
    assert_eq!(follow(&mut tarm, "registering").await["type"], "subscribed");
    let refused = follow(&mut tarm, "closed").await;
    assert_eq!(refused["code"], "invalid_message", "{refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .starts_with("`closed` is a final state, not a queue"),
        "{refused}"
    );
    assert_eq!(
        follow(&mut tarm, "nowhere").await["code"],
        "invalid_message"
    );
    send(
        &mut tarm,
        json!({"type": "subscribe", "queue": "registering", "incident_id": 1}),
    )
    .await;
    assert_eq!(next(&mut tarm, 5).await.unwrap()["code"], "invalid_message");
    let mut fleet = r.socket(&api.token("frota")).await;
    for (queue, answer) in [
        ("registering", "error"),
        ("awaiting_regulation", "error"),
        ("regulated", "subscribed"),
        ("dispatched", "subscribed"),
    ] {
        assert_eq!(follow(&mut fleet, queue).await["type"], answer, "{queue}");
    }
    let mut admin = r.socket(&api.token("admin")).await;
    for queue in [
        "registering",
        "awaiting_regulation",
        "regulated",
        "dispatched",
    ] {
        assert_eq!(follow(&mut admin, queue).await["type"], "subscribed");
    }
    assert_eq!(r.hub.queue_follower_count(), 7);
    r.stop().await;
}

/// Reads what is left on a socket after its close frame: nothing but the end.
async fn ends_without_more(ws: &mut Socket) {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
            Ok(None) | Ok(Some(Err(_))) => return,
            Ok(Some(Ok(Message::Text(t)))) => panic!("a message after the close: {t}"),
            Ok(Some(Ok(_))) => continue,
            Err(_) => panic!("the socket did not end"),
        }
    }
}

/// A socket lives no longer than its token: it is closed at `exp` with `4401`, and no
/// update reaches it afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_is_closed_when_its_token_expires() {
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    listeners_up(&api, 1).await;
    let (id, v) = an_incident(&api).await;
    let mut ws = r
        .socket(&api.token_for("regulador", Duration::from_secs(3)))
        .await;
    assert_eq!(subscribe(&mut ws, id).await["version"], v);
    let token = api.token("tarm");
    let v2 = patch(&r, &token, id, v, json!({"patient": {"name": "Rita"}})).await;
    assert_eq!(
        next(&mut ws, 5).await.unwrap()["version"],
        v2,
        "served until then"
    );
    assert_eq!(
        next(&mut ws, 10).await,
        Some(json!({"closed": 4401, "reason": "token expired"}))
    );
    assert_eq!(r.hub.socket_count(), 0);
    patch(&r, &token, id, v2, json!({"patient": {"age": 40}})).await;
    ends_without_more(&mut ws).await;
    r.stop().await;
}

/// Changes `login`'s row with `set` (SQL), as an administrator's tool would.
async fn change_user(api: &Api, login: &str, set: &str) {
    diesel::sql_query(format!(
        "UPDATE dispatch.users SET {set} WHERE login = '{login}'"
    ))
    .execute(&mut api.conn().await)
    .await
    .unwrap();
}

/// The user's deactivation ends their sockets (`4401`, "user deactivated") as soon as the
/// change is announced, on every replica; another user's socket and a harmless change to
/// the user (their name) end nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_is_closed_when_its_user_is_deactivated() {
    let api = Api::new().await;
    let (a, b) = (
        Replica::start(&api, WsSettings::default()).await,
        Replica::start(&api, WsSettings::default()).await,
    );
    listeners_up(&api, 2).await;
    let (id, v) = an_incident(&api).await;
    let regulator = api.token("regulador");
    let (mut on_a, mut on_b) = (a.socket(&regulator).await, b.socket(&regulator).await);
    let mut other = a.socket(&api.token("frota")).await;
    for ws in [&mut on_a, &mut on_b, &mut other] {
        assert_eq!(subscribe(ws, id).await["version"], v);
    }
    change_user(&api, "regulador", "descriptive_name = 'Dra. Renomeada'").await;
    let tarm = api.token("tarm");
    let v2 = patch(&a, &tarm, id, v, json!({"patient": {"name": "Rita"}})).await;
    for ws in [&mut on_a, &mut on_b, &mut other] {
        assert_eq!(next(ws, 5).await.unwrap()["version"], v2);
    }

    let started = std::time::Instant::now();
    change_user(&api, "regulador", "status = 'inativo'").await;
    for ws in [&mut on_a, &mut on_b] {
        assert_eq!(
            next(ws, 10).await,
            Some(json!({"closed": 4401, "reason": "user deactivated"}))
        );
    }
    eprintln!("closed {:?} after the deactivation", started.elapsed());
    let v3 = patch(&a, &tarm, id, v2, json!({"patient": {"age": 40}})).await;
    assert_eq!(next(&mut other, 5).await.unwrap()["version"], v3);
    for ws in [&mut on_a, &mut on_b] {
        ends_without_more(ws).await;
    }
    assert_eq!(a.hub.subscription_count() + b.hub.subscription_count(), 1);
    a.stop().await;
    b.stop().await;
}

/// A profile change ends the user's sockets too (`4401`, "profile changed"): what a socket
/// may follow was decided by the profile it was opened with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_is_closed_when_its_users_profile_changes() {
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
    listeners_up(&api, 1).await;
    let mut ws = r.socket(&api.token("regulador")).await;
    assert_eq!(
        follow(&mut ws, "awaiting_regulation").await["type"],
        "subscribed"
    );
    let (id, v) = an_incident(&api).await;
    assert_eq!(subscribe(&mut ws, id).await["version"], v);
    change_user(
        &api,
        "regulador",
        "profile_id = (SELECT id FROM dispatch.profiles WHERE title = 'OPERADOR_FROTA')",
    )
    .await;
    assert_eq!(
        next(&mut ws, 10).await,
        Some(json!({"closed": 4401, "reason": "profile changed"}))
    );
    patch(
        &r,
        &api.token("tarm"),
        id,
        v,
        json!({"patient": {"name": "Rita"}}),
    )
    .await;
    ends_without_more(&mut ws).await;
    assert_eq!(
        (r.hub.subscription_count(), r.hub.queue_follower_count()),
        (0, 0)
    );
    r.stop().await;
}

/// The fleet board follows its units without reading itself again: a
/// fleet operator following `fleet` on one replica hears each step of a unit written
/// through another as `unit.step`, with the step, its time (the dispatch's `<step>_at`) and
/// the unit, whose body is the unit's row of `GET /mobile-unit/board` read after the step
/// (but for `position` and `seconds_in_step`); no patient field, a few hundred bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_follower_hears_each_step_with_the_unit_as_the_board_shows_it() {
    let w = crate::client::W::new().await;
    let replica = Replica::start(&w.api, WsSettings::default()).await;
    let mut ws = replica.socket(&w.api.token("frota")).await;
    assert_eq!(
        follow(&mut ws, "fleet").await,
        json!({"type": "subscribed", "queue": "fleet"})
    );
    let (id, v) = w.incident_in("regulated").await;
    let unit = w.free_units().await[0];
    let dispatch = w.send_unit(id, v, unit).await;
    // Every step of a unit, in order: assigned (the dispatch above) to released.
    for step in dispatch_api::domain::dispatch::Status::ALL.map(|s| s.as_str()) {
        if step != "assigned" {
            w.unit_step(dispatch, step).await;
        }
        let heard = next(&mut ws, 5).await.expect("a unit.step");
        // What a re-read of the board shows of the unit, and the step's recorded time.
        let board = w.api.get("frota", "/mobile-unit/board").await;
        let mut row = board
            .ok()
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] == json!(unit))
            .expect("the unit on the board")
            .clone();
        let row = row.as_object_mut().unwrap();
        row.remove("position");
        row.remove("seconds_in_step");
        let units = w
            .api
            .get("frota", &format!("/dispatch/incident/{id}"))
            .await;
        let at = units.ok()[0]["times"][format!("{step}_at")].clone();
        assert!(at.is_string(), "{step}: {}", units.body);
        assert_eq!(
            heard,
            json!({"type": "unit.step", "step": step, "at": at, "dispatch_id": dispatch,
                   "unit": row}),
            "{step}"
        );
        let text = heard.to_string();
        for field in dispatch_api::patient_data::PATIENT_FIELDS {
            assert!(!text.contains(&format!("\"{field}\"")), "{field} in {text}");
        }
        assert!(text.len() < 1_000, "{} bytes", text.len());
    }
    assert_eq!(next(&mut ws, 1).await, None, "one message per step");
    replica.stop().await;
}
