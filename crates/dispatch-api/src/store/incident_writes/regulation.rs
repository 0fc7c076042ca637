//! The regulation's writes: a technical decision, and who holds the incident (send-to,
//! transfer), and what happened during the attendance (intercurrence).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use super::{PersonRow, person};
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::domain::incident::{self, Edit, State};
use crate::domain::reference::{self, Candidate, Entry, Taker};
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
        let name = reference::entry(
            action.map(|r| Entry {
                name: r.name,
                active: r.active,
                deleted: r.deleted,
            }),
            "action_id",
            "action",
            action_id,
        )?;
        let vehicle_type = match mobile_unit_type_id {
            None => None,
            Some(t) => {
                let found = mobile_unit_types::table
                    .find(t)
                    .select((mobile_unit_types::name, mobile_unit_types::active))
                    .first::<(String, bool)>(c)
                    .await
                    .optional()?;
                Some(reference::unit_type(found, t)?)
            }
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
        let decisions = ChangeGroup::TechnicalDecisions;
        let mut changes = Changes::new()
            .record(decisions, "action", json!(name))
            .record(decisions, "notes", json!(notes))
            .record(decisions, "vehicle_type", json!(vehicle_type))
            .field(
                ChangeGroup::Regulation,
                "regulated_at",
                cur.regulated_at,
                regulated_at,
            );
        // The one who decides becomes the regulator, replacing one an earlier send-to chose.
        if cur.regulator_id != Some(by.id()) {
            let me = UserOption {
                id: by.id(),
                descriptive_name: by.user.descriptive_name.clone(),
            };
            let before = person(c, cur.regulator_id).await?;
            changes = changes.field(ChangeGroup::Regulation, "regulator", before, me);
        }
        writes::commit(c, &cur, by, HistoryAction::TechnicalDecision, to, changes).await
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
        incident::edit(cur.state, Edit::SendTo)?;
        let found: Option<(PersonRow, String, Profile)> = users::table
            .inner_join(profiles::table)
            .filter(users::id.eq(to_user))
            .select((PersonRow::as_select(), users::status, profiles::title))
            .first(c)
            .await
            .optional()?;
        let found = found.map(|(person, status, profile)| {
            let candidate = Candidate {
                active: status == ACTIVE,
                profile,
                employee_active: false,
            };
            (person, candidate)
        });
        let target = reference::taker(found, Taker::SendTo, to_user)?;
        let before = person(c, cur.regulator_id).await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::regulator_id.eq(to_user))
            .execute(c)
            .await?;
        let changes = Changes::new().field(
            ChangeGroup::Regulation,
            "regulator",
            before,
            UserOption::from(target),
        );
        writes::commit(c, &cur, by, HistoryAction::SentTo, cur.state, changes).await
    })
    .await
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
        incident::edit(cur.state, Edit::Intercurrence)?;
        let found: Option<IntercurrenceRow> = intercurrences::table
            .find(intercurrence_id)
            .select(IntercurrenceRow::as_select())
            .first(c)
            .await
            .optional()?;
        let name = reference::entry(
            found.map(|r| Entry {
                name: r.name,
                active: r.active,
                deleted: r.deleted,
            }),
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
            ChangeGroup::Intercurrences,
            "intercurrence",
            json!({"id": intercurrence_id, "name": name, "notes": notes}),
        );
        writes::commit(
            c,
            &cur,
            by,
            HistoryAction::Intercurrence,
            cur.state,
            changes,
        )
        .await
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
        incident::edit(cur.state, Edit::Transfer)?;
        let found: Option<(PersonRow, String, Profile, bool)> = users::table
            .inner_join(employees::table)
            .inner_join(profiles::table)
            .filter(users::id.eq(to_user))
            .select((
                PersonRow::as_select(),
                users::status,
                profiles::title,
                employees::active,
            ))
            .first(c)
            .await
            .optional()?;
        let found = found.map(|(person, status, profile, employee_active)| {
            let candidate = Candidate {
                active: status == ACTIVE,
                profile,
                employee_active,
            };
            (person, candidate)
        });
        let target = reference::taker(found, Taker::Transfer, to_user)?;
        let before = person(c, cur.assigned_to_id).await?;
        diesel::update(incidents::table.find(id))
            .set(incidents::assigned_to_id.eq(to_user))
            .execute(c)
            .await?;
        let changes = Changes::new().field(
            ChangeGroup::Regulation,
            "assigned_to",
            before,
            UserOption::from(target),
        );
        writes::commit(c, &cur, by, HistoryAction::Transferred, cur.state, changes).await
    })
    .await
}
