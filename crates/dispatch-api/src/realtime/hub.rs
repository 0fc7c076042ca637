//! The process's subscriptions: which socket follows which incident, and at which version.
//!
//! Sending never waits: each socket has a bounded queue; a socket whose queue is full is a
//! slow client, and it is told to close instead of holding the others back. The last
//! version each socket was told of is kept, so duplicates (an event seen twice, or a
//! re-read after the listener reconnects) are never sent twice and versions only rise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::{Notify, mpsc, watch};

use std::time::Duration;

/// Socket timing; the defaults suit browsers behind a load balancer.
#[derive(Debug, Clone, Copy)]
pub struct WsSettings {
    /// A socket silent this long is pinged.
    pub ping_interval: Duration,
    /// A socket silent this long (no frame, no pong) is dropped as dead.
    pub idle_timeout: Duration,
    /// Largest client frame accepted.
    pub max_frame: usize,
    /// A frame the socket cannot take within this (the client stopped reading and every
    /// buffer on the way is full) drops the socket without waiting any longer.
    pub send_timeout: Duration,
}

impl Default for WsSettings {
    fn default() -> Self {
        Self {
            ping_interval: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(45),
            max_frame: 4096,
            send_timeout: Duration::from_secs(10),
        }
    }
}

/// Every `changed` group, sent when what changed is not known (after a reconnection).
pub const ALL_GROUPS: &[&str] = &[
    "basic_data",
    "occurrence",
    "patient",
    "state",
    "regulation",
    "technical_decisions",
    "dispatches",
    "intercurrences",
    "conclusion",
    "prank_calls",
];

/// Server -> client messages (docs/dispatch-realtime.md, "WebSocket protocol").
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type")]
pub enum ServerMessage {
    #[serde(rename = "subscribed")]
    Subscribed { incident_id: i64, version: i32 },
    #[serde(rename = "incident.updated")]
    IncidentUpdated {
        incident_id: i64,
        version: i32,
        changed: Vec<String>,
    },
    #[serde(rename = "error")]
    Error { code: String, detail: String },
}

impl ServerMessage {
    pub fn text(&self) -> Arc<str> {
        serde_json::to_string(self)
            .unwrap_or_else(|_| "{}".to_owned())
            .into()
    }

    pub fn error(code: &str, detail: impl Into<String>) -> Self {
        ServerMessage::Error {
            code: code.to_owned(),
            detail: detail.into(),
        }
    }
}

/// One socket as the hub sees it: its queue and the signal that tells it to close.
#[derive(Clone)]
pub struct Client {
    pub id: u64,
    tx: mpsc::Sender<Arc<str>>,
    pub kicked: Arc<Notify>,
}

impl Client {
    /// Queues a message for this socket alone (replies to its own requests).
    pub fn send(&self, message: &ServerMessage) {
        self.offer(message.text());
    }

    /// Queues a message without waiting; a full queue kicks the client (false).
    fn offer(&self, text: Arc<str>) -> bool {
        match self.tx.try_send(text) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.kicked.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

struct Subscriber {
    client: Client,
    /// The last version this socket was told of; `None` until its `subscribed` is sent.
    known: Option<i32>,
    /// The highest version announced while the subscription was being read.
    pending: i32,
}

#[derive(Default)]
struct Inner {
    by_incident: HashMap<i64, HashMap<u64, Subscriber>>,
}

/// Messages a socket may have waiting before it counts as too slow.
pub const QUEUE_CAPACITY: usize = 64;

/// Cheap to clone; one per process.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    next_id: Arc<AtomicU64>,
    closing: Arc<watch::Sender<bool>>,
    pub queue_capacity: usize,
    pub settings: WsSettings,
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new(QUEUE_CAPACITY, WsSettings::default())
    }
}

impl Hub {
    pub fn new(queue_capacity: usize, settings: WsSettings) -> Self {
        Self {
            inner: Arc::default(),
            next_id: Arc::new(AtomicU64::new(1)),
            closing: Arc::new(watch::channel(false).0),
            queue_capacity,
            settings,
        }
    }

