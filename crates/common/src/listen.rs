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

use std::time::Duration;

use diesel_async::{AsyncPgConnection, RunQueryDsl};
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
    /// How often an idle connection is checked, bounding how long a dead one goes unnoticed.
    pub heartbeat: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
    pub application_name: String,
}

impl Default for ListenSettings {
    fn default() -> Self {
        Self {
            heartbeat: Duration::from_secs(1),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            application_name: "listener".to_owned(),
        }
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
            if !matches!(outcome, Ok(Stop::NoReceivers)) {
                let _ = tx.send(ListenEvent::Disconnected);
            }
            match outcome {
                Ok(Stop::NoReceivers) => return,
                Ok(Stop::ConnectionLost) => {
                    tracing::warn!("listening connection lost; reconnecting");
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
    ConnectionLost,
    NoReceivers,
}

async fn listen_once(
    url: &str,
    channels: &[String],
    settings: &ListenSettings,
    tx: &broadcast::Sender<ListenEvent>,
) -> anyhow::Result<Stop> {
    let mut conn = tokio::time::timeout(Duration::from_secs(5), crate::db::tls::establish(url))
        .await
        .map_err(|_| anyhow::anyhow!("connecting timed out"))??;
    // A standby hears no notifications (nothing is written there): wait for the primary.
    if !crate::db::failover::writable(&mut conn).await? {
        anyhow::bail!("the server is read-only (a standby?)");
    }
    let mut setup = format!("SET application_name TO '{}';", settings.application_name);
    for c in channels {
        setup.push_str(&format!("LISTEN {c};"));
    }
    diesel_async::SimpleAsyncConnection::batch_execute(&mut conn, &setup).await?;
    tracing::info!(?channels, "listening");
    if tx.send(ListenEvent::Reconnected).is_err() && tx.receiver_count() == 0 {
        return Ok(Stop::NoReceivers);
    }
    loop {
        // The stream borrows the connection; it is made anew after each heartbeat. Nothing
        // is lost in between: the driver buffers notifications until they are read.
        let next = {
            let mut stream = std::pin::pin!(conn.notifications_stream());
            tokio::time::timeout(settings.heartbeat, stream.next()).await
        };
        match next {
            Ok(Some(Ok(n))) => {
                let event = ListenEvent::Notification {
                    channel: n.channel,
                    payload: n.payload,
                };
                if tx.send(event).is_err() && tx.receiver_count() == 0 {
                    return Ok(Stop::NoReceivers);
                }
            }
            Ok(Some(Err(e))) => {
                tracing::warn!(error = %e, "listening connection failed");
                return Ok(Stop::ConnectionLost);
            }
            Ok(None) => return Ok(Stop::ConnectionLost),
            Err(_idle) => {
                // A server that turned read-only (demoted, or failed over away from by a
                // DNS name or VIP) is left for the new primary.
                match crate::db::failover::writable(&mut conn).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!("the listening connection's server is read-only");
                        return Ok(Stop::ConnectionLost);
                    }
                    Err(_) => return Ok(Stop::ConnectionLost),
                }
            }
        }
    }
}

/// `pg_notify(channel, payload)` inside the caller's transaction: PostgreSQL delivers it only
/// if, and when, that transaction commits.
pub async fn notify(
    conn: &mut AsyncPgConnection,
    channel: &str,
    payload: &str,
) -> diesel::QueryResult<()> {
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<diesel::sql_types::Text, _>(channel)
        .bind::<diesel::sql_types::Text, _>(payload)
        .execute(conn)
        .await
        .map(|_| ())
}
