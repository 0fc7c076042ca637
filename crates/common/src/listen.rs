//! One dedicated `LISTEN` connection per process, forwarding PostgreSQL notifications to the
//! process's subscribers, reconnecting with backoff when the database goes away.
//!
//! Notifications sent while the connection was down are lost by PostgreSQL's design, so
//! every reconnection is announced as [`ListenEvent::Reconnected`]: a subscriber then
//! re-reads the state it follows (for example, compares versions) and misses nothing.
//!
//! A server that takes no writes (a standby, a demoted primary: `db::failover::writable`)
//! sends no notifications: the listener does not stay on it, neither at connecting nor at a
//! heartbeat, and retries until it reaches the primary.
//!
//! A connection can also go deaf without an error: a partition, a dead peer, or a pooler that
//! does not forward notifications give nothing to read, which looks like a quiet database.
//! So after each `heartbeat` of silence the listener proves the path round trip: it checks
//! the server takes writes, sends `NOTIFY` on a channel of its own connection and must hear
//! it back, all within `deadline` (`DATABASE_TIMEOUT`, `crate::db::network`). A miss drops
//! the connection (logged `listening connection lost`, counted in
//! `<service>_listener_heartbeat_misses_total`), announces `Disconnected` and reconnects.
//! [`ListenHealth`] tells the process's users (the user cache, `/readyz`) whether the
//! listener is known to hear now: heard from within `heartbeat + deadline`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel_async::AsyncPgConnection;
use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenEvent {
    Notification {
        channel: String,
        payload: String,
    },
    /// The listening connection is (re)established; anything may have been missed before it.
    Reconnected,
    /// The listening connection was lost (or could not be made); until the next
    /// `Reconnected`, notifications are not heard.
    Disconnected,
}

/// How the listener behaves; the defaults suit production.
#[derive(Debug, Clone)]
pub struct ListenSettings {
    /// How long an idle connection goes unchecked; with `deadline`, it bounds how long a
    /// dead one goes unnoticed.
    pub heartbeat: Duration,
    /// How long connecting, and each heartbeat's round trip, may take: `DATABASE_TIMEOUT`
    /// by default ([`crate::db::network::timeout`]).
    pub deadline: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
    pub application_name: String,
    /// Whether the listener hears now; clones share it.
    pub health: ListenHealth,
}

impl Default for ListenSettings {
    fn default() -> Self {
        Self {
            heartbeat: Duration::from_secs(1),
            deadline: crate::db::network::timeout(),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            application_name: "listener".to_owned(),
            health: ListenHealth::default(),
        }
    }
}

/// Heartbeats that were not heard back, in this process: timed out, or failed (the kernel
/// gave up on the link first). The metric `<service>_listener_heartbeat_misses_total`.
static HEARTBEAT_MISSES: AtomicU64 = AtomicU64::new(0);

/// How many heartbeats of this process's listeners went unanswered.
pub fn heartbeat_misses() -> u64 {
    HEARTBEAT_MISSES.load(Ordering::Relaxed)
}

/// Whether a listener hears its channels now. Cheap to clone; clones share the state.
#[derive(Debug, Clone)]
pub struct ListenHealth(Arc<HealthState>);

#[derive(Debug)]
struct HealthState {
    connected: AtomicBool,
    /// When the connection last proved it hears (connected, a notification, a heartbeat).
    heard: Mutex<Option<Instant>>,
    /// How long after `heard` the listener is still trusted: heartbeat + deadline.
    trust: Mutex<Duration>,
    /// Why it does not hear, when it does not.
    why: Mutex<String>,
}

