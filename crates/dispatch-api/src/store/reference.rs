//! Reference lists, the fleet and the unallocated staff.

use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::dispatch::Status;
use crate::schema::dispatch::*;
use crate::search::{NameIndex, Search, fold};
use crate::store::dispatches::DispatchRow;
use crate::store::read::*;
use crate::store::search_order;
use crate::store::{opt_ref, ref_option};

/// One consistent copy of the reference data.
pub struct Snapshot {
    /// Active health units only: an inactive unit is no destination. Each with its JSON,
    /// so a search copies bytes instead of serialising 20 units, and its folded city.
    pub health_units: NameIndex<HealthUnitEntry>,
    /// All types, name order, with their flag (admin screens list inactive ones).
    pub mobile_unit_types: Vec<MobileUnitTypeView>,
    pub professional_types: Vec<ProfessionalTypeView>,
    /// Active and not deleted, name order.
    pub technical_decision_actions: Vec<RefOption>,
    pub intercurrences: Vec<RefOption>,
    /// Active occurrence types, name order: what `occurrence_type` may name.
    pub occurrence_types: Vec<RefOption>,
}

/// A health unit of the snapshot: its option, serialised, and its city folded (what the
/// `city` filter compares).
pub struct HealthUnitEntry {
    pub unit: Serialised<HealthUnitOption>,
    city: String,
}

impl Snapshot {
    /// The JSON array of the health units `search` finds (`GET /health-unit`'s body); with
    /// `city` (folded), only that city's.
    pub fn search_health_units(&self, search: &Search, city: Option<&str>) -> Vec<u8> {
        let found = self
            .health_units
            .search(search, |h| city.is_none_or(|c| h.city == c));
        json_array(found.iter().map(|h| &h.unit))
    }

    pub fn lookups(&self) -> Lookups {
        let types = self.mobile_unit_types.iter();
        let professions = self.professional_types.iter();
        Lookups {
            vehicle_types: active(types.map(|t| (t.id, &t.name, t.active))),
            technical_decision_actions: self.technical_decision_actions.clone(),
            intercurrences: self.intercurrences.clone(),
            occurrence_types: self.occurrence_types.clone(),
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

#[derive(Queryable, Selectable)]
#[diesel(table_name = health_units, check_for_backend(diesel::pg::Pg))]
struct HealthUnitRow {
    id: i64,
    name: String,
    city: String,
    uf: String,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_unit_types, check_for_backend(diesel::pg::Pg))]
struct MobileUnitTypeRow {
    id: i32,
    name: String,
    description: String,
    active: bool,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = professional_types, check_for_backend(diesel::pg::Pg))]
struct ProfessionalTypeRow {
    id: i32,
    name: String,
    active: bool,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = technical_decision_actions, check_for_backend(diesel::pg::Pg))]
struct ActionRow {
    id: i32,
    name: String,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = intercurrences, check_for_backend(diesel::pg::Pg))]
struct IntercurrenceRow {
    id: i32,
    name: String,
}

