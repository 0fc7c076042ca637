//! Real-time updates: two replicas in one process, each with its own server, hub and
//! listening connection, against one test database, driven over real sockets.

use std::net::SocketAddr;
use std::time::Duration;

use actix_web::HttpServer;
use actix_web::dev::ServerHandle;
use diesel_async::RunQueryDsl;
use dispatch_api::catalog::Catalog;
use dispatch_api::realtime::listener::{self, APPLICATION_NAME};
use dispatch_api::realtime::ws::WsSettings;
use dispatch_api::realtime::{Hub, hub::QUEUE_CAPACITY};
use dispatch_api::startup;
use dispatch_api::state::AppState;
use dispatch_api::user_cache::UserCache;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

use crate::support::Api;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

struct Replica {
    addr: SocketAddr,
    server: ServerHandle,
    listener: JoinHandle<()>,
    hub: Hub,
}

impl Replica {
    async fn start(api: &Api, settings: WsSettings) -> Replica {
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
        let server = HttpServer::new(move || startup::app(app_state.clone(), metrics.clone()))
            .workers(1)
            .disable_signals()
            .listen(tcp)
            .unwrap()
            .run();
        let handle = server.handle();
        tokio::spawn(server);
        let listener = listener::spawn(api.db.url().to_owned(), &state, listener::settings());
        Replica {
            addr,
            server: handle,
            listener,
            hub,
        }
    }

    async fn socket(&self, token: &str) -> Socket {
        let url = format!("ws://{}/ws?access_token={token}", self.addr);
        tokio_tungstenite::connect_async(url).await.unwrap().0
    }

    async fn stop(self) {
        self.listener.abort();
        self.server.stop(false).await;
    }
}

/// Waits until `n` listening connections of this database are up.
async fn listeners_up(api: &Api, n: i64) {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    for _ in 0..100 {
        let c: Count = diesel::sql_query(format!(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}' \
             AND datname = current_database()"
        ))
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
        if c.n >= n {
            // The name is set in the same batch as the LISTENs; let that batch finish.
            tokio::time::sleep(Duration::from_millis(200)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the listeners did not connect");
}

/// The next JSON text message, within `secs`.
async fn next(ws: &mut Socket, secs: u64) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => return None,
            Ok(Some(Ok(Message::Text(t)))) => return Some(serde_json::from_str(&t).unwrap()),
            Ok(Some(Ok(Message::Close(c)))) => {
                return Some(json!({"closed": c.map(|c| u16::from(c.code))}));
            }
            Ok(Some(Ok(_))) => continue,
            Ok(other) => panic!("socket ended: {other:?}"),
        }
    }
}

