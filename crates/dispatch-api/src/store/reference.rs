//! Reference lists, the fleet and the unallocated staff.

use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::dispatch::Status;
use crate::schema::dispatch::*;
use crate::search::{NameIndex, Search, fold};
use crate::store::search_order;
use crate::store::{opt_ref, ref_option, user_option};
use crate::views::*;

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
        let types = self.mobile_unit_types.iter();
        let professions = self.professional_types.iter();
        Lookups {
            mobile_unit_types: active(types.map(|t| (t.id, &t.name, t.active))),
            technical_decision_actions: self.technical_decision_actions.clone(),
            intercurrences: self.intercurrences.clone(),
            professional_types: active(professions.map(|t| (t.id, &t.name, t.active))),
        }
    }
}

/// The active entries of a list, as `{id, name}` options.
fn active<'a>(items: impl Iterator<Item = (i32, &'a String, bool)>) -> Vec<RefOption> {
    items
        .filter(|(_, _, active)| *active)
        .map(|(id, name, _)| RefOption {
            id,
            name: name.clone(),
        })
        .collect()
}

/// Five small statements; runs at start and on `Catalog::refresh`, never per request.
pub async fn load_snapshot(mut conn: &AsyncPgConnection) -> Result<Snapshot, Error> {
    let units: Vec<(i64, String, String, String)> = health_units::table
        .filter(health_units::active)
        .select((
            health_units::id,
            health_units::name,
            health_units::city,
            health_units::uf,
        ))
        .load(&mut conn)
        .await?;
    let health_units = NameIndex::new(
        units
            .into_iter()
            .map(|(id, name, city, uf)| HealthUnitOption { id, name, city, uf })
            .collect(),
        |h| h.name.as_str(),
    );
    let mobile_unit_types = mobile_unit_types::table
        .select((
            mobile_unit_types::id,
            mobile_unit_types::name,
            mobile_unit_types::description,
            mobile_unit_types::active,
        ))
        .load::<(i32, String, String, bool)>(&mut conn)
        .await?
        .into_iter()
        .map(|(id, name, description, active)| MobileUnitTypeView {
            id,
            name,
            description,
            active,
        })
        .collect();
    let professional_types = professional_types::table
        .select((
            professional_types::id,
            professional_types::name,
            professional_types::active,
        ))
        .load::<(i32, String, bool)>(&mut conn)
        .await?
        .into_iter()
        .map(|(id, name, active)| ProfessionalTypeView { id, name, active })
        .collect();
    let technical_decision_actions = technical_decision_actions::table
        .filter(
            technical_decision_actions::active.and(technical_decision_actions::deleted.eq(false)),
        )
        .select((
            technical_decision_actions::id,
            technical_decision_actions::name,
        ))
        .load(&mut conn)
        .await?
        .into_iter()
        .map(ref_option)
        .collect();
    let intercurrences = intercurrences::table
        .filter(intercurrences::active.and(intercurrences::deleted.eq(false)))
        .select((intercurrences::id, intercurrences::name))
        .load(&mut conn)
        .await?
        .into_iter()
        .map(ref_option)
        .collect();
    // Name order by folded name, like every list: independent of the database's locale.
    let mut mobile_unit_types: Vec<MobileUnitTypeView> = mobile_unit_types;
    mobile_unit_types.sort_by_cached_key(|t| (fold(&t.name), t.id));
    let mut professional_types: Vec<ProfessionalTypeView> = professional_types;
    professional_types.sort_by_cached_key(|t| (fold(&t.name), t.id));
    let mut technical_decision_actions: Vec<RefOption> = technical_decision_actions;
    technical_decision_actions.sort_by_cached_key(|t| (fold(&t.name), t.id));
    let mut intercurrences: Vec<RefOption> = intercurrences;
    intercurrences.sort_by_cached_key(|t| (fold(&t.name), t.id));
    Ok(Snapshot {
        health_units,
        mobile_unit_types,
        professional_types,
        technical_decision_actions,
        intercurrences,
    })
}

/// `GET /mobile-unit`: all units, or only the active ones.
pub async fn mobile_units(
    mut conn: &AsyncPgConnection,
    active_only: bool,
) -> Result<Vec<MobileUnitView>, Error> {
    let mut query = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .select((
            mobile_units::id,
            mobile_units::name,
            mobile_units::plate,
            mobile_units::base,
            mobile_units::active,
            mobile_unit_types::id,
            mobile_unit_types::name,
        ))
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .into_boxed();
    if active_only {
        query = query.filter(mobile_units::active);
    }
    Ok(query
        .load::<(i64, String, String, String, bool, i32, String)>(&mut conn)
        .await?
        .into_iter()
        .map(
            |(id, name, plate, base, active, type_id, type_name)| MobileUnitView {
                id,
                name,
                plate,
                base,
                active,
                unit_type: RefOption {
                    id: type_id,
                    name: type_name,
                },
            },
        )
        .collect())
}