impl Default for ListenHealth {
    fn default() -> Self {
        Self(Arc::new(HealthState {
            connected: AtomicBool::new(false),
            heard: Mutex::new(None),
            trust: Mutex::new(Duration::ZERO),
            why: Mutex::new("not listening yet".to_owned()),
        }))
    }
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ListenHealth {
    /// True while the connection is up and proved within its heartbeat and deadline that it
    /// hears: what was notified since is known to be heard.
    pub fn is_hearing(&self) -> bool {
        self.0.connected.load(Ordering::Acquire)
            && locked(&self.0.heard).is_some_and(|at| at.elapsed() <= *locked(&self.0.trust))
    }

    /// Why the listener is not known to hear (meaningful when [`Self::is_hearing`] is false).
    pub fn why_not(&self) -> String {
        if self.0.connected.load(Ordering::Acquire) {
            "the listening connection has not answered its heartbeat".to_owned()
        } else {
            locked(&self.0.why).clone()
        }
    }

    fn heard(&self) {
        *locked(&self.0.heard) = Some(Instant::now());
    }

    fn connected(&self, trust: Duration) {
        *locked(&self.0.trust) = trust;
        self.heard();
        self.0.connected.store(true, Ordering::Release);
    }

    fn lost(&self, why: String) {
        self.0.connected.store(false, Ordering::Release);
        *locked(&self.0.why) = why;
    }
}

fn valid_channel(c: &str) -> bool {
    !c.is_empty()
        && c.len() <= 63
        && c.bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
}

/// Spawns the listener. It runs until the returned handle is aborted or every receiver of
/// `tx` is gone.
pub fn spawn(
    database_url: String,
    channels: Vec<String>,
    settings: ListenSettings,
    tx: broadcast::Sender<ListenEvent>,
) -> JoinHandle<()> {
    assert!(
        channels.iter().all(|c| valid_channel(c)),
        "channel names are lowercase identifiers"
    );
    tokio::spawn(async move {
        let mut backoff = settings.min_backoff;
        loop {
            let outcome = listen_once(&database_url, &channels, &settings, &tx).await;
            match &outcome {
                Ok(Stop::NoReceivers) => {}
                Ok(Stop::ConnectionLost(why)) => settings
                    .health
                    .lost(format!("the listening connection was lost: {why}")),
                Err(e) => settings.health.lost(format!("cannot listen: {e}")),
            }
            if !matches!(outcome, Ok(Stop::NoReceivers)) {
                let _ = tx.send(ListenEvent::Disconnected);
            }
            match outcome {
                Ok(Stop::NoReceivers) => return,
                Ok(Stop::ConnectionLost(why)) => {
                    tracing::warn!(%why, "listening connection lost; reconnecting");
                    backoff = settings.min_backoff;
                }
                Err(e) => tracing::warn!(error = %e, ?backoff, "cannot listen; retrying"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(settings.max_backoff);
        }
    })
}

enum Stop {
    /// Why, in words.
    ConnectionLost(String),
    NoReceivers,
}

async fn listen_once(
    url: &str,
    channels: &[String],
    settings: &ListenSettings,
    tx: &broadcast::Sender<ListenEvent>,
) -> anyhow::Result<Stop> {
    let deadline = settings.deadline;
    let mut conn = tokio::time::timeout(deadline, crate::db::tls::establish(url))
        .await
        .map_err(|_| anyhow::anyhow!("connecting timed out after {deadline:?}"))??;
    let within = |what: &'static str| {
        move |_: tokio::time::error::Elapsed| anyhow::anyhow!("{what} timed out after {deadline:?}")
    };
    // A standby hears no notifications (nothing is written there): wait for the primary.
    if !tokio::time::timeout(deadline, crate::db::failover::writable(&mut conn))
        .await
        .map_err(within("asking whether the server takes writes"))??
    {
        anyhow::bail!("the server is read-only (a standby?)");
    }
    // The heartbeat's channel is this connection's own, so no other listener hears it.
    let beat_channel = format!("listen_heartbeat_{:016x}", rand::random::<u64>());
    let mut setup = format!(
        "SET application_name TO '{}';LISTEN {beat_channel};",
        settings.application_name
    );
    for c in channels {
        setup.push_str(&format!("LISTEN {c};"));
    }
    tokio::time::timeout(
        deadline,
        diesel_async::SimpleAsyncConnection::batch_execute(&mut conn, &setup),
    )
    .await
    .map_err(within("LISTEN"))??;
    tracing::info!(?channels, "listening");
    settings.health.connected(settings.heartbeat + deadline);
    if tx.send(ListenEvent::Reconnected).is_err() && tx.receiver_count() == 0 {
        return Ok(Stop::NoReceivers);
    }
    let mut beat: u64 = 0;
    loop {
        // The stream borrows the connection; it is made anew after each heartbeat. Nothing
        // is lost in between: the driver buffers notifications until they are read.
        let next = {
            let mut stream = std::pin::pin!(conn.notifications_stream());
            tokio::time::timeout(settings.heartbeat, stream.next()).await
        };
        match next {
            Ok(Some(Ok(n))) => {
                settings.health.heard();
                if n.channel == beat_channel {
                    continue;
                }
                if forward(tx, n) {
                    return Ok(Stop::NoReceivers);
                }
            }
            Ok(Some(Err(e))) => {
                return Ok(Stop::ConnectionLost(format!("the connection failed: {e}")));
            }
            Ok(None) => return Ok(Stop::ConnectionLost("the connection closed".to_owned())),
            Err(_idle) => {
                beat += 1;
                let payload = beat.to_string();
                let round_trip = heartbeat(&mut conn, &beat_channel, &payload, tx);
                match tokio::time::timeout(deadline, round_trip).await {
                    Ok(Ok(Beat::Heard)) => settings.health.heard(),
                    Ok(Ok(Beat::NoReceivers)) => return Ok(Stop::NoReceivers),
                    // A server that turned read-only (demoted, or failed over away from by a
                    // DNS name or VIP) is left for the new primary.
                    Ok(Ok(Beat::ReadOnly)) => {
                        tracing::warn!("the listening connection's server is read-only");
                        return Ok(Stop::ConnectionLost(
                            "the server is read-only (a standby?)".to_owned(),
                        ));
                    }
                    Ok(Err(e)) => {
                        HEARTBEAT_MISSES.fetch_add(1, Ordering::Relaxed);
                        return Ok(Stop::ConnectionLost(format!("the heartbeat failed: {e}")));
                    }
                    Err(_) => {
                        HEARTBEAT_MISSES.fetch_add(1, Ordering::Relaxed);
                        return Ok(Stop::ConnectionLost(format!(
                            "the heartbeat was not heard back within {deadline:?}"
                        )));
                    }
                }
            }
        }
    }
}

/// Sends a notification to the subscribers; true when none is left.
fn forward(tx: &broadcast::Sender<ListenEvent>, n: diesel::pg::PgNotification) -> bool {
    let event = ListenEvent::Notification {
        channel: n.channel,
        payload: n.payload,
    };
    tx.send(event).is_err() && tx.receiver_count() == 0
}

enum Beat {
    Heard,
    ReadOnly,
    NoReceivers,
}

/// One heartbeat: the server still takes writes, and a `NOTIFY` on the connection's own
/// channel comes back on it (the notifications sent meanwhile are forwarded on the way).
async fn heartbeat(
    conn: &mut AsyncPgConnection,
    channel: &str,
    payload: &str,
    tx: &broadcast::Sender<ListenEvent>,
) -> anyhow::Result<Beat> {
    if !crate::db::failover::writable(conn).await? {
        return Ok(Beat::ReadOnly);
    }
    notify(conn, channel, payload).await?;
    let mut stream = std::pin::pin!(conn.notifications_stream());
    while let Some(n) = stream.next().await {
        let n = n?;
        if n.channel == channel {
            if n.payload == payload {
                return Ok(Beat::Heard);
            }
        } else if forward(tx, n) {
            return Ok(Beat::NoReceivers);
        }
    }
    anyhow::bail!("the connection closed")
}

/// `pg_notify(channel, payload)` inside the caller's transaction: PostgreSQL delivers it only
/// if, and when, that transaction commits.
pub async fn notify(
    conn: &mut AsyncPgConnection,
    channel: &str,
    payload: &str,
) -> diesel::QueryResult<()> {
    use diesel_async::RunQueryDsl;
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<diesel::sql_types::Text, _>(channel)
        .bind::<diesel::sql_types::Text, _>(payload)
        .execute(conn)
        .await
        .map(|_| ())
}
