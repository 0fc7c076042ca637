//! WebSocket fan-out benchmark, the clients' side (run by hand through
//! `bench/dispatch/ws_fanout.sh`, not a test; see bench/dispatch/README.md).
//!
//! The replicas are `dispatch-api serve` processes of their own, started by the script on
//! one database; this process holds only the subscribers and the writer, so the time it
//! measures is the servers' (and the kernel's), not the clients' sharing a runtime with
//! them. For each subscriber count it opens that many sockets, spread evenly over the
//! replicas, all following one incident; reads each replica's memory (RSS) once they are
//! subscribed and idle; then makes writes through the real write path
//! (`store::incident_writes::patch`: row lock, version check, history, `NOTIFY` in the
//! transaction), one at a time, and records the time from the write's commit (its
//! transaction has returned) to the arrival of its `incident.updated` at every subscriber.
//! Writer and clients share this process's clock.
//!
//! Environment (the script sets it): `REPLICAS` (`host:port,host:port`), `REPLICA_PIDS`
//! (their process ids, for the RSS), `TOKEN` (a token of `LOGIN`), `LOGIN` (`tarm`),
//! `DATABASE_URL`, `SUBSCRIBERS` (`1000,5000`), `WRITES` (50), `GAP_MS` (20: the pause after
//! a write's last delivery), `TARGET_MS` (50: the p99 the issue asks for).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use dispatch_api::auth::{CurrentUser, Profile};
use dispatch_api::schema::dispatch::{incidents, users};
use dispatch_api::store::incident_writes;
use dispatch_api::store::writes::Author;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn var(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn list<T: std::str::FromStr>(name: &str, default: &str) -> anyhow::Result<Vec<T>> {
    var(name, default)
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("{name}: `{s}` is not valid"))
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A process's resident memory, in kB (`VmRSS` of /proc/<pid>/status).
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time (user + system) a process has used, in clock ticks (fields 14 and 15 of
/// /proc/<pid>/stat; 100 a second on Linux).
fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from the parenthesis closing it.
    let mut fields = stat[stat.rfind(')')? + 2..].split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// The CPU time of `pids` together, in ms.
fn cpu_ms(pids: &[String]) -> f64 {
    let ticks: u64 = pids.iter().filter_map(|p| cpu_ticks(p)).sum();
    ticks as f64 * 10.0
}

/// The `version` of an `incident.updated` frame, read without a JSON parser (the clients
/// should cost as little as possible: they share the machine with the servers).
fn version_of(text: &str) -> Option<i32> {
    if !text.contains("\"incident.updated\"") {
        return None;
    }
    let rest = &text[text.find("\"version\":")? + "\"version\":".len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// A socket's read buffer: a frame of the fan-out is a few hundred bytes.
const READ_BUFFER: usize = 4 * 1024;

/// Opens a socket on `addr` and subscribes it to `incident`; returns once `subscribed`
/// arrived.
async fn subscriber(addr: &str, token: &str, incident: i64) -> anyhow::Result<Socket> {
    let url = format!("ws://{addr}/ws?access_token={token}");
    // tungstenite zeroes its whole read buffer (128 KiB by default) before every read: 5,000
    // sockets reading one small frame each made the client spend 640 MB of memset per write,
    // more CPU than the replicas (bench/dispatch/README.md, "The fan-out's client").
    let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), false)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    ws.send(Message::text(format!(
        r#"{{"type":"subscribe","incident_id":{incident}}}"#
    )))
    .await?;
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) if t.contains("\"subscribed\"") => return Ok(ws),
            Some(Ok(Message::Text(t))) => anyhow::bail!("subscribing: {t}"),
            Some(Ok(_)) => continue,
            other => anyhow::bail!("subscribing: {other:?}"),
        }
    }
}