/// Six small statements; runs at start and on `Catalog::refresh`, never per request.
pub async fn load_snapshot(mut conn: &AsyncPgConnection) -> Result<Snapshot, Error> {
    let units: Vec<HealthUnitRow> = health_units::table
        .filter(health_units::active)
        .select(HealthUnitRow::as_select())
        .load(&mut conn)
        .await?;
    let health_units = NameIndex::new(
        units
            .into_iter()
            .map(|u| HealthUnitEntry {
                city: fold(&u.city),
                unit: Serialised::new(HealthUnitOption {
                    id: u.id,
                    name: u.name,
                    city: u.city,
                    uf: u.uf,
                }),
            })
            .collect(),
        |h| h.unit.value.name.as_str(),
    );
    let mut mobile_unit_types: Vec<MobileUnitTypeView> = mobile_unit_types::table
        .select(MobileUnitTypeRow::as_select())
        .load(&mut conn)
        .await?
        .into_iter()
        .map(|t| MobileUnitTypeView {
            id: t.id,
            name: t.name,
            description: t.description,
            active: t.active,
        })
        .collect();
    let mut professional_types: Vec<ProfessionalTypeView> = professional_types::table
        .select(ProfessionalTypeRow::as_select())
        .load(&mut conn)
        .await?
        .into_iter()
        .map(|t| ProfessionalTypeView {
            id: t.id,
            name: t.name,
            active: t.active,
        })
        .collect();
    let mut technical_decision_actions: Vec<RefOption> = technical_decision_actions::table
        .filter(
            technical_decision_actions::active.and(technical_decision_actions::deleted.eq(false)),
        )
        .select(ActionRow::as_select())
        .load(&mut conn)
        .await?
        .into_iter()
        .map(|a| RefOption {
            id: a.id,
            name: a.name,
        })
        .collect();
    let mut intercurrences: Vec<RefOption> = intercurrences::table
        .filter(intercurrences::active.and(intercurrences::deleted.eq(false)))
        .select(IntercurrenceRow::as_select())
        .load(&mut conn)
        .await?
        .into_iter()
        .map(|i| RefOption {
            id: i.id,
            name: i.name,
        })
        .collect();
    let mut occurrence_types: Vec<RefOption> = occurrence_types::table
        .filter(occurrence_types::active)
        .select((occurrence_types::id, occurrence_types::name))
        .load::<(i32, String)>(&mut conn)
        .await?
        .into_iter()
        .map(ref_option)
        .collect();
    // Name order by folded name, like every list: independent of the database's locale.
    mobile_unit_types.sort_by_cached_key(|t| (fold(&t.name), t.id));
    professional_types.sort_by_cached_key(|t| (fold(&t.name), t.id));
    technical_decision_actions.sort_by_cached_key(|t| (fold(&t.name), t.id));
    intercurrences.sort_by_cached_key(|t| (fold(&t.name), t.id));
    occurrence_types.sort_by_cached_key(|t| (fold(&t.name), t.id));
    Ok(Snapshot {
        health_units,
        mobile_unit_types,
        professional_types,
        technical_decision_actions,
        intercurrences,
        occurrence_types,
    })
}

/// A unit with the name of its type.
#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_units, check_for_backend(diesel::pg::Pg))]
struct MobileUnitRow {
    id: i64,
    name: String,
    plate: String,
    base: String,
    active: bool,
    #[diesel(select_expression = mobile_unit_types::id)]
    type_id: i32,
    #[diesel(select_expression = mobile_unit_types::name)]
    type_name: String,
}

/// `GET /mobile-unit`: all units, or only the active ones.
pub async fn mobile_units(
    mut conn: &AsyncPgConnection,
    active_only: bool,
) -> Result<Vec<MobileUnitView>, Error> {
    let mut query = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .select(MobileUnitRow::as_select())
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .into_boxed();
    if active_only {
        query = query.filter(mobile_units::active);
    }
    Ok(query
        .load::<MobileUnitRow>(&mut conn)
        .await?
        .into_iter()
        .map(|u| MobileUnitView {
            id: u.id,
            name: u.name,
            plate: u.plate,
            base: u.base,
            active: u.active,
            vehicle_type: RefOption {
                id: u.type_id,
                name: u.type_name,
            },
        })
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

/// `GET /mobile-unit/options`: active units, `{id, name}`, by name; one statement. Whether a
/// unit is free only filters (`available_only`): the option itself is what the spec's field
/// shows.
pub async fn mobile_unit_options(
    mut conn: &AsyncPgConnection,
    filter: UnitFilter,
) -> Result<Vec<MobileUnitOption>, Error> {
    let mut query = mobile_units::table
        .left_join(current_dispatch_of_unit!())
        .filter(mobile_units::active)
        .select((mobile_units::id, mobile_units::name))
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .into_boxed();
    if filter.available_only {
        query = query.filter(dispatches::id.nullable().is_null());
    }
    if let Some(t) = filter.type_id {
        query = query.filter(mobile_units::type_id.eq(t));
    }
    Ok(query
        .load::<(i64, String)>(&mut conn)
        .await?
        .into_iter()
        .map(|(id, name)| MobileUnitOption { id, name })
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
    vehicle_type: (i32, String),
    #[diesel(embed)]
    dispatch: Option<DispatchRow>,
    #[diesel(select_expression = (incidents::id, incidents::number).nullable())]
    incident: Option<(i64, String)>,
}

/// The fleet board's rows: every active unit (`unit: None`), or the one unit `unit`
/// whatever its flag, with its type, base, the dispatch it is on (or none: free) and when it
/// entered its current step; by name. One statement.
async fn board_rows(
    mut conn: &AsyncPgConnection,
    unit: Option<i64>,
) -> Result<Vec<FleetBoardUnit>, Error> {
    let mut query = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .left_join(current_dispatch_of_unit!())
        .left_join(incidents::table.on(incidents::id.eq(dispatches::incident_id)))
        .order_by((search_order(mobile_units::name), mobile_units::id))
        .select(BoardRow::as_select())
        .into_boxed();
    query = match unit {
        Some(id) => query.filter(mobile_units::id.eq(id)),
        None => query.filter(mobile_units::active),
    };
    let rows: Vec<BoardRow> = query.load(&mut conn).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let step_since = r.dispatch.as_ref().map(DispatchRow::latest);
            let dispatch = r
                .dispatch
                .zip(r.incident)
                .map(|(d, (id, number))| CurrentDispatch {
                    id: d.id,
                    status: d.status,
                    assigned_at: d.assigned_at,
                    incident: IncidentRef { id, number },
                });
            FleetBoardUnit {
                id: r.id,
                name: r.name,
                base: r.base,
                vehicle_type: ref_option(r.vehicle_type),
                dispatch,
                step_since,
            }
        })
        .collect())
}

