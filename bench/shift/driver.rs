//! A shift of a dispatch centre, driven over HTTP and WebSocket exactly as the web client
//! does, and checked by its outcomes. The journey test (`crates/dispatch-api/tests/it/shift.rs`)
//! runs it against a test server; `bench/shift` runs it by hand against a running service with
//! more people and prints each screen's latencies (bench/shift/README.md).
//!
//! Who does what, all at once:
//! - **call takers** register incidents (create, complete the patient, submit); some calls are
//!   pranks, some are cancelled after submission;
//! - **regulators** follow the `awaiting_regulation` queue on their socket, open the
//!   regulation screen, sometimes send the incident to a colleague chosen in the
//!   `/user/search` picker (who finds it with `/incident/mask?mine=true`), choose the patient's
//!   destination in the `/health-unit` picker, decide, then follow the incident on the socket
//!   and close it once its unit is released (or at once when no unit is needed);
//! - **fleet operators** follow the `regulated` queue, open unit selection, pick a free unit
//!   of the requested type from `/mobile-unit/options?available=true&vehicle_type_id=` (another type
//!   with an `override_reason` when none is free), sometimes transfer the incident to a person
//!   chosen in the `/employee/search` picker, and walk the dispatch to `released`.
//!
//! Checked afterwards ([`Outcome::violations`]): every incident ends in a final state; no unit
//! is ever on two unreleased dispatches; every transfer and send-to landed on the chosen
//! person; every socket saw every version of the incidents it followed, in order, and nothing
//! after unsubscribing; every queue subscriber saw each incident enter and leave its queue;
//! each incident's history replays to its final state.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One person on shift: the user's id, display name and a bearer token.
#[derive(Debug, Clone)]
pub struct Person {
    pub id: i64,
    pub name: String,
    pub token: String,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// `http://host:port` of the service.
    pub base: String,
    pub call_takers: Vec<Person>,
    pub regulators: Vec<Person>,
    pub fleet: Vec<Person>,
    /// Incidents each call taker registers.
    pub incidents_per_call_taker: usize,
    /// How long the shift may take before the unfinished incidents count as violations.
    pub deadline: Duration,
}

/// What the shift did and what it found wrong.
#[derive(Debug, Default)]
pub struct Outcome {
    pub incidents: usize,
    pub writes: u64,
    /// WebSocket messages received and checked.
    pub messages: u64,
    pub transfers: usize,
    pub send_tos: usize,
    pub overrides: usize,
    /// Per screen: the latency of each time it was shown (all its requests), and how many
    /// requests it took.
    pub screens: BTreeMap<&'static str, Screen>,
    pub violations: Vec<String>,
    pub elapsed: Duration,
}

#[derive(Debug, Default, Clone)]
pub struct Screen {
    pub times: Vec<Duration>,
    pub requests: u64,
}

impl Screen {
    pub fn percentile(&self, p: f64) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        if t.is_empty() {
            return Duration::ZERO;
        }
        t[((t.len() as f64 * p).ceil() as usize).clamp(1, t.len()) - 1]
    }
}

/// Everything the people record while they work, checked at the end.
#[derive(Default)]
struct Log {
    screens: BTreeMap<&'static str, Screen>,
    /// Incidents registered by the call takers.
    incidents: Vec<i64>,
    /// Incidents that reached `awaiting_regulation` / `regulated` (by a write of the shift).
    submitted: HashSet<i64>,
    regulated: HashSet<i64>,
    /// (incident, version of the write, history action, chosen user id, chosen name).
    choices: Vec<(i64, i64, &'static str, i64, String)>,
    overrides: usize,
    violations: Vec<String>,
}

#[derive(Clone)]
struct Shared {
    http: reqwest::Client,
    base: String,
    log: Arc<Mutex<Log>>,
    writes: Arc<AtomicU64>,
    messages: Arc<AtomicU64>,
    /// Numbers the idempotency keys of the writes.
    keys: Arc<AtomicU64>,
    /// Tells this run's keys from an earlier run's (keys live 24 hours on the service).
    run: u128,
    /// Set when every call taker is done and every incident is final: people go home.
    done: Arc<AtomicBool>,
}

impl Shared {
    fn violation(&self, what: String) {
        self.log.lock().unwrap().violations.push(what);
    }
}

/// An answer: status, `ETag` version (when there is one) and JSON body.
#[derive(Debug)]
struct Answer {
    status: u16,
    etag: Option<i64>,
    body: Value,
}

/// One person's HTTP client: every request is timed into the screen it belongs to.
#[derive(Clone)]
struct Client {
    s: Shared,
    who: Person,
}

impl Client {
    /// One request as the client sends it: a `503` (the service is saturated or its database
    /// away) or a lost connection is tried again after a pause, up to five times, as the
    /// client does; a `POST` carries an `Idempotency-Key`, so a retry never writes twice.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        if_match: Option<i64>,
        body: Option<Value>,
    ) -> Answer {
        let key = (method == reqwest::Method::POST).then(|| {
            format!(
                "shift-{}-{}-{}",
                self.s.run,
                self.who.id,
                self.s.keys.fetch_add(1, Ordering::Relaxed)
            )
        });
        let mut answer = Answer {
            status: 0,
            etag: None,
            body: Value::Null,
        };
        for attempt in 0..5u64 {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
            let mut req = self
                .s
                .http
                .request(method.clone(), format!("{}{path}", self.s.base))
                .bearer_auth(&self.who.token);
            if let Some(v) = if_match {
                req = req.header("If-Match", format!("\"{v}\""));
            }
            if let Some(k) = &key {
                req = req.header("Idempotency-Key", k);
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            answer = match req.send().await {
                Ok(res) => {
                    let status = res.status().as_u16();
                    let etag = res
                        .headers()
                        .get("etag")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim_start_matches("W/").trim_matches('"').parse().ok());
                    let bytes = res.bytes().await.unwrap_or_default();
                    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    Answer { status, etag, body }
                }
                Err(e) => Answer {
                    status: 0,
                    etag: None,
                    body: json!(e.to_string()),
                },
            };
            if !matches!(answer.status, 0 | 503) {
                break;
            }
        }
        answer
    }

