//! Positions, the recommendation's candidates, and the fleet and team writes
//! (docs/dispatch-routes.md, "Positions and a recommendation", "Managing the fleet and the
//! team"). Each write runs in one transaction and appends a `fleet_history` row.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};

use crate::domain::Refusal;
use crate::domain::dispatch::Status;
use crate::domain::fleet::{Candidate, Fix, Point, Rules, Whereabouts};
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::schema::dispatch::*;
use crate::store::error::{Result, StoreError};
use crate::store::frame::{self, Commit};
use crate::store::read::*;
use crate::store::writes::{Author, Changes, Written};
use crate::store::{FLEET_CHANNEL, reference};

/// PostgreSQL refuses a `NOTIFY` payload of 8,000 bytes or more. A step's message is some
/// 400 bytes; one whose names (unit, base, type: unbounded text) would make it longer than
/// this is announced as [`FLEET_RESYNC`] instead.
pub const FLEET_PAYLOAD_LIMIT: usize = 7_000;

/// The payload that tells the fleet's followers to read the board again (`queue.resync`).
pub const FLEET_RESYNC: &str = "resync";

/// Announces a unit's step on [`FLEET_CHANNEL`], in the step's transaction (delivered on
/// commit only): the step, its time, the dispatch, and the unit's row of the fleet board as
/// it reads after the step (docs/dispatch-realtime.md, "The fleet board"). One statement.
pub async fn announce_step(
    c: &mut AsyncPgConnection,
    dispatch_id: i64,
    unit: i64,
    step: Status,
    at: DateTime<Utc>,
) -> Result<()> {
    let Some(unit) = reference::fleet_board_unit(c, unit).await? else {
        return Ok(());
    };
    let message = UnitStep {
        step,
        at,
        dispatch_id,
        unit,
    };
    let payload = serde_json::to_string(&message)
        .ok()
        .filter(|json| json.len() < FLEET_PAYLOAD_LIMIT)
        .unwrap_or_else(|| FLEET_RESYNC.to_owned());
    common::listen::notify(c, FLEET_CHANNEL, &payload).await?;
    Ok(())
}

/// A unit as the recommendation sees it, with its names for the answer.
pub struct UnitOnMap {
    pub candidate: Candidate,
    pub name: String,
    pub base: String,
    pub vehicle_type: RefOption,
    pub fix: Option<Fix>,
}

#[derive(Queryable)]
struct MapRow {
    id: i64,
    name: String,
    base: String,
    active: bool,
    type_id: i32,
    type_name: String,
    base_lat: Option<f64>,
    base_lon: Option<f64>,
    lat: Option<f64>,
    lon: Option<f64>,
    recorded_at: Option<DateTime<Utc>>,
    busy: bool,
}

/// Every unit with its type, base coordinates, latest position and whether it is on a
/// dispatch that is not released; by id. One statement.
pub async fn units_on_map(
    mut conn: &AsyncPgConnection,
    now: DateTime<Utc>,
    rules: &Rules,
) -> Result<Vec<UnitOnMap>, diesel::result::Error> {
    let busy = diesel::dsl::exists(
        dispatches::table
            .filter(dispatches::mobile_unit_id.eq(mobile_units::id))
            .filter(dispatches::status.ne(Status::Released)),
    );
    let rows: Vec<MapRow> = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .left_join(bases::table.on(bases::name.eq(mobile_units::base)))
        .left_join(mobile_unit_positions::table)
        .order_by(mobile_units::id)
        .select((
            mobile_units::id,
            mobile_units::name,
            mobile_units::base,
            mobile_units::active,
            mobile_unit_types::id,
            mobile_unit_types::name,
            bases::lat.nullable(),
            bases::lon.nullable(),
            mobile_unit_positions::lat.nullable(),
            mobile_unit_positions::lon.nullable(),
            mobile_unit_positions::recorded_at.nullable(),
            busy,
        ))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let fix = r
                .lat
                .zip(r.lon)
                .zip(r.recorded_at)
                .map(|((lat, lon), at)| Fix {
                    at: Point { lat, lon },
                    recorded_at: at,
                });
            let base = r
                .base_lat
                .zip(r.base_lon)
                .map(|(lat, lon)| Point { lat, lon });
            UnitOnMap {
                candidate: Candidate {
                    id: r.id,
                    type_id: r.type_id,
                    active: r.active,
                    busy: r.busy,
                    whereabouts: Whereabouts::of(fix, base, now, rules),
                },
                name: r.name,
                base: r.base,
                vehicle_type: RefOption {
                    id: r.type_id,
                    name: r.type_name,
                },
                fix,
            }
        })
        .collect())
}

