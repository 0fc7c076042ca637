//! The process's sockets and what each follows: incidents (at which version) and work
//! queues (docs/dispatch-realtime.md, "WebSocket protocol").
//!
//! Publishing never waits: each socket has a bounded queue of events. When it is full the
//! event is not dropped silently: the hub remembers what the socket missed (the newest
//! version of each incident, with the groups that moved; for a queue, that it must re-read
//! it) and the socket collects it as soon as it has room again (`catch_up`), as one
//! `incident.updated` per incident and one `queue.resync` per queue. A socket is therefore
//! never closed for being behind; only one that stops reading is (`ws`).
//!
//! The last version each socket was told of is kept, so duplicates (an event seen twice, or
//! a re-read after the listener reconnects) are never sent twice and versions only rise.
//! The hub also knows whose each socket is, so a change to a user ends their sockets.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::notice::{IncidentNotice, QueueNotice};
use crate::domain::incident::State;
use crate::domain::user::{ACTIVE, CurrentUser, Profile};

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
    /// buffer on the way is full) ends the socket: it has stopped reading for long.
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

/// Server -> client messages: JSON text frames (docs/dispatch-realtime.md, "WebSocket
/// protocol").
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "type")]
#[schema(as = WsServerMessage)]
pub enum ServerMessage {
    /// The answer to subscribing to an incident: its newest version when the subscription
    /// took effect.
    #[serde(rename = "subscribed")]
    Subscribed { incident_id: i64, version: i32 },
    /// The answer to subscribing to a work queue: from now on its moves are sent.
    #[serde(rename = "subscribed")]
    QueueSubscribed { queue: State },
    /// A followed incident reached `version`; `changed` names the groups that moved.
    #[serde(rename = "incident.updated")]
    IncidentUpdated {
        incident_id: i64,
        version: i32,
        changed: Vec<String>,
    },
    /// An incident entered the queue (`state` is the queue) or left it (`state` is where it
    /// went), at `version`.
    #[serde(rename = "queue.changed")]
    QueueChanged {
        queue: State,
        incident_id: i64,
        version: i32,
        state: State,
    },
    /// Moves of this queue may have been missed: read the queue again
    /// (`GET /incident/mask?state=<queue>`); later moves apply on top of that read.
    #[serde(rename = "queue.resync")]
    QueueResync { queue: State },
    /// A request was refused; the socket stays open.
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

/// Why a socket's authority ended; the socket closes with this code and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The token's `exp` passed.
    TokenExpired,
    /// The user is no longer active.
    UserDeactivated,
    /// The user no longer exists.
    UserDeleted,
    /// The user's profile is not the one the socket was opened with.
    ProfileChanged,
    /// The user changed and could not be read again (the database is unreachable).
    Unconfirmed,
}

/// The close code of a socket whose authority ended (docs/dispatch-realtime.md, "Close
/// codes").
pub const AUTHORITY_ENDED: u16 = 4401;

impl Ending {
    /// The user the socket was opened for (with `profile`), as the database has it now
    /// (`status` and profile; `None` when the user is gone): why the socket must end, if it
    /// must.
    pub fn judge(profile: Profile, now: Option<(&str, Profile)>) -> Option<Ending> {
        match now {
            None => Some(Ending::UserDeleted),
            Some((status, _)) if status != ACTIVE => Some(Ending::UserDeactivated),
            Some((_, p)) if p != profile => Some(Ending::ProfileChanged),
            Some(_) => None,
        }
    }

    pub fn code(self) -> u16 {
        match self {
            Ending::Unconfirmed => 1013,
            _ => AUTHORITY_ENDED,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            Ending::TokenExpired => "token expired",
            Ending::UserDeactivated => "user deactivated",
            Ending::UserDeleted => "user deleted",
            Ending::ProfileChanged => "profile changed",
            Ending::Unconfirmed => "user changed and cannot be confirmed; reconnect",
        }
    }
}

/// What the hub and a socket's task share besides the queue.
struct Signals {
    /// Something could not be queued; the task calls [`Hub::catch_up`] once it has room.
    behind: AtomicBool,
    /// Set once, when the socket's authority ends.
    end: watch::Sender<Option<Ending>>,
}

