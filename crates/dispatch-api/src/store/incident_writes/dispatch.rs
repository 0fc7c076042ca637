//! The units on an incident: a dispatch, and each step of a unit.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use super::{HealthUnitRef, check_destination};
use crate::domain::dispatch::{self, Status, VehicleType};
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::domain::incident::{self, Edit, State};
use crate::domain::{Refusal, reference};
use crate::schema::dispatch::*;
use crate::store::dispatches::DispatchRow;
use crate::store::error::Result;
use crate::store::fleet;
use crate::store::frame::{self, Commit};
use crate::store::writes::{Author, Changes};

/// A mobile unit as a dispatch checks it, with its vehicle type.
#[derive(Queryable, Selectable)]
#[diesel(table_name = mobile_units, check_for_backend(diesel::pg::Pg))]
struct UnitRow {
    name: String,
    active: bool,
    type_id: i32,
    #[diesel(select_expression = mobile_unit_types::name)]
    type_name: String,
}

/// The vehicle type a technical decision asks for (none when it sends no vehicle).
#[derive(Queryable, Selectable)]
#[diesel(table_name = technical_decisions, check_for_backend(diesel::pg::Pg))]
struct RequestedVehicle {
    mobile_unit_type_id: Option<i32>,
    #[diesel(select_expression = mobile_unit_types::name.nullable())]
    type_name: Option<String>,
}

/// A dispatch a write made or moved: its id and status, and its incident at the version the
/// write raised it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchWritten {
    pub id: i64,
    pub status: Status,
    pub incident_id: i64,
    pub incident_version: i32,
}

/// What `POST /incident/{id}/dispatch` asks for, judged.
#[derive(Debug, Clone)]
pub struct NewDispatch {
    pub mobile_unit_id: i64,
    /// Why a unit of another vehicle type than the decision asks for is sent anyway.
    pub override_reason: Option<String>,
    /// The dispatch's own destination; without one it goes where the patient goes.
    pub destination_id: Option<i64>,
}

/// `POST /incident/{id}/dispatch`: `regulated` -> `dispatched` (or a further unit on a
/// dispatched incident). The unit must be of the vehicle type the latest technical decision
/// asks for, unless an `override_reason` is given (`domain::dispatch::check_vehicle`). The
/// partial unique index `dispatches_unit_busy` decides races: of two simultaneous dispatches
/// of one unit exactly one commits, the other is 409 `unit_busy`.
pub async fn dispatch_unit(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    order: NewDispatch,
) -> Result<DispatchWritten> {
    let unit_id = order.mobile_unit_id;
    let answer = frame::write_answering(conn, by, id, Some(expected), async |c, cur| {
        let to = if cur.state.allows(Edit::FurtherUnit) {
            incident::edit(cur.state, Edit::FurtherUnit)?
        } else {
            incident::transition(cur.state, State::Dispatched)?
        };
        let found: Option<UnitRow> = mobile_units::table
            .inner_join(mobile_unit_types::table)
            .filter(mobile_units::id.eq(unit_id))
            .select(UnitRow::as_select())
            .first(c)
            .await
            .optional()?;
        let found = found.map(|u| {
            let active = u.active;
            (u, active)
        });
        let unit = reference::mobile_unit(found, unit_id)?;
        let offered = VehicleType {
            id: unit.type_id,
            name: unit.type_name,
        };
        let requested = requested_vehicle(c, id).await?;
        dispatch::check_vehicle(
            unit_id,
            requested.as_ref(),
            &offered,
            order.override_reason.as_deref(),
        )?;
        let destination = order.destination_id;
        let destination_ref = check_destination(c, "destination_id", destination).await?;
        // A busy unit's refusal says which incident holds it (read through the busy-unit
        // index); the index itself still decides a race, without a holder to name.
        let holder: Option<(i64, String)> = dispatches::table
            .inner_join(incidents::table)
            .filter(dispatches::mobile_unit_id.eq(unit_id))
            .filter(dispatches::status.ne(Status::Released))
            .select((incidents::id, incidents::number))
            .first(c)
            .await
            .optional()?;
        if let Some(holder) = holder {
            return Err(Refusal::UnitBusy {
                unit: unit_id,
                holder: Some(holder),
            }
            .into());
        }
        let inserted: Result<i64, DieselError> = diesel::insert_into(dispatches::table)
            .values((
                dispatches::incident_id.eq(id),
                dispatches::mobile_unit_id.eq(unit_id),
                dispatches::assigned_by.eq(by.id()),
                dispatches::destination_id.eq(destination),
                dispatches::assigned_at.eq(by.at),
            ))
            .returning(dispatches::id)
            .get_result(c)
            .await;
        let dispatch_id = match inserted {
            Ok(d) => d,
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
                if info.constraint_name() == Some("dispatches_unit_busy") =>
            {
                return Err(Refusal::UnitBusy {
                    unit: unit_id,
                    holder: None,
                }
                .into());
            }
            Err(e) => return Err(e.into()),
        };
        fleet::announce_step(c, dispatch_id, unit_id, Status::Assigned, by.at).await?;
        // `destination` is where the unit takes the patient, in the history as in every read:
        // the dispatch's own, else the patient's (docs/dispatch-routes.md, "Names").
        let goes_to = match destination_ref {
            Some(own) => Some(own),
            None => health_unit_ref(c, cur.fields.destination_health_unit_id).await?,
        };
        // The dispatch as its read names it (docs/dispatch-routes.md, "Writes: what each
        // records"): every key always present, null when it does not apply.
        let record = json!({
            "id": dispatch_id,
            "mobile_unit": {"id": unit_id, "name": unit.name, "vehicle_type": offered},
            "requested_vehicle_type": requested,
            "status": Status::Assigned,
            "destination": goes_to,
            "override_reason": order.override_reason,
        });
        let changes = Changes::new().record(ChangeGroup::Dispatches, "dispatch", record);
        Ok(Commit::moving(HistoryAction::Dispatched, to, changes).answer(dispatch_id))
    })
    .await;
    let (w, dispatch_id) = answer?;
    Ok(DispatchWritten {
        id: dispatch_id,
        status: Status::Assigned,
        incident_id: id,
        incident_version: w.version,
    })
}