    /// One screen: the requests `show` makes, timed together.
    async fn screen<T>(
        &self,
        name: &'static str,
        requests: u64,
        show: impl AsyncFnOnce() -> T,
    ) -> T {
        let started = Instant::now();
        let out = show().await;
        let mut log = self.s.log.lock().unwrap();
        let screen = log.screens.entry(name).or_default();
        screen.times.push(started.elapsed());
        screen.requests += requests;
        out
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(reqwest::Method::GET, path, None, None).await
    }

    async fn write(
        &self,
        name: &'static str,
        method: reqwest::Method,
        path: &str,
        if_match: Option<i64>,
        body: Value,
    ) -> Answer {
        let a = self
            .screen(name, 1, async || {
                self.send(method, path, if_match, Some(body)).await
            })
            .await;
        if (200..300).contains(&a.status) {
            self.s.writes.fetch_add(1, Ordering::Relaxed);
        }
        a
    }

    async fn post(
        &self,
        name: &'static str,
        path: &str,
        if_match: Option<i64>,
        body: Value,
    ) -> Answer {
        self.write(name, reqwest::Method::POST, path, if_match, body)
            .await
    }

    /// The incident's current version and state (the detail read a client does before a write
    /// when its copy is stale).
    async fn current(&self, id: i64) -> (i64, String) {
        let a = self.get(&format!("/incident/{id}")).await;
        (
            a.body["version"].as_i64().unwrap_or_default(),
            a.body["state"].as_str().unwrap_or_default().to_owned(),
        )
    }
}

// --- sockets ------------------------------------------------------------------------------

/// What one socket received, in order.
#[derive(Default)]
struct Seen {
    /// incident -> the version `subscribed` answered, then every `incident.updated` version.
    subscribed: HashMap<i64, i64>,
    versions: HashMap<i64, Vec<i64>>,
    /// incident -> the version at which it was unsubscribed (after the barrier).
    unsubscribed: HashMap<i64, i64>,
    /// Messages about an incident after its unsubscribe was acknowledged.
    after_unsubscribe: Vec<String>,
    /// queue -> incident -> [(entered?, version)] in arrival order.
    queues: HashMap<String, HashMap<i64, Vec<(bool, i64)>>>,
    closed: Option<String>,
}

struct Socket {
    sink: SplitSink<Ws, Message>,
    events: mpsc::UnboundedReceiver<Value>,
    seen: Arc<Mutex<Seen>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Socket {
    async fn open(s: &Shared, token: &str) -> Socket {
        let url = format!(
            "{}/ws?access_token={token}",
            s.base.replacen("http", "ws", 1)
        );
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("WebSocket upgrade");
        let (sink, stream) = ws.split();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (tx, events) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read(stream, seen.clone(), tx, s.messages.clone()));
        Socket {
            sink,
            events,
            seen,
            reader,
        }
    }

    async fn send(&mut self, msg: Value) {
        let _ = self.sink.send(Message::text(msg.to_string())).await;
    }

    /// Subscribes to an incident; its `subscribed` arrives among the events.
    async fn follow(&mut self, id: i64) {
        self.send(json!({"type": "subscribe", "incident_id": id}))
            .await;
    }

    /// Unsubscribes, then waits for the answer to a later subscription to `barrier` (an
    /// incident that no longer changes): the server handles a socket's frames in order, so
    /// from then on nothing about `id` may arrive.
    async fn unfollow(&mut self, id: i64, version: i64, barrier: i64) {
        // First see the event of one's own last write (a client stops following once its
        // screen shows what it did): it may still be on its way when the write's answer came.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let shown = {
                let seen = self.seen.lock().unwrap();
                seen.subscribed.get(&id).is_some_and(|v| *v >= version)
                    || seen.versions.get(&id).is_some_and(|v| v.contains(&version))
            };
            if shown {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.send(json!({"type": "unsubscribe", "incident_id": id}))
            .await;
        self.send(json!({"type": "subscribe", "incident_id": barrier}))
            .await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.seen.lock().unwrap().subscribed.contains_key(&barrier) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        {
            let mut seen = self.seen.lock().unwrap();
            seen.subscribed.remove(&barrier);
            seen.unsubscribed.insert(id, version);
        }
        self.send(json!({"type": "unsubscribe", "incident_id": barrier}))
            .await;
    }

    async fn queue(&mut self, queue: &str) {
        self.send(json!({"type": "subscribe", "queue": queue}))
            .await;
    }
}