/// The incident's number, location and the vehicle type its latest technical decision asks
/// for; `None` when it does not exist. One statement each, pipelined.
pub async fn incident_for_recommendation(
    mut conn: &AsyncPgConnection,
    id: i64,
) -> Result<Option<(IncidentRef, Option<Location>, Option<RefOption>)>, diesel::result::Error> {
    let incident = incidents::table
        .filter(incidents::id.eq(id))
        .select((
            incidents::number,
            incidents::location_lat,
            incidents::location_lon,
        ))
        .first::<(String, Option<f64>, Option<f64>)>(&mut conn);
    let decision = technical_decisions::table
        .left_join(mobile_unit_types::table)
        .filter(technical_decisions::incident_id.eq(id))
        .order_by((
            technical_decisions::decided_at.desc(),
            technical_decisions::id.desc(),
        ))
        .select((
            mobile_unit_types::id.nullable(),
            mobile_unit_types::name.nullable(),
        ))
        .first::<(Option<i32>, Option<String>)>(&mut conn);
    let (incident, decision) = tokio::join!(incident, decision);
    let Some((number, lat, lon)) = incident.optional()? else {
        return Ok(None);
    };
    let requested = decision.optional()?.and_then(|(id, name)| {
        Some(RefOption {
            id: id?,
            name: name?,
        })
    });
    let location = lat.zip(lon).map(|(lat, lon)| Location { lat, lon });
    Ok(Some((IncidentRef { id, number }, location, requested)))
}

/// `PUT /incident/{id}/location`: where the call is, from the client's map; `null` clears it.
/// An incident write: version raised, history entry `located`, `incident.updated` with
/// `basic_data`.
pub async fn locate_incident(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: i32,
    to: Option<Location>,
) -> Result<Written> {
    frame::write(conn, by, id, Some(expected), async |c, _| {
        let (lat, lon): (Option<f64>, Option<f64>) = incidents::table
            .filter(incidents::id.eq(id))
            .select((incidents::location_lat, incidents::location_lon))
            .first(c)
            .await?;
        let from = lat.zip(lon).map(|(lat, lon)| Location { lat, lon });
        if from == to {
            return Err(Refusal::NothingToChange.into());
        }
        diesel::update(incidents::table.filter(incidents::id.eq(id)))
            .set((
                incidents::location_lat.eq(to.map(|l| l.lat)),
                incidents::location_lon.eq(to.map(|l| l.lon)),
            ))
            .execute(c)
            .await?;
        let changes = Changes::new().field(ChangeGroup::BasicData, "location", from, to);
        Ok(Commit::stay(HistoryAction::Located, changes))
    })
    .await
}

/// `POST /mobile-unit/{id}/position`: keeps the newest of the kept and the sent position (by
/// `recorded_at`); one statement.
pub async fn record_position(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    unit: i64,
    at: Location,
    recorded_at: DateTime<Utc>,
) -> Result<PositionRecorded> {
    use mobile_unit_positions as p;
    conn.transaction::<_, StoreError, _>(async |c| {
        let exists: bool = diesel::select(diesel::dsl::exists(
            mobile_units::table.filter(mobile_units::id.eq(unit)),
        ))
        .get_result(c)
        .await?;
        if !exists {
            return Err(Refusal::not_found("mobile unit", unit).into());
        }
        // The newer report wins: an older one than the kept position changes nothing.
        let written = diesel::sql_query(
            "INSERT INTO dispatch.mobile_unit_positions AS p \
                 (mobile_unit_id, lat, lon, recorded_at, received_at, reported_by) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (mobile_unit_id) DO UPDATE SET lat = excluded.lat, \
                 lon = excluded.lon, recorded_at = excluded.recorded_at, \
                 received_at = excluded.received_at, reported_by = excluded.reported_by \
             WHERE p.recorded_at <= excluded.recorded_at",
        )
        .bind::<BigInt, _>(unit)
        .bind::<Double, _>(at.lat)
        .bind::<Double, _>(at.lon)
        .bind::<Timestamptz, _>(recorded_at)
        .bind::<Timestamptz, _>(by.at)
        .bind::<BigInt, _>(by.id())
        .execute(c)
        .await?;
        let (lat, lon, kept_at, received_at): (f64, f64, DateTime<Utc>, DateTime<Utc>) = p::table
            .find(unit)
            .select((p::lat, p::lon, p::recorded_at, p::received_at))
            .first(c)
            .await?;
        Ok(PositionRecorded {
            mobile_unit_id: unit,
            outcome: if written == 1 {
                PositionOutcome::Recorded
            } else {
                PositionOutcome::OlderThanKept
            },
            sent_recorded_at: recorded_at,
            location: Location { lat, lon },
            recorded_at: kept_at,
            received_at,
        })
    })
    .await
}

