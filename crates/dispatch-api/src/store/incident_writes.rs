//! Every write (docs/dispatch-realtime.md, "Writes"), each one transaction: lock the incident, ask the state
//! machine, change the rows, raise the version, append the history, NOTIFY (see `writes`).

use diesel::dsl::{exists, now};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::json;

use crate::domain::Refusal;
use crate::domain::dispatch::{self, Status};
use crate::domain::form::{IncidentForm, group_of};
use crate::domain::incident::{self, State};
use crate::domain::phone;
use crate::domain::user::{ACTIVE, CurrentUser, Profile};
use crate::error::{Error, Result};
use crate::schema::dispatch::*;
use crate::store::writes::{self, Changes, Written, lock};

/// `POST /incident`: a new incident in `registering`, version 1, history `created`.
pub async fn create(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
    fields: IncidentForm,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        check_related(c, fields.related_incident_id).await?;
        let id: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "nextval(pg_get_serial_sequence('incidents', 'id'))",
        ))
        .get_result(c)
        .await?;
        let year: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "extract(year FROM now())::int",
        ))
        .get_result(c)
        .await?;
        diesel::insert_into(incidents::table)
            .values((
                incidents::id.eq(id),
                incidents::number.eq(format!("{year}-{id:06}")),
                incidents::created_by.eq(user.id),
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
        writes::append_history(c, id, 1, user.id, "created", &changes).await?;
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

/// `PATCH /incident/{id}`: `apply` edits a copy of the forms; only what differs is written
/// and recorded. Allowed while the incident is open.
pub async fn patch(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        writes::commit(c, &cur, user.id, "updated", cur.state, changes).await
    })
    .await
}

/// A write that only moves the state (submit, cancel), with optional extra history data.
pub async fn move_to(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        writes::commit(c, &cur, user.id, action, to, changes).await
    })
    .await
}

/// `POST /incident/{id}/prank-call`: final state `prank`, the caller's phone recorded.
pub async fn prank_call(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
                prank_calls::recorded_by.eq(user.id),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().record(
            "prank_calls",
            "prank_call_phone",
            json!(cur.fields.caller_phone),
        );
        writes::commit(c, &cur, user.id, "prank_call", to, changes).await
    })
    .await
}

/// `POST /incident/{id}/technical-decision`: `awaiting_regulation` -> `regulated`; the
/// caller becomes the incident's regulator.
pub async fn technical_decision(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
    id: i64,
    expected: i32,
    action_id: i32,
    mobile_unit_type_id: Option<i32>,
    notes: String,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = incident::transition(cur.state, State::Regulated)?;
        let action: Option<(String, bool, bool)> = technical_decision_actions::table
            .find(action_id)
            .select((
                technical_decision_actions::name,
                technical_decision_actions::active,
                technical_decision_actions::deleted,
            ))
            .first(c)
            .await
            .optional()?;
        let name = match action {
            Some((name, true, false)) => name,
            Some(_) => {
                return Err(Refusal::unusable(
                    "action_id",
                    format!("action {action_id} is inactive or deleted"),
                )
                .into());
            }
            None => {
                return Err(Refusal::unusable(
                    "action_id",
                    format!("action {action_id} does not exist"),
                )
                .into());
            }
        };
        if let Some(t) = mobile_unit_type_id {
            let ok: bool = diesel::select(exists(
                mobile_unit_types::table
                    .filter(mobile_unit_types::id.eq(t))
                    .filter(mobile_unit_types::active),
            ))
            .get_result(c)
            .await?;
            if !ok {
                return Err(Refusal::unusable(
                    "mobile_unit_type_id",
                    format!("unit type {t} does not exist or is inactive"),
                )
                .into());
            }
        }
        diesel::insert_into(technical_decisions::table)
            .values((
                technical_decisions::incident_id.eq(id),
                technical_decisions::action_id.eq(action_id),
                technical_decisions::mobile_unit_type_id.eq(mobile_unit_type_id),
                technical_decisions::regulator_id.eq(user.id),
                technical_decisions::notes.eq(&notes),
            ))
            .execute(c)
            .await?;
        diesel::update(incidents::table.find(id))
            .set((
                incidents::regulator_id.eq(user.id),
                incidents::regulated_at.eq(now),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new()
            .record("technical_decisions", "action", json!(name))
            .record("technical_decisions", "notes", json!(notes))
            .group("regulation");
        writes::commit(c, &cur, user.id, "technical_decision", to, changes).await
    })
    .await
}

