//! Every write (docs/dispatch-realtime.md, "Writes"), each one transaction: lock the incident, ask the state
//! machine, change the rows, raise the version, append the history, NOTIFY (see `writes`).
//! Every field a write changes on the incident is in its history entry, from and to
//! (docs/dispatch-routes.md, "Writes: what each records").

use chrono::{DateTime, Datelike, Utc};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::json;

use crate::domain::Refusal;
use crate::domain::dispatch::{self, Status, VehicleType};
use crate::domain::form::{IncidentForm, group_of};
use crate::domain::incident::{self, State};
use crate::domain::phone;
use crate::domain::user::{ACTIVE, Profile};
use crate::error::{Error, Result};
use crate::schema::dispatch::*;
use crate::store::writes::{self, Author, Changes, Written, lock};
use crate::views::UserOption;

/// A technical decision action as a decision checks it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = technical_decision_actions, check_for_backend(diesel::pg::Pg))]
struct ActionRow {
    name: String,
    active: bool,
    deleted: bool,
}

/// An intercurrence of the catalogue as a recording checks it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = intercurrences, check_for_backend(diesel::pg::Pg))]
struct IntercurrenceRow {
    name: String,
    active: bool,
    deleted: bool,
}

/// The name of a catalogue entry (`(name, active, deleted)`) a write may refer to: it exists,
/// is active and is not deleted; otherwise 422 `invalid_reference` naming `field`.
fn usable(
    found: Option<(String, bool, bool)>,
    field: &str,
    what: &str,
    id: i32,
) -> std::result::Result<String, Refusal> {
    match found {
        Some((name, true, false)) => Ok(name),
        Some(_) => Err(Refusal::unusable(
            field,
            format!("{what} {id} is inactive or deleted"),
        )),
        None => Err(Refusal::unusable(
            field,
            format!("{what} {id} does not exist"),
        )),
    }
}

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

/// A person as the history names them.
#[derive(Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
struct PersonRow {
    id: i64,
    descriptive_name: String,
}

impl From<PersonRow> for UserOption {
    fn from(p: PersonRow) -> Self {
        UserOption {
            id: p.id,
            descriptive_name: p.descriptive_name,
        }
    }
}

/// The person `id` names, for the history (`None` for no one).
async fn person(c: &mut AsyncPgConnection, id: Option<i64>) -> Result<Option<UserOption>> {
    let Some(id) = id else { return Ok(None) };
    let row: PersonRow = users::table
        .find(id)
        .select(PersonRow::as_select())
        .first(c)
        .await?;
    Ok(Some(row.into()))
}

/// `POST /incident`: a new incident in `registering`, version 1, history `created`.
pub async fn create(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    fields: IncidentForm,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        check_related(c, fields.related_incident_id).await?;
        check_destination(
            c,
            "destination_health_unit_id",
            fields.destination_health_unit_id,
        )
        .await?;
        let id: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "nextval(pg_get_serial_sequence('incidents', 'id'))",
        ))
        .get_result(c)
        .await?;
        let year = by.at.year();
        diesel::insert_into(incidents::table)
            .values((
                incidents::id.eq(id),
                incidents::number.eq(format!("{year}-{id:06}")),
                incidents::created_by.eq(by.id()),
                incidents::created_at.eq(by.at),
                incidents::updated_at.eq(by.at),
                incidents::caller_phone_key.eq(phone::key_of(&fields.caller_phone)),
                &fields,
            ))
            .execute(c)
            .await?;
        let mut changes = Changes::new().field("state", "state", None::<&str>, "registering");
        for (name, value) in fields_of(&fields) {
            if !value.is_null() {
                changes = changes.field(group_of(&name), &name, None::<()>, value);
            }
        }
        writes::append_history(c, id, 1, by, "created", &changes).await?;
        writes::announce(c, id, 1, changes.groups()).await?;
        Ok(Written {
            id,
            version: 1,
            state: State::Registering,
        })
    })
    .await
}

