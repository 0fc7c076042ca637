//! `dispatch-api seed`: deterministic demo data (see `plan`), written with bulk inserts.
//! Every row has a natural key (login, CNES, plate, incident number...) and is inserted with
//! `ON CONFLICT DO NOTHING` (or updated to the plan), and an incident's dependent rows are
//! written only when the incident itself is new: running it again duplicates nothing.

mod plan;
mod words;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use common::db::Conn;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

pub use plan::{DEMO_USERS, Plan, Scale};

use crate::domain::phone;
use crate::domain::user::Profile;
use crate::schema::dispatch::*;

const PROFILES: [(Profile, &str); 4] = [
    (Profile::Admin, "Administrador"),
    (Profile::Tarm, "Técnico Auxiliar de Regulação Médica"),
    (Profile::MedicoRegulador, "Médico Regulador"),
    (Profile::OperadorFrota, "Operador de Frota"),
];

/// Rows per INSERT: well under PostgreSQL's 65,535 bind parameters for our widest table.
const CHUNK: usize = 1_000;

#[derive(Debug, Serialize)]
pub struct SeededUser {
    pub id: i64,
    pub login: String,
    pub profile: String,
    pub status: String,
}

/// What `seed` prints: the demo logins and, per table, the rows this run inserted.
#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub users: Vec<SeededUser>,
    pub inserted: BTreeMap<&'static str, usize>,
}

/// The demo scale: what `dispatch-api seed` loads.
pub async fn run(conn: &mut Conn) -> anyhow::Result<SeedReport> {
    run_with(conn, Scale::Demo).await
}

pub async fn run_with(conn: &mut Conn, scale: Scale) -> anyhow::Result<SeedReport> {
    use diesel_async::AsyncConnection;
    let plan = plan::build(scale);
    conn.transaction::<_, anyhow::Error, _>(async |conn| write(conn, &plan).await)
        .await
}

type Ids<K> = HashMap<String, K>;

async fn write(conn: &mut AsyncPgConnection, plan: &Plan) -> anyhow::Result<SeedReport> {
    let mut inserted = BTreeMap::new();
    let refs = references(conn, &mut inserted).await?;
    let user_ids = write_users(conn, plan, &refs, &mut inserted).await?;
    let units = write_fleet(conn, plan, &refs, &mut inserted).await?;
    let health = write_health_units(conn, plan, &mut inserted).await?;
    let ids = Resolved {
        users: plan
            .users
            .iter()
            .map(|u| user_ids.get(&u.login).copied().unwrap_or_default())
            .collect(),
        units: plan
            .units
            .iter()
            .map(|u| units.get(&u.name).copied().unwrap_or_default())
            .collect(),
        health_units: plan
            .health_units
            .iter()
            .map(|h| health.get(&h.cnes).copied().unwrap_or_default())
            .collect(),
        refs,
    };
    write_incidents(conn, plan, &ids, &mut inserted).await?;
    let users = plan::DEMO_USERS
        .iter()
        .map(|(login, _, profile, status)| SeededUser {
            id: user_ids.get(*login).copied().unwrap_or_default(),
            login: (*login).to_owned(),
            profile: profile.title().to_owned(),
            status: (*status).to_owned(),
        })
        .collect();
    Ok(SeedReport { users, inserted })
}

/// Ids of the small reference lists, by name.
struct Refs {
    profiles: Ids<i32>,
    teams: Ids<i32>,
    professional_types: Ids<i32>,
    unit_types: Ids<i32>,
    actions: Ids<i32>,
    intercurrences: Ids<i32>,
}

/// Plan indexes resolved to database ids.
struct Resolved {
    users: Vec<i64>,
    units: Vec<i64>,
    health_units: Vec<i64>,
    refs: Refs,
}