    /// Tells every socket to close (`1001 going away`): the server is stopping.
    pub fn shutdown(&self) {
        self.closing.send_replace(true);
    }

    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// A new socket's handle and the receiving end of its queue.
    pub fn client(&self) -> (Client, mpsc::Receiver<Arc<str>>) {
        let (tx, rx) = mpsc::channel(self.queue_capacity);
        let client = Client {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            tx,
            kicked: Arc::new(Notify::new()),
        };
        (client, rx)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// First half of a subscription: from now on announcements are remembered for it.
    pub fn begin_subscribe(&self, client: &Client, incident_id: i64) {
        self.lock()
            .by_incident
            .entry(incident_id)
            .or_default()
            .entry(client.id)
            .or_insert_with(|| Subscriber {
                client: client.clone(),
                known: None,
                pending: 0,
            });
    }

    /// Second half, once the current version is read: sends `subscribed` with the newer of
    /// the version read and any announced meanwhile, so the client reads at least that.
    pub fn finish_subscribe(&self, client: &Client, incident_id: i64, read: i32) {
        let mut inner = self.lock();
        if let Some(sub) = inner
            .by_incident
            .get_mut(&incident_id)
            .and_then(|m| m.get_mut(&client.id))
        {
            let version = read.max(sub.pending).max(sub.known.unwrap_or(0));
            sub.known = Some(version);
            sub.client.offer(
                ServerMessage::Subscribed {
                    incident_id,
                    version,
                }
                .text(),
            );
        }
    }

    /// Forgets one subscription; nothing more is sent for it.
    pub fn unsubscribe(&self, client: &Client, incident_id: i64) {
        let mut inner = self.lock();
        if let Some(m) = inner.by_incident.get_mut(&incident_id) {
            m.remove(&client.id);
            if m.is_empty() {
                inner.by_incident.remove(&incident_id);
            }
        }
    }

    /// Forgets every subscription of a socket (closed, dead or kicked).
    pub fn remove_client(&self, client_id: u64) {
        let mut inner = self.lock();
        inner.by_incident.retain(|_, m| {
            m.remove(&client_id);
            !m.is_empty()
        });
    }

    /// A committed change: `incident.updated` to every subscriber that knows an older
    /// version. Never waits; returns how many were sent.
    pub fn publish(&self, incident_id: i64, version: i32, changed: &[&str]) -> usize {
        let mut inner = self.lock();
        let Some(subs) = inner.by_incident.get_mut(&incident_id) else {
            return 0;
        };
        let text = ServerMessage::IncidentUpdated {
            incident_id,
            version,
            changed: changed.iter().map(|s| (*s).to_owned()).collect(),
        }
        .text();
        let mut sent = 0;
        let mut kicked = Vec::new();
        for sub in subs.values_mut() {
            match sub.known {
                None => sub.pending = sub.pending.max(version),
                Some(k) if k < version => {
                    sub.known = Some(version);
                    if sub.client.offer(text.clone()) {
                        sent += 1;
                    } else {
                        kicked.push(sub.client.id);
                    }
                }
                Some(_) => {}
            }
        }
        for id in kicked {
            subs.remove(&id);
        }
        sent
    }

    /// Every incident some socket follows (re-read after the listener reconnects).
    pub fn subscribed_incidents(&self) -> Vec<i64> {
        self.lock().by_incident.keys().copied().collect()
    }

    pub fn subscription_count(&self) -> usize {
        self.lock().by_incident.values().map(HashMap::len).sum()
    }
}

/// A parsed announcement: `<id>:<version>:<group,...>`.
pub fn parse_payload(payload: &str) -> Option<(i64, i32, Vec<&str>)> {
    let mut parts = payload.splitn(3, ':');
    let id = parts.next()?.parse().ok()?;
    let version = parts.next()?.parse().ok()?;
    let groups = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter(|g| !g.is_empty())
        .collect();
    Some((id, version, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(rx: &mut mpsc::Receiver<Arc<str>>) -> Option<serde_json::Value> {
        rx.try_recv()
            .ok()
            .map(|t| serde_json::from_str(&t).unwrap())
    }

    #[test]
    fn sends_each_version_once_and_only_to_subscribers() {
        let hub = Hub::new(8, WsSettings::default());
        let (a, mut ra) = hub.client();
        let (b, mut rb) = hub.client();
        hub.begin_subscribe(&a, 1);
        hub.publish(1, 3, &["patient"]); // during the read: remembered, not sent
        hub.finish_subscribe(&a, 1, 2);
        assert_eq!(
            recv(&mut ra).unwrap(),
            serde_json::json!({"type": "subscribed", "incident_id": 1, "version": 3})
        );
        assert_eq!(hub.publish(1, 3, &["patient"]), 0, "already known");
        assert_eq!(hub.publish(1, 4, &["patient"]), 1);
        assert_eq!(
            recv(&mut ra).unwrap(),
            serde_json::json!({"type": "incident.updated", "incident_id": 1, "version": 4,
                               "changed": ["patient"]})
        );
        assert_eq!(hub.publish(2, 9, &[]), 0);
        assert!(recv(&mut rb).is_none());
        hub.unsubscribe(&a, 1);
        assert_eq!(hub.publish(1, 5, &[]), 0);
        assert!(recv(&mut ra).is_none());
        let _ = b;
    }

    #[test]
    fn a_full_queue_kicks_that_client_only() {
        let hub = Hub::new(2, WsSettings::default());
        let (slow, _keep) = hub.client();
        let (fast, mut rf) = hub.client();
        for c in [&slow, &fast] {
            hub.begin_subscribe(c, 7);
            hub.finish_subscribe(c, 7, 1);
        }
        let _ = recv(&mut rf);
        for v in 2..6 {
            hub.publish(7, v, &["state"]);
            assert!(
                recv(&mut rf).is_some(),
                "the fast client gets every version"
            );
        }
        assert_eq!(hub.subscription_count(), 1, "the slow one was dropped");
    }

    #[test]
    fn payloads_parse() {
        assert_eq!(
            parse_payload("12:3:patient,state"),
            Some((12, 3, vec!["patient", "state"]))
        );
        assert_eq!(parse_payload("12:3:"), Some((12, 3, vec![])));
        assert_eq!(parse_payload("x:3:"), None);
    }
}
