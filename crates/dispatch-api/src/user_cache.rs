//! The users that requests authenticate, cached per replica and invalidated on change.
//!
//! A user is loaded on every request or from a cache invalidated on change
//! (docs/dispatch-realtime.md, "Fan-out across replicas"). A trigger (migration 000003)
//! sends `NOTIFY dispatch_users, '<id>'` on every change to a user (and `'*'` on a profile
//! change). The process's one `LISTEN` connection (`realtime::listener`) hears it and
//! [`follow`] evicts the entry. The cache answers only while that listener is connected:
//! when it is down (or never started, as in tests) every request reads the database, so a
//! deactivated user is never let in from a stale entry.

use common::listen::ListenEvent;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

use crate::domain::user::CurrentUser;

/// More distinct users than a dispatch centre has; past it the cache starts over.
const MAX_ENTRIES: usize = 10_000;
pub const CHANNEL: &str = "dispatch_users";

#[derive(Clone, Default)]
pub struct UserCache {
    users: Arc<RwLock<HashMap<i64, CurrentUser>>>,
    /// Logins of the cached users, for identity provider tokens (which name a login, not an
    /// id); an entry goes with its user's.
    logins: Arc<RwLock<HashMap<String, i64>>>,
    live: Arc<AtomicBool>,
}

impl UserCache {
    pub fn get(&self, id: i64) -> Option<CurrentUser> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        self.users.read().ok()?.get(&id).cloned()
    }

    /// Remembers an active user (only active users are ever cached).
    pub fn put(&self, user: &CurrentUser) {
        if !self.live.load(Ordering::Acquire) {
            return;
        }
        if let Ok(mut users) = self.users.write() {
            if users.len() >= MAX_ENTRIES {
                users.clear();
            }
            users.insert(user.id, user.clone());
        }
    }

    /// The cached active user whose login is `login`.
    pub fn get_by_login(&self, login: &str) -> Option<CurrentUser> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        let id = *self.logins.read().ok()?.get(login)?;
        self.get(id)
    }

    /// Remembers an active user and its login.
    pub fn put_with_login(&self, user: &CurrentUser, login: &str) {
        if !self.live.load(Ordering::Acquire) {
            return;
        }
        self.put(user);
        if let Ok(mut logins) = self.logins.write() {
            if logins.len() >= MAX_ENTRIES {
                logins.clear();
            }
            logins.insert(login.to_owned(), user.id);
        }
    }

    /// Forgets a user and its login (a renamed login is never served for another user).
    pub fn evict(&self, id: i64) {
        if let Ok(mut users) = self.users.write() {
            users.remove(&id);
        }
        if let Ok(mut logins) = self.logins.write() {
            logins.retain(|_, user| *user != id);
        }
    }

    pub fn clear(&self) {
        if let Ok(mut users) = self.users.write() {
            users.clear();
        }
        if let Ok(mut logins) = self.logins.write() {
            logins.clear();
        }
    }

    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
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
/// process's one listener instead, see `realtime::listener`).
#[cfg(any(test, feature = "test-support"))]
pub async fn listen(database_url: String, cache: UserCache) {
    use common::listen::ListenSettings;
    let (tx, rx) = broadcast::channel(256);
    let settings = ListenSettings {
        application_name: "dispatch-api-users".to_owned(),
        ..ListenSettings::default()
    };
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
}
