//! Faults from outside, against the real processes: the database restarted under traffic,
//! the SMTP relay down and then up, SIGTERM during traffic (with WebSocket clients open).

mod support;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::test_support::{PrivatePg, SmtpSink, TestDb};
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use support::{
    Service, basic_token, callback_jwt, client, count, dispatch_token, free_port, get,
    insert_proposals, porto, read, read_response, seed_both, seed_callback, texts,
};

/// A request that fails must fail within this: a bound on a hang, not a performance claim.
const FAIL_FAST: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
struct Sent {
    service: &'static str,
    started: Instant,
    took: Duration,
    /// 0: no HTTP answer at all.
    status: u16,
    /// The callback's proposal index.
    proposal: Option<usize>,
}

async fn poll_ready(addr: &str, within: Duration) -> Option<Instant> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let addr = addr.to_owned();
        let ok = tokio::task::spawn_blocking(move || {
            matches!(get(&addr, "/readyz", &[]), Ok((200, _, _)))
        })
        .await
        .unwrap();
        if ok {
            return Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_restart_under_traffic_answers_503_fast_recovers_and_loses_nothing() {
    const PROPOSALS: usize = 20_000;
    let pg = Arc::new(tokio::task::spawn_blocking(PrivatePg::start).await.unwrap());
    let url = pg.url();
    let tokens = seed_both(&url);
    insert_proposals(&url, "F-", PROPOSALS).await;
    let env = [("DATABASE_POOL_SIZE", "8")];
    let dispatch = Service::start("dispatch-api", &url, &env);
    let callback = Service::start("proposal-callback", &url, &env);
    let http = client();
    let token = dispatch_token(&url, "tarm");
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;

    let stop = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicUsize::new(0));
    let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let mut tasks = Vec::new();
    for n in 0..6 {
        let (stop, next, sent, http) = (stop.clone(), next.clone(), sent.clone(), http.clone());
        let (dispatch_base, callback_base) = (dispatch.base(), callback.base());
        let (token, jwt) = (token.clone(), jwt.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let started = Instant::now();
                let (service, proposal, res) = if n % 2 == 0 {
                    let res = http
                        .get(format!("{dispatch_base}/incident/mask?q=silva&limit=5"))
                        .bearer_auth(&token)
                        .send()
                        .await;
                    ("dispatch", None, res)
                } else {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    assert!(i < PROPOSALS, "ran out of proposals");
                    let res = http
                        .post(format!("{callback_base}/callback/demo-a/porto"))
                        .bearer_auth(&jwt)
                        .header("content-type", "application/json")
                        .body(porto(&format!("F-{i}"), "APROVADA"))
                        .send()
                        .await;
                    ("callback", Some(i), res)
                };
                let status = match res {
                    Ok(r) => {
                        let s = r.status().as_u16();
                        let _ = r.bytes().await;
                        s
                    }
                    Err(_) => 0,
                };
                sent.lock().unwrap().push(Sent {
                    service,
                    started,
                    took: started.elapsed(),
                    status,
                    proposal,
                });
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    tokio::time::sleep(Duration::from_secs(2)).await;
    let down_at = Instant::now();
    {
        let pg = pg.clone();
        tokio::task::spawn_blocking(move || pg.stop_immediate())
            .await
            .unwrap();
    }
    // While it is down, both say so on /readyz, quickly.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for service in [&dispatch, &callback] {
        let addr = service.addr.clone();
        let t = Instant::now();
        let (status, _, body) = tokio::task::spawn_blocking(move || get(&addr, "/readyz", &[]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, 503, "{} /readyz while down: {body}", service.name);
        assert!(t.elapsed() < FAIL_FAST, "{} /readyz hung", service.name);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    {
        let pg = pg.clone();
        tokio::task::spawn_blocking(move || pg.start_again())
            .await
            .unwrap();
    }
    let up_at = Instant::now();
    let mut recovered = up_at;
    for service in [&dispatch, &callback] {
        let at = poll_ready(&service.addr, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{} not ready 20 s after the database", service.name));
        recovered = recovered.max(at);
    }
    eprintln!(
        "database down {:?}; both ready {:?} after it was back",
        up_at - down_at,
        recovered - up_at
    );
    // Traffic goes on for a while after recovery.
    tokio::time::sleep(Duration::from_secs(4)).await;
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }
    let sent = sent.lock().unwrap().clone();

    // Every answer is a success or a quick 5xx; never a hang, never a dropped connection.
    for s in &sent {
        assert!(s.status != 0, "no answer at all: {s:?}");
        assert!(
            s.status == 200 || (500..600).contains(&s.status),
            "unexpected status: {s:?}"
        );
        if s.status != 200 {
            assert!(s.took < FAIL_FAST, "a failure took too long: {s:?}");
        }
        if s.service == "dispatch" {
            assert!(s.status == 200 || s.status == 503, "dispatch: {s:?}");
        }
        // Before the outage and once both are ready again (plus the time for the last
        // connections that saw the outage to be replaced), everything succeeds.
        let before = s.started + s.took < down_at;
        let after = s.started > recovered + Duration::from_secs(1);
        if before || after {
            assert_eq!(s.status, 200, "outside the outage: {s:?}");
        }
    }
    for service in ["dispatch", "callback"] {
        let of = |ok: bool| {
            sent.iter()
                .filter(|s| s.service == service && (s.status == 200) == ok)
                .count()
        };
        let after = sent
            .iter()
            .filter(|s| s.service == service && s.started > recovered && s.status == 200)
            .count();
        eprintln!(
            "{service}: {} ok, {} failed, {after} ok after recovery",
            of(true),
            of(false)
        );
        assert!(of(false) > 0, "{service}: the outage was never seen");
        assert!(after > 0, "{service}: nothing succeeded after recovery");
    }

    // Nothing acknowledged is lost: every callback answered 200 is applied.
    let approved: HashSet<String> = texts(
        &url,
        "SELECT proposal_id AS t FROM proposal.proposals WHERE status = 'approved'",
    )
    .await
    .into_iter()
    .collect();
    let acked: Vec<usize> = sent
        .iter()
        .filter(|s| s.status == 200)
        .filter_map(|s| s.proposal)
        .collect();
    for i in &acked {
        assert!(
            approved.contains(&format!("F-{i}")),
            "F-{i} got 200, not applied"
        );
    }
    // The insurer retries the others: each is applied exactly once.
    for s in sent.iter().filter(|s| s.status != 200) {
        let Some(i) = s.proposal else { continue };
        let res = http
            .post(format!("{}/callback/demo-a/porto", callback.base()))
            .bearer_auth(&jwt)
            .header("content-type", "application/json")
            .body(porto(&format!("F-{i}"), "APROVADA"))
            .send()
            .await
            .unwrap();
        let (status, _, body) = read(res).await;
        assert_eq!(status, 200, "retry of F-{i}: {body}");
    }
    let callbacks = sent.iter().filter(|s| s.proposal.is_some()).count() as i64;
    let history = count(
        &url,
        "SELECT count(*) AS n FROM proposal.integration_history h \
         JOIN proposal.proposals p ON p.id = h.proposal_id WHERE p.proposal_id LIKE 'F-%'",
    )
    .await;
    let emails = count(
        &url,
        "SELECT count(*) AS n FROM proposal.email_outbox o \
         JOIN proposal.proposals p ON p.id = o.proposal_id WHERE p.proposal_id LIKE 'F-%'",
    )
    .await;
    assert_eq!(
        (history, emails),
        (callbacks, callbacks),
        "one transition and one email per callback"
    );

    for service in [dispatch, callback] {
        let name = service.name;
        let (status, logs) = service.terminate();
        assert!(status.success(), "{name}: {status}\n{logs}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn emails_queued_while_the_smtp_relay_is_down_each_arrive_once_it_is_up() {
    const N: usize = 24;
    let db = TestDb::blank().await;
    let tokens = seed_callback(db.url());
    insert_proposals(db.url(), "M-", N).await;
    // The relay's port is known, nothing listens on it yet.
    let port = free_port();
    let smtp = format!("smtp://127.0.0.1:{port}");
    let callback = Service::start(
        "proposal-callback",
        db.url(),
        &[
            ("SMTP_URL", &smtp),
            ("EMAIL_POLL_INTERVAL", "200ms"),
            ("EMAIL_RETRY_BASE", "200ms"),
            ("EMAIL_RETRY_MAX", "1s"),
        ],
    );
    let http = client();
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;
    for i in 0..N {
        let outcome = ["APROVADA", "PENDENTE", "RECUSADA"][i % 3];
        let res = http
            .post(format!("{}/callback/demo-a/porto", callback.base()))
            .bearer_auth(&jwt)
            .header("content-type", "application/json")
            .body(porto(&format!("M-{i}"), outcome))
            .send()
            .await
            .unwrap();
        let (status, _, body) = read(res).await;
        assert_eq!(status, 200, "M-{i}: {body}");
    }

    // The worker knocks at the missing relay once per step of its backoff (200 ms doubling
    // to 1 s), one email at a time, not once per email; every email stays queued.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tried = count(
            db.url(),
            "SELECT count(*) AS n FROM proposal.email_outbox \
             WHERE status = 'queued' AND last_error IS NOT NULL",
        )
        .await;
        if tried >= 4 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {tried} emails were tried against the missing relay"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        count(
            db.url(),
            "SELECT count(*) AS n FROM proposal.email_outbox WHERE status = 'queued'"
        )
        .await,
        N as i64,
        "a relay that is not there fails no email for good"
    );

    let sink = SmtpSink::start_on(port).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let sent = count(
            db.url(),
            "SELECT count(*) AS n FROM proposal.email_outbox WHERE status = 'sent'",
        )
        .await;
        if sent == N as i64 && sink.messages().len() >= N {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{sent} of {N} sent, {} received, 30 s after the relay came up",
            sink.messages().len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A few more polls: nothing is sent twice.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut per_recipient: HashMap<String, usize> = HashMap::new();
    for m in sink.messages() {
        for r in m.rcpt {
            *per_recipient.entry(r).or_default() += 1;
        }
    }
    for i in 0..N {
        assert_eq!(
            per_recipient.get(&format!("m-{i}@example.com")),
            Some(&1),
            "M-{i}: {per_recipient:?}"
        );
    }
    assert_eq!(sink.messages().len(), N);

    let (status, logs) = callback.terminate();
    assert!(status.success(), "{status}\n{logs}");
}

/// Starts a request and sends all but its last `hold` bytes.
fn begin(addr: &str, request: &[u8], hold: usize) -> (TcpStream, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (now, later) = request.split_at(request.len() - hold);
    stream.write_all(now).unwrap();
    (stream, later.to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_lets_in_flight_requests_finish_closes_websockets_and_exits_zero_in_the_grace_period()
 {
    const SLOW: usize = 12;
    const SOCKETS: usize = 5;
    let db = TestDb::blank().await;
    let tokens = seed_both(db.url());
    insert_proposals(db.url(), "S-", SLOW).await;
    let mut dispatch = Service::start("dispatch-api", db.url(), &[]);
    let mut callback = Service::start("proposal-callback", db.url(), &[]);
    let http = client();
    let token = dispatch_token(db.url(), "regulador");
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;

    // Steady traffic on both, through SIGTERM.
    let stop = Arc::new(AtomicBool::new(false));
    let statuses: Arc<Mutex<Vec<(&'static str, u16)>>> = Arc::default();
    let mut tasks = Vec::new();
    for n in 0..8 {
        let (stop, statuses, http) = (stop.clone(), statuses.clone(), http.clone());
        let url = if n % 2 == 0 {
            format!("{}/incident/mask?q=silva", dispatch.base())
        } else {
            format!("{}/user/search?q=ma", dispatch.base())
        };
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                // After the listener closed, a refused connection is the expected answer.
                if let Ok(r) = http.get(&url).bearer_auth(&token).send().await {
                    statuses
                        .lock()
                        .unwrap()
                        .push(("dispatch", r.status().as_u16()));
                }
            }
        }));
    }

    // In flight at SIGTERM: callbacks with half a body sent, dispatch reads with half a body.
    let mut slow = Vec::new();
    for i in 0..SLOW {
        let body = porto(&format!("S-{i}"), "APROVADA");
        let mut req = format!(
            "POST /callback/demo-a/porto HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {jwt}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(&body);
        slow.push(("callback", begin(&callback.addr, &req, body.len() / 2)));
        // A read whose head has arrived and whose (ignored) body is still coming: the
        // connection is in use at SIGTERM. (A connection whose request head has not fully
        // arrived is no request yet: the server closes it at shutdown without an answer.)
        let req = format!(
            "GET /incident/mask?q=silva HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Length: 20\r\nConnection: close\r\n\r\n{}",
            "x".repeat(20)
        );
        slow.push(("dispatch", begin(&dispatch.addr, req.as_bytes(), 10)));
    }
    // WebSocket clients, each subscribed to an incident, as the dispatch screens are.
    let incident: i64 = texts(
        db.url(),
        "SELECT id::text AS t FROM dispatch.incidents LIMIT 1",
    )
    .await[0]
        .parse()
        .unwrap();
    let mut sockets = Vec::new();
    for _ in 0..SOCKETS {
        let url = format!("ws://{}/ws?access_token={token}", dispatch.addr);
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let subscribe = format!(r#"{{"type":"subscribe","incident_id":{incident}}}"#);
        ws.send(Message::text(subscribe)).await.unwrap();
        let reply = tokio::time::timeout(Duration::from_secs(5), ws.next()).await;
        let Ok(Some(Ok(Message::Text(reply)))) = reply else {
            panic!("no answer to subscribe: {reply:?}");
        };
        assert!(reply.contains(r#""type":"subscribed""#), "{reply}");
        sockets.push(ws);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    dispatch.sigterm();
    callback.sigterm();
    let signalled = Instant::now();
    // Every socket is told the server is going away (1001) at once, not cut off at exit.
    let closes = futures_util::future::join_all(sockets.into_iter().map(|mut ws| async move {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => return (frame, signalled.elapsed()),
                Some(Ok(_)) => continue,
                other => panic!("the socket ended without a close frame: {other:?}"),
            }
        }
    }));
    let closes = tokio::time::timeout(Duration::from_secs(5), closes)
        .await
        .expect("close frames within 5 s of SIGTERM");
    for (frame, after) in &closes {
        let frame = frame.as_ref().expect("a close frame with a code");
        assert_eq!(frame.code, CloseCode::Away, "{frame:?} after {after:?}");
        assert_eq!(frame.reason.as_str(), "server shutting down");
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        dispatch.wait_exit(Duration::ZERO).is_none()
            && callback.wait_exit(Duration::ZERO).is_none(),
        "both wait for their in-flight requests"
    );
    stop.store(true, Ordering::SeqCst);
    // The rest of each request: each gets its normal answer.
    let answers = tokio::task::spawn_blocking(move || {
        slow.into_iter()
            .map(|(service, (mut stream, rest))| {
                stream.write_all(&rest).unwrap();
                let (status, _, body) = read_response(&mut stream).unwrap();
                (service, status, body)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (service, status, body) in &answers {
        assert_eq!(*status, 200, "{service} in flight at SIGTERM: {body}");
        if *service == "callback" {
            assert!(body.contains(r#""result":"processed""#), "{body}");
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    let statuses = statuses.lock().unwrap().clone();
    assert!(statuses.len() > 10, "traffic ran: {}", statuses.len());
    assert!(
        statuses.iter().all(|(_, s)| *s == 200),
        "every answered request of the steady traffic is a 200: {:?}",
        statuses
            .iter()
            .filter(|(_, s)| *s != 200)
            .collect::<Vec<_>>()
    );

    for service in [&mut dispatch, &mut callback] {
        let status = service
            .wait_exit(Duration::from_secs(25).saturating_sub(signalled.elapsed()))
            .unwrap_or_else(|| panic!("{} still running 25 s after SIGTERM", service.name));
        let logs = service.logs();
        assert!(status.success(), "{}: {status}\n{logs}", service.name);
        assert!(
            logs.contains(&format!("{} stopped", service.name)),
            "{}: {logs}",
            service.name
        );
    }
    let applied = count(
        db.url(),
        "SELECT count(*) AS n FROM proposal.proposals WHERE proposal_id LIKE 'S-%' AND status = 'approved'",
    )
    .await;
    assert_eq!(applied, SLOW as i64, "every in-flight callback was applied");
}

/// Under callback load, the service is killed with SIGKILL several times and started again:
/// every email of an applied transition arrives, and each kill adds at most one extra copy
/// (the email whose SMTP conversation it cut), counted by Message-ID.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_load_resends_at_most_the_email_in_flight_per_kill() {
    const N: usize = 160;
    const KILLS: usize = 5;
    let db = TestDb::blank().await;
    let tokens = seed_callback(db.url());
    insert_proposals(db.url(), "K-", N).await;
    let sink = SmtpSink::start().await;
    // Each message takes the relay a moment, so kills land in the middle of conversations.
    sink.data_delay_ms.store(40, Ordering::SeqCst);
    let smtp = sink.url();
    let env = [
        ("SMTP_URL", smtp.as_str()),
        ("SMTP_TIMEOUT", "1s"),
        ("EMAIL_POLL_INTERVAL", "100ms"),
        ("EMAIL_RETRY_BASE", "200ms"),
        ("EMAIL_RETRY_MAX", "1s"),
    ];
    let mut callback = Service::start("proposal-callback", db.url(), &env);
    let http = client();
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;

    // The insurer's side: each proposal's approval, delivered again until it gets a 200,
    // to whichever process is listening now.
    let base = Arc::new(Mutex::new(callback.base()));
    let next = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for _ in 0..3 {
        let (base, next, http, jwt) = (base.clone(), next.clone(), http.clone(), jwt.clone());
        load.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= N {
                    return;
                }
                loop {
                    let url = format!("{}/callback/demo-a/porto", base.lock().unwrap());
                    let res = http
                        .post(url)
                        .bearer_auth(&jwt)
                        .header("content-type", "application/json")
                        .body(porto(&format!("K-{i}"), "APROVADA"))
                        .send()
                        .await;
                    if let Ok(r) = res {
                        let (status, _, body) = read(r).await;
                        if status == 200 {
                            assert!(
                                body["result"] == "processed" || body["result"] == "duplicate",
                                "K-{i}: {body}"
                            );
                            break;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    // Kill while mail flows: each time a few more emails have reached the relay.
    for kill in 0..KILLS {
        let before = sink.messages().len();
        let deadline = Instant::now() + Duration::from_secs(60);
        while sink.messages().len() < before + 4 {
            assert!(Instant::now() < deadline, "kill {kill}: no mail is flowing");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        callback.kill9();
        callback = Service::start("proposal-callback", db.url(), &env);
        *base.lock().unwrap() = callback.base();
    }
    for t in load {
        t.await.unwrap();
    }

    // Everything queued is sent in the end (an email cut by a kill waits for its lease).
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let queued = count(
            db.url(),
            "SELECT count(*) AS n FROM proposal.email_outbox WHERE status = 'queued'",
        )
        .await;
        if queued == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{queued} emails still queued 90 s after the load"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Each email's Message-ID, given at its first attempt and kept for every later one.
    let ids = texts(
        db.url(),
        "SELECT o.message_id AS t FROM proposal.email_outbox o \
         JOIN proposal.proposals p ON p.id = o.proposal_id WHERE p.proposal_id LIKE 'K-%' \
         ORDER BY o.id",
    )
    .await;
    assert_eq!(ids.len(), N, "one email per approved proposal");
    let messages = sink.messages();
    let mut extra = 0;
    for id in &ids {
        let copies = sink.copies_of(id);
        assert!(copies >= 1, "{id} never arrived");
        extra += copies - 1;
    }
    assert_eq!(messages.len(), N + extra, "no message from anywhere else");
    eprintln!(
        "{KILLS} kills: {} messages for {N} emails ({extra} extra copies)",
        messages.len()
    );
    assert!(
        extra <= KILLS,
        "{extra} extra copies after {KILLS} kills: more than the one in flight per kill"
    );

    // The outbox is on /metrics.
    let (status, _, metrics) = get(&callback.addr, "/metrics", &[]).unwrap();
    assert_eq!(status, 200);
    for series in [
        "proposal_callback_outbox_queued ",
        "proposal_callback_outbox_oldest_queued_age_seconds ",
        "proposal_callback_outbox_attempts_failed_total ",
        "proposal_callback_outbox_sent_total ",
    ] {
        assert!(metrics.contains(series), "{series}: {metrics}");
    }
    let (status, logs) = callback.terminate();
    assert!(status.success(), "{status}\n{logs}");
}