fn fields_of(e: &IncidentForm) -> Vec<(String, serde_json::Value)> {
    match serde_json::to_value(e) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().collect(),
        _ => Vec::new(),
    }
}

async fn check_related(c: &mut AsyncPgConnection, related: Option<i64>) -> Result<()> {
    if let Some(rid) = related {
        let found: bool = diesel::select(exists(incidents::table.filter(incidents::id.eq(rid))))
            .get_result(c)
            .await?;
        if !found {
            return Err(Refusal::unusable(
                "related_incident_id",
                format!("incident {rid} does not exist"),
            )
            .into());
        }
    }
    Ok(())
}

/// A destination (a dispatch's or the patient's) must be an active health unit; 422 naming
/// `field` otherwise. `None` (no destination, or clearing it) is always fine.
async fn check_destination(
    c: &mut AsyncPgConnection,
    field: &str,
    unit: Option<i64>,
) -> Result<()> {
    let Some(unit) = unit else { return Ok(()) };
    let active: Option<bool> = health_units::table
        .find(unit)
        .select(health_units::active)
        .first(c)
        .await
        .optional()?;
    match active {
        Some(true) => Ok(()),
        Some(false) => Err(Refusal::unusable(
            field,
            format!("health unit {unit} is inactive: it receives no patients"),
        )
        .into()),
        None => Err(Refusal::unusable(field, format!("health unit {unit} does not exist")).into()),
    }
}

/// `PATCH /incident/{id}`: `apply` edits a copy of the forms; only what differs is written
/// and recorded. Allowed while the incident is open.
pub async fn patch(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    apply: impl FnOnce(&mut IncidentForm) + Send,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        incident::edit(cur.state, "update", None)?;
        let mut next = cur.fields.clone();
        apply(&mut next);
        if next.related_incident_id != cur.fields.related_incident_id {
            if next.related_incident_id == Some(id) {
                return Err(Refusal::unusable(
                    "related_incident_id",
                    "an incident cannot relate to itself",
                )
                .into());
            }
            check_related(c, next.related_incident_id).await?;
        }
        if next.destination_health_unit_id != cur.fields.destination_health_unit_id {
            check_destination(
                c,
                "destination_health_unit_id",
                next.destination_health_unit_id,
            )
            .await?;
        }
        let mut changes = Changes::new();
        let before = fields_of(&cur.fields);
        for ((name, from), (_, to)) in before.into_iter().zip(fields_of(&next)) {
            if from != to {
                changes = changes.field(group_of(&name), &name, from, to);
            }
        }
        diesel::update(incidents::table.filter(incidents::id.eq(id)))
            .set((
                &next,
                incidents::caller_phone_key.eq(phone::key_of(&next.caller_phone)),
            ))
            .execute(c)
            .await?;
        writes::commit(c, &cur, by, "updated", cur.state, changes).await
    })
    .await
}

/// A write that only moves the state (submit, cancel), with optional extra history data.
pub async fn move_to(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    to: State,
    action: &str,
    reason: Option<String>,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = incident::transition(cur.state, to)?;
        let mut changes = Changes::new();
        if let Some(reason) = reason {
            changes = changes.record("state", "reason", json!(reason));
        }
        writes::commit(c, &cur, by, action, to, changes).await
    })
    .await
}

/// `POST /incident/{id}/prank-call`: final state `prank`, the caller's phone recorded.
pub async fn prank_call(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = incident::transition(cur.state, State::Prank)?;
        diesel::insert_into(prank_calls::table)
            .values((
                prank_calls::phone.eq(&cur.fields.caller_phone),
                prank_calls::phone_key.eq(phone::key_of(&cur.fields.caller_phone)),
                prank_calls::incident_id.eq(id),
                prank_calls::incident_number.eq(&cur.number),
                prank_calls::recorded_by.eq(by.id()),
                prank_calls::recorded_at.eq(by.at),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().record(
            "prank_calls",
            "prank_call_phone",
            json!(cur.fields.caller_phone),
        );
        writes::commit(c, &cur, by, "prank_call", to, changes).await
    })
    .await
}

