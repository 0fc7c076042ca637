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
//!
//! All a socket's state is one [`Socket`] (its queue, user, subscriptions and what it
//! missed), kept by socket id; the hub indexes the sockets by incident and by queue to find
//! the followers of a change.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::authority::Ending;
use super::notice::OffloadNotice;
use super::notice::{FleetNotice, IncidentNotice, MineNotice, QueueNotice};
use super::outbox::Outbox;
use super::protocol::ServerMessage;
use super::settings::WsSettings;
use crate::domain::call::CallEventKind;
use crate::domain::queue::Queue;
use crate::domain::user::{CurrentUser, Profile};
use crate::store::calls::CallNotice;
use crate::views::OffloadAlert;

mod socket;
#[cfg(test)]
mod tests;

pub use socket::Client;
use socket::{Behind, Inner, OffloadFollow, Socket, Subscription, unindex};

/// Events a socket may have waiting before the hub starts remembering what it misses.
pub const QUEUE_CAPACITY: usize = 64;

/// Cheap to clone; one per process.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    next_id: Arc<AtomicU64>,
    closing: Arc<watch::Sender<bool>>,
    /// Whether this process's listener is connected and has resynchronised the sockets
    /// since (`listener`): from then on every committed change reaches them.
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

    /// Registers a new socket of `user`: its handle and its outbox (which the connection
    /// reads: [`Outbox::body`]).
    pub fn connect(&self, user: &CurrentUser) -> (Client, Outbox) {
        let outbox = Outbox::new(self.queue_capacity);
        let client = Client {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            outbox: outbox.clone(),
            end: Arc::new(watch::channel(None).0),
        };
        self.lock().sockets.insert(
            client.id,
            Socket {
                client: client.clone(),
                user_id: user.id,
                profile: user.profile,
                incidents: HashMap::new(),
                queues: HashSet::new(),
                offload: None,
                behind: Behind::default(),
            },
        );
        (client, outbox)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// First half of a subscription: from now on announcements are remembered for it.
    pub fn begin_subscribe(&self, client: &Client, incident_id: i64) {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let Some(socket) = inner.sockets.get_mut(&client.id) else {
            return;
        };
        socket.incidents.entry(incident_id).or_insert(Subscription {
            known: None,
            pending: 0,
        });
        inner
            .by_incident
            .entry(incident_id)
            .or_default()
            .insert(client.id);
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
        let socket = inner.sockets.get_mut(&client.id)?;
        let sub = socket.incidents.get_mut(&incident_id)?;
        let version = read.max(sub.pending).max(sub.known.unwrap_or(0));
        sub.known = Some(version);
        // Whatever was owed for it is covered by the answer.
        socket.behind.incidents.remove(&incident_id);
        Some(ServerMessage::Subscribed {
            incident_id,
            version,
        })
    }

    /// Forgets one subscription; nothing more is sent for it.
    pub fn unsubscribe(&self, client: &Client, incident_id: i64) {
        let mut inner = self.lock();
        if let Some(socket) = inner.sockets.get_mut(&client.id) {
            socket.incidents.remove(&incident_id);
            socket.behind.incidents.remove(&incident_id);
        }
        unindex(&mut inner.by_incident, &incident_id, client.id);
    }

    /// Follows a work queue: every move into or out of it is sent from now on. The caller
    /// checks that the profile may (`domain::queue`).
    pub fn follow_queue(&self, client: &Client, queue: Queue) -> ServerMessage {
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let Some(socket) = inner.sockets.get_mut(&client.id) {
            socket.queues.insert(queue);
            // A resync owed from an earlier subscription is moot: the client reads it anew.
            socket.behind.queues.remove(&queue);
            inner.by_queue.entry(queue).or_default().insert(client.id);
        }
        ServerMessage::QueueSubscribed { queue }
    }

    /// Stops following a work queue; nothing more is sent for it.
    pub fn unfollow_queue(&self, client: &Client, queue: Queue) {
        let mut inner = self.lock();
        if let Some(socket) = inner.sockets.get_mut(&client.id) {
            socket.queues.remove(&queue);
            socket.behind.queues.remove(&queue);
            if queue == Queue::OFFLOAD {
                socket.offload = None;
            }
        }
        unindex(&mut inner.by_queue, &queue, client.id);
    }

    /// First half of following the offload queue: from now on its notices are kept for the
    /// socket until [`Hub::finish_follow_offload`] gives it the alerts open then.
    pub fn begin_follow_offload(&self, client: &Client) {
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let Some(socket) = inner.sockets.get_mut(&client.id) {
            socket.queues.insert(Queue::OFFLOAD);
            socket.behind.queues.remove(&Queue::OFFLOAD);
            socket.offload = Some(OffloadFollow {
                told: HashSet::new(),
                pending: Some(Vec::new()),
            });
            inner
                .by_queue
                .entry(Queue::OFFLOAD)
                .or_default()
                .insert(client.id);
        }
    }

    /// Second half, once the alerts open are read: the answer (`subscribed`, then an
    /// `offload.alert` per unit past its target, the notices heard meanwhile applied on top
    /// of what was read, so none is lost or told twice).
    pub fn finish_follow_offload(
        &self,
        client: &Client,
        open: Vec<OffloadAlert>,
    ) -> Vec<ServerMessage> {
        let mut inner = self.lock();
        let mut answer = vec![ServerMessage::QueueSubscribed {
            queue: Queue::OFFLOAD,
        }];
        let Some(follow) = inner
            .sockets
            .get_mut(&client.id)
            .and_then(|s| s.offload.as_mut())
        else {
            return answer;
        };
        let mut alerts: Vec<OffloadAlert> = open;
        for notice in follow.pending.take().unwrap_or_default() {
            match notice {
                OffloadNotice::Alert(a) => {
                    if !alerts
                        .iter()
                        .any(|x| x.hold.dispatch_id == a.hold.dispatch_id)
                    {
                        alerts.push(a);
                    }
                }
                OffloadNotice::Cleared(c) => {
                    alerts.retain(|x| x.hold.dispatch_id != c.hold.dispatch_id)
                }
            }
        }
        follow.told = alerts.iter().map(|a| a.hold.dispatch_id).collect();
        answer.extend(
            alerts
                .into_iter()
                .map(|a| ServerMessage::OffloadAlert(Box::new(a))),
        );
        answer
    }

    /// An alert raised or cleared (any replica's): to every follower of the offload queue,
    /// an alert once, a clearing only to those told its alert. Never waits; returns how many
    /// were queued.
    pub fn publish_offload(&self, notice: &OffloadNotice) -> usize {
        let mut guard = self.lock();
        let Inner {
            sockets, by_queue, ..
        } = &mut *guard;
        let Some(followers) = by_queue.get(&Queue::OFFLOAD) else {
            return 0;
        };
        let frame = ServerMessage::offload(notice).frame();
        let id = notice.dispatch_id();
        let mut sent = 0;
        for socket_id in followers {
            let Some(socket) = sockets.get_mut(socket_id) else {
                continue;
            };
            let Some(follow) = socket.offload.as_mut() else {
                continue;
            };
            if let Some(pending) = follow.pending.as_mut() {
                pending.push(notice.clone());
                continue;
            }
            let tell = match notice {
                OffloadNotice::Alert(_) => follow.told.insert(id),
                OffloadNotice::Cleared(_) => follow.told.remove(&id),
            };
            if tell && socket.hear_queue(Queue::OFFLOAD, &frame) {
                sent += 1;
            }
        }
        sent
    }

    /// Forgets a socket and everything it followed (closed, dead or ended).
    pub fn remove_client(&self, client_id: u64) {
        let mut inner = self.lock();
        let Some(socket) = inner.sockets.remove(&client_id) else {
            return;
        };
        for incident_id in socket.incidents.keys() {
            unindex(&mut inner.by_incident, incident_id, client_id);
        }
        for queue in &socket.queues {
            unindex(&mut inner.by_queue, queue, client_id);
        }
    }

    /// A committed change: `incident.updated` to every subscriber that knows an older
    /// version (remembered for those whose queue is full). Never waits; returns how many
    /// were queued.
    pub fn publish(&self, notice: &IncidentNotice<'_>) -> usize {
        let mut guard = self.lock();
        let Inner {
            sockets,
            by_incident,
            ..
        } = &mut *guard;
        let Some(followers) = by_incident.get(&notice.incident_id) else {
            return 0;
        };
        // Encoded once; every follower's outbox holds the same bytes.
        let frame = ServerMessage::IncidentUpdated {
            incident_id: notice.incident_id,
            version: notice.version,
            changed: notice.changed.iter().map(|s| (*s).to_owned()).collect(),
        }
        .frame();
        let mut sent = 0;
        for id in followers {
            if let Some(socket) = sockets.get_mut(id)
                && socket.hear(notice, &frame)
            {
                sent += 1;
            }
        }
        sent
    }

    /// An incident entered a state (and left another): `queue.changed` to the followers of
    /// both queues. Never waits; returns how many were queued.
    pub fn publish_queue(&self, notice: &QueueNotice) -> usize {
        let mut inner = self.lock();
        let mut sent = 0;
        for state in notice.from.into_iter().chain([notice.to]) {
            let queue = Queue::Work(state);
            if !inner.by_queue.contains_key(&queue) {
                continue;
            }
            let frame = ServerMessage::QueueChanged {
                queue: state,
                incident_id: notice.incident_id,
                version: notice.version,
                state: notice.to,
            }
            .frame();
            sent += inner.offer_queue(queue, &frame);
        }
        sent
    }

    /// An incident came to some users or left them: `queue.changed` (`held` true or false)
    /// to each of their sockets following `mine`. Never waits; returns how many were queued.
    pub fn publish_mine(&self, notice: &MineNotice) -> usize {
        let mut guard = self.lock();
        let Inner {
            sockets, by_queue, ..
        } = &mut *guard;
        let Some(followers) = by_queue.get(&Queue::MINE) else {
            return 0;
        };
        let frame = |held: bool| {
            ServerMessage::MineChanged {
                queue: Queue::MINE,
                incident_id: notice.incident_id,
                version: notice.version,
                state: notice.state,
                held,
            }
            .frame()
        };
        let (came, left) = (frame(true), frame(false));
        let mut sent = 0;
        for id in followers {
            let Some(socket) = sockets.get_mut(id) else {
                continue;
            };
            let frame = if notice.came.contains(&socket.user_id) {
                &came
            } else if notice.left.contains(&socket.user_id) {
                &left
            } else {
                continue;
            };
            if socket.hear_queue(Queue::MINE, frame) {
                sent += 1;
            }
        }
        sent
    }

    /// A unit's step (any replica's): `unit.step` to every follower of the fleet, or
    /// `queue.resync` when the step did not fit in its notice. Never waits; returns how
    /// many were queued.
    pub fn publish_fleet(&self, notice: &FleetNotice) -> usize {
        let mut inner = self.lock();
        if !inner.by_queue.contains_key(&Queue::FLEET) {
            return 0;
        }
        let frame = match notice {
            FleetNotice::Step(step) => ServerMessage::UnitStep(step.clone()).frame(),
            FleetNotice::Resync => ServerMessage::QueueResync {
                queue: Queue::FLEET,
            }
            .frame(),
        };
        inner.offer_queue(Queue::FLEET, &frame)
    }

    /// A call's event (any replica's, docs/dispatch-realtime.md, "The telephone"): to every
    /// follower of `calls`, and an answer also to the answering user's sockets following
    /// `mine`. Never waits; returns how many were queued.
    pub fn publish_call(&self, notice: &CallNotice) -> usize {
        let mut inner = self.lock();
        let frame = ServerMessage::call(notice.event, Queue::CALLS, notice.call.clone()).frame();
        let mut sent = inner.offer_queue(Queue::CALLS, &frame);
        let (CallEventKind::Answered, Some(user)) = (notice.event, notice.call.answered_user_id)
        else {
            return sent;
        };
        let Inner {
            sockets, by_queue, ..
        } = &mut *inner;
        let Some(followers) = by_queue.get(&Queue::MINE) else {
            return sent;
        };
        let mine = ServerMessage::call(notice.event, Queue::MINE, notice.call.clone()).frame();
        for id in followers {
            if let Some(socket) = sockets.get_mut(id)
                && socket.user_id == user
                && socket.hear_queue(Queue::MINE, &mine)
            {
                sent += 1;
            }
        }
        sent
    }

    /// Moves may have been missed (the listener reconnected or fell behind): every queue
    /// follower is told to read its queue again.
    pub fn resync_queues(&self) -> usize {
        let mut inner = self.lock();
        let queues: Vec<Queue> = inner.by_queue.keys().copied().collect();
        queues
            .into_iter()
            .map(|queue| inner.offer_queue(queue, &ServerMessage::QueueResync { queue }.frame()))
            .sum()
    }

    /// Queues what `client` missed, as far as its queue has room: the newest version of
    /// each incident (every group that moved) and a `queue.resync` per queue. Called by the
    /// socket's task when its outbox has room again and [`Client::is_behind`].
    pub fn catch_up(&self, client: &Client) {
        let mut inner = self.lock();
        client.outbox.set_behind(false);
        let Some(socket) = inner.sockets.get_mut(&client.id) else {
            return;
        };
        let behind = &mut socket.behind;
        while let Some((incident_id, missed)) = behind.incidents.pop_first() {
            let frame = ServerMessage::IncidentUpdated {
                incident_id,
                version: missed.version,
                changed: missed.changed.clone(),
            }
            .frame();
            if !client.offer(&frame) {
                behind.incidents.insert(incident_id, missed);
                break;
            }
        }
        while let Some(queue) = behind.queues.first().copied() {
            if !client.offer(&ServerMessage::QueueResync { queue }.frame()) {
                break;
            }
            behind.queues.remove(&queue);
        }
        if !behind.is_empty() {
            client.outbox.set_behind(true);
        }
    }

    /// Ends every socket of `user_id` for which `why` (given the profile it was opened with)
    /// names a reason; returns how many.
    pub fn end_sockets_of(&self, user_id: i64, why: impl Fn(Profile) -> Option<Ending>) -> usize {
        let inner = self.lock();
        let mut ended = 0;
        for socket in inner.sockets.values().filter(|s| s.user_id == user_id) {
            if let Some(ending) = why(socket.profile) {
                socket.client.end.send_if_modified(|e| {
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
        self.lock().by_incident.values().map(HashSet::len).sum()
    }

    /// How many (socket, queue) pairs are followed.
    pub fn queue_follower_count(&self) -> usize {
        self.lock().by_queue.values().map(HashSet::len).sum()
    }

    /// Open sockets on this replica.
    pub fn socket_count(&self) -> usize {
        self.lock().sockets.len()
    }
}