/// One socket as the hub sees it: its queue and its signals.
#[derive(Clone)]
pub struct Client {
    pub id: u64,
    tx: mpsc::Sender<Arc<str>>,
    signals: Arc<Signals>,
}

impl Client {
    /// Queues a message without waiting; false when the queue is full (or the socket gone).
    fn offer(&self, text: Arc<str>) -> bool {
        self.tx.try_send(text).is_ok()
    }

    /// Whether the hub holds something this socket missed.
    pub fn is_behind(&self) -> bool {
        self.signals.behind.load(Ordering::Acquire)
    }

    /// Changes once, when the socket's authority ends.
    pub fn ended(&self) -> watch::Receiver<Option<Ending>> {
        self.signals.end.subscribe()
    }
}

struct Socket {
    client: Client,
    user_id: i64,
    profile: Profile,
}

struct Subscriber {
    client: Client,
    /// The last version this socket was told of (or is owed); `None` until its
    /// `subscribed` is sent.
    known: Option<i32>,
    /// The highest version announced while the subscription was being read.
    pending: i32,
}

/// An `incident.updated` a socket had no room for: the newest version and every group.
struct Missed {
    version: i32,
    changed: Vec<String>,
}

/// What one socket missed while its queue was full.
#[derive(Default)]
struct Behind {
    incidents: BTreeMap<i64, Missed>,
    queues: BTreeSet<State>,
}

#[derive(Default)]
struct Inner {
    sockets: HashMap<u64, Socket>,
    by_incident: HashMap<i64, HashMap<u64, Subscriber>>,
    by_queue: HashMap<State, HashMap<u64, Client>>,
    behind: HashMap<u64, Behind>,
}

impl Inner {
    /// Offers `text` to every follower of `queue` that is not already owed a resync of it
    /// (that resync covers this message too). Returns how many took it, and the followers
    /// whose queue was full: the caller records that they are owed a resync.
    fn offer_queue(&self, queue: State, text: &Arc<str>) -> (usize, Vec<Client>) {
        let mut sent = 0;
        let mut missed = Vec::new();
        let Some(followers) = self.by_queue.get(&queue) else {
            return (sent, missed);
        };
        for client in followers.values() {
            let owed = self
                .behind
                .get(&client.id)
                .is_some_and(|b| b.queues.contains(&queue));
            if owed {
                continue;
            }
            if client.offer(text.clone()) {
                sent += 1;
            } else {
                missed.push(client.clone());
            }
        }
        (sent, missed)
    }

    /// Remembers that `client` missed something; it will collect it with `catch_up`.
    fn owe(&mut self, client: &Client) -> &mut Behind {
        client.signals.behind.store(true, Ordering::Release);
        self.behind.entry(client.id).or_default()
    }
}

/// Events a socket may have waiting before the hub starts remembering what it misses.
pub const QUEUE_CAPACITY: usize = 64;