/// `GET /mobile-unit/board`: every active unit with its type, base, the dispatch it is on
/// (or none: free) and when it entered its current step, by name; one statement.
pub async fn fleet_board(conn: &AsyncPgConnection) -> Result<Vec<FleetBoardUnit>, Error> {
    board_rows(conn, None).await
}

/// One unit's row of the fleet board (`None`: no such unit), as [`fleet_board`] reads it.
pub async fn fleet_board_unit(
    conn: &AsyncPgConnection,
    unit: i64,
) -> Result<Option<FleetBoardUnit>, Error> {
    Ok(board_rows(conn, Some(unit)).await?.pop())
}

/// An unallocated person with the page's total (a window over the same rows).
#[derive(Queryable, Selectable)]
#[diesel(table_name = unallocated, check_for_backend(diesel::pg::Pg))]
struct UnallocatedRow {
    id: i64,
    #[diesel(select_expression = users::id)]
    user_id: i64,
    #[diesel(select_expression = users::descriptive_name)]
    user_name: String,
    #[diesel(select_expression = professional_types::id.nullable())]
    #[diesel(select_expression_type = diesel::dsl::Nullable<professional_types::id>)]
    professional_type_id: Option<i32>,
    #[diesel(select_expression = professional_types::name.nullable())]
    #[diesel(select_expression_type = diesel::dsl::Nullable<professional_types::name>)]
    professional_type_name: Option<String>,
    reason: String,
    since: chrono::DateTime<chrono::Utc>,
    #[diesel(select_expression = diesel::dsl::sql::<diesel::sql_types::BigInt>("count(*) over ()"))]
    #[diesel(select_expression_type = diesel::expression::SqlLiteral<diesel::sql_types::BigInt>)]
    total: i64,
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
            .filter(users::status.eq(crate::domain::user::UserStatus::Active))
            .into_boxed();
        if let Some(me) = exclude_user {
            q = q.filter(unallocated::user_id.ne(me));
        }
        q
    };
    let rows: Vec<UnallocatedRow> = base()
        .select(UnallocatedRow::as_select())
        .order_by((search_order(users::descriptive_name), users::id))
        .limit(page_size)
        .offset((page - 1) * page_size)
        .load(&mut conn)
        .await?;
    let total = match <[_]>::first(&rows) {
        Some(r) => r.total,
        None => base().count().get_result(&mut conn).await?,
    };
    let items = rows
        .into_iter()
        .map(|r| UnallocatedEntry {
            id: r.id,
            user: UserOption {
                id: r.user_id,
                descriptive_name: r.user_name,
            },
            professional_type: opt_ref(r.professional_type_id, r.professional_type_name),
            reason: r.reason,
            since: r.since,
        })
        .collect();
    Ok((items, total))
}
