//! The users that requests authenticate, cached per replica and invalidated on change.
//!
//! A user is loaded on every request or from a cache invalidated on change
//! (docs/dispatch-realtime.md, "Fan-out across replicas"). A trigger (migration 000003)
//! sends `NOTIFY dispatch_users, '<id>'` on every change to a user (and `'*'` on a profile
//! change). The process's one `LISTEN` connection (`listener`) hears it and
//! [`follow`] evicts the entry. The cache answers only while that listener is known to
//! hear: connected, and heard from within its heartbeat and deadline
//! (`common::listen::ListenHealth`; docs/operations.md, "Network faults"). When it is down,
//! deaf (a partition that gives no error) or never started (as in tests), every request reads
//! the database, so a deactivated user is never let in from a stale entry for longer than
//! that bound. Users and logins are held in `moka`
//! caches bounded by entry count, the least recently used going first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use common::listen::{ListenEvent, ListenHealth};
use moka::policy::EvictionPolicy;
use moka::sync::Cache;
use tokio::sync::broadcast;

use crate::domain::user::CurrentUser;

/// More distinct users than a dispatch centre has; past it the least recently used go.
pub const MAX_ENTRIES: u64 = 10_000;
pub const CHANNEL: &str = "dispatch_users";

/// Cheap to clone; clones share the users.
#[derive(Clone)]
pub struct UserCache {
    users: Cache<i64, CurrentUser>,
    /// Logins of the cached users, for identity provider tokens (which name a login, not an
    /// id); an entry goes with its user's.
    logins: Cache<String, i64>,
    live: Arc<AtomicBool>,
    /// The listener's health, once one follows the users ([`UserCache::heard_through`]).
    health: Arc<OnceLock<ListenHealth>>,
}

impl Default for UserCache {
    fn default() -> Self {
        Self::with_capacity(MAX_ENTRIES)
    }
}

/// A `moka` cache of at most `capacity` entries, the least recently used going first.
fn bounded<K, V>(capacity: u64) -> Cache<K, V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(capacity)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

impl UserCache {
    /// At most `capacity` users (and as many logins).
    pub fn with_capacity(capacity: u64) -> Self {
        Self {
            users: bounded(capacity),
            logins: bounded(capacity),
            live: Arc::default(),
            health: Arc::default(),
        }
    }

    /// Trusts the cache only while `health` says its listener hears (the first call wins).
    pub fn heard_through(&self, health: ListenHealth) {
        let _ = self.health.set(health);
    }

    /// The health of the listener the cache follows, once set.
    pub fn listen_health(&self) -> Option<ListenHealth> {
        self.health.get().cloned()
    }

    /// Whether entries may be served: the listener is connected and known to hear.
    fn trusted(&self) -> bool {
        self.live.load(Ordering::Acquire) && self.health.get().is_none_or(ListenHealth::is_hearing)
    }

    pub fn get(&self, id: i64) -> Option<CurrentUser> {
        if !self.trusted() {
            return None;
        }
        self.users.get(&id)
    }

    /// Remembers an active user (only active users are ever cached).
    pub fn put(&self, user: &CurrentUser) {
        if !self.trusted() {
            return;
        }
        self.users.insert(user.id, user.clone());
    }

    /// The cached active user whose login is `login`.
    pub fn get_by_login(&self, login: &str) -> Option<CurrentUser> {
        if !self.trusted() {
            return None;
        }
        let id = self.logins.get(login)?;
        self.get(id)
    }

    /// Remembers an active user and its login.
    pub fn put_with_login(&self, user: &CurrentUser, login: &str) {
        if !self.trusted() {
            return;
        }
        self.put(user);
        self.logins.insert(login.to_owned(), user.id);
    }

    /// Forgets a user and its login (a renamed login is never served for another user).
    pub fn evict(&self, id: i64) {
        self.users.invalidate(&id);
        for (login, user) in &self.logins {
            if user == id {
                self.logins.invalidate(login.as_str());
            }
        }
    }

    pub fn clear(&self) {
        self.users.invalidate_all();
        self.logins.invalidate_all();
    }

    pub fn is_live(&self) -> bool {
        self.trusted()
    }