/// Cheap to clone; one per process.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    next_id: Arc<AtomicU64>,
    closing: Arc<watch::Sender<bool>>,
    /// Whether this process's listener is connected and has resynchronised the sockets
    /// since (`realtime::listener`): from then on every committed change reaches them.
    listening: Arc<watch::Sender<bool>>,
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
            listening: Arc::new(watch::channel(false).0),
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

    /// Called by the listener: connected and resynchronised (`true`), or disconnected.
    pub fn set_listening(&self, on: bool) {
        self.listening.send_replace(on);
    }

    /// Waits until the listener is connected and has resynchronised the sockets, so that a
    /// socket subscribing from now on hears every change committed after its subscription.
    pub async fn listening(&self) {
        let mut rx = self.listening.subscribe();
        // The sender lives as long as the hub; an error cannot happen while `self` exists.
        let _ = rx.wait_for(|on| *on).await;
    }

    /// Registers a new socket of `user`: its handle and the receiving end of its queue.
    pub fn connect(&self, user: &CurrentUser) -> (Client, mpsc::Receiver<Arc<str>>) {
        let (tx, rx) = mpsc::channel(self.queue_capacity);
        let client = Client {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            tx,
            signals: Arc::new(Signals {
                behind: AtomicBool::new(false),
                end: watch::channel(None).0,
            }),
        };
        self.lock().sockets.insert(
            client.id,
            Socket {
                client: client.clone(),
                user_id: user.id,
                profile: user.profile,
            },
        );
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

    /// Second half, once the current version is read: the `subscribed` answer, with the
    /// newer of the version read and any announced meanwhile, so the client reads at least
    /// that. `None` when the subscription was withdrawn meanwhile.
    pub fn finish_subscribe(
        &self,
        client: &Client,
        incident_id: i64,
        read: i32,
    ) -> Option<ServerMessage> {
        let mut inner = self.lock();
        let sub = inner
            .by_incident
            .get_mut(&incident_id)
            .and_then(|m| m.get_mut(&client.id))?;
        let version = read.max(sub.pending).max(sub.known.unwrap_or(0));
        sub.known = Some(version);
        // Whatever was owed for it is covered by the answer.
        if let Some(behind) = inner.behind.get_mut(&client.id) {
            behind.incidents.remove(&incident_id);
        }
        Some(ServerMessage::Subscribed {
            incident_id,
            version,
        })
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
        if let Some(behind) = inner.behind.get_mut(&client.id) {
            behind.incidents.remove(&incident_id);
        }
    }

    /// Follows a work queue: every move into or out of it is sent from now on. The caller
    /// checks that the profile may (`domain::queue`).
    pub fn follow_queue(&self, client: &Client, queue: State) -> ServerMessage {
        let mut inner = self.lock();
        inner
            .by_queue
            .entry(queue)
            .or_default()
            .insert(client.id, client.clone());
        // A resync owed from an earlier subscription is moot: the client reads it anew.
        if let Some(behind) = inner.behind.get_mut(&client.id) {
            behind.queues.remove(&queue);
        }
        ServerMessage::QueueSubscribed { queue }
    }

    /// Stops following a work queue; nothing more is sent for it.
    pub fn unfollow_queue(&self, client: &Client, queue: State) {
        let mut inner = self.lock();
        if let Some(m) = inner.by_queue.get_mut(&queue) {
            m.remove(&client.id);
            if m.is_empty() {
                inner.by_queue.remove(&queue);
            }
        }
        if let Some(behind) = inner.behind.get_mut(&client.id) {
            behind.queues.remove(&queue);
        }
    }

    /// Forgets a socket and everything it followed (closed, dead or ended).
    pub fn remove_client(&self, client_id: u64) {
        let mut inner = self.lock();
        inner.sockets.remove(&client_id);
        inner.behind.remove(&client_id);
        inner.by_incident.retain(|_, m| {
            m.remove(&client_id);
            !m.is_empty()
        });
        inner.by_queue.retain(|_, m| {
            m.remove(&client_id);
            !m.is_empty()
        });
    }

    /// A committed change: `incident.updated` to every subscriber that knows an older
    /// version (remembered for those whose queue is full). Never waits; returns how many
    /// were queued.
    pub fn publish(&self, notice: &IncidentNotice<'_>) -> usize {
        let mut guard = self.lock();
        let Inner {
            by_incident,
            behind,
            ..
        } = &mut *guard;
        let Some(subs) = by_incident.get_mut(&notice.incident_id) else {
            return 0;
        };
        let text = ServerMessage::IncidentUpdated {
            incident_id: notice.incident_id,
            version: notice.version,
            changed: notice.changed.iter().map(|s| (*s).to_owned()).collect(),
        }
        .text();
        let mut sent = 0;
        for sub in subs.values_mut() {
            match sub.known {
                None => sub.pending = sub.pending.max(notice.version),
                Some(k) if k < notice.version => {
                    sub.known = Some(notice.version);
                    let owed = behind
                        .get_mut(&sub.client.id)
                        .and_then(|b| b.incidents.get_mut(&notice.incident_id));
                    // Once something is owed for an incident, later versions join it, so
                    // they cannot overtake it.
                    if let Some(missed) = owed {
                        missed.absorb(notice);
                    } else if sub.client.offer(text.clone()) {
                        sent += 1;
                    } else {
                        sub.client.signals.behind.store(true, Ordering::Release);
                        behind
                            .entry(sub.client.id)
                            .or_default()
                            .incidents
                            .insert(notice.incident_id, Missed::of(notice));
                    }
                }
                Some(_) => {}
            }
        }
        sent
    }

    /// An incident entered a state (and left another): `queue.changed` to the followers of
    /// both queues. Never waits; returns how many were queued.
    pub fn publish_queue(&self, notice: &QueueNotice) -> usize {
        let mut inner = self.lock();
        let mut sent = 0;
        for queue in notice.from.into_iter().chain([notice.to]) {
            if !inner.by_queue.contains_key(&queue) {
                continue;
            }
            let text = ServerMessage::QueueChanged {
                queue,
                incident_id: notice.incident_id,
                version: notice.version,
                state: notice.to,
            }
            .text();
            let (queued, missed) = inner.offer_queue(queue, &text);
            sent += queued;
            for client in missed {
                inner.owe(&client).queues.insert(queue);
            }
        }
        sent
    }

    /// Moves may have been missed (the listener reconnected or fell behind): every queue
    /// follower is told to read its queue again.
    pub fn resync_queues(&self) -> usize {
        let mut inner = self.lock();
        let mut missed = Vec::new();
        let mut sent = 0;
        let queues: Vec<State> = inner.by_queue.keys().copied().collect();
        for queue in queues {
            let text = ServerMessage::QueueResync { queue }.text();
            let (queued, late) = inner.offer_queue(queue, &text);
            sent += queued;
            missed.extend(late.into_iter().map(|client| (client, queue)));
        }
        for (client, queue) in missed {
            inner.owe(&client).queues.insert(queue);
        }
        sent
    }

    /// Queues what `client` missed, as far as its queue has room: the newest version of
    /// each incident (every group that moved) and a `queue.resync` per queue. Called by the
    /// socket's task when it has taken a message off its queue and [`Client::is_behind`].
    pub fn catch_up(&self, client: &Client) {
        let mut inner = self.lock();
        client.signals.behind.store(false, Ordering::Release);
        let Some(mut behind) = inner.behind.remove(&client.id) else {
            return;
        };
        while let Some((incident_id, missed)) = behind.incidents.pop_first() {
            let text = ServerMessage::IncidentUpdated {
                incident_id,
                version: missed.version,
                changed: missed.changed.clone(),
            }
            .text();
            if !client.offer(text) {
                behind.incidents.insert(incident_id, missed);
                break;
            }
        }
        while let Some(queue) = behind.queues.first().copied() {
            if !client.offer(ServerMessage::QueueResync { queue }.text()) {
                break;
            }
            behind.queues.remove(&queue);
        }
        if !behind.incidents.is_empty() || !behind.queues.is_empty() {
            inner.behind.insert(client.id, behind);
            client.signals.behind.store(true, Ordering::Release);
        }
    }

    /// Ends every socket of `user_id` for which `why` (given the profile it was opened with)
    /// names a reason; returns how many.
    pub fn end_sockets_of(&self, user_id: i64, why: impl Fn(Profile) -> Option<Ending>) -> usize {
        let inner = self.lock();
        let mut ended = 0;
        for socket in inner.sockets.values().filter(|s| s.user_id == user_id) {
            if let Some(ending) = why(socket.profile) {
                socket.client.signals.end.send_if_modified(|e| {
                    let first = e.is_none();
                    if first {
                        *e = Some(ending);
                    }
                    first
                });
                ended += 1;
            }
        }
        ended
    }

    /// The users with an open socket on this replica.
    pub fn connected_users(&self) -> Vec<i64> {
        let users: HashSet<i64> = self.lock().sockets.values().map(|s| s.user_id).collect();
        users.into_iter().collect()
    }

    /// Every incident some socket follows (re-read after the listener reconnects).
    pub fn subscribed_incidents(&self) -> Vec<i64> {
        self.lock().by_incident.keys().copied().collect()
    }

    pub fn subscription_count(&self) -> usize {
        self.lock().by_incident.values().map(HashMap::len).sum()
    }

    /// How many (socket, queue) pairs are followed.
    pub fn queue_follower_count(&self) -> usize {
        self.lock().by_queue.values().map(HashMap::len).sum()
    }

    /// Open sockets on this replica.
    pub fn socket_count(&self) -> usize {
        self.lock().sockets.len()
    }
}

