//! Failover without a restart, against the real processes and private clusters: a primary
//! and its streaming standby (`pg_basebackup -R`), the standby promoted.
//!
//! - The address the services use (a DNS name or VIP, here a TCP forwarder) moves to the
//!   standby: writes answer 503 `unavailable` with `Retry-After` (never 500) and `/readyz`
//!   503; once the standby is promoted, writes succeed again in the same processes and what
//!   was acknowledged before is there.
//! - A multi-host URL with `target_session_attrs=read-write`: the primary stops, the standby
//!   is promoted, writes come back without a restart.

mod support;

use std::time::{Duration, Instant};

use common::test_support::{PrivatePg, Vip};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use support::{
    Service, Socket, basic_token, callback_jwt, client, count, dispatch_token, get,
    insert_proposals, porto, queue_socket, seed_both, seed_dispatch,
};

/// How long a failover may take to be seen: a bound on a hang, not a performance claim.
const DEADLINE: Duration = Duration::from_secs(60);

struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

impl Answer {
    async fn of(res: reqwest::Result<reqwest::Response>) -> Answer {
        let Ok(res) = res else {
            return Answer {
                status: 0,
                retry_after: None,
                body: Value::Null,
            };
        };
        let status = res.status().as_u16();
        let retry_after = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = res.bytes().await.unwrap_or_default();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        Answer {
            status,
            retry_after,
            body,
        }
    }

    /// A refusal while the database takes no writes: 503 `unavailable`, retry later.
    fn assert_unavailable(&self, what: &str) {
        assert_eq!(self.status, 503, "{what}: {}", self.body);
        assert_eq!(self.body["code"], "unavailable", "{what}: {}", self.body);
        assert!(self.retry_after.is_some(), "{what}: no Retry-After");
    }
}

async fn new_incident(http: &reqwest::Client, base: &str, token: &str, complaint: &str) -> Answer {
    let body = serde_json::json!({
        "caller_name": "Ana",
        "caller_phone": "12 3456-7890",
        "address": "Av. Brasil 1",
        "complaint": complaint,
    });
    Answer::of(
        http.post(format!("{base}/incident"))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await,
    )
    .await
}

async fn approve(http: &reqwest::Client, base: &str, jwt: &str, proposal: &str) -> Answer {
    Answer::of(
        http.post(format!("{base}/callback/demo-a/porto"))
            .bearer_auth(jwt)
            .header("content-type", "application/json")
            .body(porto(proposal, "APROVADA"))
            .send()
            .await,
    )
    .await
}

async fn readyz(service: &Service) -> u16 {
    let addr = service.addr.clone();
    tokio::task::spawn_blocking(move || get(&addr, "/readyz", &[]).map_or(0, |r| r.0))
        .await
        .unwrap()
}