    /// Serving from the cache is safe only while changes are heard.
    fn set_live(&self, live: bool) {
        if !live {
            self.live.store(false, Ordering::Release);
        }
        // Entries from before (or during) an outage may be stale either way.
        self.clear();
        if live {
            self.live.store(true, Ordering::Release);
        }
    }

    /// Applies one notification payload: a user id, or `*` for everything.
    pub fn apply(&self, payload: &str) {
        match payload.parse::<i64>() {
            Ok(id) => self.evict(id),
            Err(_) => self.clear(),
        }
    }
}

/// Listens for user changes alone, on a connection of its own (tests; `serve` shares the
/// process's one listener instead, see `listener`).
#[cfg(any(test, feature = "test-support"))]
pub async fn listen(database_url: String, cache: UserCache) {
    use common::listen::ListenSettings;
    let (tx, rx) = broadcast::channel(256);
    let settings = ListenSettings {
        application_name: "dispatch-api-users".to_owned(),
        ..ListenSettings::default()
    };
    cache.heard_through(settings.health.clone());
    let handle = common::listen::spawn(database_url, vec![CHANNEL.to_owned()], settings, tx);
    follow(rx, cache).await;
    handle.abort();
}

/// Applies the listener's events to the cache until the listener stops: live while it is
/// connected, everything forgotten whenever anything may have been missed.
pub async fn follow(mut rx: broadcast::Receiver<ListenEvent>, cache: UserCache) {
    loop {
        match rx.recv().await {
            Ok(ListenEvent::Notification { channel, payload }) if channel == CHANNEL => {
                cache.apply(&payload);
            }
            Ok(ListenEvent::Notification { .. }) => {}
            Ok(ListenEvent::Reconnected) => {
                cache.set_live(true);
                tracing::info!("user change listener connected; caching authenticated users");
            }
            Ok(ListenEvent::Disconnected) => {
                tracing::warn!("user change listener lost; authenticating from the database");
                cache.set_live(false);
            }
            Err(broadcast::error::RecvError::Lagged(_)) => cache.clear(),
            Err(broadcast::error::RecvError::Closed) => {
                cache.set_live(false);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::user::Profile;

    fn user(id: i64) -> CurrentUser {
        CurrentUser {
            id,
            descriptive_name: format!("u{id}"),
            profile: Profile::Tarm,
        }
    }

    #[test]
    fn serves_only_while_live_and_forgets_on_notice() {
        let cache = UserCache::default();
        cache.put(&user(1));
        assert!(cache.get(1).is_none(), "not live: nothing cached");
        cache.set_live(true);
        cache.put(&user(1));
        cache.put(&user(2));
        assert_eq!(cache.get(1).map(|u| u.id), Some(1));
        cache.apply("1");
        assert!(cache.get(1).is_none());
        assert!(cache.get(2).is_some());
        cache.apply("*");
        assert!(cache.get(2).is_none());
        cache.put(&user(3));
        cache.set_live(false);
        assert!(cache.get(3).is_none());
    }

    #[test]
    fn a_login_is_served_only_while_its_user_is_cached() {
        let cache = UserCache::default();
        cache.set_live(true);
        cache.put_with_login(&user(5), "joao.costa");
        assert_eq!(cache.get_by_login("joao.costa").map(|u| u.id), Some(5));
        assert!(cache.get_by_login("maria.souza").is_none());
        // The user changed (its login, say): the login goes with it, even once the user is
        // cached again by id.
        cache.apply("5");
        cache.put(&user(5));
        assert!(cache.get_by_login("joao.costa").is_none());
        cache.put_with_login(&user(6), "maria.souza");
        cache.set_live(false);
        assert!(cache.get_by_login("maria.souza").is_none());
    }

    #[test]
    fn the_cache_is_bounded_and_the_least_recently_used_user_goes_first() {
        let cache = UserCache::with_capacity(3);
        cache.set_live(true);
        for id in 1..=3 {
            cache.put(&user(id));
        }
        cache.users.run_pending_tasks();
        assert!(cache.get(1).is_some());
        cache.put(&user(4));
        cache.users.run_pending_tasks();
        assert_eq!(cache.users.entry_count(), 3);
        assert!(cache.get(2).is_none(), "the least recently used is gone");
        assert!(cache.get(1).is_some() && cache.get(4).is_some());
    }
}
