//! `dispatch-api seed`: deterministic demo data (see `plan`). The reference data, users,
//! fleet and health units are inserted here; each incident is written through the store's
//! own write functions (`replay`), as a call taker, a physician and a fleet operator would
//! write it. Every row has a natural key (login, CNES, plate, incident number...) and is
//! inserted with `ON CONFLICT DO NOTHING` (or updated to the plan), and incidents are
//! written only for the hours the database does not hold yet (`write_incidents`): running it
//! again duplicates nothing.

mod plan;
mod replay;
mod timeline;
mod words;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use common::db::Conn;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

pub use plan::{DEMO_USERS, Plan, Scale};
pub use timeline::{Step, Timeline, Window};
pub use words::health_unit_location;

use crate::domain::user::{Profile, UserStatus};
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
    pub status: UserStatus,
}

/// A demo whose newest change is older than this is brought back to life by the next seed.
pub const STALE: Duration = Duration::hours(6);

/// What `seed` prints: the demo logins, per table the rows this run inserted, and what it
/// did to the incidents' timeline.
#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub users: Vec<SeededUser>,
    pub inserted: BTreeMap<&'static str, usize>,
    pub timeline: DemoTimeline,
}

/// The demo's incidents as this run left them.
#[derive(Debug, Serialize)]
pub struct DemoTimeline {
    /// The seed's "now": the timeline ends here.
    pub anchored_at: DateTime<Utc>,
    /// Where the incidents this run wrote begin (`None`: the demo was alive, none written).
    pub written_from: Option<DateTime<Utc>>,
    pub incidents_written: usize,
    /// The newest change of a demo found stale (older than [`STALE`]), if one was.
    pub stale_since: Option<DateTime<Utc>>,
    /// Open incidents of the stale demo that this run ended (units released, then closed or
    /// cancelled minutes after their last change).
    pub wrapped_up: usize,
}

impl DemoTimeline {
    /// One line for the person who ran `seed`.
    pub fn summary(&self) -> String {
        match (self.written_from, self.stale_since) {
            (None, _) => format!(
                "demo incidents kept: the demo is alive (its newest change is within {} h of {})",
                STALE.num_hours(),
                self.anchored_at.to_rfc3339()
            ),
            (Some(from), Some(stale)) => format!(
                "the demo was stale (newest change {}): {} open incidents ended, {} incidents \
                 written from {} to now ({})",
                stale.to_rfc3339(),
                self.wrapped_up,
                self.incidents_written,
                from.to_rfc3339(),
                self.anchored_at.to_rfc3339()
            ),
            (Some(from), None) => format!(
                "{} demo incidents written from {} to now ({})",
                self.incidents_written,
                from.to_rfc3339(),
                self.anchored_at.to_rfc3339()
            ),
        }
    }
}

/// The demo scale, anchored at the system clock's now: what `dispatch-api seed` loads.
pub async fn run(conn: &mut Conn) -> anyhow::Result<SeedReport> {
    run_with(conn, Scale::Demo).await
}

/// `scale`, anchored at the system clock's now.
pub async fn run_with(conn: &mut Conn, scale: Scale) -> anyhow::Result<SeedReport> {
    run_at(conn, scale, &Clock::system()).await
}

/// `scale`, its timeline ending at `clock`'s now. One transaction: a seed is all or nothing.
pub async fn run_at(conn: &mut Conn, scale: Scale, clock: &Clock) -> anyhow::Result<SeedReport> {
    use diesel_async::AsyncConnection;
    let plan = plan::build(scale);
    let now = clock.now();
    conn.transaction::<_, anyhow::Error, _>(async |conn| write(conn, &plan, scale, now).await)
        .await
}

type Ids<K> = HashMap<String, K>;

async fn write(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    scale: Scale,
    now: DateTime<Utc>,
) -> anyhow::Result<SeedReport> {
    let mut inserted = BTreeMap::new();
    let refs = references(conn, &mut inserted).await?;
    let user_ids = write_users(conn, plan, &refs, now, &mut inserted).await?;
    let units = write_fleet(conn, plan, &refs, &mut inserted).await?;
    write_bases(conn, &mut inserted).await?;
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
    let before: i64 = incidents::table.count().get_result(conn).await?;
    let timeline = write_incidents(conn, plan, &ids, scale, now).await?;
    let after: i64 = incidents::table.count().get_result(conn).await?;
    inserted.insert("incidents", usize::try_from(after - before)?);
    if let Some(fleet) = user_ids.get("frota") {
        locate_units_at_doors(conn, *fleet, now).await?;
    }
    let users = plan::DEMO_USERS
        .iter()
        .map(|(login, _, profile, status)| SeededUser {
            id: user_ids.get(*login).copied().unwrap_or_default(),
            login: (*login).to_owned(),
            profile: profile.title().to_owned(),
            status: *status,
        })
        .collect();
    Ok(SeedReport {
        users,
        inserted,
        timeline,
    })
}

/// Each unit at a hospital's door (its dispatch `at_destination`) with where that hospital
/// stands (`words::health_unit_location`); a unit at a door off the demo's map is left out.
pub async fn units_at_hospital_doors(
    conn: &mut AsyncPgConnection,
) -> anyhow::Result<Vec<(i64, (f64, f64))>> {
    #[derive(diesel::QueryableByName)]
    struct AtDoor {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        unit: i64,
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        city: String,
    }
    let at_doors: Vec<AtDoor> = diesel::sql_query(
        "SELECT d.mobile_unit_id AS unit, h.name, h.city
           FROM dispatch.dispatches d
           JOIN dispatch.incidents i ON i.id = d.incident_id
           JOIN dispatch.health_units h
             ON h.id = coalesce(d.destination_id, i.destination_health_unit_id)
          WHERE d.status = 'at_destination'",
    )
    .load(conn)
    .await?;
    Ok(at_doors
        .into_iter()
        .filter_map(|d| Some((d.unit, words::health_unit_location(&d.name, &d.city)?)))
        .collect())
}