async fn references(
    conn: &mut AsyncPgConnection,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<Refs> {
    let rows: Vec<_> = PROFILES
        .iter()
        .map(|(p, text)| (profiles::title.eq(p.title()), profiles::text.eq(*text)))
        .collect();
    diesel::insert_into(profiles::table)
        .values(rows)
        .on_conflict(profiles::title)
        .do_update()
        .set(profiles::text.eq(excluded(profiles::text)))
        .execute(conn)
        .await?;
    let rows: Vec<_> = words::TEAMS.iter().map(|t| teams::name.eq(*t)).collect();
    let n = diesel::insert_into(teams::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("teams", n);
    let rows: Vec<_> = words::PROFESSIONAL_TYPES
        .iter()
        .map(|(name, active)| {
            (
                professional_types::name.eq(*name),
                professional_types::active.eq(*active),
            )
        })
        .collect();
    let n = diesel::insert_into(professional_types::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("professional_types", n);
    let rows: Vec<_> = words::MOBILE_UNIT_TYPES
        .iter()
        .map(|(name, description, active)| {
            (
                mobile_unit_types::name.eq(*name),
                mobile_unit_types::description.eq(*description),
                mobile_unit_types::active.eq(*active),
            )
        })
        .collect();
    let n = diesel::insert_into(mobile_unit_types::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("mobile_unit_types", n);
    let rows: Vec<_> = words::DECISION_ACTIONS
        .iter()
        .map(|(name, active, deleted, _)| {
            (
                technical_decision_actions::name.eq(*name),
                technical_decision_actions::active.eq(*active),
                technical_decision_actions::deleted.eq(*deleted),
            )
        })
        .collect();
    let n = diesel::insert_into(technical_decision_actions::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("technical_decision_actions", n);
    let rows: Vec<_> = words::INTERCURRENCES
        .iter()
        .map(|(name, active, deleted)| {
            (
                intercurrences::name.eq(*name),
                intercurrences::active.eq(*active),
                intercurrences::deleted.eq(*deleted),
            )
        })
        .collect();
    let n = diesel::insert_into(intercurrences::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("intercurrences", n);
    Ok(Refs {
        profiles: by_name(
            profiles::table
                .select((profiles::title, profiles::id))
                .load(conn)
                .await?,
        ),
        teams: by_name(
            teams::table
                .select((teams::name, teams::id))
                .load(conn)
                .await?,
        ),
        professional_types: by_name(
            professional_types::table
                .select((professional_types::name, professional_types::id))
                .load(conn)
                .await?,
        ),
        unit_types: by_name(
            mobile_unit_types::table
                .select((mobile_unit_types::name, mobile_unit_types::id))
                .load(conn)
                .await?,
        ),
        actions: by_name(
            technical_decision_actions::table
                .select((
                    technical_decision_actions::name,
                    technical_decision_actions::id,
                ))
                .load(conn)
                .await?,
        ),
        intercurrences: by_name(
            intercurrences::table
                .select((intercurrences::name, intercurrences::id))
                .load(conn)
                .await?,
        ),
    })
}

fn by_name<K>(rows: Vec<(String, K)>) -> Ids<K> {
    rows.into_iter().collect()
}

async fn write_users(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    refs: &Refs,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<Ids<i64>> {
    let before: i64 = users::table.count().get_result(conn).await?;
    let rows: Vec<_> = plan
        .users
        .iter()
        .map(|u| {
            (
                users::login.eq(&u.login),
                users::descriptive_name.eq(&u.name),
                users::status.eq(u.status),
                users::profile_id.eq(refs
                    .profiles
                    .get(u.profile.title())
                    .copied()
                    .unwrap_or_default()),
                users::professional_type_id.eq(u
                    .professional_type
                    .and_then(|p| refs.professional_types.get(p).copied())),
                users::team_id.eq(u.team.and_then(|t| refs.teams.get(t).copied())),
            )
        })
        .collect();
    // The plan decides the demo users' fields, so a second run restores them (DO UPDATE).
    let ids: Vec<(String, i64)> = diesel::insert_into(users::table)
        .values(rows)
        .on_conflict(users::login)
        .do_update()
        .set((
            users::descriptive_name.eq(excluded(users::descriptive_name)),
            users::profile_id.eq(excluded(users::profile_id)),
            users::status.eq(excluded(users::status)),
            users::professional_type_id.eq(excluded(users::professional_type_id)),
            users::team_id.eq(excluded(users::team_id)),
        ))
        .returning((users::login, users::id))
        .get_results(conn)
        .await?;
    let after: i64 = users::table.count().get_result(conn).await?;
    inserted.insert("users", usize::try_from(after - before)?);
    let ids = by_name(ids);
    let id_of = |login: &str| ids.get(login).copied().unwrap_or_default();
    let employees: Vec<_> = plan
        .users
        .iter()
        .filter_map(|u| {
            u.registration.as_ref().map(|r| {
                (
                    employees::user_id.eq(id_of(&u.login)),
                    employees::registration.eq(r),
                    employees::phone.eq(u.phone.as_deref()),
                    employees::active.eq(u.status == crate::domain::user::ACTIVE),
                )
            })
        })
        .collect();
    let n = diesel::insert_into(employees::table)
        .values(employees)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("employees", n);
    let since = plan_time();
    let rows: Vec<_> = plan
        .users
        .iter()
        .filter_map(|u| {
            u.unallocated.map(|reason| {
                (
                    unallocated::user_id.eq(id_of(&u.login)),
                    unallocated::reason.eq(reason),
                    unallocated::since.eq(since),
                )
            })
        })
        .collect();
    let n = diesel::insert_into(unallocated::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("unallocated", n);
    Ok(ids)
}

/// A fixed instant for rows whose time the plan does not decide.
fn plan_time() -> DateTime<Utc> {
    use chrono::TimeZone;
    Utc.with_ymd_and_hms(2026, 11, 20, 7, 0, 0)
        .single()
        .unwrap_or_default()
}

async fn write_fleet(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    refs: &Refs,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<Ids<i64>> {
    let rows: Vec<_> = plan
        .units
        .iter()
        .map(|u| {
            (
                mobile_units::name.eq(&u.name),
                mobile_units::plate.eq(&u.plate),
                mobile_units::type_id.eq(refs
                    .unit_types
                    .get(u.type_name)
                    .copied()
                    .unwrap_or_default()),
                mobile_units::base.eq(u.base),
                mobile_units::active.eq(u.active),
            )
        })
        .collect();
    let n = diesel::insert_into(mobile_units::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("mobile_units", n);
    Ok(by_name(
        mobile_units::table
            .select((mobile_units::name, mobile_units::id))
            .load(conn)
            .await?,
    ))
}

async fn write_health_units(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<Ids<i64>> {
    let mut n = 0;
    for chunk in plan.health_units.chunks(CHUNK * 5) {
        let rows: Vec<_> = chunk
            .iter()
            .map(|h| {
                (
                    health_units::cnes.eq(&h.cnes),
                    health_units::name.eq(&h.name),
                    health_units::city.eq(h.city),
                    health_units::uf.eq(h.uf),
                    health_units::active.eq(h.active),
                )
            })
            .collect();
        n += diesel::insert_into(health_units::table)
            .values(rows)
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
    }
    inserted.insert("health_units", n);
    Ok(by_name(
        health_units::table
            .select((health_units::cnes, health_units::id))
            .load(conn)
            .await?,
    ))
}

#[derive(Insertable)]
#[diesel(table_name = incidents)]
struct NewIncident<'a> {
    number: &'a str,
    state: &'a str,
    version: i32,
    created_by: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    caller_name: &'a str,
    caller_phone: &'a str,
    caller_phone_key: String,
    address: &'a str,
    city: &'a str,
    complaint: &'a str,
    occurrence_type: Option<&'a str>,
    priority: Option<&'a str>,
    occurrence_notes: Option<&'a str>,
    patient_name: Option<&'a str>,
    patient_age: Option<i32>,
    patient_sex: Option<&'a str>,
    regulator_id: Option<i64>,
    regulated_at: Option<DateTime<Utc>>,
    conclusion: Option<&'a str>,
    closed_at: Option<DateTime<Utc>>,
}

fn new_incident<'a>(i: &'a plan::IncidentSpec, ids: &Resolved) -> NewIncident<'a> {
    NewIncident {
        number: &i.number,
        state: i.state,
        version: i32::try_from(i.history.len()).unwrap_or(i32::MAX),
        created_by: ids.users[i.created_by],
        created_at: i.created_at,
        updated_at: i.updated_at,
        caller_name: &i.caller_name,
        caller_phone: &i.caller_phone,
        caller_phone_key: phone::key_of(&i.caller_phone),
        address: &i.address,
        city: i.city,
        complaint: i.complaint,
        occurrence_type: i.occurrence_type,
        priority: i.priority,
        occurrence_notes: i.occurrence_notes.as_deref(),
        patient_name: i.patient_name.as_deref(),
        patient_age: i.patient_age,
        patient_sex: i.patient_sex,
        regulator_id: i.regulator.map(|u| ids.users[u]),
        regulated_at: i.regulated_at,
        conclusion: i.conclusion,
        closed_at: i.closed_at,
    }
}

async fn write_incidents(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    ids: &Resolved,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<()> {
    let mut new_ids: HashMap<String, i64> = HashMap::new();
    for chunk in plan.incidents.chunks(CHUNK) {
        let rows: Vec<_> = chunk.iter().map(|i| new_incident(i, ids)).collect();
        let got: Vec<(String, i64)> = diesel::insert_into(incidents::table)
            .values(rows)
            .on_conflict_do_nothing()
            .returning((incidents::number, incidents::id))
            .get_results(conn)
            .await?;
        new_ids.extend(got);
    }
    inserted.insert("incidents", new_ids.len());
    // Only incidents inserted by this run get their history, decisions and dispatches.
    let fresh: Vec<(i64, &plan::IncidentSpec)> = plan
        .incidents
        .iter()
        .filter_map(|i| new_ids.get(&i.number).map(|id| (*id, i)))
        .collect();
    write_history(conn, &fresh, ids, inserted).await?;
    write_decisions(conn, &fresh, ids, inserted).await?;
    write_dispatches(conn, &fresh, ids, inserted).await?;
    Ok(())
}

async fn write_history(
    conn: &mut AsyncPgConnection,
    fresh: &[(i64, &plan::IncidentSpec)],
    ids: &Resolved,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<()> {
    let rows: Vec<_> = fresh
        .iter()
        .flat_map(|(id, i)| {
            i.history.iter().enumerate().map(move |(v, h)| {
                (
                    incident_history::incident_id.eq(*id),
                    incident_history::version.eq(v as i32 + 1),
                    incident_history::user_id.eq(ids.users[h.user]),
                    incident_history::at.eq(h.at),
                    incident_history::action.eq(h.action),
                    incident_history::changes.eq(h.changes.to_value()),
                )
            })
        })
        .collect();
    let mut n = 0;
    for chunk in rows.chunks(CHUNK * 5) {
        n += diesel::insert_into(incident_history::table)
            .values(chunk)
            .execute(conn)
            .await?;
    }
    inserted.insert("incident_history", n);
    let pranks: Vec<_> = fresh
        .iter()
        .filter_map(|(id, i)| {
            i.prank_by.map(|by| {
                (
                    prank_calls::phone.eq(&i.caller_phone),
                    prank_calls::phone_key.eq(phone::key_of(&i.caller_phone)),
                    prank_calls::incident_id.eq(*id),
                    prank_calls::incident_number.eq(&i.number),
                    prank_calls::recorded_by.eq(ids.users[by]),
                    prank_calls::recorded_at.eq(i.closed_at.unwrap_or(i.created_at)),
                )
            })
        })
        .collect();
    let n = diesel::insert_into(prank_calls::table)
        .values(pranks)
        .execute(conn)
        .await?;
    inserted.insert("prank_calls", n);
    Ok(())
}

async fn write_decisions(
    conn: &mut AsyncPgConnection,
    fresh: &[(i64, &plan::IncidentSpec)],
    ids: &Resolved,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<()> {
    let rows: Vec<_> = fresh
        .iter()
        .filter_map(|(id, i)| {
            i.decision.as_ref().map(|d| {
                (
                    technical_decisions::incident_id.eq(*id),
                    technical_decisions::action_id.eq(ids
                        .refs
                        .actions
                        .get(d.action)
                        .copied()
                        .unwrap_or_default()),
                    technical_decisions::mobile_unit_type_id
                        .eq(d.vehicle.and_then(|v| ids.refs.unit_types.get(v).copied())),
                    technical_decisions::regulator_id.eq(ids.users[d.regulator]),
                    technical_decisions::notes.eq(&d.notes),
                    technical_decisions::decided_at.eq(d.at),
                )
            })
        })
        .collect();
    let mut n = 0;
    for chunk in rows.chunks(CHUNK * 5) {
        n += diesel::insert_into(technical_decisions::table)
            .values(chunk)
            .execute(conn)
            .await?;
    }
    inserted.insert("technical_decisions", n);
    Ok(())
}

async fn write_dispatches(
    conn: &mut AsyncPgConnection,
    fresh: &[(i64, &plan::IncidentSpec)],
    ids: &Resolved,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<()> {
    let rows: Vec<_> = fresh
        .iter()
        .filter_map(|(id, i)| {
            i.dispatch.as_ref().map(|d| {
                (
                    dispatches::incident_id.eq(*id),
                    dispatches::mobile_unit_id.eq(ids.units[d.unit]),
                    dispatches::status.eq(d.status),
                    dispatches::destination_id.eq(d.destination.map(|h| ids.health_units[h])),
                    dispatches::assigned_by.eq(ids.users[d.assigned_by]),
                    dispatches::assigned_at.eq(d.times[0].unwrap_or(i.created_at)),
                    dispatches::en_route_at.eq(d.times[1]),
                    dispatches::on_scene_at.eq(d.times[2]),
                    dispatches::transporting_at.eq(d.times[3]),
                    dispatches::at_destination_at.eq(d.times[4]),
                    dispatches::released_at.eq(d.times[5]),
                )
            })
        })
        .collect();
    let mut n = 0;
    for chunk in rows.chunks(CHUNK) {
        n += diesel::insert_into(dispatches::table)
            .values(chunk)
            .execute(conn)
            .await?;
    }
    inserted.insert("dispatches", n);
    let rows: Vec<_> = fresh
        .iter()
        .filter_map(|(id, i)| {
            i.intercurrence.map(|(name, by, at)| {
                (
                    incident_intercurrences::incident_id.eq(*id),
                    incident_intercurrences::intercurrence_id.eq(ids
                        .refs
                        .intercurrences
                        .get(name)
                        .copied()
                        .unwrap_or_default()),
                    incident_intercurrences::notes.eq("Registrada pela equipe em atendimento."),
                    incident_intercurrences::recorded_by.eq(ids.users[by]),
                    incident_intercurrences::recorded_at.eq(at),
                )
            })
        })
        .collect();
    let n = diesel::insert_into(incident_intercurrences::table)
        .values(rows)
        .execute(conn)
        .await?;
    inserted.insert("incident_intercurrences", n);
    Ok(())
}