async fn poll_readyz(service: &Service, want: u16) {
    let deadline = Instant::now() + DEADLINE;
    while readyz(service).await != want {
        assert!(
            Instant::now() < deadline,
            "{} /readyz never answered {want}\n{}",
            service.name,
            service.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Repeats `write` until it succeeds (`ok`), asserting that every refusal before is a 503
/// `unavailable`.
/// Writes until one is acknowledged with `ok` (each refusal a 503); the answer. Prints how
/// long after `since` (the promotion) it came: a measurement for docs/operations.md, not a
/// claim the test makes.
async fn until_written<F, Fut>(what: &str, ok: u16, since: Instant, mut write: F) -> Answer
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Answer>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        let a = write().await;
        if a.status == ok {
            eprintln!(
                "failover: {what}: written {:?} after the promotion",
                since.elapsed()
            );
            return a;
        }
        a.assert_unavailable(what);
        assert!(Instant::now() < deadline, "{what}: never written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads the socket until it hears `incident` enter the queue (false) or is told to resync
/// the queue (true).
async fn heard_or_resync(ws: &mut Socket, incident: i64) -> bool {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(Ok(message))) = tokio::time::timeout(left, ws.next()).await else {
            panic!("the socket heard neither incident {incident} nor a resync");
        };
        let Message::Text(text) = message else {
            continue;
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        match event["type"].as_str() {
            Some("queue.resync") => return true,
            Some("queue.changed") if event["incident_id"] == incident => return false,
            _ => {}
        }
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_standby_writes_are_503_and_once_it_is_promoted_they_succeed_without_a_restart() {
    let (primary, standby) = blocking(|| {
        let primary = PrivatePg::start();
        let standby = PrivatePg::standby_of(&primary);
        (primary, standby)
    })
    .await;
    let vip = Vip::to(primary.port);
    let url = vip.url();
    let tokens = seed_both(&url);
    insert_proposals(&url, "V-", 4).await;
    let token = dispatch_token(&url, "tarm");
    let dispatch = Service::start("dispatch-api", &url, &[]);
    let callback = Service::start("proposal-callback", &url, &[]);
    let http = client();
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;
    let (d, c) = (dispatch.base(), callback.base());
    // A screen following the queue of new incidents across the failover.
    let mut socket = queue_socket(&dispatch, &token).await;

    // Acknowledged on the primary.
    let a = new_incident(&http, &d, &token, "failover-before").await;
    assert_eq!(a.status, 201, "{}", a.body);
    let a = approve(&http, &c, &jwt, "V-0").await;
    assert_eq!(a.status, 200, "{}", a.body);

    // The primary stops cleanly (its standby receives everything first) and the address
    // moves to the standby, not yet promoted.
    let primary = blocking(move || {
        primary.stop_fast();
        primary
    })
    .await;
    vip.switch(standby.port);
    for service in [&dispatch, &callback] {
        poll_readyz(service, 503).await;
    }
    // Writes reach the standby and are refused as read-only: 503, never 500.
    let deadline = Instant::now() + DEADLINE;
    loop {
        new_incident(&http, &d, &token, "failover-refused")
            .await
            .assert_unavailable("dispatch on the standby");
        approve(&http, &c, &jwt, "V-1")
            .await
            .assert_unavailable("callback on the standby");
        if dispatch.logs().contains("read-only transaction")
            && callback.logs().contains("read-only transaction")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the standby's refusals were never seen\n{}\n{}",
            dispatch.logs(),
            callback.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(readyz(&dispatch).await, 503);
    // Both say what is true: the server is read-only, not out of reach.
    for service in [&dispatch, &callback] {
        let addr = service.addr.clone();
        let (_, _, body) = blocking(move || get(&addr, "/readyz", &[]).unwrap()).await;
        assert!(
            body.contains("is read-only")
                && body.contains("promoted or DATABASE_URL points at the primary"),
            "{}: {body}",
            service.name
        );
        assert!(!body.contains("cannot reach"), "{}: {body}", service.name);
    }
    // So does `migrate` against the standby.
    let out = std::process::Command::new(support::bin_dir().join("dispatch-api"))
        .arg("migrate")
        .env("DATABASE_URL", &url)
        .env("JWT_SECRET", support::SECRET)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "migrated a standby: {said}");
    assert!(
        said.contains("read-only") && said.contains("migrate against the primary"),
        "{said}"
    );
    // A replica started now (a deploy, a rescheduled pod) finds only the standby: nothing to
    // migrate, so it starts, not ready, instead of exiting.
    let mut late = Service::spawn("dispatch-api", &url, &[]);
    poll_readyz(&late, 503).await;
    assert!(late.logs().contains("not migrating"), "{}", late.logs());
    assert!(late.wait_exit(Duration::ZERO).is_none(), "{}", late.logs());

    // Promoted: the same processes write again.
    let standby = blocking(move || {
        standby.promote();
        standby
    })
    .await;
    let promoted_at = Instant::now();
    let after = until_written("dispatch after promotion", 201, promoted_at, || {
        new_incident(&http, &d, &token, "failover-after")
    })
    .await;
    until_written("callback after promotion", 200, promoted_at, || {
        approve(&http, &c, &jwt, "V-1")
    })
    .await;
    for service in [&dispatch, &callback, &late] {
        poll_readyz(service, 200).await;
    }
    let a = new_incident(&http, &late.base(), &token, "failover-late").await;
    assert_eq!(
        a.status, 201,
        "the replica started on the standby writes: {}",
        a.body
    );
    // dispatch-api's LISTEN connection left the standby and is back on the new primary
    // (its consumers resync on `Reconnected`): listening twice in one process.
    let deadline = Instant::now() + DEADLINE;
    while dispatch.logs().matches("\"message\":\"listening\"").count() < 2 {
        assert!(
            Instant::now() < deadline,
            "the listener never came back\n{}",
            dispatch.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "failover: dispatch-api's listener back {:?} after the promotion",
        promoted_at.elapsed()
    );
    // The screen's socket heard of the write made after the promotion, or was told to
    // reload its queue (a resync) once the listener was back: nothing missed either way. A
    // write made now is heard as it is.
    let first_after = after.body["id"].as_i64().unwrap();
    let resynced = heard_or_resync(&mut socket, first_after).await;
    let a = new_incident(&http, &d, &token, "failover-heard").await;
    assert_eq!(a.status, 201, "{}", a.body);
    let heard = a.body["id"].as_i64().unwrap();
    while heard_or_resync(&mut socket, heard).await {}
    eprintln!("failover: the socket was told to resync: {resynced}");

    // What was acknowledged is there, and nothing refused was written.
    let promoted = standby.url();
    for (complaint, n) in [
        ("failover-before", 1),
        ("failover-after", 1),
        ("failover-heard", 1),
        ("failover-late", 1),
        ("failover-refused", 0),
    ] {
        let sql =
            format!("SELECT count(*) AS n FROM dispatch.incidents WHERE complaint = '{complaint}'");
        assert_eq!(count(&promoted, &sql).await, n, "{complaint}");
    }
    let approved = count(
        &promoted,
        "SELECT count(*) AS n FROM proposal.proposals \
         WHERE proposal_id IN ('V-0', 'V-1') AND status = 'approved'",
    )
    .await;
    assert_eq!(approved, 2);
    drop(primary);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_multi_host_url_writes_come_back_after_the_standby_is_promoted() {
    let (primary, standby) = blocking(|| {
        let primary = PrivatePg::start();
        let standby = PrivatePg::standby_of(&primary);
        (primary, standby)
    })
    .await;
    seed_dispatch(&primary.url());
    let token = dispatch_token(&primary.url(), "tarm");
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
    let dispatch = Service::start("dispatch-api", &url, &[]);
    let http = client();
    let d = dispatch.base();
    let a = new_incident(&http, &d, &token, "multi-before").await;
    assert_eq!(a.status, 201, "{}", a.body);

    let primary = blocking(move || {
        primary.stop_fast();
        primary
    })
    .await;
    // No host takes writes: 503, never 500.
    poll_readyz(&dispatch, 503).await;
    new_incident(&http, &d, &token, "multi-refused")
        .await
        .assert_unavailable("dispatch with no primary");

    let standby = blocking(move || {
        standby.promote();
        standby
    })
    .await;
    until_written(
        "dispatch after promotion (multi-host)",
        201,
        Instant::now(),
        || new_incident(&http, &d, &token, "multi-after"),
    )
    .await;
    poll_readyz(&dispatch, 200).await;

    let promoted = standby.url();
    for (complaint, n) in [
        ("multi-before", 1),
        ("multi-after", 1),
        ("multi-refused", 0),
    ] {
        let sql =
            format!("SELECT count(*) AS n FROM dispatch.incidents WHERE complaint = '{complaint}'");
        assert_eq!(count(&promoted, &sql).await, n, "{complaint}");
    }
    drop(primary);
}
