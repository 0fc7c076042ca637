//! WebSocket fan-out benchmark (run by hand, not a test): 1,000 subscribers over two
//! replicas of dispatch-api in this process, each replica with its own server, hub and
//! listening connection, all on one fresh database. Every subscriber follows the same
//! incident; each write goes through the real write path (`store::incident_writes::patch`:
//! lock, version check, history, NOTIFY in the transaction). Measured: the time from the
//! write's commit (its transaction has returned) to the arrival of `incident.updated` at
//! each subscriber.
//!
//! ```sh
//! cargo run -p dispatch-api --release --example ws_fanout    # SUBSCRIBERS, WRITES to adjust
//! ```
//! See bench/dispatch/README.md for results.

use std::time::{Duration, Instant};

use actix_web::HttpServer;
use common::test_support::TestDb;
use dispatch_api::auth::{CurrentUser, Profile};
use dispatch_api::catalog::Catalog;
use dispatch_api::listener;
use dispatch_api::realtime::{Hub, WsSettings, hub::QUEUE_CAPACITY};
use dispatch_api::startup;
use dispatch_api::state::AppState;
use dispatch_api::store::incident_writes;
use dispatch_api::store::writes::Author;
use dispatch_api::user_cache::UserCache;
use dispatch_api::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA, auth, seed};
use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

fn var(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let subscribers = var("SUBSCRIBERS", 1000);
    let writes = var("WRITES", 50);
    let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
    let report = seed::run_with(&mut db.pool().get().await?, seed::Scale::Test).await?;
    let tarm = report
        .users
        .iter()
        .find(|u| u.login == "tarm")
        .map(|u| u.id)
        .expect("seeded tarm");
    let keys = auth::service_keys(
        &SecretString::from("bench-secret-bench-secret-bench-secret!"),
        auth::DEFAULT_MAX_LIFETIME,
    );
    let token = auth::issue_token(&keys, tarm, Duration::from_secs(3600))?;
    let base = startup::state(db.pool(), keys);

    // Two replicas.
    let mut addrs = Vec::new();
    let mut hubs = Vec::new();
    for _ in 0..2 {
        let hub = Hub::new(QUEUE_CAPACITY, WsSettings::default());
        let state = AppState {
            hub: hub.clone(),
            users: UserCache::default(),
            catalog: Catalog::default(),
            ..base.clone()
        };
        let tcp = std::net::TcpListener::bind("127.0.0.1:0")?;
        addrs.push(tcp.local_addr()?);
        let metrics = startup::metrics(&db.pool());
        let s = state.clone();
        let server = HttpServer::new(move || startup::app(s.clone(), metrics.clone(), None))
            .workers(1)
            .disable_signals()
            .listen(tcp)?
            .run();
        tokio::spawn(server);
        listener::spawn(db.url().to_owned(), &state, listener::settings());
        hubs.push(hub);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let incident: i64 = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use dispatch_api::schema::dispatch::incidents;
        incidents::table
            .filter(incidents::state.eq("registering"))
            .select(incidents::id)
            .first(&mut db.pool().get().await?)
            .await?
    };

    // The subscribers, half on each replica; each reports (version, arrival).
    let (tx, mut rx) = mpsc::unbounded_channel::<(i64, Instant)>();
    let started = Instant::now();
    let mut ready = Vec::new();
    for i in 0..subscribers {
        let url = format!("ws://{}/ws?access_token={token}", addrs[i % 2]);
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await?;
        ws.send(Message::text(format!(
            r#"{{"type":"subscribe","incident_id":{incident}}}"#
        )))
        .await?;
        let first = ws.next().await.expect("subscribed")?;
        assert!(first.to_text()?.contains("subscribed"), "{first:?}");
        let tx = tx.clone();
        ready.push(tokio::spawn(async move {
            while let Some(Ok(m)) = ws.next().await {
                if let Message::Text(t) = m {
                    let at = Instant::now();
                    let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
                    if let Some(version) = v["version"].as_i64() {
                        let _ = tx.send((version, at));
                    }
                }
            }
        }));
    }
    eprintln!(
        "{subscribers} subscribers connected and subscribed in {:?} ({} + {} per replica)",
        started.elapsed(),
        hubs[0].subscription_count(),
        hubs[1].subscription_count()
    );

    let user = CurrentUser {
        id: tarm,
        descriptive_name: "tarm".to_owned(),
        profile: Profile::Tarm,
    };
    let pool = db.pool();
    let mut version = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use dispatch_api::schema::dispatch::incidents;
        incidents::table
            .find(incident)
            .select(incidents::version)
            .first::<i32>(&mut pool.get().await?)
            .await?
    };
    let mut all = Vec::with_capacity(subscribers * writes);
    let mut last = Vec::with_capacity(writes);
    for n in 0..writes {
        let mut conn = pool.get().await?;
        let age = (n % 100) as i32;
        let by = Author::new(&user, chrono::Utc::now());
        let w = incident_writes::patch(&mut conn, &by, incident, version, move |e| {
            e.patient_age = Some(age)
        })
        .await
        .map_err(|p| anyhow::anyhow!("{p}"))?;
        let committed = Instant::now();
        version = w.version;
        let mut got = 0;
        let mut slowest = Duration::ZERO;
        while got < subscribers {
            let (v, at) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await?
                .expect("subscribers alive");
            if v == i64::from(version) {
                let d = at.saturating_duration_since(committed);
                all.push(d);
                slowest = slowest.max(d);
                got += 1;
            }
        }
        last.push(slowest);
        // Writes a little apart, as people make them (and so each is measured alone).
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    all.sort();
    last.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let result = serde_json::json!({
        "subscribers": subscribers,
        "writes": writes,
        "deliveries": all.len(),
        "commit_to_delivery_ms": {
            "p50": ms(percentile(&all, 0.50)),
            "p99": ms(percentile(&all, 0.99)),
            "max": ms(*all.last().unwrap_or(&Duration::ZERO)),
        },
        "commit_to_last_subscriber_ms": {
            "p50": ms(percentile(&last, 0.50)),
            "p99": ms(percentile(&last, 0.99)),
        },
    });
    println!("{}", serde_json::to_string_pretty(&result)?);
    drop(ready);
    Ok(())
}
