//! Network faults between the services and PostgreSQL, for real (docs/operations.md, "Network
//! faults"): PostgreSQL runs in a network namespace of its own, reached over a veth pair, and
//! the link is cut with `iptables` DROP both ways (no reset, no error: packets vanish), then
//! healed. The services run in this namespace as the processes an operator starts, with
//! `DATABASE_TIMEOUT=2s` so the partitions stay short.
//!
//! - Under incident writes (with `Idempotency-Key`) and insurer callbacks, clients retrying:
//!   every acknowledged write is there once, no request outlasts the bound, no 500.
//! - A socket following a queue is told `queue.resync` after the partition and hears the next
//!   write.
//! - A user deactivated during a partition is refused within the bound after healing, and
//!   never served from the cache past the listener's trust window.
//!
//! For the measured runs of docs/operations.md, `NET_FAULT_PARTITION` (a duration, default
//! 4s; `0s`: none) sets how long each test's partition lasts (30s and 150s there), and the
//! first test takes `NET_FAULT_LOSS` (a share of packets dropped at random both ways for the
//! whole run, `0.05`) and `NET_FAULT_DELAY` (each chunk of bytes towards PostgreSQL held that
//! long, ± a fifth, by a relay of the test's own, as netem on one interface would: netem is
//! not on every kernel). With a delay, a request's time grows with its round trips, so the
//! bound is reported, not asserted.

mod support;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::test_support::{NetNs, PrivatePg};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use support::{
    Service, Socket, basic_token, callback_jwt, client, count, dispatch_token, exec, get,
    insert_proposals, porto, queue_socket, seed_both, seed_dispatch, texts,
};

/// `DATABASE_TIMEOUT` of the services under test.
const TIMEOUT: Duration = Duration::from_secs(2);
const ENV: [(&str, &str); 2] = [("DATABASE_TIMEOUT", "2s"), ("DATABASE_POOL_SIZE", "8")];
/// The longest a request may take while the link is cut: a pooled connection within 4 s (2 s
/// for a free slot, 2 s to open one), a round trip on one within `TIMEOUT` + 1 s of keepalive,
/// and a second for the machine (2 cores shared with the builds): docs/operations.md,
/// "Network faults".
const REQUEST_BOUND: Duration = Duration::from_secs(4 + 2 + 1 + 1);
/// Silence of the listener before its heartbeat (the default), plus its deadline: how long
/// the user cache may still be trusted after the link is cut.
const TRUST: Duration = Duration::from_secs(1 + 2);
/// After healing, the listener's next attempt comes within its longest backoff (2 s) and
/// connects in well under `TIMEOUT`.
const RECOVERY_BOUND: Duration = Duration::from_secs(2 + 2 + 2);

/// A PostgreSQL in a namespace of its own. Fields drop in order: the server stops before its
/// namespace goes.
struct Isolated {
    pg: PrivatePg,
    ns: NetNs,
}

impl Isolated {
    async fn start() -> Isolated {
        tokio::task::spawn_blocking(|| {
            let ns = NetNs::create();
            let pg = PrivatePg::start_in(&ns);
            Isolated { pg, ns }
        })
        .await
        .unwrap()
    }

    /// Over the veth: what the services use, and what the partition cuts.
    fn url(&self) -> String {
        self.pg.url()
    }

    /// Over the Unix socket: the test's own statements, whatever the network does.
    fn local(&self) -> String {
        self.pg.socket_url()
    }
}

fn env_duration(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| common::config::duration(&v).unwrap_or_else(|e| panic!("{name}: {e}")))
}

fn partition_length() -> Duration {
    env_duration("NET_FAULT_PARTITION").unwrap_or(Duration::from_secs(4))
}

/// A TCP relay on 127.0.0.1 to `upstream` that holds every chunk of bytes sent upstream
/// `delay` ± a fifth before passing it on, in order (the answers pass at once). Aborting the
/// handle stops it.
async fn delaying_relay(upstream: String, delay: Duration) -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            for (upwards, mut from, mut to) in [
                (
                    true,
                    Box::new(cr) as Box<dyn tokio::io::AsyncRead + Send + Unpin>,
                    Box::new(sw) as Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
                ),
                (false, Box::new(sr), Box::new(cw)),
            ] {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
                conns.spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    let mut last = Instant::now();
                    while let Ok(n) = from.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let delay = if upwards { delay } else { Duration::ZERO };
                        let fifth = delay.as_millis() as u64 / 5;
                        let jitter = rand_below(2 * fifth + 1);
                        let due = (Instant::now() + delay + Duration::from_millis(jitter))
                            .checked_sub(Duration::from_millis(fifth))
                            .unwrap_or_else(Instant::now)
                            .max(last);
                        last = due;
                        if tx.send((due, buf[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                });
                conns.spawn(async move {
                    while let Some((due, bytes)) = rx.recv().await {
                        tokio::time::sleep_until(due.into()).await;
                        if to.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown().await;
                });
            }
        }
    });
    (port, handle)
}

