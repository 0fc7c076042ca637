//! Reference data served from memory: the 7,458 health units and the small lists. They
//! change rarely, so a request searches a snapshot instead of the database. The snapshot
//! loads at start (or on first use) and `refresh()` replaces it whenever a trigger announces
//! a change to a reference table (`listener` follows that channel on every
//! replica; docs/dispatch-realtime.md, "Fan-out across replicas").

use std::sync::{Arc, RwLock};

use common::db::Pool;

use crate::error::Result;
use crate::store::reference::{self, Snapshot};

#[derive(Default, Clone)]
pub struct Catalog {
    current: Arc<RwLock<Option<Arc<Snapshot>>>>,
}

impl Catalog {
    /// The current snapshot, loading it first if nothing has loaded it yet.
    pub async fn get(&self, pool: &Pool) -> Result<Arc<Snapshot>> {
        if let Some(s) = self.peek() {
            return Ok(s);
        }
        self.refresh(pool).await
    }

    fn peek(&self) -> Option<Arc<Snapshot>> {
        self.current.read().ok().and_then(|s| s.clone())
    }

    /// Reloads everything from the database and swaps the snapshot in one step, so a
    /// request sees either the old lists or the new ones, never a mix.
    pub async fn refresh(&self, pool: &Pool) -> Result<Arc<Snapshot>> {
        let conn = pool.get().await?;
        let snapshot = Arc::new(reference::load_snapshot(&conn).await?);
        if let Ok(mut slot) = self.current.write() {
            *slot = Some(snapshot.clone());
        }
        Ok(snapshot)
    }
}