impl Missed {
    fn of(notice: &IncidentNotice<'_>) -> Self {
        let mut missed = Missed {
            version: notice.version,
            changed: Vec::new(),
        };
        missed.join_groups(&notice.changed);
        missed
    }

    fn absorb(&mut self, notice: &IncidentNotice<'_>) {
        self.version = self.version.max(notice.version);
        self.join_groups(&notice.changed);
    }

    fn join_groups(&mut self, groups: &[&str]) {
        for g in groups {
            if !self.changed.iter().any(|c| c == g) {
                self.changed.push((*g).to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(rx: &mut mpsc::Receiver<Arc<str>>) -> Option<serde_json::Value> {
        rx.try_recv()
            .ok()
            .map(|t| serde_json::from_str(&t).unwrap())
    }

    fn user(id: i64, profile: Profile) -> CurrentUser {
        CurrentUser {
            id,
            descriptive_name: format!("u{id}"),
            profile,
        }
    }

    fn notice(incident_id: i64, version: i32, changed: &[&'static str]) -> IncidentNotice<'static> {
        IncidentNotice {
            incident_id,
            version,
            changed: changed.to_vec(),
        }
    }

    fn moved(incident_id: i64, version: i32, from: Option<State>, to: State) -> QueueNotice {
        QueueNotice {
            incident_id,
            version,
            from,
            to,
        }
    }

    #[test]
    fn sends_each_version_once_and_only_to_subscribers() {
        let hub = Hub::new(8, WsSettings::default());
        let (a, mut ra) = hub.connect(&user(1, Profile::Tarm));
        let (b, mut rb) = hub.connect(&user(2, Profile::Tarm));
        hub.begin_subscribe(&a, 1);
        hub.publish(&notice(1, 3, &["patient"])); // during the read: remembered, not sent
        assert_eq!(
            hub.finish_subscribe(&a, 1, 2),
            Some(ServerMessage::Subscribed {
                incident_id: 1,
                version: 3
            })
        );
        assert_eq!(hub.publish(&notice(1, 3, &["patient"])), 0, "already known");
        assert_eq!(hub.publish(&notice(1, 4, &["patient"])), 1);
        assert_eq!(
            recv(&mut ra).unwrap(),
            serde_json::json!({"type": "incident.updated", "incident_id": 1, "version": 4,
                               "changed": ["patient"]})
        );
        assert_eq!(hub.publish(&notice(2, 9, &[])), 0);
        assert!(recv(&mut rb).is_none());
        hub.unsubscribe(&a, 1);
        assert_eq!(hub.publish(&notice(1, 5, &[])), 0);
        assert!(recv(&mut ra).is_none());
        let _ = b;
    }

    #[test]
    fn a_full_queue_is_caught_up_with_the_newest_version_and_every_group() {
        let hub = Hub::new(2, WsSettings::default());
        let (slow, mut rs) = hub.connect(&user(1, Profile::Tarm));
        let (fast, mut rf) = hub.connect(&user(2, Profile::Tarm));
        for c in [&slow, &fast] {
            hub.begin_subscribe(c, 7);
            hub.finish_subscribe(c, 7, 1);
        }
        for (v, group) in (2..7).zip(["state", "patient", "state", "conclusion", "state"]) {
            hub.publish(&notice(7, v, &[group]));
            assert_eq!(
                recv(&mut rf).unwrap()["version"],
                v,
                "the fast one gets all"
            );
        }
        assert_eq!(hub.subscription_count(), 2, "nobody is dropped");
        assert!(slow.is_behind());
        // Versions 2 and 3 were queued; 4, 5 and 6 missed.
        assert_eq!(recv(&mut rs).unwrap()["version"], 2);
        hub.catch_up(&slow);
        assert_eq!(recv(&mut rs).unwrap()["version"], 3);
        assert_eq!(
            recv(&mut rs).unwrap(),
            serde_json::json!({"type": "incident.updated", "incident_id": 7, "version": 6,
                               "changed": ["state", "conclusion"]})
        );
        assert!(!slow.is_behind());
        assert_eq!(hub.publish(&notice(7, 6, &["state"])), 0, "never twice");
        assert_eq!(hub.publish(&notice(7, 7, &["state"])), 2);
        assert_eq!(recv(&mut rs).unwrap()["version"], 7);
    }

    #[test]
    fn queue_followers_hear_moves_in_and_out_and_a_resync_when_they_missed_one() {
        let hub = Hub::new(2, WsSettings::default());
        let (reg, mut rr) = hub.connect(&user(1, Profile::MedicoRegulador));
        let (other, mut ro) = hub.connect(&user(2, Profile::OperadorFrota));
        assert_eq!(
            hub.follow_queue(&reg, State::AwaitingRegulation)
                .text()
                .as_ref(),
            r#"{"type":"subscribed","queue":"awaiting_regulation"}"#
        );
        hub.follow_queue(&other, State::Regulated);
        assert_eq!(
            hub.publish_queue(&moved(5, 1, None, State::Registering)),
            0,
            "nobody follows registering"
        );
        hub.publish_queue(&moved(
            5,
            2,
            Some(State::Registering),
            State::AwaitingRegulation,
        ));
        assert_eq!(
            recv(&mut rr).unwrap(),
            serde_json::json!({"type": "queue.changed", "queue": "awaiting_regulation",
                               "incident_id": 5, "version": 2, "state": "awaiting_regulation"})
        );
        assert_eq!(
            hub.publish_queue(&moved(
                5,
                3,
                Some(State::AwaitingRegulation),
                State::Regulated
            )),
            2
        );
        assert_eq!(recv(&mut rr).unwrap()["state"], "regulated");
        assert_eq!(recv(&mut ro).unwrap()["queue"], "regulated");
        // Three moves into a queue of two: the third is owed as a resync, the fourth folded
        // into it.
        for id in 10..14 {
            hub.publish_queue(&moved(
                id,
                2,
                Some(State::Registering),
                State::AwaitingRegulation,
            ));
        }
        assert!(reg.is_behind());
        assert_eq!(recv(&mut rr).unwrap()["incident_id"], 10);
        hub.catch_up(&reg);
        assert_eq!(recv(&mut rr).unwrap()["incident_id"], 11);
        assert_eq!(
            recv(&mut rr).unwrap(),
            serde_json::json!({"type": "queue.resync", "queue": "awaiting_regulation"})
        );
        assert!(recv(&mut rr).is_none());
        hub.unfollow_queue(&reg, State::AwaitingRegulation);
        hub.publish_queue(&moved(
            20,
            2,
            Some(State::Registering),
            State::AwaitingRegulation,
        ));
        assert!(recv(&mut rr).is_none(), "nothing after unsubscribing");
        assert_eq!(hub.queue_follower_count(), 1);
        hub.remove_client(other.id);
        assert_eq!(hub.queue_follower_count(), 0);
    }

    #[test]
    fn a_users_sockets_end_when_their_authority_does() {
        let hub = Hub::default();
        let (a, _ra) = hub.connect(&user(1, Profile::MedicoRegulador));
        let (b, _rb) = hub.connect(&user(2, Profile::OperadorFrota));
        let (mut ea, eb) = (a.ended(), b.ended());
        let now =
            |status, profile| Ending::judge(profile, Some((status, Profile::MedicoRegulador)));
        assert_eq!(hub.end_sockets_of(1, |p| now(ACTIVE, p)), 0);
        assert_eq!(hub.end_sockets_of(2, |p| now(ACTIVE, p)), 1);
        assert_eq!(*eb.borrow(), Some(Ending::ProfileChanged));
        assert!(!ea.has_changed().unwrap());
        assert_eq!(hub.end_sockets_of(1, |p| now("inativo", p)), 1);
        assert_eq!(*ea.borrow_and_update(), Some(Ending::UserDeactivated));
        assert_eq!(
            Ending::judge(Profile::Tarm, None),
            Some(Ending::UserDeleted)
        );
        let mut users = hub.connected_users();
        users.sort();
        assert_eq!(users, [1, 2]);
    }
}