async fn read(
    mut stream: SplitStream<Ws>,
    seen: Arc<Mutex<Seen>>,
    tx: mpsc::UnboundedSender<Value>,
    messages: Arc<AtomicU64>,
) {
    while let Some(frame) = stream.next().await {
        let text = match frame {
            Ok(Message::Text(t)) => t,
            Ok(Message::Close(c)) => {
                seen.lock().unwrap().closed = Some(format!("{c:?}"));
                break;
            }
            Ok(_) => continue,
            Err(e) => {
                seen.lock().unwrap().closed = Some(e.to_string());
                break;
            }
        };
        let Ok(msg) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        messages.fetch_add(1, Ordering::Relaxed);
        {
            let mut s = seen.lock().unwrap();
            let id = msg["incident_id"].as_i64().unwrap_or_default();
            let version = msg["version"].as_i64().unwrap_or_default();
            match msg["type"].as_str() {
                Some("subscribed") if msg.get("queue").is_none() => {
                    s.subscribed.insert(id, version);
                    s.versions.entry(id).or_default();
                }
                Some("incident.updated") => {
                    if s.unsubscribed.contains_key(&id) {
                        s.after_unsubscribe.push(text.to_string());
                    } else {
                        s.versions.entry(id).or_default().push(version);
                    }
                }
                Some("queue.changed") => {
                    let queue = msg["queue"].as_str().unwrap_or_default().to_owned();
                    let entered = msg["state"] == msg["queue"];
                    s.queues
                        .entry(queue)
                        .or_default()
                        .entry(id)
                        .or_default()
                        .push((entered, version));
                }
                _ => {}
            }
        }
        if tx.send(msg).is_err() {
            // The owner went home; keep recording until the socket closes.
        }
    }
}

// --- the people ---------------------------------------------------------------------------

/// Runs the shift and checks it. Every person works until every incident registered during
/// the shift is final (or the deadline passes).
pub async fn run(cfg: Config) -> Outcome {
    let started = Instant::now();
    let s = Shared {
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        base: cfg.base.clone(),
        log: Arc::default(),
        writes: Arc::default(),
        messages: Arc::default(),
        keys: Arc::default(),
        run: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        done: Arc::default(),
    };
    let reference = Reference::load(&Client {
        s: s.clone(),
        who: cfg.regulators[0].clone(),
    })
    .await;

    // Everyone's socket is open and subscribed to its queue before the first call.
    let mut regulator_sockets = Vec::new();
    for p in &cfg.regulators {
        let mut sock = Socket::open(&s, &p.token).await;
        sock.queue("awaiting_regulation").await;
        regulator_sockets.push(sock);
    }
    let mut fleet_sockets = Vec::new();
    for p in &cfg.fleet {
        let mut sock = Socket::open(&s, &p.token).await;
        sock.queue("regulated").await;
        fleet_sockets.push(sock);
    }
    // Let the queue subscriptions take effect (their acknowledgements are not needed).
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut seen = Vec::new();
    let mut people = Vec::new();
    for (i, (p, sock)) in cfg.regulators.iter().zip(regulator_sockets).enumerate() {
        seen.push(("regulator", p.name.clone(), sock.seen.clone()));
        let c = Client {
            s: s.clone(),
            who: p.clone(),
        };
        let colleagues: Vec<Person> = cfg
            .regulators
            .iter()
            .filter(|o| o.id != p.id)
            .cloned()
            .collect();
        people.push(tokio::spawn(regulator(
            c,
            sock,
            i,
            cfg.regulators.len(),
            colleagues,
            reference.clone(),
        )));
    }
    for (i, (p, sock)) in cfg.fleet.iter().zip(fleet_sockets).enumerate() {
        seen.push(("fleet", p.name.clone(), sock.seen.clone()));
        let c = Client {
            s: s.clone(),
            who: p.clone(),
        };
        // "Transfer to" never offers the caller: the others on shift.
        let staff: Vec<Person> = cfg.fleet.iter().filter(|o| o.id != p.id).cloned().collect();
        people.push(tokio::spawn(fleet(
            c,
            sock,
            i,
            cfg.fleet.len(),
            staff,
            reference.clone(),
        )));
    }
    let takers: Vec<_> = cfg
        .call_takers
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = Client {
                s: s.clone(),
                who: p.clone(),
            };
            tokio::spawn(call_taker(
                c,
                i,
                cfg.incidents_per_call_taker,
                reference.clone(),
            ))
        })
        .collect();
    for t in takers {
        t.await.expect("a call taker panicked");
    }

    // Wait until every incident is final.
    let observer = Client {
        s: s.clone(),
        who: cfg.regulators[0].clone(),
    };
    let incidents = s.log.lock().unwrap().incidents.clone();
    let mut open: Vec<i64> = incidents.clone();
    while !open.is_empty() && started.elapsed() < cfg.deadline {
        let mut still = Vec::new();
        for id in open {
            let (_, state) = observer.current(id).await;
            if !matches!(state.as_str(), "closed" | "cancelled" | "prank") {
                still.push(id);
            }
        }
        open = still;
        if !open.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    s.done.store(true, Ordering::SeqCst);
    for p in people {
        if let Err(e) = p.await {
            s.violation(format!("a person's task failed: {e}"));
        }
    }
    for id in &open {
        let (v, state) = observer.current(*id).await;
        s.violation(format!(
            "incident {id} is still {state} (version {v}) at the deadline"
        ));
    }
    let elapsed = started.elapsed();
    check(&observer, &seen).await;

    let log = std::mem::take(&mut *s.log.lock().unwrap());
    Outcome {
        incidents: incidents.len(),
        writes: s.writes.load(Ordering::Relaxed),
        messages: s.messages.load(Ordering::Relaxed),
        transfers: log.choices.iter().filter(|c| c.2 == "transferred").count(),
        send_tos: log.choices.iter().filter(|c| c.2 == "sent_to").count(),
        overrides: log.overrides,
        screens: log.screens,
        violations: log.violations,
        elapsed,
    }
}