/// `POST /incident/{id}/send-to`: another active regulating physician takes the incident.
pub async fn send_to(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        let ok: bool = diesel::select(exists(
            users::table
                .inner_join(profiles::table)
                .filter(users::id.eq(to_user))
                .filter(users::status.eq(ACTIVE))
                .filter(profiles::title.eq(Profile::MedicoRegulador)),
        ))
        .get_result(c)
        .await?;
        if !ok {
            return Err(Refusal::unusable(
                "user_id",
                format!("user {to_user} is not an active regulating physician"),
            )
            .into());
        }
        let before: Option<i64> = incidents::table
            .find(id)
            .select(incidents::regulator_id)
            .first(c)
            .await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::regulator_id.eq(to_user))
            .execute(c)
            .await?;
        let changes = Changes::new().field("regulation", "regulator_id", before, to_user);
        writes::commit(c, &cur, user.id, "sent_to", cur.state, changes).await
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

/// `POST /incident/{id}/dispatch`: `regulated` -> `dispatched` (or a further unit on a
/// dispatched incident). The partial unique index `dispatches_unit_busy` decides races: of
/// two simultaneous dispatches of one unit exactly one commits, the other is 409 `unit_busy`.
pub async fn dispatch_unit(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
    id: i64,
    expected: i32,
    unit_id: i64,
) -> Result<DispatchCreated> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        let to = if cur.state == State::Dispatched {
            incident::edit(cur.state, "dispatch", None)?
        } else {
            incident::transition(cur.state, State::Dispatched)?
        };
        let unit: Option<(String, bool)> = mobile_units::table
            .find(unit_id)
            .select((mobile_units::name, mobile_units::active))
            .first(c)
            .await
            .optional()?;
        let name = match unit {
            Some((name, true)) => name,
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
        let inserted: Result<i64, DieselError> = diesel::insert_into(dispatches::table)
            .values((
                dispatches::incident_id.eq(id),
                dispatches::mobile_unit_id.eq(unit_id),
                dispatches::assigned_by.eq(user.id),
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
        let changes = Changes::new().record(
            "dispatches",
            "dispatch",
            json!({"id": dispatch_id, "mobile_unit_id": unit_id, "mobile_unit": name, "status": "assigned"}),
        );
        let w = writes::commit(c, &cur, user.id, "dispatched", to, changes).await?;
        Ok(DispatchCreated {
            id: dispatch_id,
            status: Status::Assigned,
            incident_version: w.version,
        })
    })
    .await
}

/// What `POST /dispatch/{id}/status` answers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DispatchProgress {
    pub id: i64,
    pub status: Status,
    pub incident_id: i64,
    pub incident_version: i32,
}

