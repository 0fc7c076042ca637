//! Reference data served from memory: the 7,458 health units and the small lists. They
//! change rarely, so a request searches a snapshot instead of the database. The snapshot
//! loads at start (or on first use) and `refresh()` replaces it; the writes of issue 4 call
//! it (and a NOTIFY listener will, on every replica).

use std::sync::{Arc, RwLock};

use common::Problem;
use common::db::{self, Pool};

use crate::search::{NameIndex, Search};
use crate::store::reference;
use crate::views::{
    HealthUnitOption, Lookups, MobileUnitTypeView, ProfessionalTypeView, RefOption,
};

/// One consistent copy of the reference data.
pub struct Snapshot {
    /// Active health units only: an inactive unit is no destination.
    pub health_units: NameIndex<HealthUnitOption>,
    /// All types, name order, with their flag (admin screens list inactive ones).
    pub mobile_unit_types: Vec<MobileUnitTypeView>,
    pub professional_types: Vec<ProfessionalTypeView>,
    /// Active and not deleted, name order.
    pub technical_decision_actions: Vec<RefOption>,
    pub intercurrences: Vec<RefOption>,
}

impl Snapshot {
    pub fn search_health_units(&self, search: &Search) -> Vec<HealthUnitOption> {
        self.health_units
            .search(search)
            .into_iter()
            .cloned()
            .collect()
    }

    pub fn lookups(&self) -> Lookups {
        Lookups {
            mobile_unit_types: self
                .mobile_unit_types
                .iter()
                .filter(|t| t.active)
                .map(|t| RefOption {
                    id: t.id,
                    name: t.name.clone(),
                })
                .collect(),
            technical_decision_actions: self.technical_decision_actions.clone(),
            intercurrences: self.intercurrences.clone(),
            professional_types: self
                .professional_types
                .iter()
                .filter(|t| t.active)
                .map(|t| RefOption {
                    id: t.id,
                    name: t.name.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Default, Clone)]
pub struct Catalog {
    current: Arc<RwLock<Option<Arc<Snapshot>>>>,
}

impl Catalog {
    /// The current snapshot, loading it first if nothing has loaded it yet.
    pub async fn get(&self, pool: &Pool) -> Result<Arc<Snapshot>, Problem> {
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
    pub async fn refresh(&self, pool: &Pool) -> Result<Arc<Snapshot>, Problem> {
        let conn = db::conn(pool).await?;
        let snapshot = Arc::new(
            reference::load_snapshot(&conn)
                .await
                .map_err(db::db_error)?,
        );
        if let Ok(mut slot) = self.current.write() {
            *slot = Some(snapshot.clone());
        }
        Ok(snapshot)
    }
}
