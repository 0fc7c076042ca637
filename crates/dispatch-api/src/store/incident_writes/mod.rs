//! Every write (docs/dispatch-realtime.md, "Writes"), each one transaction: lock the incident,
//! ask the state machine, change the rows, raise the version, append the history, NOTIFY.
//! A write to an existing incident fills the one frame (`store::frame`) with its body.
//! Every field a write changes on the incident is in its history entry, from and to
//! (docs/dispatch-routes.md, "Writes: what each records"). Which states allow a write and
//! which references it may name are the domain's (`domain::incident`,
//! `domain::reference`); here they are asked.
//!
//! Here: the forms (create, PATCH) and the moves of the state alone (submit, cancel, prank
//! call, close); `regulation`: decisions and who holds the incident; `dispatch`: the units.

mod dispatch;
mod regulation;

pub use dispatch::{DispatchWritten, NewDispatch, dispatch_status, dispatch_unit};
pub use regulation::{intercurrence, send_to, technical_decision, transfer};

use chrono::{DateTime, Datelike, Utc};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use crate::domain::dispatch::Status;
use crate::domain::form::{IncidentForm, history_name, wire_name};
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::domain::incident::{self, Edit, State};
use crate::domain::refusal::FieldFault;
use crate::domain::{Refusal, phone, reference, times};
use crate::schema::dispatch::*;
use crate::store::error::{Result, StoreError};
use crate::store::frame::{self, Commit};
use crate::store::phases;
use crate::store::read::UserOption;
use crate::store::writes::{self, Author, Changes, Written};

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

/// `POST /incident`: a new incident in `registering`, version 1, history `created`. The call
/// was received at `call_received_at` (judged by `domain::times::call_received_at` against the
/// write's instant; the write's instant when not given).
pub async fn create(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    mut fields: IncidentForm,
    call_received_at: Option<DateTime<Utc>>,
    call_id: Option<String>,
) -> Result<Written> {
    conn.transaction::<_, StoreError, _>(async |c| {
        let received = match &call_id {
            None => times::call_received_at(call_received_at, by.at)?,
            Some(call_id) => from_call(c, call_id, &mut fields, call_received_at).await?,
        };
        check_related(c, fields.related_incident_id, None).await?;
        let destination = check_destination(
            c,
            wire_name("destination_health_unit_id"),
            fields.destination_health_unit_id,
        )
        .await?;
        check_occurrence_type(c, fields.occurrence_type.as_deref()).await?;
        let id: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "nextval(pg_get_serial_sequence('dispatch.incidents', 'id'))",
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
                incidents::waiting_since.eq(by.at),
                incidents::call_received_at.eq(received),
                incidents::caller_phone_key.eq(phone::key_of(&fields.caller_phone)),
                &fields,
            ))
            .execute(c)
            .await?;
        phases::refresh(c, id, by.at).await?;
        let mut changes = Changes::new()
            .field(ChangeGroup::State, "state", None::<&str>, "registering")
            .field(
                ChangeGroup::BasicData,
                "call_received_at",
                None::<()>,
                received,
            );
        if let Some(call_id) = &call_id {
            crate::store::calls::link(c, call_id, id).await?;
            changes = changes.field(ChangeGroup::BasicData, "call_id", None::<()>, call_id);
        }
        for (name, group, value) in in_name_order(&fields, destination) {
            if !value.is_null() {
                changes = changes.field(group, name, None::<()>, value);
            }
        }
        writes::append_history(c, id, 1, by, HistoryAction::Created, &changes).await?;
        writes::announce(c, id, 1, changes.groups()).await?;
        Ok(Written {
            id,
            version: 1,
            state: State::Registering,
        })
    })
    .await
}