/// Reference data every screen needs, loaded once as the client does at start.
#[derive(Clone)]
struct Reference {
    actions: Vec<i64>,
    vehicle_types: Vec<i64>,
    /// The occurrence types' names (what the Occurrence form's `occurrence.type` takes).
    occurrence_types: Vec<String>,
    /// An incident of the demo data, which the shift never changes: the barrier of
    /// [`Socket::unfollow`].
    barrier: i64,
}

impl Reference {
    async fn load(c: &Client) -> Reference {
        let d = c
            .screen("start (default values)", 1, async || {
                c.get("/shared/default-values").await
            })
            .await;
        let ids = |v: &Value| -> Vec<i64> {
            v.as_array()
                .map(|a| a.iter().filter_map(|x| x["id"].as_i64()).collect())
                .unwrap_or_default()
        };
        // Any incident of the demo data: the shift never writes to one it did not register.
        let some = c.get("/incident/mask?limit=1").await;
        let barrier = some.body[0]["id"]
            .as_i64()
            .expect("the demo data has an incident");
        Reference {
            actions: ids(&d.body["technical_decision_actions"]),
            vehicle_types: ids(&d.body["vehicle_types"]),
            occurrence_types: d.body["occurrence_types"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect(),
            barrier,
        }
    }
}

/// Every priority, most urgent first.
const PRIORITIES: [&str; 4] = ["critical", "high", "medium", "low"];

async fn call_taker(c: Client, me: usize, n: usize, r: Reference) {
    for k in 0..n {
        let tag = format!("{me}-{k}");
        let created = c
            .post(
                "register: create",
                "/incident",
                None,
                json!({
                    "caller_name": format!("Chamador Plantão {tag}"),
                    "caller_phone": format!("(12) 99{:03}-{:04}", me % 1000, k % 10_000),
                    "address": format!("Rua do Plantão, {k}"),
                    "complaint": "dor torácica e falta de ar",
                }),
            )
            .await;
        let Some(id) = created.body["id"].as_i64() else {
            c.s.violation(format!(
                "create failed: {} {}",
                created.status, created.body
            ));
            continue;
        };
        c.s.log.lock().unwrap().incidents.push(id);
        let mut v = created.etag.unwrap_or(1);
        let patched = c
            .write(
                "register: patient",
                reqwest::Method::PATCH,
                &format!("/incident/{id}"),
                Some(v),
                json!({
                    "patient": {"name": format!("Paciente {tag}"), "age": 40 + (k % 50) as i64},
                    "occurrence": {
                        // Every priority, so the regulators' queue has an order to keep.
                        "priority": PRIORITIES[(me + k) % 4],
                        // One of the catalogue's types: any other is refused.
                        "type": r.occurrence_types.get(k % r.occurrence_types.len().max(1)),
                    },
                }),
            )
            .await;
        v = patched.etag.unwrap_or(v + 1);
        if k % 10 == 9 {
            let a = c
                .post(
                    "register: prank call",
                    &format!("/incident/{id}/prank-call"),
                    Some(v),
                    json!({}),
                )
                .await;
            if a.status != 200 {
                c.s.violation(format!("prank-call of {id}: {} {}", a.status, a.body));
            }
            continue;
        }
        let a = c
            .post(
                "register: submit",
                &format!("/incident/{id}/submit"),
                Some(v),
                json!({}),
            )
            .await;
        if a.status != 200 {
            c.s.violation(format!("submit of {id}: {} {}", a.status, a.body));
            continue;
        }
        c.s.log.lock().unwrap().submitted.insert(id);
        if k % 12 == 11 {
            // The caller calls back: no longer needed. Regulators may have moved it on.
            let (v, state) = c.current(id).await;
            if state == "awaiting_regulation" {
                let a = c
                    .post(
                        "register: cancel",
                        &format!("/incident/{id}/cancel"),
                        Some(v),
                        json!({"reason": "o solicitante desistiu"}),
                    )
                    .await;
                if !matches!(a.status, 200 | 409 | 412) {
                    c.s.violation(format!("cancel of {id}: {} {}", a.status, a.body));
                }
            }
        }
    }
}

async fn regulator(
    c: Client,
    mut sock: Socket,
    me: usize,
    all: usize,
    colleagues: Vec<Person>,
    r: Reference,
) {
    // Incidents of my share of the queue not yet decided or sent on (retried on each tick:
    // a write may lose a race and the queue tells of an incident only once).
    let mut pending: HashSet<i64> = HashSet::new();
    // incident -> version when I decided, for the incidents this regulator follows.
    let mut following: HashMap<i64, i64> = HashMap::new();
    let mut poll = tokio::time::interval(Duration::from_millis(250));
    loop {
        if c.s.done.load(Ordering::SeqCst) {
            break;
        }
        // (incident, sent to me by a colleague)
        let mut todo: Vec<(i64, bool)> = Vec::new();
        let mut updated: Vec<i64> = Vec::new();
        tokio::select! {
            Some(msg) = sock.events.recv() => {
                let id = msg["incident_id"].as_i64().unwrap_or_default();
                match msg["type"].as_str() {
                    Some("queue.changed") if msg["state"] == "awaiting_regulation" && id as usize % all == me => {
                        pending.insert(id);
                        todo.push((id, false));
                    }
                    Some("incident.updated") | Some("subscribed") if following.contains_key(&id) => updated.push(id),
                    // Moves may have been missed: list the queue again (docs/dispatch-realtime.md).
                    Some("queue.resync") => {
                        for id in listed(&c, "awaiting_regulation").await {
                            if id as usize % all == me {
                                pending.insert(id);
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ = poll.tick() => {
                // What colleagues sent to me.
                let mine = c.screen("regulator: my queue", 1, async || c.get("/incident/mask?state=awaiting_regulation&mine=true").await).await;
                in_queue_order(&c, "my queue", &mine.body);
                for item in mine.body.as_array().into_iter().flatten() {
                    if let Some(id) = item["id"].as_i64() {
                        todo.push((id, true));
                    }
                }
                todo.extend(pending.iter().map(|&id| (id, false)));
                updated.extend(following.keys().copied());
            }
        }
        for (id, sent_to_me) in todo {
            if following.contains_key(&id) {
                continue;
            }
            match regulate(&c, &mut sock, id, sent_to_me, &colleagues, &r).await {
                Regulated::Decided(v) => {
                    pending.remove(&id);
                    following.insert(id, v);
                }
                Regulated::NotMine => {
                    pending.remove(&id);
                }
                Regulated::Retry => {}
            }
        }
        for id in updated {
            let Some(&known) = following.get(&id) else {
                continue;
            };
            if let Some(done_at) = close_when_released(&c, id, known).await {
                sock.unfollow(id, done_at, r.barrier).await;
                following.remove(&id);
            }
        }
    }
    drop(sock.sink);
    sock.reader.abort();
}

enum Regulated {
    /// Decided at this version; now followed until it can be closed.
    Decided(i64),
    /// Sent to a colleague, or no longer awaiting regulation.
    NotMine,
    /// Lost a race (412/409); try again.
    Retry,
}

/// The regulation screen, then a send-to (one incident in four of those not sent to me) or
/// the destination and a decision.
async fn regulate(
    c: &Client,
    sock: &mut Socket,
    id: i64,
    sent_to_me: bool,
    colleagues: &[Person],
    r: &Reference,
) -> Regulated {
    let screen = c
        .screen("regulator: regulation", 1, async || {
            c.get(&format!("/incident/{id}/regulation")).await
        })
        .await;
    if screen.status != 200 {
        return Regulated::Retry;
    }
    if screen.body["incident"]["state"] != "awaiting_regulation" {
        return Regulated::NotMine;
    }
    let Some(mut v) = screen.etag.or(screen.body["incident"]["version"].as_i64()) else {
        return Regulated::Retry;
    };
    if !sent_to_me && id % 4 == 0 && !colleagues.is_empty() {
        let to = &colleagues[id as usize % colleagues.len()];
        let term = to.name.clone();
        let picked = c
            .screen("regulator: send-to picker", 1, async || {
                c.get(&format!("/user/search?q={}", urlencode(&term))).await
            })
            .await;
        offers_not_the_caller(c, "/user/search", &picked.body);
        let chosen = picked
            .body
            .as_array()
            .and_then(|a| a.iter().find(|u| u["descriptive_name"] == to.name.as_str()))
            .and_then(|u| u["id"].as_i64());
        let Some(user_id) = chosen else {
            c.s.violation(format!("/user/search?q={term} does not offer {}", to.name));
            return Regulated::NotMine;
        };
        let a = c
            .post(
                "regulator: send-to",
                &format!("/incident/{id}/send-to"),
                Some(v),
                json!({"regulator_id": user_id}),
            )
            .await;
        return match a.status {
            200 => {
                let version = a.etag.or(a.body["version"].as_i64()).unwrap_or_default();
                c.s.log.lock().unwrap().choices.push((
                    id,
                    version,
                    "sent_to",
                    user_id,
                    to.name.clone(),
                ));
                Regulated::NotMine
            }
            409 | 412 => Regulated::Retry,
            _ => {
                c.s.violation(format!("send-to of {id}: {} {}", a.status, a.body));
                Regulated::NotMine
            }
        };
    }
    // The patient's destination, from the health-unit picker.
    let units = c
        .screen("regulator: destination picker", 1, async || {
            c.get("/health-unit?q=hosp%20sao").await
        })
        .await;
    for unit in units.body.as_array().into_iter().flatten() {
        let name = unit["name"].as_str().unwrap_or_default().to_lowercase();
        if !(name.contains("hosp") && (name.contains("são") || name.contains("sao"))) {
            c.s.violation(format!("/health-unit?q=hosp sao offers {unit}"));
        }
    }
    if let Some(unit) = units
        .body
        .as_array()
        .and_then(|a| a.get(id as usize % a.len().max(1)))
        .and_then(|u| u["id"].as_i64())
    {
        let a = c
            .write(
                "regulator: destination",
                reqwest::Method::PATCH,
                &format!("/incident/{id}"),
                Some(v),
                json!({"patient": {"destination_id": unit}}),
            )
            .await;
        match a.status {
            200 => v = a.etag.or(a.body["version"].as_i64()).unwrap_or(v + 1),
            409 | 412 => return Regulated::Retry,
            _ => {
                c.s.violation(format!("destination of {id}: {} {}", a.status, a.body))
            }
        }
    }
    let action = r.actions[id as usize % r.actions.len()];
    let vehicle = r.vehicle_types[id as usize % r.vehicle_types.len()];
    let a = c
        .post(
            "regulator: decide",
            &format!("/incident/{id}/technical-decision"),
            Some(v),
            json!({"action_id": action, "vehicle_type_id": vehicle, "notes": "decisão do plantão"}),
        )
        .await;
    if a.status != 200 {
        if matches!(a.status, 409 | 412) {
            return Regulated::Retry;
        }
        c.s.violation(format!("decision on {id}: {} {}", a.status, a.body));
        return Regulated::NotMine;
    }
    let v = a.etag.or(a.body["version"].as_i64()).unwrap_or(v + 1);
    c.s.log.lock().unwrap().regulated.insert(id);
    sock.follow(id).await;
    Regulated::Decided(v)
}

/// Closes the incident once it needs nothing more: every unit released, or (one incident in
/// seven) at once, a decision that sends no unit. Returns the closing version.
async fn close_when_released(c: &Client, id: i64, _known: i64) -> Option<i64> {
    let screen = c
        .screen("regulator: regulation", 1, async || {
            c.get(&format!("/incident/{id}/regulation")).await
        })
        .await;
    let incident = &screen.body["incident"];
    let state = incident["state"].as_str().unwrap_or_default();
    let v = screen.etag.or(incident["version"].as_i64())?;
    let units = screen.body["mobile_units"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let all_released = units.iter().all(|u| u["status"] == "released");
    let closable = match state {
        "dispatched" => !units.is_empty() && all_released,
        "regulated" => id % 7 == 0,
        "closed" | "cancelled" | "prank" => return Some(v),
        _ => false,
    };
    if !closable {
        return None;
    }
    let a = c
        .post(
            "regulator: close",
            &format!("/incident/{id}/close"),
            Some(v),
            json!({"conclusion": "atendimento concluído"}),
        )
        .await;
    match a.status {
        200 => Some(a.etag.or(a.body["version"].as_i64()).unwrap_or(v + 1)),
        409 | 412 => None,
        _ => {
            c.s.violation(format!("close of {id}: {} {}", a.status, a.body));
            None
        }
    }
}

async fn fleet(
    c: Client,
    mut sock: Socket,
    me: usize,
    all: usize,
    staff: Vec<Person>,
    r: Reference,
) {
    let mut waiting: Vec<i64> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    loop {
        if c.s.done.load(Ordering::SeqCst) {
            break;
        }
        tokio::select! {
            Some(msg) = sock.events.recv() => {
                let id = msg["incident_id"].as_i64().unwrap_or_default();
                if msg["type"] == "queue.changed" && msg["state"] == "regulated" && id as usize % all == me {
                    waiting.push(id);
                }
                // Moves may have been missed: list the queue again (docs/dispatch-realtime.md).
                if msg["type"] == "queue.resync" {
                    for id in listed(&c, "regulated").await {
                        if id as usize % all == me && !waiting.contains(&id) {
                            waiting.push(id);
                        }
                    }
                }
            }
            _ = tick.tick() => {
                let now = std::mem::take(&mut waiting);
                for id in now {
                    if !dispatch_one(&c, &mut sock, id, &staff, &r).await {
                        waiting.push(id);
                    }
                }
            }
        }
    }
    drop(sock.sink);
    sock.reader.abort();
}

/// Unit selection, dispatch, maybe a transfer, then the unit's steps to `released`. `false`
/// when no unit is free yet (try again later).
async fn dispatch_one(
    c: &Client,
    sock: &mut Socket,
    id: i64,
    staff: &[Person],
    r: &Reference,
) -> bool {
    let (sel, options) = c
        .screen("fleet: unit selection", 2, async || {
            let sel = c.get(&format!("/incident/{id}/unit-selection")).await;
            let ty = sel.body["requested_vehicle_type"]["id"].as_i64();
            let q = ty
                .map(|t| format!("&vehicle_type_id={t}"))
                .unwrap_or_default();
            let options = c
                .get(&format!("/mobile-unit/options?available=true{q}"))
                .await;
            (sel, options)
        })
        .await;
    if sel.status != 200 || options.status != 200 {
        return false; // try again on the next tick
    }
    if sel.body["state"] != "regulated" {
        return true; // closed without a unit, or cancelled
    }
    // The screen's ETag is the version its writes take as If-Match.
    if sel.etag != sel.body["version"].as_i64() {
        c.s.violation(format!(
            "unit selection of {id}: ETag {:?}, version {}",
            sel.etag, sel.body["version"]
        ));
    }
    let mut v = sel
        .etag
        .or(sel.body["version"].as_i64())
        .unwrap_or_default();
    let mut candidates: Vec<(i64, Option<&str>)> = options
        .body
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u["id"].as_i64())
        .map(|u| (u, None))
        .collect();
    if candidates.is_empty() {
        let any = c
            .screen("fleet: free units", 1, async || {
                c.get("/mobile-unit/options?available=true").await
            })
            .await;
        candidates = any
            .body
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u["id"].as_i64())
            .map(|u| (u, Some("nenhuma unidade do tipo pedido está livre")))
            .collect();
    }
    let mut dispatch = None;
    for (unit, reason) in candidates {
        let mut body = json!({"mobile_unit_id": unit});
        if let Some(reason) = reason {
            body["override_reason"] = json!(reason);
        }
        let a = c
            .post(
                "fleet: dispatch",
                &format!("/incident/{id}/dispatch"),
                Some(v),
                body,
            )
            .await;
        match (a.status, a.body["code"].as_str()) {
            (201, _) => {
                if reason.is_some() {
                    c.s.log.lock().unwrap().overrides += 1;
                }
                dispatch = a.body["id"].as_i64();
                v = a.body["version"].as_i64().or(a.etag).unwrap_or(v + 1);
                break;
            }
            (409, Some("unit_busy" | "unit_inactive")) => continue,
            (409, Some("vehicle_type_mismatch")) => continue,
            (409 | 412, _) => {
                let (now, state) = c.current(id).await;
                if state != "regulated" {
                    return true;
                }
                v = now;
            }
            _ => {
                c.s.violation(format!(
                    "dispatch of {unit} to {id}: {} {}",
                    a.status, a.body
                ));
                return true;
            }
        }
    }
    let Some(dispatch) = dispatch else {
        return false;
    };
    sock.follow(id).await;
    if id % 3 == 0 && !staff.is_empty() {
        let to = &staff[id as usize % staff.len()];
        let term = to.name.clone();
        let picked = c
            .screen("fleet: transfer picker", 1, async || {
                c.get(&format!("/employee/search?query={}", urlencode(&term)))
                    .await
            })
            .await;
        offers_not_the_caller(c, "/employee/search", &picked.body);
        let chosen = picked
            .body
            .as_array()
            .and_then(|a| a.iter().find(|u| u["descriptive_name"] == to.name.as_str()))
            .and_then(|u| u["id"].as_i64());
        match chosen {
            None => c.s.violation(format!(
                "/employee/search?query={term} does not offer {}",
                to.name
            )),
            Some(user_id) => {
                let a = c
                    .post(
                        "fleet: transfer",
                        &format!("/incident/{id}/transfer"),
                        Some(v),
                        json!({"assigned_to_id": user_id}),
                    )
                    .await;
                if a.status == 200 {
                    let version = a.etag.or(a.body["version"].as_i64()).unwrap_or_default();
                    c.s.log.lock().unwrap().choices.push((
                        id,
                        version,
                        "transferred",
                        user_id,
                        to.name.clone(),
                    ));
                } else if !matches!(a.status, 409 | 412) {
                    c.s.violation(format!("transfer of {id}: {} {}", a.status, a.body));
                }
            }
        }
    }
    let steps: &[&str] = if id % 2 == 0 {
        &[
            "en_route",
            "on_scene",
            "transporting",
            "at_destination",
            "released",
        ]
    } else {
        &["en_route", "on_scene", "released"]
    };
    for (i, step) in steps.iter().enumerate() {
        let a = c
            .post(
                "fleet: unit status",
                &format!("/dispatch/{dispatch}/status"),
                None,
                json!({"status": step}),
            )
            .await;
        if a.status != 200 {
            c.s.violation(format!(
                "dispatch {dispatch} of {id} to {step}: {} {}",
                a.status, a.body
            ));
            break;
        }
        if i == 1 {
            // Stop following after the unit is on scene: later steps must not reach this socket.
            let version = a.body["version"].as_i64().unwrap_or_default();
            sock.unfollow(id, version, r.barrier).await;
        }
    }
    if id % 5 == 0 {
        c.screen("fleet: board", 1, async || {
            c.get("/mobile-unit/board").await
        })
        .await;
    }
    true
}

/// The incidents in a queue, as a client lists it after `queue.resync`.
async fn listed(c: &Client, state: &str) -> Vec<i64> {
    let list = c
        .screen("queue list", 1, async || {
            c.get(&format!("/incident/mask?state={state}")).await
        })
        .await;
    in_queue_order(c, state, &list.body);
    list.body
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["id"].as_i64())
        .collect()
}

/// A work queue's page is in queue order (docs/dispatch-routes.md, "Work queues"): priority,
/// critical first and none last, then the longest waiting first; each row says both, and the
/// complaint, so no request per row.
fn in_queue_order(c: &Client, queue: &str, rows: &Value) {
    let Some(rows) = rows.as_array() else {
        return c.s.violation(format!("{queue}: not a list: {rows}"));
    };
    let key = |r: &Value| {
        let rank = PRIORITIES
            .iter()
            .position(|p| r["priority"] == *p)
            .unwrap_or(4);
        (
            rank,
            r["waiting_since"]
                .as_str()
                .and_then(|t| t.parse::<chrono::DateTime<chrono::Utc>>().ok()),
            r["id"].as_i64(),
        )
    };
    if let Some(r) = rows
        .iter()
        .find(|r| !r["complaint"].is_string() || key(r).1.is_none())
    {
        c.s.violation(format!(
            "{queue}: a row without its complaint or waiting time: {r}"
        ));
    }
    if !rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        c.s.violation(format!("{queue}: not in queue order: {rows:?}"));
    }
}

/// A picker never offers the person using it; "Transfer to" rows name team and
/// professional type (null or `{id, name}`).
fn offers_not_the_caller(c: &Client, picker: &str, options: &Value) {
    for o in options.as_array().into_iter().flatten() {
        if o["id"] == c.who.id {
            c.s.violation(format!("{picker} offers its caller {}", c.who.name));
        }
        if picker == "/employee/search"
            && !["team", "professional_type"].iter().all(|k| {
                o.get(*k)
                    .is_some_and(|v| v.is_null() || v["name"].is_string())
            })
        {
            c.s.violation(format!(
                "{picker}: a row without team or professional type: {o}"
            ));
        }
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// --- the checks ---------------------------------------------------------------------------

async fn check(c: &Client, seen: &[(&'static str, String, Arc<Mutex<Seen>>)]) {
    let (incidents, submitted, regulated, choices) = {
        let log = c.s.log.lock().unwrap();
        (
            log.incidents.clone(),
            log.submitted.clone(),
            log.regulated.clone(),
            log.choices.clone(),
        )
    };
    let mut finals: HashMap<i64, (i64, String)> = HashMap::new();
    // Units: (unit, assigned_at, released_at) of every dispatch of the shift.
    let mut spans: HashMap<i64, Vec<(String, Option<String>, i64)>> = HashMap::new();
    for &id in &incidents {
        let detail = c
            .get(&format!("/incident/{id}?include_history=true"))
            .await
            .body;
        let state = detail["state"].as_str().unwrap_or_default().to_owned();
        let version = detail["version"].as_i64().unwrap_or_default();
        if !matches!(state.as_str(), "closed" | "cancelled" | "prank") {
            c.s.violation(format!("incident {id} ended {state}"));
        }
        replay_history(c, id, &detail);
        finals.insert(id, (version, state));
        let dispatches = c.get(&format!("/dispatch/incident/{id}")).await.body;
        for d in dispatches.as_array().into_iter().flatten() {
            let unit = d["mobile_unit"]["id"].as_i64().unwrap_or_default();
            let from = d["times"]["assigned_at"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let to = d["times"]["released_at"].as_str().map(str::to_owned);
            if to.is_none() {
                c.s.violation(format!("dispatch {} of {id} was never released", d["id"]));
            }
            spans.entry(unit).or_default().push((from, to, id));
        }
    }
    // No unit on two unreleased dispatches at once (RFC 3339 UTC times compare as text).
    for (unit, mut s) in spans {
        s.sort();
        for w in s.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if a.1.as_ref().is_none_or(|end| end > &b.0) {
                c.s.violation(format!(
                    "unit {unit} was on incidents {} and {} at once ({a:?}, {b:?})",
                    a.2, b.2
                ));
            }
        }
    }
    // Every choice landed on the chosen person: the history entry of that version says so.
    for (id, version, action, user_id, name) in &choices {
        let detail = c
            .get(&format!("/incident/{id}?include_history=true"))
            .await
            .body;
        let entry = detail["history"]
            .as_array()
            .and_then(|h| h.iter().find(|e| e["version"].as_i64() == Some(*version)));
        match entry {
            Some(e) if e["action"] == *action && mentions(&e["changes"], *user_id, name) => {}
            other => c.s.violation(format!("{action} of incident {id} to {name} (user {user_id}) at version {version}: history says {other:?}")),
        }
    }
    // Sockets.
    for (role, who, seen) in seen {
        let seen = seen.lock().unwrap();
        if let Some(closed) = &seen.closed {
            c.s.violation(format!(
                "{role} {who}'s socket closed during the shift: {closed}"
            ));
        }
        for (id, from) in &seen.subscribed {
            let got = &seen.versions[id];
            let until = seen
                .unsubscribed
                .get(id)
                .copied()
                .unwrap_or_else(|| finals.get(id).map(|f| f.0).unwrap_or(*from));
            let expected: Vec<i64> = ((*from + 1)..=until).collect();
            if got[..] != expected[..] && finals.contains_key(id) {
                c.s.violation(format!("{role} {who} followed incident {id} from version {from} to {until} and saw {got:?}"));
            }
        }
        for late in &seen.after_unsubscribe {
            c.s.violation(format!("{role} {who} got {late} after unsubscribing"));
        }
        let (queue, members) = match *role {
            "regulator" => ("awaiting_regulation", &submitted),
            _ => ("regulated", &regulated),
        };
        let q = seen.queues.get(queue);
        for id in members {
            let events = q.and_then(|q| q.get(id)).cloned().unwrap_or_default();
            let entered = events.iter().position(|e| e.0);
            let left = events.iter().rposition(|e| !e.0);
            if !matches!((entered, left), (Some(a), Some(b)) if a < b) {
                c.s.violation(format!("{role} {who} saw incident {id} in queue {queue} as {events:?}, not entering then leaving"));
            }
        }
    }
}

/// Whether a history entry's changes name the chosen user (by id or by name).
fn mentions(changes: &Value, user_id: i64, name: &str) -> bool {
    let text = changes.to_string();
    text.contains(name)
        || text.contains(&format!("\"id\":{user_id}"))
        || text.contains(&format!("\"to\":{user_id}"))
}

/// The history replays to the incident: versions 1..=version without a gap, and the states
/// the entries move through end in the incident's state.
fn replay_history(c: &Client, id: i64, detail: &Value) {
    let Some(history) = detail["history"].as_array() else {
        c.s.violation(format!("incident {id} has no history"));
        return;
    };
    let versions: Vec<i64> = history
        .iter()
        .filter_map(|e| e["version"].as_i64())
        .collect();
    let expected: Vec<i64> = (1..=detail["version"].as_i64().unwrap_or_default()).collect();
    if versions != expected {
        c.s.violation(format!(
            "incident {id}: history versions {versions:?}, expected {expected:?}"
        ));
    }
    let mut state = "registering".to_owned();
    for e in history {
        if let Some(to) = e["changes"]["state"]["to"].as_str() {
            if e["changes"]["state"]["from"]
                .as_str()
                .is_some_and(|f| f != state)
            {
                c.s.violation(format!(
                    "incident {id}: history moves from {} at version {}, but replay was at {state}",
                    e["changes"]["state"]["from"], e["version"]
                ));
            }
            state = to.to_owned();
        }
    }
    if detail["state"] != state.as_str() {
        c.s.violation(format!(
            "incident {id}: history replays to {state}, the incident is {}",
            detail["state"]
        ));
    }
}