/// A number below `n` (n > 0), from the clock's nanoseconds: jitter, not secrets.
fn rand_below(n: u64) -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    nanos.wrapping_mul(6_364_136_223_846_793_005) % n.max(1)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

async fn readyz(service: &Service) -> (u16, String) {
    let addr = service.addr.clone();
    blocking(move || get(&addr, "/readyz", &[]).map_or((0, String::new()), |r| (r.0, r.2))).await
}

/// Polls `/readyz` until it answers `want`; when, or None past `within`.
async fn until_ready(service: &Service, want: u16, within: Duration) -> Option<(Instant, String)> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let (status, body) = readyz(service).await;
        if status == want {
            return Some((Instant::now(), body));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// One HTTP attempt: when it started, how long it took, its status (0: no answer).
#[derive(Debug, Clone)]
struct Attempt {
    what: String,
    started: Instant,
    took: Duration,
    status: u16,
    body: String,
}

async fn attempt(what: String, req: reqwest::RequestBuilder) -> Attempt {
    let started = Instant::now();
    let (status, body) = match req.send().await {
        Ok(r) => {
            let s = r.status().as_u16();
            (s, r.text().await.unwrap_or_default())
        }
        Err(e) => (0, e.to_string()),
    };
    Attempt {
        what,
        started,
        took: started.elapsed(),
        status,
        body,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partition_under_writes_and_callbacks_loses_no_acknowledged_write_and_no_request_outlasts_the_bound()
 {
    let partition = partition_length();
    let mut db = Isolated::start().await;
    let seed_url = db.url();
    let tokens = seed_both(&seed_url);
    insert_proposals(&seed_url, "N-", 20_000).await;
    let token = dispatch_token(&seed_url, "tarm");
    // The measured runs' other faults (docs/operations.md, "Network faults").
    let mut faults = Vec::new();
    if let Ok(p) = std::env::var("NET_FAULT_LOSS")
        && !p.is_empty()
    {
        db.ns
            .lose(p.parse().expect("NET_FAULT_LOSS: a share, 0 to 1"));
        faults.push(format!("loss {p}"));
    }
    let mut url = seed_url.clone();
    let mut relay = None;
    if let Some(delay) = env_duration("NET_FAULT_DELAY") {
        let (port, handle) =
            delaying_relay(format!("{}:{}", db.pg.host(), db.pg.port), delay).await;
        url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        relay = Some(handle);
        faults.push(format!("delay {delay:?} ± a fifth"));
    }
    let dispatch = Service::start("dispatch-api", &url, &ENV);
    let callback = Service::start("proposal-callback", &url, &ENV);
    let http = client();
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;

    // Clients that retry each write until it is acknowledged: an incident with its own
    // `Idempotency-Key` (the same key and body on every try), a callback for its own proposal.
    let stop = Arc::new(AtomicBool::new(false));
    let next_proposal = Arc::new(AtomicUsize::new(0));
    let attempts: Arc<Mutex<Vec<Attempt>>> = Arc::default();
    let acknowledged: Arc<Mutex<Vec<(String, i64)>>> = Arc::default();
    let mut clients = Vec::new();
    for n in 0..6 {
        let (stop, next, attempts, acked, http) = (
            stop.clone(),
            next_proposal.clone(),
            attempts.clone(),
            acknowledged.clone(),
            http.clone(),
        );
        let (d, c, token, jwt) = (dispatch.base(), callback.base(), token.clone(), jwt.clone());
        clients.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let (key, id) = if n % 2 == 0 {
                    (format!("net-{n}-{i}"), None)
                } else {
                    let p = next.fetch_add(1, Ordering::SeqCst);
                    (format!("N-{p}"), Some(p))
                };
                // Retried until acknowledged, however long the partition.
                let given_up = Instant::now() + Duration::from_secs(400);
                loop {
                    let a = if id.is_none() {
                        let body = serde_json::json!({
                            "caller_name": "Ana",
                            "caller_phone": "12 3456-7890",
                            "address": "Av. Brasil 1",
                            "complaint": key,
                        });
                        attempt(
                            key.clone(),
                            http.post(format!("{d}/incident"))
                                .bearer_auth(&token)
                                .header("idempotency-key", &key)
                                .json(&body),
                        )
                        .await
                    } else {
                        attempt(
                            key.clone(),
                            http.post(format!("{c}/callback/demo-a/porto"))
                                .bearer_auth(&jwt)
                                .header("content-type", "application/json")
                                .body(porto(&key, "APROVADA")),
                        )
                        .await
                    };
                    let ok = matches!(a.status, 200 | 201);
                    if ok && id.is_none() {
                        let v: Value = serde_json::from_str(&a.body).unwrap();
                        acked
                            .lock()
                            .unwrap()
                            .push((key.clone(), v["id"].as_i64().unwrap()));
                    } else if ok {
                        acked.lock().unwrap().push((key.clone(), -1));
                    }
                    attempts.lock().unwrap().push(a);
                    if ok {
                        break;
                    }
                    assert!(Instant::now() < given_up, "{key} never acknowledged");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }));
    }

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let cut_at = Instant::now();
    // While cut, both say so on /readyz within its 2 s.
    let mut readyz_during = Vec::new();
    if !partition.is_zero() {
        db.ns.partition();
        for service in [&dispatch, &callback] {
            let (at, body) = until_ready(service, 503, partition)
                .await
                .unwrap_or_else(|| panic!("{} stayed ready while cut", service.name));
            readyz_during.push(format!("{}: {:?}: {body}", service.name, at - cut_at));
        }
    }
    let left = partition.saturating_sub(cut_at.elapsed());
    tokio::time::sleep(left).await;
    let healed_at = Instant::now();
    db.ns.heal();
    let mut ready_after = Vec::new();
    for service in [&dispatch, &callback] {
        let (at, _) = until_ready(service, 200, Duration::from_secs(30))
            .await
            .unwrap_or_else(|| {
                panic!(
                    "{} not ready 30 s after healing\n{}",
                    service.name,
                    service.logs()
                )
            });
        ready_after.push((service.name, at - healed_at));
    }
    if !faults.is_empty() {
        // The other faults last the whole run: some more of it without a partition.
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.await.unwrap();
    }

    let attempts = attempts.lock().unwrap().clone();
    let longest = attempts.iter().max_by_key(|a| a.took).unwrap();
    let failed = attempts
        .iter()
        .filter(|a| !matches!(a.status, 200 | 201))
        .count();
    eprintln!(
        "network: partition {partition:?} {faults:?}: {} attempts, {failed} refused; longest \
         {:?} ({}: {}); /readyz 503 after {readyz_during:?}; ready again after {ready_after:?}",
        attempts.len(),
        longest.took,
        longest.what,
        longest.status,
    );
    for a in &attempts {
        assert!(
            matches!(a.status, 200 | 201 | 503),
            "only successes and 503 `unavailable`: {a:?}"
        );
        if a.status == 503 {
            assert!(a.body.contains("\"unavailable\""), "{a:?}");
        }
        assert!(
            a.took <= REQUEST_BOUND || relay.is_some(),
            "a request outlasted the bound: {a:?}"
        );
    }
    assert!(
        failed > 0 || partition.is_zero(),
        "the partition was never seen"
    );

    // Every acknowledged incident is there once; nothing else was written.
    let acked = acknowledged.lock().unwrap().clone();
    let incidents: BTreeMap<String, Vec<String>> = texts(
        &db.local(),
        "SELECT complaint || ' ' || id AS t FROM dispatch.incidents WHERE complaint LIKE 'net-%'",
    )
    .await
    .into_iter()
    .fold(BTreeMap::new(), |mut m, t| {
        let (k, id) = t.split_once(' ').unwrap();
        m.entry(k.to_owned()).or_default().push(id.to_owned());
        m
    });
    let written: Vec<&(String, i64)> = acked.iter().filter(|(_, id)| *id >= 0).collect();
    for (key, id) in &written {
        assert_eq!(
            incidents.get(key),
            Some(&vec![id.to_string()]),
            "{key}: acknowledged as {id}, written once"
        );
    }
    assert_eq!(
        incidents.len(),
        written.len(),
        "no incident but the acknowledged"
    );
    // Every acknowledged callback is applied once: one transition and one email each.
    let callbacks: HashSet<&String> = acked
        .iter()
        .filter(|(_, id)| *id < 0)
        .map(|(k, _)| k)
        .collect();
    let approved: HashSet<String> = texts(
        &db.local(),
        "SELECT proposal_id AS t FROM proposal.proposals WHERE status = 'approved' \
         AND proposal_id LIKE 'N-%'",
    )
    .await
    .into_iter()
    .collect();
    assert_eq!(
        approved,
        callbacks.iter().map(|k| k.to_string()).collect(),
        "the acknowledged callbacks, and only they, are applied"
    );
    let history = count(
        &db.local(),
        "SELECT count(*) AS n FROM proposal.integration_history h \
         JOIN proposal.proposals p ON p.id = h.proposal_id WHERE p.proposal_id LIKE 'N-%'",
    )
    .await;
    let emails = count(
        &db.local(),
        "SELECT count(*) AS n FROM proposal.email_outbox o \
         JOIN proposal.proposals p ON p.id = o.proposal_id WHERE p.proposal_id LIKE 'N-%'",
    )
    .await;
    let n = callbacks.len() as i64;
    assert_eq!(
        (history, emails),
        (n, n),
        "one transition and one email each"
    );
    eprintln!(
        "network: {} incidents and {n} callbacks acknowledged: 0 lost, 0 duplicated",
        written.len()
    );
    for service in [dispatch, callback] {
        let name = service.name;
        let (status, logs) = service.terminate();
        assert!(status.success(), "{name}: {status}\n{logs}");
    }
    if let Some(relay) = relay {
        relay.abort();
    }
}

/// The next event of `kind` on the socket (other events skipped), within `within`.
async fn next_event(ws: &mut Socket, within: Duration, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(Ok(message))) = tokio::time::timeout(left, ws.next()).await else {
            panic!("the socket did not hear what was awaited within {within:?}");
        };
        if let Message::Text(text) = message {
            let event: Value = serde_json::from_str(&text).unwrap();
            if wanted(&event) {
                return event;
            }
        }
    }
}