/// `POST /incident/{id}/technical-decision`: `awaiting_regulation` -> `regulated`; the
/// caller becomes the incident's regulator.
pub async fn technical_decision(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    action_id: i32,
    mobile_unit_type_id: Option<i32>,
    notes: String,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = incident::transition(cur.state, State::Regulated)?;
        let action: Option<ActionRow> = technical_decision_actions::table
            .find(action_id)
            .select(ActionRow::as_select())
            .first(c)
            .await
            .optional()?;
        let name = usable(
            action.map(|r| (r.name, r.active, r.deleted)),
            "action_id",
            "action",
            action_id,
        )?;
        let vehicle_type = match mobile_unit_type_id {
            None => None,
            Some(t) => Some(
                mobile_unit_types::table
                    .filter(mobile_unit_types::id.eq(t))
                    .filter(mobile_unit_types::active)
                    .select(mobile_unit_types::name)
                    .first::<String>(c)
                    .await
                    .optional()?
                    .ok_or_else(|| {
                        Refusal::unusable(
                            "mobile_unit_type_id",
                            format!("unit type {t} does not exist or is inactive"),
                        )
                    })?,
            ),
        };
        diesel::insert_into(technical_decisions::table)
            .values((
                technical_decisions::incident_id.eq(id),
                technical_decisions::action_id.eq(action_id),
                technical_decisions::mobile_unit_type_id.eq(mobile_unit_type_id),
                technical_decisions::regulator_id.eq(by.id()),
                technical_decisions::notes.eq(&notes),
                technical_decisions::decided_at.eq(by.at),
            ))
            .execute(c)
            .await?;
        let regulated_at: Option<DateTime<Utc>> = diesel::update(incidents::table.find(id))
            .set((
                incidents::regulator_id.eq(by.id()),
                incidents::regulated_at.eq(by.at),
            ))
            .returning(incidents::regulated_at)
            .get_result(c)
            .await?;
        let mut changes = Changes::new()
            .record("technical_decisions", "action", json!(name))
            .record("technical_decisions", "notes", json!(notes))
            .record("technical_decisions", "vehicle_type", json!(vehicle_type))
            .field("regulation", "regulated_at", cur.regulated_at, regulated_at);
        // The one who decides becomes the regulator, replacing one an earlier send-to chose.
        if cur.regulator_id != Some(by.id()) {
            let me = UserOption {
                id: by.id(),
                descriptive_name: by.user.descriptive_name.clone(),
            };
            let before = person(c, cur.regulator_id).await?;
            changes = changes.field("regulation", "regulator", before, me);
        }
        writes::commit(c, &cur, by, "technical_decision", to, changes).await
    })
    .await
}

/// `POST /incident/{id}/send-to`: another active regulating physician takes the incident.
pub async fn send_to(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    to_user: i64,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        incident::edit(
            cur.state,
            "send_to",
            Some(&[
                State::AwaitingRegulation,
                State::Regulated,
                State::Dispatched,
            ]),
        )?;
        let target: PersonRow = users::table
            .inner_join(profiles::table)
            .filter(users::id.eq(to_user))
            .filter(users::status.eq(ACTIVE))
            .filter(profiles::title.eq(Profile::MedicoRegulador))
            .select(PersonRow::as_select())
            .first(c)
            .await
            .optional()?
            .ok_or_else(|| {
                Refusal::unusable(
                    "user_id",
                    format!("user {to_user} is not an active regulating physician"),
                )
            })?;
        let before = person(c, cur.regulator_id).await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::regulator_id.eq(to_user))
            .execute(c)
            .await?;
        let changes =
            Changes::new().field("regulation", "regulator", before, UserOption::from(target));
        writes::commit(c, &cur, by, "sent_to", cur.state, changes).await
    })
    .await
}

/// What `POST /incident/{id}/dispatch` answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DispatchCreated {
    pub id: i64,
    pub status: Status,
    /// The incident's new version (also the `ETag`).
    pub incident_version: i32,
}

