//! The regulation's writes: a technical decision, and who holds the incident (send-to,
//! transfer), and what happened during the attendance (intercurrence).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use super::{PersonRow, person};
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::domain::incident::{self, Edit, State};
use crate::domain::reference::{self, Candidate, Entry, Taker};
use crate::domain::user::{Profile, UserStatus};
use crate::schema::dispatch::*;
use crate::store::error::Result;
use crate::store::frame::{self, Commit, held};
use crate::store::holders::Holders;
use crate::store::read::{RefOption, UserOption};
use crate::store::writes::{Author, Changes, Locked, Written};

/// A catalogue entry's `(name, active, deleted)`, as a technical decision finds its action
/// and a recording its intercurrence, for [`reference::entry`] to judge.
fn entry_of((name, active, deleted): (String, bool, bool)) -> Entry {
    Entry {
        name,
        active,
        deleted,
    }
}

/// `POST /incident/{id}/technical-decision`: `awaiting_regulation` -> `regulated`; the
/// caller becomes the incident's regulator.
pub async fn technical_decision(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    action_id: i32,
    vehicle_type_id: Option<i32>,
    notes: Option<String>,
) -> Result<Written> {
    frame::write(conn, by, id, Some(expected), async |c, cur| {
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
        let name = reference::entry(action.map(entry_of), "action_id", "action", action_id)?;
        let vehicle_type = match vehicle_type_id {
            None => None,
            Some(t) => {
                let found = mobile_unit_types::table
                    .find(t)
                    .select((mobile_unit_types::name, mobile_unit_types::active))
                    .first::<(String, bool)>(c)
                    .await
                    .optional()?;
                Some(RefOption {
                    id: t,
                    name: reference::vehicle_type(found, t)?,
                })
            }
        };
        diesel::insert_into(technical_decisions::table)
            .values((
                technical_decisions::incident_id.eq(id),
                technical_decisions::action_id.eq(action_id),
                technical_decisions::mobile_unit_type_id.eq(vehicle_type_id),
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
            .record(
                decisions,
                "action",
                json!(RefOption {
                    id: action_id,
                    name
                }),
            )
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
        let after = Holders {
            regulator: Some(by.id()),
            ..held(cur)
        };
        Ok(Commit::moving(HistoryAction::TechnicalDecision, to, changes).holders(after))
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
    frame::write(conn, by, id, Some(expected), async |c, cur| {
        incident::edit(cur.state, Edit::SendTo)?;
        let found: Option<(PersonRow, String, Profile)> = users::table
            .inner_join(profiles::table)
            .filter(users::id.eq(to_user))
            .select((PersonRow::as_select(), users::status, profiles::title))
            .first(c)
            .await
            .optional()?;
        let found = found.map(|(person, status, profile)| (person, status, profile, false));
        hand_over(c, cur, Taker::SendTo, to_user, by.id(), found).await
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
    notes: Option<String>,
) -> Result<Written> {
    frame::write(conn, by, id, Some(expected), async |c, cur| {
        incident::edit(cur.state, Edit::Intercurrence)?;
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
        let name = reference::entry(
            found.map(entry_of),
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
        let intercurrence = RefOption {
            id: intercurrence_id,
            name,
        };
        let changes = Changes::new()
            .record(
                ChangeGroup::Intercurrences,
                "intercurrence",
                json!(intercurrence),
            )
            .record(ChangeGroup::Intercurrences, "notes", json!(notes));
        Ok(Commit::stay(HistoryAction::Intercurrence, changes))
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
    frame::write(conn, by, id, Some(expected), async |c, cur| {
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
        hand_over(c, cur, Taker::Transfer, to_user, by.id(), found).await
    })
    .await
}

/// The incident passes to `to_user` as `taker` from `by`, the caller (`found`: the user,
/// their status and profile, and whether their employee record is active): the rule judges
/// them, the incident's
/// regulator (send-to) or assignee (transfer) becomes them; the entry the frame commits.
async fn hand_over(
    c: &mut AsyncPgConnection,
    cur: &Locked,
    taker: Taker,
    to_user: i64,
    by: i64,
    found: Option<(PersonRow, String, Profile, bool)>,
) -> Result<Commit> {
    let found = found.map(|(person, status, profile, employee_active)| {
        let candidate = Candidate {
            active: UserStatus::is_active(&status),
            profile,
            employee_active,
        };
        (person, candidate)
    });
    let target = reference::taker(found, taker, to_user, by)?;
    let (field, before, action) = match taker {
        Taker::SendTo => ("regulator", cur.regulator_id, HistoryAction::SentTo),
        Taker::Transfer => (
            "assigned_to",
            cur.assigned_to_id,
            HistoryAction::Transferred,
        ),
    };
    let before = person(c, before).await?;
    let row = incidents::table.find(cur.id);
    match taker {
        Taker::SendTo => {
            diesel::update(row)
                .set(incidents::regulator_id.eq(to_user))
                .execute(c)
                .await?
        }
        Taker::Transfer => {
            diesel::update(row)
                .set(incidents::assigned_to_id.eq(to_user))
                .execute(c)
                .await?
        }
    };
    let changes = Changes::new().field(
        ChangeGroup::Regulation,
        field,
        before,
        UserOption::from(target),
    );
    let after = match taker {
        Taker::SendTo => Holders {
            regulator: Some(to_user),
            ..held(cur)
        },
        Taker::Transfer => Holders {
            assigned_to: Some(to_user),
            ..held(cur)
        },
    };
    Ok(Commit::stay(action, changes).holders(after))
}