/// Each unit at a hospital's door is located at that hospital, as its tracker would report
/// it at `now`: the board and the recommendation place it there, not at its base. Reported
/// by the demo's fleet operator; a newer report already kept is left alone. Every seed run
/// does it again, so an `up` on a living demo finds the positions fresh.
async fn locate_units_at_doors(
    conn: &mut AsyncPgConnection,
    reported_by: i64,
    now: DateTime<Utc>,
) -> anyhow::Result<usize> {
    let rows: Vec<_> = units_at_hospital_doors(conn)
        .await?
        .into_iter()
        .map(|(unit, (lat, lon))| {
            (
                mobile_unit_positions::mobile_unit_id.eq(unit),
                mobile_unit_positions::lat.eq(lat),
                mobile_unit_positions::lon.eq(lon),
                mobile_unit_positions::recorded_at.eq(now),
                mobile_unit_positions::received_at.eq(now),
                mobile_unit_positions::reported_by.eq(reported_by),
            )
        })
        .collect();
    if rows.is_empty() {
        return Ok(0);
    }
    // `ON CONFLICT ... DO UPDATE ... WHERE`: the upsert's own filter.
    use diesel::query_dsl::methods::FilterDsl;
    let n = diesel::insert_into(mobile_unit_positions::table)
        .values(rows)
        .on_conflict(mobile_unit_positions::mobile_unit_id)
        .do_update()
        .set((
            mobile_unit_positions::lat.eq(excluded(mobile_unit_positions::lat)),
            mobile_unit_positions::lon.eq(excluded(mobile_unit_positions::lon)),
            mobile_unit_positions::recorded_at.eq(excluded(mobile_unit_positions::recorded_at)),
            mobile_unit_positions::received_at.eq(excluded(mobile_unit_positions::received_at)),
            mobile_unit_positions::reported_by.eq(excluded(mobile_unit_positions::reported_by)),
        ))
        .filter(mobile_unit_positions::recorded_at.lt(excluded(mobile_unit_positions::recorded_at)))
        .execute(conn)
        .await?;
    Ok(n)
}

/// Ids of the small reference lists, by name.
pub(crate) struct Refs {
    profiles: Ids<i32>,
    teams: Ids<i32>,
    professional_types: Ids<i32>,
    unit_types: Ids<i32>,
    actions: Ids<i32>,
    intercurrences: Ids<i32>,
}

/// Plan indexes resolved to database ids.
pub(crate) struct Resolved {
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
    now: DateTime<Utc>,
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
                    employees::active.eq(u.status == UserStatus::Active),
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
    // Waiting for a roster since the start of the demo's history.
    let since = now - timeline::HISTORY;
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

/// Every place a unit may be based, with where it is (`words::base_location`).
async fn write_bases(
    conn: &mut AsyncPgConnection,
    inserted: &mut BTreeMap<&'static str, usize>,
) -> anyhow::Result<()> {
    let rows: Vec<_> = (0..words::PLACES.len())
        .map(|i| {
            let (lat, lon) = words::base_location(i);
            (
                bases::name.eq(words::PLACES[i]),
                bases::city.eq(words::CITIES[0].0),
                bases::lat.eq(lat),
                bases::lon.eq(lon),
            )
        })
        .collect();
    let n = diesel::insert_into(bases::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    inserted.insert("bases", n);
    Ok(())
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

/// The incidents: the script of the window the seed fills, replayed in time order through
/// the API's own store functions, each on the clock set to its action's time. A demo whose
/// newest change is older than [`STALE`] is first wrapped up (its units released, its open
/// incidents ended, minutes after their last change) and then continued up to now.
async fn write_incidents(
    conn: &mut AsyncPgConnection,
    plan: &Plan,
    ids: &Resolved,
    scale: Scale,
    now: DateTime<Utc>,
) -> anyhow::Result<DemoTimeline> {
    let newest: Option<DateTime<Utc>> = incidents::table
        .select(diesel::dsl::max(incidents::updated_at))
        .first(conn)
        .await?;
    let existing: i64 = incidents::table.count().get_result(conn).await?;
    let users = replay::cast(plan, ids);
    let (window, stale_since, wrapped_up) = match newest {
        None => (Window::ending(now), None, 0),
        Some(newest) if now - newest < STALE => {
            return Ok(DemoTimeline {
                anchored_at: now,
                written_from: None,
                incidents_written: 0,
                stale_since: None,
                wrapped_up: 0,
            });
        }
        Some(newest) => {
            let wrapped = replay::wrap_up(conn, &users, now - STALE).await?;
            let from = (newest + Duration::hours(1)).max(now - timeline::HISTORY);
            (Window { from, to: now }, Some(newest), wrapped)
        }
    };
    let script = Timeline::build(plan, scale, window, existing.unsigned_abs());
    replay::run(conn, &script, &users, ids).await?;
    Ok(DemoTimeline {
        anchored_at: now,
        written_from: Some(window.from),
        incidents_written: script.incidents.len(),
        stale_since,
        wrapped_up,
    })
}