/// What `POST /incident/{id}/dispatch` asks for, judged.
#[derive(Debug, Clone)]
pub struct NewDispatch {
    pub mobile_unit_id: i64,
    /// Why a unit of another vehicle type than the decision asks for is sent anyway.
    pub override_reason: Option<String>,
    /// The dispatch's own destination; without one it goes where the patient goes.
    pub destination_health_unit_id: Option<i64>,
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
) -> Result<DispatchCreated> {
    let unit_id = order.mobile_unit_id;
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = if cur.state == State::Dispatched {
            incident::edit(cur.state, "dispatch", None)?
        } else {
            incident::transition(cur.state, State::Dispatched)?
        };
        let unit: Option<UnitRow> = mobile_units::table
            .inner_join(mobile_unit_types::table)
            .filter(mobile_units::id.eq(unit_id))
            .select(UnitRow::as_select())
            .first(c)
            .await
            .optional()?;
        let unit = match unit {
            Some(unit) if unit.active => unit,
            Some(_) => {
                return Err(Refusal::UnitInactive(unit_id).into());
            }
            None => {
                return Err(Refusal::unusable(
                    "mobile_unit_id",
                    format!("mobile unit {unit_id} does not exist"),
                )
                .into());
            }
        };
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
        let destination = order.destination_health_unit_id;
        check_destination(c, "destination_health_unit_id", destination).await?;
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
                return Err(Refusal::UnitBusy(unit_id).into());
            }
            Err(e) => return Err(e.into()),
        };
        let mut record = json!({
            "id": dispatch_id,
            "mobile_unit_id": unit_id,
            "mobile_unit": unit.name,
            "mobile_unit_type": offered,
            "requested_vehicle_type": requested,
            "status": "assigned",
        });
        if let Some(d) = destination {
            record["destination_health_unit_id"] = json!(d);
        }
        if let Some(reason) = &order.override_reason {
            record["override_reason"] = json!(reason);
        }
        let changes = Changes::new().record("dispatches", "dispatch", record);
        let w = writes::commit(c, &cur, by, "dispatched", to, changes).await?;
        Ok(DispatchCreated {
            id: dispatch_id,
            status: Status::Assigned,
            incident_version: w.version,
        })
    })
    .await
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

/// What `POST /dispatch/{id}/status` answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DispatchProgress {
    pub id: i64,
    pub status: Status,
    pub incident_id: i64,
    pub incident_version: i32,
}

/// `POST /dispatch/{id}/status`: one step of the unit. The step's time is the write's
/// (`Author::at`), never earlier than the dispatch's latest time. No `If-Match` (the order rule
/// guards it), but the incident's version rises and its history records the step.
pub async fn dispatch_status(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    dispatch_id: i64,
    to: Status,
) -> Result<DispatchProgress> {
    conn.transaction::<_, Error, _>(async |c| {
        let incident_id: i64 = dispatches::table
            .find(dispatch_id)
            .select(dispatches::incident_id)
            .first(c)
            .await
            .optional()?
            .ok_or_else(|| Refusal::not_found("dispatch", dispatch_id))?;
        // The incident first, then the dispatch: every write locks in that order.
        let cur = lock(c, incident_id, None).await?;
        let from: Status = dispatches::table
            .find(dispatch_id)
            .select(dispatches::status)
            .for_update()
            .first(c)
            .await?;
        let to = dispatch::transition(from, to)?;
        set_step(c, dispatch_id, to, by.at).await?;
        let changes = Changes::new().record(
            "dispatches",
            "dispatch",
            json!({"id": dispatch_id, "status": {"from": from.as_str(), "to": to.as_str()}}),
        );
        let w = writes::commit(c, &cur, by, "dispatch_status", cur.state, changes).await?;
        Ok(DispatchProgress {
            id: dispatch_id,
            status: to,
            incident_id,
            incident_version: w.version,
        })
    })
    .await
}