/// An incident created from the switch's call `call_id` (docs/dispatch-telephony.md): the
/// call locked (one incident per call), its ring time the call's reception and its number
/// the caller's phone. A different time or number sent by the client is refused, naming it.
async fn from_call(
    c: &mut AsyncPgConnection,
    call_id: &str,
    fields: &mut IncidentForm,
    sent_received_at: Option<DateTime<Utc>>,
) -> Result<DateTime<Utc>> {
    let fault = |field: &str, message: String| {
        Refusal::InvalidFields(vec![FieldFault {
            field: field.into(),
            message,
        }])
    };
    let Some(call) = crate::store::calls::lock(c, call_id).await? else {
        return Err(Refusal::unusable(
            "call_id",
            format!("`{call_id}` is no call the switch announced"),
        )
        .into());
    };
    if let Some(taken) = call.incident_id {
        let number: String = incidents::table
            .find(taken)
            .select(incidents::number)
            .first(c)
            .await?;
        return Err(Refusal::unusable(
            "call_id",
            format!("call `{call_id}` is already incident {number}"),
        )
        .into());
    }
    if sent_received_at.is_some_and(|at| at != call.rang_at) {
        return Err(fault(
            "call_received_at",
            format!(
                "must be the call's ring time, {} (or left out)",
                call.rang_at.to_rfc3339()
            ),
        )
        .into());
    }
    match (&call.caller, fields.caller_phone.is_empty()) {
        (Some(number), true) => fields.caller_phone = number.clone(),
        (Some(number), false) if phone::key_of(number) != phone::key_of(&fields.caller_phone) => {
            return Err(fault(
                "caller_phone",
                format!("must be the call's number, {number} (or left out)"),
            )
            .into());
        }
        (None, true) => {
            return Err(fault(
                "caller_phone",
                "is required: the switch did not send the caller's number".into(),
            )
            .into());
        }
        _ => {}
    }
    Ok(call.rang_at)
}

/// The form's fields by their history names (`domain::form::history_name`), in the order of
/// those names, as the history's `changes` holds them: the order in which an event names the
/// groups that moved. The patient's destination is `destination` (`{id, name}`, or null), as
/// every reference in a history entry is.
fn in_name_order(
    form: &IncidentForm,
    destination: Option<HealthUnitRef>,
) -> Vec<(&'static str, ChangeGroup, serde_json::Value)> {
    let mut values: Vec<_> = form
        .values()
        .into_iter()
        .map(|(name, group, value)| {
            let value = match name {
                "destination_health_unit_id" => json!(destination),
                _ => value,
            };
            (history_name(name), group, value)
        })
        .collect();
    values.sort_by_key(|(name, _, _)| *name);
    values
}

/// A health unit as a history entry names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Queryable)]
pub(crate) struct HealthUnitRef {
    pub id: i64,
    pub name: String,
}

/// The health unit `id` names (any, active or not), for the history (`None` for none).
async fn health_unit(c: &mut AsyncPgConnection, id: Option<i64>) -> Result<Option<HealthUnitRef>> {
    let Some(id) = id else { return Ok(None) };
    let name: String = health_units::table
        .find(id)
        .select(health_units::name)
        .first(c)
        .await?;
    Ok(Some(HealthUnitRef { id, name }))
}

/// The related incident (if any) exists and is not `own`.
async fn check_related(
    c: &mut AsyncPgConnection,
    related: Option<i64>,
    own: Option<i64>,
) -> Result<()> {
    let Some(rid) = related else { return Ok(()) };
    let found = own == Some(rid)
        || diesel::select(exists(incidents::table.filter(incidents::id.eq(rid))))
            .get_result(c)
            .await?;
    Ok(reference::related_incident(found, rid, own)?)
}

/// A destination (a dispatch's or the patient's), judged by `domain::reference::destination`,
/// and its name for the history; `None` (no destination, or clearing it) is always fine.
async fn check_destination(
    c: &mut AsyncPgConnection,
    field: &str,
    unit: Option<i64>,
) -> Result<Option<HealthUnitRef>> {
    let Some(unit) = unit else { return Ok(None) };
    let found: Option<(String, bool)> = health_units::table
        .find(unit)
        .select((health_units::name, health_units::active))
        .first(c)
        .await
        .optional()?;
    reference::destination(found.as_ref().map(|(_, active)| *active), field, unit)?;
    Ok(found.map(|(name, _)| HealthUnitRef { id: unit, name }))
}