/// What `PATCH /mobile-unit/{id}` may change; `None`: leave as is. `team` `Some(None)`
/// clears the unit's team.
#[derive(Debug, Default)]
pub struct UnitChange {
    pub active: Option<bool>,
    pub base: Option<String>,
    pub team_id: Option<Option<i32>>,
}

#[derive(Queryable)]
struct UnitNow {
    name: String,
    active: bool,
    base: String,
    team_id: Option<i32>,
    type_id: i32,
    type_name: String,
}

async fn team(c: &mut AsyncPgConnection, id: Option<i32>) -> Result<Option<RefOption>> {
    let Some(id) = id else { return Ok(None) };
    Ok(teams::table
        .find(id)
        .select((teams::id, teams::name))
        .first::<(i32, String)>(c)
        .await
        .optional()?
        .map(|(id, name)| RefOption { id, name }))
}

/// `PATCH /mobile-unit/{id}`: active, base, team. 409 `unit_dispatched` while the unit is on a
/// dispatch that is not released; 422 naming a base or team that does not exist.
pub async fn patch_unit(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    change: UnitChange,
) -> Result<ManagedUnit> {
    conn.transaction::<_, StoreError, _>(async |c| {
        mobile_units::table
            .find(id)
            .select(mobile_units::id)
            .for_update()
            .first::<i64>(c)
            .await
            .optional()?
            .ok_or_else(|| Refusal::not_found("mobile unit", id))?;
        let now: UnitNow = mobile_units::table
            .inner_join(mobile_unit_types::table)
            .filter(mobile_units::id.eq(id))
            .select((
                mobile_units::name,
                mobile_units::active,
                mobile_units::base,
                mobile_units::team_id,
                mobile_unit_types::id,
                mobile_unit_types::name,
            ))
            .first(c)
            .await?;
        let busy: bool = diesel::select(diesel::dsl::exists(
            dispatches::table
                .filter(dispatches::mobile_unit_id.eq(id))
                .filter(dispatches::status.ne(Status::Released)),
        ))
        .get_result(c)
        .await?;
        if busy {
            return Err(Refusal::UnitDispatched(id).into());
        }
        let mut changes = serde_json::Map::new();
        let (mut active, mut base, mut team_id) = (now.active, now.base.clone(), now.team_id);
        if let Some(to) = change.active
            && to != now.active
        {
            changes.insert("active".into(), json!({"from": now.active, "to": to}));
            active = to;
        }
        if let Some(to) = change.base
            && to != now.base
        {
            let known: bool = diesel::select(diesel::dsl::exists(
                bases::table.filter(bases::name.eq(&to)),
            ))
            .get_result(c)
            .await?;
            if !known {
                return Err(Refusal::unusable("base", format!("no base is named `{to}`")).into());
            }
            changes.insert("base".into(), json!({"from": now.base, "to": to}));
            base = to;
        }
        if let Some(to) = change.team_id
            && to != now.team_id
        {
            let to_team = team(c, to).await?;
            if to.is_some() && to_team.is_none() {
                return Err(Refusal::unusable(
                    "team_id",
                    format!("team {} does not exist", to.unwrap_or_default()),
                )
                .into());
            }
            let from_team = team(c, now.team_id).await?;
            changes.insert("team".into(), json!({"from": from_team, "to": to_team}));
            team_id = to;
        }
        if changes.is_empty() {
            return Err(Refusal::NothingToChange.into());
        }
        diesel::update(mobile_units::table.find(id))
            .set((
                mobile_units::active.eq(active),
                mobile_units::base.eq(&base),
                mobile_units::team_id.eq(team_id),
            ))
            .execute(c)
            .await?;
        history(c, by, Some(id), None, "updated", Value::Object(changes)).await?;
        Ok(ManagedUnit {
            id,
            name: now.name,
            active,
            base,
            team: team(c, team_id).await?,
            vehicle_type: RefOption {
                id: now.type_id,
                name: now.type_name,
            },
        })
    })
    .await
}

async fn history(
    c: &mut AsyncPgConnection,
    by: &Author<'_>,
    unit: Option<i64>,
    user: Option<i64>,
    action: &str,
    changes: Value,
) -> Result<()> {
    diesel::insert_into(fleet_history::table)
        .values((
            fleet_history::mobile_unit_id.eq(unit),
            fleet_history::user_id.eq(user),
            fleet_history::action.eq(action),
            fleet_history::changes.eq(changes),
            fleet_history::by_user_id.eq(by.id()),
            fleet_history::at.eq(by.at),
        ))
        .execute(c)
        .await?;
    Ok(())
}