/// Raw SQL because the column is chosen by the step; `GREATEST` ignores the null steps.
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
        Status::Released => "released_at",
    };
    diesel::sql_query(format!(
        "UPDATE dispatches SET status = $1, {column} = GREATEST($3, assigned_at, en_route_at, \
         on_scene_at, transporting_at, at_destination_at, released_at) WHERE id = $2"
    ))
    .bind::<diesel::sql_types::Text, _>(to.as_str())
    .bind::<diesel::sql_types::BigInt, _>(dispatch_id)
    .bind::<diesel::sql_types::Timestamptz, _>(at)
    .execute(c)
    .await?;
    Ok(())
}

/// `POST /incident/{id}/intercurrence`: something that happened during the attendance.
pub async fn intercurrence(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    intercurrence_id: i32,
    notes: String,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        incident::edit(
            cur.state,
            "intercurrence",
            Some(&[State::Regulated, State::Dispatched]),
        )?;
        let found: Option<IntercurrenceRow> = intercurrences::table
            .find(intercurrence_id)
            .select(IntercurrenceRow::as_select())
            .first(c)
            .await
            .optional()?;
        let name = usable(
            found.map(|r| (r.name, r.active, r.deleted)),
            "intercurrence_id",
            "intercurrence",
            intercurrence_id,
        )?;
        diesel::insert_into(incident_intercurrences::table)
            .values((
                incident_intercurrences::incident_id.eq(id),
                incident_intercurrences::intercurrence_id.eq(intercurrence_id),
                incident_intercurrences::notes.eq(&notes),
                incident_intercurrences::recorded_by.eq(by.id()),
                incident_intercurrences::recorded_at.eq(by.at),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().record(
            "intercurrences",
            "intercurrence",
            json!({"id": intercurrence_id, "name": name, "notes": notes}),
        );
        writes::commit(c, &cur, by, "intercurrence", cur.state, changes).await
    })
    .await
}

/// `POST /incident/{id}/transfer`: the attendance passes to another active employee,
/// named by their user id (the `id` that `GET /employee/search` answers).
pub async fn transfer(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    to_user: i64,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        incident::edit(
            cur.state,
            "transfer",
            Some(&[State::Regulated, State::Dispatched]),
        )?;
        let target: PersonRow = users::table
            .inner_join(employees::table)
            .filter(users::id.eq(to_user))
            .filter(employees::active)
            .filter(users::status.eq(ACTIVE))
            .select(PersonRow::as_select())
            .first(c)
            .await
            .optional()?
            .ok_or_else(|| {
                Refusal::unusable(
                    "user_id",
                    format!("user {to_user} is not an active employee"),
                )
            })?;
        let before = person(c, cur.assigned_to_id).await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::assigned_to_id.eq(to_user))
            .execute(c)
            .await?;
        let changes = Changes::new().field(
            "regulation",
            "assigned_to",
            before,
            UserOption::from(target),
        );
        writes::commit(c, &cur, by, "transferred", cur.state, changes).await
    })
    .await
}

/// `POST /incident/{id}/close`: the conclusion; 409 `unit_assigned` while a unit is not
/// released.
pub async fn close(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    conclusion: String,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = incident::transition(cur.state, State::Closed)?;
        let busy: bool = diesel::select(exists(
            dispatches::table
                .filter(dispatches::incident_id.eq(id))
                .filter(dispatches::status.ne(Status::Released)),
        ))
        .get_result(c)
        .await?;
        if busy {
            return Err(Refusal::UnitAssigned.into());
        }
        let closed_at: Option<DateTime<Utc>> = diesel::update(incidents::table.find(id))
            .set((
                incidents::conclusion.eq(&conclusion),
                incidents::closed_at.eq(by.at),
            ))
            .returning(incidents::closed_at)
            .get_result(c)
            .await?;
        let changes = Changes::new()
            .field("conclusion", "conclusion", &cur.conclusion, &conclusion)
            .field("conclusion", "closed_at", cur.closed_at, closed_at);
        writes::commit(c, &cur, by, "closed", to, changes).await
    })
    .await
}
