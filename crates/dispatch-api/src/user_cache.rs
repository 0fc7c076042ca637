//! The users that requests authenticate, cached per replica and invalidated on change.
//!
//! CONTRACT: the user is loaded on every request "or from a cache invalidated on change". A
//! trigger (migration 000003) sends `NOTIFY dispatch_users, '<id>'` on every change to a user
//! (and `'*'` on a profile change); [`listen`] keeps one connection per replica listening and
//! evicts. The cache answers only while that listener is connected: when it is down (or
//! never started, as in tests) every request reads the database, so a deactivated user is
//! never let in from a stale entry.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures_util::StreamExt;

use crate::auth::CurrentUser;

/// More distinct users than a dispatch centre has; past it the cache starts over.
const MAX_ENTRIES: usize = 10_000;
pub const CHANNEL: &str = "dispatch_users";

#[derive(Clone, Default)]
pub struct UserCache {
    users: Arc<RwLock<HashMap<i64, CurrentUser>>>,
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

    pub fn evict(&self, id: i64) {
        if let Ok(mut users) = self.users.write() {
            users.remove(&id);
        }
    }

    pub fn clear(&self) {
        if let Ok(mut users) = self.users.write() {
            users.clear();
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

/// Listens for user changes until the process ends, reconnecting after a failure. Spawn it
/// once per process (`serve` does).
pub async fn listen(database_url: String, cache: UserCache) {
    loop {
        if let Err(e) = listen_once(&database_url, &cache).await {
            tracing::warn!(error = %e, "user change listener lost; authenticating from the database");
        }
        cache.set_live(false);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn listen_once(database_url: &str, cache: &UserCache) -> anyhow::Result<()> {
    let mut conn = AsyncPgConnection::establish(database_url).await?;
    conn.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    cache.set_live(true);
    tracing::info!("user change listener connected; caching authenticated users");
    let mut stream = std::pin::pin!(conn.notifications_stream());
    while let Some(n) = stream.next().await {
        cache.apply(&n?.payload);
    }
    anyhow::bail!("the notification stream ended")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Profile;

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
}