async fn person(c: &mut AsyncPgConnection, user: i64) -> Result<(UserOption, Option<i32>)> {
    let (id, descriptive_name, team_id): (i64, String, Option<i32>) = users::table
        .find(user)
        .select((users::id, users::descriptive_name, users::team_id))
        .for_update()
        .first(c)
        .await
        .optional()?
        .ok_or_else(|| Refusal::unusable("user_id", format!("user {user} does not exist")))?;
    Ok((
        UserOption {
            id,
            descriptive_name,
        },
        team_id,
    ))
}

/// Whether the person is on `GET /unallocated` (without a post today, whatever team they
/// belong to).
async fn is_unallocated(c: &mut AsyncPgConnection, user: i64) -> Result<bool> {
    Ok(diesel::select(diesel::dsl::exists(
        unallocated::table.filter(unallocated::user_id.eq(user)),
    ))
    .get_result(c)
    .await?)
}

/// `POST /team/{id}/allocate`: the person joins the team and leaves `GET /unallocated`. 409
/// `already_allocated` when they work in a team today (in one and not on the list).
pub async fn allocate(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    team_id: i32,
    user: i64,
) -> Result<Allocation> {
    conn.transaction::<_, StoreError, _>(async |c| {
        let to = team(c, Some(team_id))
            .await?
            .ok_or_else(|| Refusal::not_found("team", team_id.into()))?;
        let (who, current) = person(c, user).await?;
        if let Some(team) = current
            && !is_unallocated(c, user).await?
        {
            return Err(Refusal::AlreadyAllocated { user, team }.into());
        }
        diesel::update(users::table.find(user))
            .set(users::team_id.eq(team_id))
            .execute(c)
            .await?;
        let was: Option<String> =
            diesel::delete(unallocated::table.filter(unallocated::user_id.eq(user)))
                .returning(unallocated::reason)
                .get_result(c)
                .await
                .optional()?;
        let from = team(c, current).await?;
        let changes = json!({"team": {"from": from, "to": to}, "unallocated_reason": was});
        history(c, by, None, Some(user), "allocated", changes).await?;
        Ok(Allocation {
            user: who,
            team: Some(to),
        })
    })
    .await
}

/// `POST /team/{id}/release`: the person leaves the team and is listed on `GET /unallocated`
/// with `reason` from now. 409 `not_allocated` when not working in that team (in another,
/// or already on the list).
pub async fn release(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    team_id: i32,
    user: i64,
    reason: String,
) -> Result<Allocation> {
    conn.transaction::<_, StoreError, _>(async |c| {
        let from = team(c, Some(team_id))
            .await?
            .ok_or_else(|| Refusal::not_found("team", team_id.into()))?;
        let (who, current) = person(c, user).await?;
        if current != Some(team_id) || is_unallocated(c, user).await? {
            return Err(Refusal::NotAllocated {
                user,
                team: team_id,
            }
            .into());
        }
        diesel::update(users::table.find(user))
            .set(users::team_id.eq(None::<i32>))
            .execute(c)
            .await?;
        diesel::insert_into(unallocated::table)
            .values((
                unallocated::user_id.eq(user),
                unallocated::reason.eq(&reason),
                unallocated::since.eq(by.at),
            ))
            .on_conflict(unallocated::user_id)
            .do_update()
            .set((
                unallocated::reason.eq(&reason),
                unallocated::since.eq(by.at),
            ))
            .execute(c)
            .await?;
        let changes = json!({"team": {"from": from, "to": null}, "unallocated_reason": reason});
        history(c, by, None, Some(user), "released", changes).await?;
        Ok(Allocation {
            user: who,
            team: None,
        })
    })
    .await
}

/// `GET /mobile-unit/{id}/history`: the unit's fleet writes, oldest first; `None` when the
/// unit does not exist.
pub async fn unit_history(
    mut conn: &AsyncPgConnection,
    id: i64,
) -> Result<Option<Vec<FleetHistoryEntry>>, diesel::result::Error> {
    let exists = diesel::select(diesel::dsl::exists(
        mobile_units::table.filter(mobile_units::id.eq(id)),
    ))
    .get_result::<bool>(&mut conn);
    let rows = fleet_history::table
        .inner_join(users::table.on(users::id.eq(fleet_history::by_user_id)))
        .filter(fleet_history::mobile_unit_id.eq(id))
        .order_by((fleet_history::at, fleet_history::id))
        .select((
            fleet_history::id,
            fleet_history::action,
            fleet_history::changes,
            users::id,
            users::descriptive_name,
            fleet_history::at,
        ))
        .load::<(i64, String, Value, i64, String, DateTime<Utc>)>(&mut conn);
    let (exists, rows) = tokio::try_join!(exists, rows)?;
    Ok(exists.then(|| {
        rows.into_iter()
            .map(|(id, action, changes, by, name, at)| FleetHistoryEntry {
                id,
                action,
                changes,
                by: UserOption {
                    id: by,
                    descriptive_name: name,
                },
                at,
            })
            .collect()
    }))
}
