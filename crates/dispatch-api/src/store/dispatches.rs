//! Units on incidents.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::schema::*;
use crate::views::*;

#[derive(Queryable, Selectable)]
#[diesel(table_name = dispatches, check_for_backend(diesel::pg::Pg))]
struct DispatchRow {
    id: i64,
    status: String,
    assigned_at: DateTime<Utc>,
    en_route_at: Option<DateTime<Utc>>,
    on_scene_at: Option<DateTime<Utc>>,
    transporting_at: Option<DateTime<Utc>>,
    at_destination_at: Option<DateTime<Utc>>,
    released_at: Option<DateTime<Utc>>,
}

type Row = (
    DispatchRow,
    (i64, String),
    (i32, String),
    Option<(i64, String, String, String)>,
);

/// The units of an incident, oldest dispatch first, with unit, type and destination joined:
/// one statement.
pub async fn of_incident(
    mut conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Vec<DispatchView>, Error> {
    let rows: Vec<Row> = dispatches::table
        .inner_join(mobile_units::table.inner_join(mobile_unit_types::table))
        .left_join(health_units::table)
        .filter(dispatches::incident_id.eq(incident_id))
        .order_by((dispatches::assigned_at, dispatches::id))
        .select((
            DispatchRow::as_select(),
            (mobile_units::id, mobile_units::name),
            (mobile_unit_types::id, mobile_unit_types::name),
            (
                health_units::id,
                health_units::name,
                health_units::city,
                health_units::uf,
            )
                .nullable(),
        ))
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(view).collect())
}

fn view((d, (unit_id, unit_name), (type_id, type_name), destination): Row) -> DispatchView {
    DispatchView {
        id: d.id,
        status: d.status,
        mobile_unit: DispatchedUnit {
            id: unit_id,
            name: unit_name,
            unit_type: RefOption {
                id: type_id,
                name: type_name,
            },
        },
        times: DispatchTimes {
            assigned_at: d.assigned_at,
            en_route_at: d.en_route_at,
            on_scene_at: d.on_scene_at,
            transporting_at: d.transporting_at,
            at_destination_at: d.at_destination_at,
            released_at: d.released_at,
        },
        destination: destination.map(|(id, name, city, uf)| HealthUnitOption {
            id,
            name,
            city,
            uf,
        }),
    }
}
