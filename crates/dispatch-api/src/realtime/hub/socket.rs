//! One socket's state in the hub: its queue, user, subscriptions and what it missed
//! (docs/dispatch-realtime.md, "WebSocket protocol"); `hub` indexes these by incident and by
//! queue.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use actix_web::web::Bytes;
use tokio::sync::watch;

use super::super::authority::Ending;
use super::super::notice::{IncidentNotice, OffloadNotice};
use super::super::outbox::Outbox;
use crate::domain::queue::Queue;
use crate::domain::user::Profile;

/// One socket as its task sees it: its queue of frames (which the connection reads) and the
/// signal of its authority's end.
#[derive(Clone)]
pub struct Client {
    pub id: u64,
    pub(super) outbox: Outbox,
    /// Set once, when the socket's authority ends.
    pub(super) end: Arc<watch::Sender<Option<Ending>>>,
}

impl Client {
    /// Queues an event's frame without waiting; false when the queue is full (the outbox
    /// then marks the socket behind: its task calls [`Hub::catch_up`] once it has room),
    /// or the socket is closing.
    pub(super) fn offer(&self, frame: &Bytes) -> bool {
        self.outbox.offer(frame)
    }

    /// Whether the hub holds something this socket missed.
    pub fn is_behind(&self) -> bool {
        self.outbox.is_behind()
    }

    /// Changes once, when the socket's authority ends.
    pub fn ended(&self) -> watch::Receiver<Option<Ending>> {
        self.end.subscribe()
    }
}

/// One incident a socket follows.
pub(super) struct Subscription {
    /// The last version this socket was told of (or is owed); `None` until its
    /// `subscribed` is sent.
    pub(super) known: Option<i32>,
    /// The highest version announced while the subscription was being read.
    pub(super) pending: i32,
}

/// An `incident.updated` a socket had no room for: the newest version and every group.
pub(super) struct Missed {
    pub(super) version: i32,
    pub(super) changed: Vec<String>,
}

/// What one socket missed while its queue was full.
#[derive(Default)]
pub(super) struct Behind {
    pub(super) incidents: BTreeMap<i64, Missed>,
    pub(super) queues: BTreeSet<Queue>,
}

/// A socket following the offload queue: the alerts it was told of and not told cleared
/// (so each is told once, and a clearing only after its alert), and, while its following
/// is being read, the notices heard meanwhile.
#[derive(Default)]
pub(super) struct OffloadFollow {
    pub(super) told: HashSet<i64>,
    /// `Some` between `begin_follow_offload` and `finish_follow_offload`.
    pub(super) pending: Option<Vec<OffloadNotice>>,
}

impl Behind {
    pub(super) fn is_empty(&self) -> bool {
        self.incidents.is_empty() && self.queues.is_empty()
    }
}

/// Everything the hub knows of one socket.
pub(super) struct Socket {
    pub(super) client: Client,
    pub(super) user_id: i64,
    /// The profile the socket was opened with.
    pub(super) profile: Profile,
    pub(super) incidents: HashMap<i64, Subscription>,
    pub(super) queues: HashSet<Queue>,
    pub(super) offload: Option<OffloadFollow>,
    pub(super) behind: Behind,
}

impl Socket {
    /// Remembers that the socket missed something (its outbox, refusing it, marked it
    /// behind); it will collect it with `catch_up`.
    pub(super) fn owe(&mut self) -> &mut Behind {
        &mut self.behind
    }

    /// A committed change of an incident the socket follows: queued (`frame`) when the
    /// socket knows an older version and has room, remembered when it has none. Whether it
    /// was queued.
    pub(super) fn hear(&mut self, notice: &IncidentNotice<'_>, frame: &Bytes) -> bool {
        let Some(sub) = self.incidents.get_mut(&notice.incident_id) else {
            return false;
        };
        match sub.known {
            None => {
                sub.pending = sub.pending.max(notice.version);
                false
            }
            Some(k) if k < notice.version => {
                sub.known = Some(notice.version);
                // Once something is owed for an incident, later versions join it, so they
                // cannot overtake it.
                if let Some(missed) = self.behind.incidents.get_mut(&notice.incident_id) {
                    missed.absorb(notice);
                    false
                } else if self.client.offer(frame) {
                    true
                } else {
                    self.owe()
                        .incidents
                        .insert(notice.incident_id, Missed::of(notice));
                    false
                }
            }
            Some(_) => false,
        }
    }

    /// A message for the followers of `queue`, unless the socket is already owed a resync of
    /// it (that resync covers this message too); owed when the socket has no room. Whether
    /// it was queued.
    pub(super) fn hear_queue(&mut self, queue: Queue, frame: &Bytes) -> bool {
        if self.behind.queues.contains(&queue) {
            return false;
        }
        if self.client.offer(frame) {
            return true;
        }
        self.owe().queues.insert(queue);
        false
    }
}

/// The sockets by id, and the indexes that find them.
#[derive(Default)]
pub(super) struct Inner {
    pub(super) sockets: HashMap<u64, Socket>,
    /// The sockets following each incident.
    pub(super) by_incident: HashMap<i64, HashSet<u64>>,
    /// The sockets following each queue.
    pub(super) by_queue: HashMap<Queue, HashSet<u64>>,
}

/// Removes `socket` from `key`'s followers, and `key` once nobody follows it.
pub(super) fn unindex<K: std::hash::Hash + Eq>(
    index: &mut HashMap<K, HashSet<u64>>,
    key: &K,
    socket: u64,
) {
    if let Some(followers) = index.get_mut(key) {
        followers.remove(&socket);
        if followers.is_empty() {
            index.remove(key);
        }
    }
}

impl Inner {
    /// Offers `frame` to every follower of `queue` (see [`Socket::hear_queue`]); how many
    /// took it.
    pub(super) fn offer_queue(&mut self, queue: Queue, frame: &Bytes) -> usize {
        let Some(followers) = self.by_queue.get(&queue) else {
            return 0;
        };
        let mut sent = 0;
        for id in followers {
            if let Some(socket) = self.sockets.get_mut(id)
                && socket.hear_queue(queue, frame)
            {
                sent += 1;
            }
        }
        sent
    }
}

impl Missed {
    pub(super) fn of(notice: &IncidentNotice<'_>) -> Self {
        let mut missed = Missed {
            version: notice.version,
            changed: Vec::new(),
        };
        missed.join_groups(&notice.changed);
        missed
    }

    pub(super) fn absorb(&mut self, notice: &IncidentNotice<'_>) {
        self.version = self.version.max(notice.version);
        self.join_groups(&notice.changed);
    }

    pub(super) fn join_groups(&mut self, groups: &[&str]) {
        for g in groups {
            if !self.changed.iter().any(|c| c == g) {
                self.changed.push((*g).to_owned());
            }
        }
    }
}