/// A health unit as the history names it, `{id, name}`; `None` for none.
async fn health_unit_ref(
    c: &mut AsyncPgConnection,
    id: Option<i64>,
) -> Result<Option<HealthUnitRef>> {
    let Some(id) = id else { return Ok(None) };
    let name: Option<String> = health_units::table
        .find(id)
        .select(health_units::name)
        .first(c)
        .await
        .optional()?;
    Ok(name.map(|name| HealthUnitRef { id, name }))
}

/// The vehicle type the incident's latest technical decision asks for: `None` without a
/// decision or when the latest one sends no vehicle (the order of `incidents::fleet_row`).
async fn requested_vehicle(
    c: &mut AsyncPgConnection,
    incident_id: i64,
) -> Result<Option<VehicleType>> {
    let latest: Option<RequestedVehicle> = technical_decisions::table
        .left_join(mobile_unit_types::table)
        .filter(technical_decisions::incident_id.eq(incident_id))
        .order_by((
            technical_decisions::decided_at.desc(),
            technical_decisions::id.desc(),
        ))
        .select(RequestedVehicle::as_select())
        .first(c)
        .await
        .optional()?;
    Ok(latest.and_then(|r| {
        Some(VehicleType {
            id: r.mobile_unit_type_id?,
            name: r.type_name?,
        })
    }))
}

/// `POST /dispatch/{id}/status`: one step of the unit. The step's time is the write's
/// (`Author::at`), never earlier than the dispatch's latest time. No `If-Match` (the order rule
/// guards it), but the incident's version rises and its history records the step.
pub async fn dispatch_status(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    dispatch_id: i64,
    to: Status,
) -> Result<DispatchWritten> {
    // A dispatch never changes incidents: its incident is read before the frame locks it.
    let incident_id: i64 = dispatches::table
        .find(dispatch_id)
        .select(dispatches::incident_id)
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| Refusal::not_found("dispatch", dispatch_id))?;
    // The incident first, then the dispatch: every write locks in that order.
    let (w, to) = frame::write_answering(conn, by, incident_id, None, async |c, _| {
        let row: Stepped = dispatches::table
            .find(dispatch_id)
            .select(Stepped::as_select())
            .for_update()
            .first(c)
            .await?;
        let (unit_id, unit_name, type_id, type_name): (i64, String, i32, String) =
            mobile_units::table
                .inner_join(mobile_unit_types::table)
                .filter(mobile_units::id.eq(row.mobile_unit_id))
                .select((
                    mobile_units::id,
                    mobile_units::name,
                    mobile_unit_types::id,
                    mobile_unit_types::name,
                ))
                .first(c)
                .await?;
        let from = row.row.status;
        let to = dispatch::transition(from, to)?;
        // The step's one instant: the write's, never before the dispatch's latest step (times
        // never go backwards), and the same on the row, the history entry and the event.
        let at = row.row.latest().max(by.at);
        set_step(c, dispatch_id, to, at).await?;
        fleet::announce_step(c, dispatch_id, row.mobile_unit_id, to, at).await?;
        if from == Status::AtDestination {
            // Off the hospital's door: a stretcher hold alert raised for it is cleared.
            crate::store::offload::clear(c, dispatch_id, to).await?;
        }
        let unit = json!({"id": unit_id, "name": unit_name,
            "vehicle_type": {"id": type_id, "name": type_name}});
        let changes = Changes::new().record(
            ChangeGroup::Dispatches,
            "dispatch",
            json!({"id": dispatch_id, "mobile_unit": unit,
                "status": {"from": from.as_str(), "to": to.as_str()}}),
        );
        Ok(Commit::stay(HistoryAction::DispatchStatus, changes)
            .at(at)
            .answer(to))
    })
    .await?;
    Ok(DispatchWritten {
        id: dispatch_id,
        status: to,
        incident_id,
        incident_version: w.version,
    })
}

/// A dispatch as a step finds it: its status, its times and its unit.
#[derive(Queryable, Selectable)]
#[diesel(table_name = dispatches, check_for_backend(diesel::pg::Pg))]
struct Stepped {
    #[diesel(embed)]
    row: DispatchRow,
    mobile_unit_id: i64,
}

/// Raw SQL because the column is chosen by the step; `at` is the write's instant, already
/// no earlier than the dispatch's latest time.
async fn set_step(
    c: &mut AsyncPgConnection,
    dispatch_id: i64,
    to: Status,
    at: DateTime<Utc>,
) -> Result<()> {
    let column = match to {
        Status::Assigned => "assigned_at",
        Status::EnRoute => "en_route_at",
        Status::OnScene => "on_scene_at",
        Status::Transporting => "transporting_at",
        Status::AtDestination => "at_destination_at",
        Status::HandedOver => "handed_over_at",
        Status::Released => "released_at",
    };
    diesel::sql_query(format!(
        "UPDATE dispatch.dispatches SET status = $1, {column} = $3 WHERE id = $2"
    ))
    .bind::<diesel::sql_types::Text, _>(to.as_str())
    .bind::<diesel::sql_types::BigInt, _>(dispatch_id)
    .bind::<diesel::sql_types::Timestamptz, _>(at)
    .execute(c)
    .await?;
    Ok(())
}