async fn send(ws: &mut Socket, v: Value) {
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
    let d = api.get("tarm", "/incident/mask?limit=1").await;
    let id = d.array()[0]["id"].as_i64().unwrap();
    let v = api.get("tarm", &format!("/incident/{id}")).await.ok()["version"]
        .as_i64()
        .unwrap();
    (id, v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_one_replica_reaches_a_subscriber_on_the_other_until_it_unsubscribes() {
    let api = Api::new().await;
    let (a, b) = (
        Replica::start(&api, WsSettings::default()).await,
        Replica::start(&api, WsSettings::default()).await,
    );
    listeners_up(&api, 2).await;
    let token = api.token("tarm");
    let (id, v) = an_incident(&api).await;
    let mut ws = b.socket(&token).await;
    assert_eq!(
        subscribe(&mut ws, id).await,
        json!({"type": "subscribed", "incident_id": id, "version": v})
    );
    let v2 = patch(&a, &token, id, v, json!({"patient_name": "Rita"})).await;
    assert_eq!(
        next(&mut ws, 5).await,
        Some(
            json!({"type": "incident.updated", "incident_id": id, "version": v2,
                    "changed": ["patient"]})
        )
    );
    // Errors are messages, the socket stays open.
    assert_eq!(subscribe(&mut ws, 999_999_999).await["code"], "not_found");
    send(&mut ws, json!({"type": "subscribe"})).await;
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    ws.send(Message::text("not json")).await.unwrap();
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    // After unsubscribe nothing more arrives for it (the error answer proves the
    // unsubscribe, sent before it, was handled).
    send(&mut ws, json!({"type": "unsubscribe", "incident_id": id})).await;
    send(&mut ws, json!({"type": "nonsense"})).await;
    assert_eq!(next(&mut ws, 5).await.unwrap()["code"], "invalid_message");
    assert_eq!(b.hub.subscription_count(), 0);
    let v3 = patch(&a, &token, id, v2, json!({"patient_age": 33})).await;
    assert_eq!(next(&mut ws, 1).await, None, "nothing after unsubscribe");
    // A second socket on the writing replica itself hears it too.
    let mut local = a.socket(&token).await;
    assert_eq!(subscribe(&mut local, id).await["version"], v3);
    let v4 = patch(&a, &token, id, v3, json!({"city": "Jacareí"})).await;
    assert_eq!(
        next(&mut local, 5).await.unwrap(),
        json!({"type": "incident.updated", "incident_id": id, "version": v4,
               "changed": ["basic_data"]})
    );
    assert_eq!(next(&mut ws, 1).await, None);
    a.stop().await;
    b.stop().await;
}

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
    diesel::sql_query(format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = '{APPLICATION_NAME}' AND datname = current_database()"
    ))
    .execute(&mut api.conn().await)
    .await
    .unwrap();
    // Written at once, probably while no listener runs: the reconnection re-reads it.
    let v2 = patch(&a, &token, id, v, json!({"patient_name": "Rita"})).await;
    let got = next(&mut ws, 10)
        .await
        .expect("the event after the reconnection");
    assert_eq!(got["type"], "incident.updated");
    assert_eq!(got["incident_id"], id);
    assert_eq!(got["version"], v2);
    // And the next one, live.
    listeners_up(&api, 2).await;
    let v3 = patch(&a, &token, id, v2, json!({"patient_age": 50})).await;
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
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(next(&mut silent, 2).await, Some(json!({"closed": 1001})));
    // A client that reads answers the pings and stays.
    let mut alive = r.socket(&token).await;
    assert_eq!(
        next(&mut alive, 1).await,
        None,
        "still open after the idle timeout"
    );
    // Shutdown: a close frame, "going away".
    r.hub.shutdown();
    assert_eq!(next(&mut alive, 2).await, Some(json!({"closed": 1001})));
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
        "UPDATE technical_decision_actions SET active = false WHERE id = {gone}"
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

/// A subscriber that stops reading (a frozen tab, a stalled network) is closed with `1008`
/// once its bounded queue is full, over a real socket; a subscriber of the same incident that
/// reads gets every version in order, never held back or dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_closed_and_the_others_get_every_message() {
    const BATCH: i64 = 32; // below the queue's 64: the reader can never fall that far behind
    const MAX: i64 = 100_000;
    let api = Api::new().await;
    let r = Replica::start(&api, WsSettings::default()).await;
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
    assert_eq!(r.hub.subscription_count(), 2);

    // New versions announced as writes announce them, a batch per statement, until the hub
    // gives up on the stalled client.
    let mut conn = api.conn().await;
    let mut version = v0;
    while r.hub.subscription_count() == 2 {
        assert!(version - v0 < MAX, "still subscribed after {MAX} messages");
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
    // The stalled client, reading at last: what was buffered, in order, then 1008.
    let mut buffered = 0;
    let closed = loop {
        match next(&mut stalled, 5)
            .await
            .expect("the stalled socket's close frame")
        {
            m if m["type"] == "incident.updated" => {
                buffered += 1;
                assert_eq!(m["version"], json!(v0 + buffered));
            }
            m => break m,
        }
    };
    assert_eq!(
        closed,
        json!({"closed": 1008}),
        "after {buffered} of {sent}"
    );
    assert!(buffered < sent, "{buffered} of {sent}");
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
    eprintln!("stalled client closed after {sent} messages, {buffered} of them buffered");
    r.stop().await;
}