/// Which units `GET /mobile-unit/options` lists, besides being active.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitFilter {
    /// Only units with no unreleased dispatch.
    pub available_only: bool,
    /// Only units of this vehicle type.
    pub type_id: Option<i32>,
}

/// A unit's dispatch that is not released: at most one per unit (the partial unique index
/// `dispatches_unit_busy`, which also serves this join).
macro_rules! current_dispatch_of_unit {
    () => {
        dispatches::table.on(dispatches::mobile_unit_id
            .eq(mobile_units::id)
            .and(dispatches::status.ne(Status::Released)))
    };
}

/// `GET /mobile-unit/options`: active units, `{id, name, available}`, by name; one
/// statement.
pub async fn mobile_unit_options(
    mut conn: &AsyncPgConnection,
    filter: UnitFilter,
) -> Result<Vec<MobileUnitOption>, Error> {
    let mut query = mobile_units::table
        .left_join(current_dispatch_of_unit!())
        .filter(mobile_units::active)
        .select((
            mobile_units::id,
            mobile_units::name,
            dispatches::id.nullable().is_null(),
        ))
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .into_boxed();
    if filter.available_only {
        query = query.filter(dispatches::id.nullable().is_null());
    }
    if let Some(t) = filter.type_id {
        query = query.filter(mobile_units::type_id.eq(t));
    }
    Ok(query
        .load::<(i64, String, bool)>(&mut conn)
        .await?
        .into_iter()
        .map(|(id, name, available)| MobileUnitOption {
            id,
            name,
            available,
        })
        .collect())
}

/// One row of the fleet board.
#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_units, check_for_backend(diesel::pg::Pg))]
struct BoardRow {
    id: i64,
    name: String,
    base: String,
    #[diesel(select_expression = (mobile_unit_types::id, mobile_unit_types::name))]
    unit_type: (i32, String),
    #[diesel(select_expression = (
        dispatches::id,
        dispatches::status,
        dispatches::assigned_at,
        incidents::id,
        incidents::number,
    ).nullable())]
    dispatch: Option<(i64, Status, chrono::DateTime<chrono::Utc>, i64, String)>,
}

/// `GET /mobile-unit/board`: every active unit with its type, base and the dispatch it is
/// on (or none: free), by name; one statement.
pub async fn fleet_board(mut conn: &AsyncPgConnection) -> Result<Vec<FleetBoardUnit>, Error> {
    let rows: Vec<BoardRow> = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .left_join(current_dispatch_of_unit!())
        .left_join(incidents::table.on(incidents::id.eq(dispatches::incident_id)))
        .filter(mobile_units::active)
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .select(BoardRow::as_select())
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| FleetBoardUnit {
            id: r.id,
            name: r.name,
            base: r.base,
            unit_type: ref_option(r.unit_type),
            dispatch: r
                .dispatch
                .map(
                    |(id, status, assigned_at, incident_id, number)| CurrentDispatch {
                        id,
                        status,
                        assigned_at,
                        incident: IncidentRef {
                            id: incident_id,
                            number,
                        },
                    },
                ),
        })
        .collect())
}

/// `GET /unallocated`: one page of active staff without a post, in name order, and the total.
/// One statement (the total is a window over the same rows); a page past the end costs a
/// second one to count.
pub async fn unallocated_page(
    mut conn: &AsyncPgConnection,
    exclude_user: Option<i64>,
    page: i64,
    page_size: i64,
) -> Result<(Vec<UnallocatedEntry>, i64), Error> {
    let base = || {
        let mut q = unallocated::table
            .inner_join(users::table.left_join(professional_types::table))
            .filter(users::status.eq(crate::domain::user::ACTIVE))
            .into_boxed();
        if let Some(me) = exclude_user {
            q = q.filter(unallocated::user_id.ne(me));
        }
        q
    };
    type Row = (
        i64,
        i64,
        String,
        Option<i32>,
        Option<String>,
        String,
        chrono::DateTime<chrono::Utc>,
        i64,
    );
    let rows: Vec<Row> = base()
        .select((
            unallocated::id,
            users::id,
            users::descriptive_name,
            professional_types::id.nullable(),
            professional_types::name.nullable(),
            unallocated::reason,
            unallocated::since,
            diesel::dsl::sql::<diesel::sql_types::BigInt>("count(*) over ()"),
        ))
        .order_by((search_order(users::descriptive_name), users::id))
        .limit(page_size)
        .offset((page - 1) * page_size)
        .load(&mut conn)
        .await?;
    let total = match <[_]>::first(&rows) {
        Some(r) => r.7,
        None => base().count().get_result(&mut conn).await?,
    };
    let items = rows
        .into_iter()
        .map(
            |(id, user_id, name, pt_id, pt_name, reason, since, _)| UnallocatedEntry {
                id,
                user: user_option((user_id, name)),
                professional_type: opt_ref(pt_id, pt_name),
                reason,
                since,
            },
        )
        .collect();
    Ok((items, total))
}