/// An occurrence type (`None`: none, or clearing it) names an active type of the catalogue,
/// judged by `domain::reference::occurrence_type`; one statement reads the active names.
async fn check_occurrence_type(c: &mut AsyncPgConnection, value: Option<&str>) -> Result<()> {
    let Some(value) = value else { return Ok(()) };
    let active: Vec<String> = occurrence_types::table
        .filter(occurrence_types::active)
        .select(occurrence_types::name)
        .order_by((
            crate::store::search_order(occurrence_types::name),
            occurrence_types::id,
        ))
        .load(c)
        .await?;
    Ok(reference::occurrence_type(value, active)?)
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
    frame::write(conn, by, id, Some(expected), async |c, cur| {
        incident::edit(cur.state, Edit::Update)?;
        let mut next = cur.fields.clone();
        apply(&mut next);
        if next.related_incident_id != cur.fields.related_incident_id {
            check_related(c, next.related_incident_id, Some(id)).await?;
        }
        // The destination's names are read only when it changes (unchanged, it is not
        // recorded: both sides are `None` then).
        let (was, destination) =
            if next.destination_health_unit_id != cur.fields.destination_health_unit_id {
                let was = health_unit(c, cur.fields.destination_health_unit_id).await?;
                let field = wire_name("destination_health_unit_id");
                let to = check_destination(c, field, next.destination_health_unit_id).await?;
                (was, to)
            } else {
                (None, None)
            };
        if next.occurrence_type != cur.fields.occurrence_type {
            check_occurrence_type(c, next.occurrence_type.as_deref()).await?;
        }
        let mut changes = Changes::new();
        let before = in_name_order(&cur.fields, was);
        let after = in_name_order(&next, destination);
        for ((name, group, from), (_, _, to)) in before.into_iter().zip(after) {
            if from != to {
                changes = changes.field(group, name, from, to);
            }
        }
        diesel::update(incidents::table.filter(incidents::id.eq(id)))
            .set((
                &next,
                incidents::caller_phone_key.eq(phone::key_of(&next.caller_phone)),
            ))
            .execute(c)
            .await?;
        Ok(Commit::stay(HistoryAction::Updated, changes))
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
    action: HistoryAction,
    reason: Option<String>,
) -> Result<Written> {
    frame::write(conn, by, id, Some(expected), async |c, cur| {
        let to = incident::transition(cur.state, to)?;
        if to == State::AwaitingRegulation {
            // Handed to regulation: the end of call taking (docs/dispatch-routes.md,
            // "Response times"); the history entry's `at` is the same instant.
            diesel::update(incidents::table.find(id))
                .set(incidents::submitted_at.eq(by.at))
                .execute(c)
                .await?;
        }
        let mut changes = Changes::new();
        if let Some(reason) = reason {
            changes = changes.record(ChangeGroup::State, "reason", json!(reason));
        }
        Ok(Commit::moving(action, to, changes))
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
    frame::write(conn, by, id, Some(expected), async |c, cur| {
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
            ChangeGroup::PrankCalls,
            "prank_call_phone",
            json!(cur.fields.caller_phone),
        );
        Ok(Commit::moving(HistoryAction::PrankCall, to, changes))
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
    frame::write(conn, by, id, Some(expected), async |c, cur| {
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
            .field(
                ChangeGroup::Conclusion,
                "conclusion",
                &cur.conclusion,
                &conclusion,
            )
            .field(
                ChangeGroup::Conclusion,
                "closed_at",
                cur.closed_at,
                closed_at,
            );
        Ok(Commit::moving(HistoryAction::Closed, to, changes))
    })
    .await
}
