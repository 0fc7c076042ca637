//! Both services behind Debian's PgBouncer in `pool_mode = transaction` (docs/operations.md,
//! "Transaction poolers"), with three server connections for far more clients:
//! `DATABASE_POOL_MODE=transaction`, `DATABASE_URL` the pooler and `DATABASE_DIRECT_URL` the
//! private PostgreSQL behind it. Migrations, seeds, reads, concurrent writes, an idempotent
//! retry, a WebSocket subscriber, a deactivated user and callbacks applied exactly once; no
//! 500 anywhere. Without `DATABASE_DIRECT_URL` the services refuse to start, saying what to
//! set; with `DATABASE_POOL_MODE` forgotten (session, the default) too.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use common::test_support::{PgBouncer, PrivatePg};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use support::{
    SECRET, Service, basic_token, bin_dir, callback_jwt, client, count, exec, insert_proposals,
    porto, read, run_bin_env,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn both_services_work_through_a_transaction_pooler() {
    let (pg, bouncer) = tokio::task::spawn_blocking(|| {
        let pg = PrivatePg::start();
        let bouncer = PgBouncer::transaction_mode(&pg, 3);
        (pg, bouncer)
    })
    .await
    .unwrap();
    let direct = pg.url();
    let pooled = bouncer.url("postgres");

    // Transaction mode without a direct URL cannot LISTEN nor lock the migrations: refused.
    for service in ["dispatch-api", "proposal-callback"] {
        let out = Command::new(bin_dir().join(service))
            .arg("migrate")
            .env("DATABASE_URL", &pooled)
            .env("DATABASE_POOL_MODE", "transaction")
            .env("JWT_SECRET", SECRET)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{service} started without a direct URL"
        );
        assert!(
            stderr.contains("DATABASE_DIRECT_URL"),
            "{service}: {stderr}"
        );
    }

    let env = [
        ("DATABASE_POOL_MODE", "transaction"),
        ("DATABASE_DIRECT_URL", direct.as_str()),
    ];
    // Seeds (and their migrations, over the direct URL) through the pooler.
    run_bin_env("dispatch-api", &pooled, &["seed", "--scale", "test"], &env);
    let seeded: Value = serde_json::from_str(&run_bin_env(
        "proposal-callback",
        &pooled,
        &["seed", "--no-history"],
        &env,
    ))
    .unwrap();
    let tokens: Vec<(String, String)> = seeded["integrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                format!(
                    "{}/{}",
                    i["tenant"].as_str().unwrap(),
                    i["insurer"].as_str().unwrap()
                ),
                i["token"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let dispatch = Service::start("dispatch-api", &pooled, &env);
    let callback = Service::start("proposal-callback", &pooled, &env);
    let http = client();
    let token = run_bin_env("dispatch-api", &pooled, &["token", "--login", "tarm"], &env)
        .trim()
        .to_owned();
    let base = dispatch.base();

    // A subscriber of the queue of new incidents, over the socket.
    let mut ws = support::queue_socket(&dispatch, &token).await;

    // A read of the screens' search.
    let res = http
        .get(format!("{base}/incident/mask?q=silva&limit=5"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let (status, _, body) = read(res).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.as_array().unwrap().is_empty(), "{body}");

    // 30 writes at once, each read back by its id with its caller's name.
    let writes = (0..30).map(|i| {
        let http = http.clone();
        let (base, token) = (base.clone(), token.clone());
        tokio::spawn(async move {
            let res = http
                .post(format!("{base}/incident"))
                .bearer_auth(&token)
                .json(&json!({
                    "caller_name": format!("Caller {i}"),
                    "caller_phone": "12 3456-7890",
                    "address": "Av. Brasil 1",
                    "complaint": "pooled",
                }))
                .send()
                .await
                .unwrap();
            let (status, _, body) = read(res).await;
            assert_eq!(status, 201, "write {i}: {body}");
            (i, body["id"].as_i64().unwrap())
        })
    });
    let mut created = Vec::new();
    for w in writes {
        created.push(w.await.unwrap());
    }
    for (i, id) in &created {
        let res = http
            .get(format!("{base}/incident/{id}"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let (status, _, body) = read(res).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body["basic_data"]["caller_name"],
            format!("Caller {i}"),
            "{body}"
        );
    }
    // The socket heard every one of them enter the queue.
    let mut heard = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while heard.len() < created.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(left, ws.next()).await else {
            panic!("heard {} of {} new incidents", heard.len(), created.len());
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        if event["type"] == "queue.changed" {
            heard.insert(event["incident_id"].as_i64().unwrap());
        }
    }
    let ids: std::collections::BTreeSet<i64> = created.iter().map(|(_, id)| *id).collect();
    assert_eq!(heard, ids);

    // An idempotent retry: the same key twice is one incident.
    let mut answers = Vec::new();
    for _ in 0..2 {
        let res = http
            .post(format!("{base}/incident"))
            .bearer_auth(&token)
            .header("idempotency-key", "pooled-retry-1")
            .json(&json!({
                "caller_name": "Retried",
                "caller_phone": "12 3456-7890",
                "address": "Av. Brasil 2",
                "complaint": "retried",
            }))
            .send()
            .await
            .unwrap();
        let (status, _, body) = read(res).await;
        assert_eq!(status, 201, "{body}");
        answers.push(body["id"].as_i64().unwrap());
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(
        count(
            &direct,
            "SELECT count(*) AS n FROM dispatch.incidents WHERE complaint = 'retried'"
        )
        .await,
        1
    );

    // A deactivated user is refused: the user cache hears it over the direct LISTEN.
    exec(
        &direct,
        "UPDATE dispatch.users SET status = 'inativo' WHERE login = 'tarm'",
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let res = http
            .get(format!("{base}/shared/default-values"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let (status, _, body) = read(res).await;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(Instant::now() < deadline, "a deactivated user still served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Callbacks: 20 proposals approved, each sent three times at once; applied once each.
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;
    insert_proposals(&direct, "PGB-", 20).await;
    let sends = (0..60).map(|n| {
        let http = http.clone();
        let (base, jwt) = (callback.base(), jwt.clone());
        tokio::spawn(async move {
            let res = http
                .post(format!("{base}/callback/demo-a/porto"))
                .bearer_auth(&jwt)
                .header("content-type", "application/json")
                .body(porto(&format!("PGB-{}", n % 20), "APROVADA"))
                .send()
                .await
                .unwrap();
            let (status, _, body) = read(res).await;
            assert_eq!(status, 200, "callback {n}: {body}");
        })
    });
    for s in sends {
        s.await.unwrap();
    }
    assert_eq!(
        count(
            &direct,
            "SELECT count(*) AS n FROM proposal.integration_history h \
             JOIN proposal.proposals p ON p.id = h.proposal_id WHERE p.proposal_id LIKE 'PGB-%'",
        )
        .await,
        20,
        "one transition per proposal"
    );

    // No database error (a 500) anywhere, and no statement collided in the pooler.
    for service in [&dispatch, &callback] {
        let logs = service.logs();
        assert!(
            !logs.contains("prepared statement"),
            "{}: {logs}",
            service.name
        );
        assert!(!logs.contains("database error"), "{}: {logs}", service.name);
    }
    drop((dispatch, callback, bouncer, pg));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_transaction_mode_stops_both_services_at_start_with_the_fix() {
    let (pg, bouncer) = tokio::task::spawn_blocking(|| {
        let pg = PrivatePg::start();
        let bouncer = PgBouncer::transaction_mode(&pg, 3);
        (pg, bouncer)
    })
    .await
    .unwrap();
    let pooled = bouncer.url("postgres");
    // `serve` and `migrate`, each service, in the default session mode behind the pooler.
    for service in ["dispatch-api", "proposal-callback"] {
        for command in ["serve", "migrate"] {
            let out = Command::new(bin_dir().join(service))
                .arg(command)
                .env("DATABASE_URL", &pooled)
                .env("JWT_SECRET", SECRET)
                .env("BIND", format!("127.0.0.1:{}", support::free_port()))
                .env("LOG_FORMAT", "json")
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.status.success(), "{service} {command} started: {said}");
            assert!(
                said.contains("DATABASE_URL is a transaction pooler")
                    && said.contains("set DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL"),
                "{service} {command}: {said}"
            );
            assert!(
                !said.contains("prepared statement"),
                "{service} {command} stopped before any statement collided: {said}"
            );
        }
    }
    // Nothing was migrated through the pooler.
    assert_eq!(
        count(
            &pg.url(),
            "SELECT count(*) AS n FROM pg_namespace WHERE nspname IN ('dispatch', 'proposal')"
        )
        .await,
        0
    );
}
