//! Units on incidents.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::dispatch::Status;
use crate::schema::dispatch::*;
use crate::store::read::*;
use crate::store::{HealthUnitRow, coalesce};

#[derive(Queryable, Selectable)]
#[diesel(table_name = dispatches, check_for_backend(diesel::pg::Pg))]
pub(crate) struct DispatchRow {
    pub(crate) id: i64,
    pub(crate) status: Status,
    pub(crate) assigned_at: DateTime<Utc>,
    pub(crate) en_route_at: Option<DateTime<Utc>>,
    pub(crate) on_scene_at: Option<DateTime<Utc>>,
    pub(crate) transporting_at: Option<DateTime<Utc>>,
    pub(crate) at_destination_at: Option<DateTime<Utc>>,
    pub(crate) handed_over_at: Option<DateTime<Utc>>,
    pub(crate) released_at: Option<DateTime<Utc>>,
}

impl DispatchRow {
    /// The latest time the dispatch recorded: when its unit entered its current step (a
    /// step's time is never earlier than the one before it).
    pub(crate) fn latest(&self) -> DateTime<Utc> {
        [
            self.en_route_at,
            self.on_scene_at,
            self.transporting_at,
            self.at_destination_at,
            self.handed_over_at,
            self.released_at,
        ]
        .into_iter()
        .flatten()
        .fold(self.assigned_at, DateTime::max)
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_units, check_for_backend(diesel::pg::Pg))]
struct UnitRow {
    id: i64,
    name: String,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_unit_types, check_for_backend(diesel::pg::Pg))]
struct UnitTypeRow {
    id: i32,
    name: String,
}

/// One dispatch with its unit, the unit's type and the destination.
#[derive(Queryable, Selectable)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct Row {
    #[diesel(embed)]
    dispatch: DispatchRow,
    #[diesel(embed)]
    unit: UnitRow,
    #[diesel(embed)]
    vehicle_type: UnitTypeRow,
    #[diesel(embed)]
    destination: Option<HealthUnitRow>,
}

/// The units of an incident, oldest dispatch first, with unit, type and destination joined:
/// one statement. A dispatch without a destination of its own goes where the incident's
/// patient goes (`incidents.destination_health_unit_id`).
pub async fn of_incident(
    mut conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Vec<DispatchView>, Error> {
    let rows: Vec<Row> = dispatches::table
        .inner_join(mobile_units::table.inner_join(mobile_unit_types::table))
        .inner_join(incidents::table)
        .left_join(
            health_units::table.on(health_units::id.nullable().eq(coalesce(
                dispatches::destination_id,
                incidents::destination_health_unit_id,
            ))),
        )
        .filter(dispatches::incident_id.eq(incident_id))
        .order_by((dispatches::assigned_at, dispatches::id))
        .select(Row::as_select())
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(view).collect())
}

fn view(row: Row) -> DispatchView {
    let Row {
        dispatch: d,
        unit,
        vehicle_type,
        destination,
    } = row;
    DispatchView {
        id: d.id,
        status: d.status,
        mobile_unit: DispatchedUnit {
            id: unit.id,
            name: unit.name,
            vehicle_type: RefOption {
                id: vehicle_type.id,
                name: vehicle_type.name,
            },
        },
        times: DispatchTimes {
            assigned_at: d.assigned_at,
            en_route_at: d.en_route_at,
            on_scene_at: d.on_scene_at,
            transporting_at: d.transporting_at,
            at_destination_at: d.at_destination_at,
            handed_over_at: d.handed_over_at,
            released_at: d.released_at,
        },
        destination: destination.map(Into::into),
    }
}

/// The units of an incident, `None` when the incident does not exist: the existence check
/// runs in the same pipeline as the list.
pub async fn of_existing_incident(
    conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Option<Vec<DispatchView>>, Error> {
    let (exists, units) = tokio::try_join!(
        super::incidents::exists(conn, incident_id),
        of_incident(conn, incident_id)
    )?;
    Ok(exists.then_some(units))
}

/// The incident's fleet row and its units, in one pipeline; `None` when it does not exist.
pub async fn fleet_row_and_units(
    conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Option<(super::incidents::FleetRow, Vec<DispatchView>)>, Error> {
    let (row, units) = tokio::try_join!(
        super::incidents::fleet_row(conn, incident_id),
        of_incident(conn, incident_id)
    )?;
    Ok(row.map(|row| (row, units)))
}