async fn new_incident(http: &reqwest::Client, base: &str, token: &str, complaint: &str) -> i64 {
    let res = http
        .post(format!("{base}/incident"))
        .bearer_auth(token)
        .json(&serde_json::json!({
            "caller_name": "Ana",
            "caller_phone": "12 3456-7890",
            "address": "Av. Brasil 1",
            "complaint": complaint,
        }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    body["id"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_partition_a_socket_following_a_queue_gets_queue_resync_and_hears_the_next_write() {
    let mut db = Isolated::start().await;
    let url = db.url();
    seed_dispatch(&url);
    let token = dispatch_token(&url, "tarm");
    let dispatch = Service::start("dispatch-api", &url, &ENV);
    let http = client();
    let mut ws = queue_socket(&dispatch, &token).await;
    let before = new_incident(&http, &dispatch.base(), &token, "net-socket-before").await;
    next_event(&mut ws, Duration::from_secs(5), |e| {
        e["type"] == "queue.changed" && e["incident_id"] == before
    })
    .await;

    let cut_at = Instant::now();
    db.ns.partition();
    // The listener finds its connection deaf by the heartbeat's deadline, with no error
    // from the network, and says so.
    let deadline = cut_at + TRUST + Duration::from_secs(3);
    while !dispatch.logs().contains("listening connection lost") {
        assert!(
            Instant::now() < deadline,
            "the dead path went unnoticed\n{}",
            dispatch.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let detected = cut_at.elapsed();
    // Its heartbeat found it: timed out, or failed when the kernel gave up first (the
    // connection's `TCP_USER_TIMEOUT` is the same `DATABASE_TIMEOUT`).
    let logs = dispatch.logs();
    assert!(
        logs.contains(&format!(
            "the heartbeat was not heard back within {TIMEOUT:?}"
        )) || logs.contains("the heartbeat failed"),
        "{logs}"
    );
    // The screen keeps reading (answering the server's pings) through the partition.
    let partition = partition_length().max(Duration::from_secs(4));
    let heal_at = cut_at + partition;
    while let Ok(read) =
        tokio::time::timeout(heal_at.saturating_duration_since(Instant::now()), ws.next()).await
    {
        let Some(Ok(_)) = read else {
            panic!("the socket closed during the partition: {read:?}");
        };
    }
    let healed_at = Instant::now();
    db.ns.heal();
    next_event(&mut ws, Duration::from_secs(30), |e| {
        e["type"] == "queue.resync"
    })
    .await;
    let resync = healed_at.elapsed();
    eprintln!(
        "network: listener found deaf {detected:?} after the cut; queue.resync {resync:?} after healing"
    );
    assert!(
        resync <= RECOVERY_BOUND,
        "queue.resync {resync:?} after healing"
    );
    // The next write is heard as it is.
    let after = new_incident(&http, &dispatch.base(), &token, "net-socket-after").await;
    next_event(&mut ws, Duration::from_secs(5), |e| {
        e["type"] == "queue.changed" && e["incident_id"] == after
    })
    .await;
    // The miss is counted.
    let addr = dispatch.addr.clone();
    let (_, _, metrics) = blocking(move || get(&addr, "/metrics", &[]).unwrap()).await;
    let misses: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("dispatch_listener_heartbeat_misses_total "))
        .unwrap_or_else(|| panic!("no heartbeat metric in {metrics}"))
        .parse()
        .unwrap();
    assert!(misses >= 1.0, "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_deactivated_during_a_partition_is_refused_within_the_bound_after_healing() {
    let mut db = Isolated::start().await;
    let url = db.url();
    seed_dispatch(&url);
    let token = dispatch_token(&url, "tarm");
    let dispatch = Service::start("dispatch-api", &url, &ENV);
    let http = client();
    // A screen calling a route served from memory, authenticated from the user cache.
    let stop = Arc::new(AtomicBool::new(false));
    let answers: Arc<Mutex<Vec<Attempt>>> = Arc::default();
    let poller = {
        let (stop, answers, http, base, token) = (
            stop.clone(),
            answers.clone(),
            http.clone(),
            dispatch.base(),
            token.clone(),
        );
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let a = attempt(
                    "default values".into(),
                    http.get(format!("{base}/shared/default-values"))
                        .bearer_auth(&token),
                )
                .await;
                answers.lock().unwrap().push(a);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        answers.lock().unwrap().iter().all(|a| a.status == 200),
        "served before the partition"
    );

    let cut_at = Instant::now();
    db.ns.partition();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Deactivated while the service cannot hear it (its trigger's NOTIFY goes nowhere).
    exec(
        &db.local(),
        "UPDATE dispatch.users SET status = 'inativo' WHERE login = 'tarm'",
    )
    .await;
    let deactivated_at = Instant::now();
    let partition = partition_length().max(Duration::from_secs(4));
    tokio::time::sleep(partition.saturating_sub(cut_at.elapsed())).await;
    let healed_at = Instant::now();
    db.ns.heal();
    let deadline = healed_at + Duration::from_secs(30);
    let refused_at = loop {
        let first = answers
            .lock()
            .unwrap()
            .iter()
            .find(|a| a.started > healed_at && a.status == 401)
            .map(|a| a.started + a.took);
        if let Some(at) = first {
            break at;
        }
        assert!(Instant::now() < deadline, "never refused after healing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    poller.await.unwrap();

    let answers = answers.lock().unwrap().clone();
    let served_after: Vec<&Attempt> = answers
        .iter()
        .filter(|a| a.status == 200 && a.started > deactivated_at)
        .collect();
    let last_served = served_after.last().map(|a| a.started - deactivated_at);
    let refused = refused_at.saturating_duration_since(healed_at);
    eprintln!(
        "network: deactivated {:?} into the partition; served after it {} times (last {:?} \
         after), refused {refused:?} after healing",
        deactivated_at - cut_at,
        served_after.len(),
        last_served,
    );
    for a in &answers {
        assert!(
            matches!(a.status, 200 | 401 | 503),
            "only 200, 401 and 503: {a:?}"
        );
        // Never served from the cache past the listener's trust window.
        if a.status == 200 {
            assert!(
                a.started < cut_at + TRUST + Duration::from_millis(500),
                "served {:?} after the cut: {a:?}",
                a.started - cut_at
            );
        }
        if a.started > refused_at {
            assert_eq!(a.status, 401, "refused for good: {a:?}");
        }
    }
    assert!(
        refused <= RECOVERY_BOUND,
        "refused {refused:?} after healing"
    );
}