/// Reads `ws` until it has seen `last`, recording each version's arrival (since `epoch`),
/// then closes it.
async fn read(
    mut ws: Socket,
    epoch: Instant,
    last: i32,
    delivered: Arc<AtomicUsize>,
    every: usize,
    done: Arc<Notify>,
) -> Vec<(i32, Duration)> {
    let mut seen = Vec::new();
    while let Some(Ok(m)) = ws.next().await {
        let Message::Text(t) = m else { continue };
        let at = epoch.elapsed();
        if let Some(v) = version_of(&t) {
            seen.push((v, at));
            if (delivered.fetch_add(1, Ordering::AcqRel) + 1).is_multiple_of(every) {
                done.notify_one();
            }
            if v >= last {
                break;
            }
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), ws.close(None)).await;
    seen
}

struct Round {
    subscribers: usize,
    deliveries: Vec<Duration>,
    last: Vec<Duration>,
    missing: usize,
    rss: Vec<Option<u64>>,
    connect: Duration,
    /// CPU time per write (ms) of the replicas together, and of this process (the clients
    /// and the writer), over the round's writes.
    server_cpu: f64,
    client_cpu: f64,
}

#[allow(clippy::too_many_arguments)]
async fn round(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
    replicas: &[String],
    pids: &[u32],
    token: &str,
    incident: i64,
    subscribers: usize,
    writes: usize,
    gap: Duration,
) -> anyhow::Result<Round> {
    let epoch = Instant::now();
    let mut version: i32 = incidents::table
        .find(incident)
        .select(incidents::version)
        .first(conn)
        .await?;
    let last = version + i32::try_from(writes)?;
    let delivered = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(Notify::new());

    // Connect and subscribe, 64 at a time; each reader starts at once (so it answers the
    // server's pings while the others connect).
    let started = Instant::now();
    let readers: Vec<_> = futures_util::stream::iter(0..subscribers)
        .map(|i| {
            let addr = replicas[i % replicas.len()].clone();
            async move { subscriber(&addr, token, incident).await }
        })
        .buffer_unordered(64)
        .map(|ws| {
            ws.map(|ws| {
                tokio::spawn(read(
                    ws,
                    epoch,
                    last,
                    delivered.clone(),
                    subscribers,
                    done.clone(),
                ))
            })
        })
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<anyhow::Result<_>>()?;
    let connect = started.elapsed();
    // Idle and subscribed: what the sockets hold in each replica.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = pids.iter().map(|&p| rss_kb(p)).collect();

    let servers: Vec<String> = pids.iter().map(u32::to_string).collect();
    let me = ["self".to_owned()];
    let cpu_before = (cpu_ms(&servers), cpu_ms(&me));
    let mut commits = Vec::with_capacity(writes);
    for n in 0..writes {
        let age = (n % 100) as i32;
        let by = Author::new(user, chrono::Utc::now());
        let w = incident_writes::patch(conn, &by, incident, version, move |e| {
            e.patient_age = Some(age)
        })
        .await
        .map_err(|p| anyhow::anyhow!("the write failed: {p}"))?;
        commits.push((w.version, epoch.elapsed()));
        version = w.version;
        let all = subscribers * (n + 1);
        let wait = async {
            while AtomicUsize::load(&delivered, Ordering::Acquire) < all {
                done.notified().await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .is_err()
        {
            eprintln!(
                "write {n}: {} of {subscribers} deliveries after 10 s",
                AtomicUsize::load(&delivered, Ordering::Acquire) - subscribers * n
            );
        }
        // Writes a little apart, as people make them (and so each is measured alone).
        tokio::time::sleep(gap).await;
    }

    let per_write = |before: f64, after: f64| (after - before) / writes.max(1) as f64;
    let server_cpu = per_write(cpu_before.0, cpu_ms(&servers));
    let client_cpu = per_write(cpu_before.1, cpu_ms(&me));

    let mut deliveries = Vec::with_capacity(subscribers * writes);
    let mut slowest = vec![Duration::ZERO; writes];
    let mut missing = subscribers * writes;
    for reader in readers {
        let seen = tokio::time::timeout(Duration::from_secs(30), reader)
            .await
            .context("a subscriber did not finish")??;
        for (v, at) in seen {
            if let Some(i) = commits.iter().position(|(cv, _)| *cv == v) {
                let d = at.saturating_sub(commits[i].1);
                deliveries.push(d);
                slowest[i] = slowest[i].max(d);
                missing -= 1;
            }
        }
    }
    deliveries.sort();
    slowest.sort();
    Ok(Round {
        subscribers,
        deliveries,
        last: slowest,
        missing,
        rss,
        connect,
        server_cpu,
        client_cpu,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let replicas: Vec<String> = list("REPLICAS", "")?;
    anyhow::ensure!(!replicas.is_empty(), "REPLICAS: host:port,host:port");
    let pids: Vec<u32> = list("REPLICA_PIDS", "")?;
    let counts: Vec<usize> = list("SUBSCRIBERS", "1000,5000")?;
    let writes: usize = var("WRITES", "50").parse()?;
    let gap = Duration::from_millis(var("GAP_MS", "20").parse()?);
    let target_ms: f64 = var("TARGET_MS", "50").parse()?;
    let token = std::env::var("TOKEN").context("TOKEN: a token of LOGIN")?;
    let login = var("LOGIN", "tarm");
    let url = std::env::var("DATABASE_URL").context("DATABASE_URL")?;

    let mut conn = common::db::tls::establish(&url).await?;
    let id: i64 = users::table
        .filter(users::login.eq(&login))
        .select(users::id)
        .first(&mut conn)
        .await
        .with_context(|| format!("the user {login}"))?;
    let user = CurrentUser {
        id,
        descriptive_name: login.clone(),
        profile: Profile::Tarm,
    };
    let incident: i64 = incidents::table
        .filter(incidents::state.eq("registering"))
        .select(incidents::id)
        .order_by(incidents::id)
        .first(&mut conn)
        .await?;
    let idle: Vec<Option<u64>> = pids.iter().map(|&p| rss_kb(p)).collect();

    let mut rounds = Vec::new();
    for &n in &counts {
        let r = round(
            &mut conn, &user, &replicas, &pids, &token, incident, n, writes, gap,
        )
        .await?;
        eprintln!(
            "{n} subscribers connected and subscribed in {:.1} s; {} deliveries, {} missing",
            r.connect.as_secs_f64(),
            r.deliveries.len(),
            r.missing
        );
        rounds.push(r);
        // Let the closed sockets go before the next round.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }

    println!(
        "{} replicas, {writes} writes per round; commit -> delivery (ms) at every subscriber, \
         and per write to its last subscriber",
        replicas.len()
    );
    println!(
        "{:>11} {:>10} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9} {:>10}",
        "subscribers",
        "deliveries",
        "p50",
        "p90",
        "p99",
        "max",
        "last p50",
        "last p99",
        "p99/target"
    );
    for r in &rounds {
        let p99 = ms(percentile(&r.deliveries, 0.99));
        println!(
            "{:>11} {:>10} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>9.1} {:>9.1} {:>10.2}",
            r.subscribers,
            r.deliveries.len(),
            ms(percentile(&r.deliveries, 0.50)),
            ms(percentile(&r.deliveries, 0.90)),
            p99,
            ms(r.deliveries.last().copied().unwrap_or_default()),
            ms(percentile(&r.last, 0.50)),
            ms(percentile(&r.last, 0.99)),
            p99 / target_ms,
        );
    }
    println!("p99/target: the p99 over TARGET_MS = {target_ms} ms (<= 1.00 meets it)");
    println!(
        "CPU per write (ms, user + system, over the round's writes and their pauses): \
         the replicas together, and the client process (subscribers and writer)"
    );
    for r in &rounds {
        println!(
            "{:>11} subscribers: replicas {:.1} ms, client {:.1} ms",
            r.subscribers, r.server_cpu, r.client_cpu
        );
    }
    println!("memory (RSS) per replica, idle: no socket, then the round's sockets subscribed");
    for (i, pid) in pids.iter().enumerate() {
        let before = idle.get(i).copied().flatten().unwrap_or(0);
        for r in &rounds {
            let after = r.rss.get(i).copied().flatten().unwrap_or(0);
            let sockets = r.subscribers / replicas.len();
            println!(
                "replica {} (pid {pid}): {before} kB -> {after} kB with {sockets} sockets: {:.1} kB per socket",
                i + 1,
                after.saturating_sub(before) as f64 / sockets.max(1) as f64
            );
        }
    }
    Ok(())
}