/// `POST /dispatch/{id}/status`: one step of the unit. The step's time is the database's
/// clock, never earlier than the dispatch's latest time. No `If-Match` (the order rule
/// guards it), but the incident's version rises and its history records the step.
pub async fn dispatch_status(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        set_step(c, dispatch_id, to).await?;
        let changes = Changes::new().record(
            "dispatches",
            "dispatch",
            json!({"id": dispatch_id, "status": {"from": from.as_str(), "to": to.as_str()}}),
        );
        let w = writes::commit(c, &cur, user.id, "dispatch_status", cur.state, changes).await?;
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
async fn set_step(c: &mut AsyncPgConnection, dispatch_id: i64, to: Status) -> Result<()> {
    let column = match to {
        Status::Assigned => "assigned_at",
        Status::EnRoute => "en_route_at",
        Status::OnScene => "on_scene_at",
        Status::Transporting => "transporting_at",
        Status::AtDestination => "at_destination_at",
        Status::Released => "released_at",
    };
    diesel::sql_query(format!(
        "UPDATE dispatches SET status = $1, {column} = GREATEST(clock_timestamp(), assigned_at, \
         en_route_at, on_scene_at, transporting_at, at_destination_at, released_at) WHERE id = $2"
    ))
    .bind::<diesel::sql_types::Text, _>(to.as_str())
    .bind::<diesel::sql_types::BigInt, _>(dispatch_id)
    .execute(c)
    .await?;
    Ok(())
}

/// `POST /incident/{id}/intercurrence`: something that happened during the attendance.
pub async fn intercurrence(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        let found: Option<(String, bool, bool)> = intercurrences::table
            .find(intercurrence_id)
            .select((
                intercurrences::name,
                intercurrences::active,
                intercurrences::deleted,
            ))
            .first(c)
            .await
            .optional()?;
        let name = match found {
            Some((name, true, false)) => name,
            Some(_) => {
                return Err(Refusal::unusable(
                    "intercurrence_id",
                    format!("intercurrence {intercurrence_id} is inactive or deleted"),
                )
                .into());
            }
            None => {
                return Err(Refusal::unusable(
                    "intercurrence_id",
                    format!("intercurrence {intercurrence_id} does not exist"),
                )
                .into());
            }
        };
        diesel::insert_into(incident_intercurrences::table)
            .values((
                incident_intercurrences::incident_id.eq(id),
                incident_intercurrences::intercurrence_id.eq(intercurrence_id),
                incident_intercurrences::notes.eq(&notes),
                incident_intercurrences::recorded_by.eq(user.id),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().record(
            "intercurrences",
            "intercurrence",
            json!({"id": intercurrence_id, "name": name, "notes": notes}),
        );
        writes::commit(c, &cur, user.id, "intercurrence", cur.state, changes).await
    })
    .await
}

/// `POST /incident/{id}/transfer`: the attendance passes to another active employee.
pub async fn transfer(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
    id: i64,
    expected: i32,
    employee_id: i64,
) -> Result<Written> {
    conn.transaction::<_, Error, _>(async |c| {
        let cur = lock(c, id, Some(expected)).await?;
        incident::edit(
            cur.state,
            "transfer",
            Some(&[State::Regulated, State::Dispatched]),
        )?;
        let target: Option<i64> = employees::table
            .inner_join(users::table)
            .filter(employees::id.eq(employee_id))
            .filter(employees::active)
            .filter(users::status.eq(ACTIVE))
            .select(users::id)
            .first(c)
            .await
            .optional()?;
        let target = target.ok_or_else(|| {
            Refusal::unusable(
                "employee_id",
                format!("employee {employee_id} does not exist or is not active"),
            )
        })?;
        let before: Option<i64> = incidents::table
            .find(id)
            .select(incidents::assigned_to_id)
            .first(c)
            .await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::assigned_to_id.eq(target))
            .execute(c)
            .await?;
        let changes = Changes::new()
            .field("regulation", "assigned_to_id", before, target)
            .record("regulation", "employee_id", json!(employee_id));
        writes::commit(c, &cur, user.id, "transferred", cur.state, changes).await
    })
    .await
}

/// `POST /incident/{id}/close`: the conclusion; 409 `unit_assigned` while a unit is not
/// released.
pub async fn close(
    conn: &mut AsyncPgConnection,
    user: &CurrentUser,
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
        diesel::update(incidents::table.find(id))
            .set((
                incidents::conclusion.eq(&conclusion),
                incidents::closed_at.eq(now),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().field("conclusion", "conclusion", None::<&str>, &conclusion);
        writes::commit(c, &cur, user.id, "closed", to, changes).await
    })
    .await
}
