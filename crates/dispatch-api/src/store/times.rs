//! Response times (docs/dispatch-routes.md, "Response times"): the targets, an incident's
//! timeline (the phases judged by `domain::times`) and the report, computed in PostgreSQL
//! from the phases the writes keep already judged by `domain::times` (`store::phases`),
//! against the targets as they are when the report is read.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use crate::domain::incident::{Priority, State};
use crate::domain::times::{
    self, GroupBy, IncidentTimes, Phase, Target, TargetPriority, Targets, UnitTimes,
};
use crate::error::{Error, Result};
use crate::schema::dispatch::*;
use crate::store::dispatches::DispatchRow;
use crate::store::writes::Author;
use crate::views::*;

/// The targets as `domain::times` judges by.
pub async fn targets(mut conn: &AsyncPgConnection) -> Result<Targets, diesel::result::Error> {
    let rows: Vec<(Phase, TargetPriority, i32)> = response_targets::table
        .select((
            response_targets::phase,
            response_targets::priority,
            response_targets::seconds,
        ))
        .load(&mut conn)
        .await?;
    Ok(Targets(
        rows.into_iter()
            .map(|(phase, priority, seconds)| Target {
                phase,
                priority,
                seconds,
            })
            .collect(),
    ))
}

/// Every target with its source and who set it, in the phases' order, then by priority.
pub async fn target_views(
    mut conn: &AsyncPgConnection,
) -> Result<Vec<TargetView>, diesel::result::Error> {
    type Row = (
        Phase,
        TargetPriority,
        i32,
        String,
        DateTime<Utc>,
        Option<(i64, String)>,
    );
    let rows: Vec<Row> = response_targets::table
        .left_join(users::table)
        .select((
            response_targets::phase,
            response_targets::priority,
            response_targets::seconds,
            response_targets::source,
            response_targets::updated_at,
            (users::id, users::descriptive_name).nullable(),
        ))
        .load(&mut conn)
        .await?;
    let mut views: Vec<TargetView> = rows
        .into_iter()
        .map(
            |(phase, priority, seconds, source, updated_at, by)| TargetView {
                phase,
                priority,
                seconds,
                source,
                updated_at,
                updated_by: by.map(|(id, descriptive_name)| UserOption {
                    id,
                    descriptive_name,
                }),
            },
        )
        .collect();
    views.sort_by_key(|t| (t.phase, t.priority));
    Ok(views)
}

/// One change of `PUT /response-targets`: a target set (`Some` seconds) or removed.
#[derive(Debug, Clone)]
pub struct TargetChange {
    pub phase: Phase,
    pub priority: TargetPriority,
    pub seconds: Option<i32>,
    pub source: Option<String>,
}

/// Applies every change in one transaction (all or none); answers the targets after it.
pub async fn set_targets(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    changes: Vec<TargetChange>,
) -> Result<Vec<TargetView>> {
    conn.transaction::<_, Error, _>(async |c| {
        for change in changes {
            let key = response_targets::table
                .filter(response_targets::phase.eq(change.phase))
                .filter(response_targets::priority.eq(change.priority));
            match change.seconds {
                None => {
                    diesel::delete(key).execute(c).await?;
                }
                Some(seconds) => {
                    let source = change
                        .source
                        .unwrap_or_else(|| format!("set by {}", by.user.descriptive_name));
                    diesel::insert_into(response_targets::table)
                        .values((
                            response_targets::phase.eq(change.phase),
                            response_targets::priority.eq(change.priority),
                            response_targets::seconds.eq(seconds),
                            response_targets::source.eq(&source),
                            response_targets::updated_at.eq(by.at),
                            response_targets::updated_by.eq(by.id()),
                        ))
                        .on_conflict((response_targets::phase, response_targets::priority))
                        .do_update()
                        .set((
                            response_targets::seconds.eq(seconds),
                            response_targets::source.eq(&source),
                            response_targets::updated_at.eq(by.at),
                            response_targets::updated_by.eq(by.id()),
                        ))
                        .execute(c)
                        .await?;
                }
            }
        }
        Ok(target_views(c).await?)
    })
    .await
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct TimesRow {
    id: i64,
    number: String,
    state: State,
    priority: Option<Priority>,
    call_received_at: DateTime<Utc>,
    submitted_at: Option<DateTime<Utc>>,
    regulated_at: Option<DateTime<Utc>>,
}

#[derive(Queryable, Selectable)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct UnitRow {
    #[diesel(embed)]
    dispatch: DispatchRow,
    #[diesel(select_expression = mobile_units::id)]
    unit_id: i64,
    #[diesel(select_expression = mobile_units::name)]
    unit_name: String,
    #[diesel(select_expression = mobile_unit_types::id)]
    type_id: i32,
    #[diesel(select_expression = mobile_unit_types::name)]
    type_name: String,
}

/// The incident's phases and its units', judged at `now`; `None` when it does not exist.
/// Three statements in one pipeline (the incident, its units, the targets).
pub async fn timeline(
    conn: &AsyncPgConnection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Option<IncidentTimeline>, diesel::result::Error> {
    let incident = async {
        let mut c = conn;
        incidents::table
            .find(id)
            .select(TimesRow::as_select())
            .first::<TimesRow>(&mut c)
            .await
            .optional()
    };
    let units = async {
        let mut c = conn;
        dispatches::table
            .inner_join(mobile_units::table.inner_join(mobile_unit_types::table))
            .filter(dispatches::incident_id.eq(id))
            .order_by((dispatches::assigned_at, dispatches::id))
            .select(UnitRow::as_select())
            .load::<UnitRow>(&mut c)
            .await
    };
    let (row, units, targets) = tokio::try_join!(incident, units, targets(conn))?;
    let Some(row) = row else { return Ok(None) };
    let times = IncidentTimes {
        state: row.state,
        priority: row.priority,
        call_received_at: row.call_received_at,
        submitted_at: row.submitted_at,
        regulated_at: row.regulated_at,
    };
    let unit_times: Vec<UnitTimes> = units.iter().map(|u| u.dispatch.times()).collect();
    let phases = times::incident_phases(&times, &unit_times, &targets, now);
    let dispatches = units
        .into_iter()
        .zip(&unit_times)
        .map(|(u, t)| DispatchTimeline {
            id: u.dispatch.id,
            status: u.dispatch.status,
            mobile_unit: DispatchedUnit {
                id: u.unit_id,
                name: u.unit_name,
                vehicle_type: RefOption {
                    id: u.type_id,
                    name: u.type_name,
                },
            },
            times: u.dispatch.view_times(),
            phases: times::unit_phases(&times, t, &targets, now),
        })
        .collect();
    Ok(Some(IncidentTimeline {
        incident_id: row.id,
        number: row.number,
        state: row.state,
        priority: row.priority,
        call_received_at: row.call_received_at,
        submitted_at: row.submitted_at,
        regulated_at: row.regulated_at,
        phases,
        dispatches,
    }))
}

/// The kept phases (`store::phases`) of the incidents whose call was received in `[$1, $2)`,
/// one row per phase, with the target of the incident's priority as it is now: rows named
/// `judged`, `(incident_id, dispatch_id, priority, received, phase, status, seconds,
/// target)`. `dispatch_id` is the unit a unit's phase is of, or the one that ended an
/// incident's phase (first assigned, first on scene, last released); null for `call_taking`
/// and `regulation`. `i` holds the range's incidents, `u` their units (unit, destination).
const RANGE: &str = r#"
i AS (
    SELECT * FROM dispatch.incident_phases
     WHERE call_received_at >= $1 AND call_received_at < $2
),
u AS (
    SELECT * FROM dispatch.unit_phases
     WHERE call_received_at >= $1 AND call_received_at < $2
),
-- The target of every phase for every priority ('' for none): the priority's own, else `any`.
-- Materialised: 55 rows computed once, not once per phase judged.
tg AS MATERIALIZED (
    SELECT p.phase, pr.priority, coalesce(t.seconds, ta.seconds) AS target
      FROM unnest(ARRAY['call_taking', 'regulation', 'activation', 'turnout', 'travel',
                        'response', 'on_scene', 'transport', 'hospital_hold',
                        'return_to_service', 'total']) AS p(phase)
     CROSS JOIN unnest(ARRAY['', 'low', 'medium', 'high', 'critical']) AS pr(priority)
      LEFT JOIN dispatch.response_targets t ON t.phase = p.phase AND t.priority = pr.priority
      LEFT JOIN dispatch.response_targets ta ON ta.phase = p.phase AND ta.priority = 'any'
)
"#;

/// [`RANGE`], then its phases one row each: `judged`, for the tests that hold the kept
/// phases to the domain (the report itself aggregates each phase's columns: [`report_sql`]).
const JUDGED: &str = r#"
kept AS (
    SELECT i.incident_id, p.dispatch_id, i.priority, i.call_received_at AS received,
           p.phase, p.status, p.seconds
      FROM i
     CROSS JOIN LATERAL (VALUES
        ('call_taking', i.call_taking_status, i.call_taking_seconds, NULL::bigint),
        ('regulation', i.regulation_status, i.regulation_seconds, NULL::bigint),
        ('activation', i.activation_status, i.activation_seconds, i.activation_dispatch_id),
        ('response', i.response_status, i.response_seconds, i.response_dispatch_id),
        ('total', i.total_status, i.total_seconds, i.total_dispatch_id)
     ) AS p(phase, status, seconds, dispatch_id)
    UNION ALL
    SELECT u.incident_id, u.dispatch_id, u.priority, u.call_received_at,
           p.phase, p.status, p.seconds
      FROM u
     CROSS JOIN LATERAL (VALUES
        ('turnout', u.turnout_status, u.turnout_seconds),
        ('travel', u.travel_status, u.travel_seconds),
        ('on_scene', u.on_scene_status, u.on_scene_seconds),
        ('transport', u.transport_status, u.transport_seconds),
        ('hospital_hold', u.hospital_hold_status, u.hospital_hold_seconds),
        ('return_to_service', u.return_to_service_status, u.return_to_service_seconds)
     ) AS p(phase, status, seconds)
),
judged AS (
    SELECT k.incident_id, k.dispatch_id, k.priority, k.received, k.phase, k.status,
           k.seconds, tg.target
      FROM kept k
      JOIN tg ON tg.phase = k.phase AND tg.priority = coalesce(k.priority, '')
)
"#;

/// One kept phase, as the report's SQL sees it (for the tests that hold it to the domain).
#[derive(Debug, Clone, QueryableByName, PartialEq)]
pub struct JudgedRow {
    #[diesel(sql_type = BigInt)]
    pub incident_id: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub dispatch_id: Option<i64>,
    #[diesel(sql_type = Text)]
    pub phase: String,
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Nullable<Double>)]
    pub seconds: Option<f64>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Integer>)]
    pub target: Option<i32>,
}

/// Every kept phase of the calls received in `[from, to)`, with its current target.
pub async fn judged(
    mut conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<JudgedRow>, diesel::result::Error> {
    diesel::sql_query(format!(
        "WITH {RANGE}, {JUDGED} SELECT incident_id, dispatch_id, phase, status, seconds, target \
         FROM judged ORDER BY incident_id, dispatch_id NULLS FIRST, phase"
    ))
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .load(&mut conn)
    .await
}

#[derive(Debug, QueryableByName)]
struct StatsRow {
    #[diesel(sql_type = Nullable<Text>)]
    key: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    label: Option<String>,
    #[diesel(sql_type = Text)]
    phase: String,
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = Nullable<Double>)]
    p50: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    p90: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    max: Option<f64>,
    #[diesel(sql_type = BigInt)]
    with_target: i64,
    #[diesel(sql_type = BigInt)]
    within_target: i64,
    #[diesel(sql_type = BigInt)]
    missing: i64,
    #[diesel(sql_type = BigInt)]
    out_of_order: i64,
    #[diesel(sql_type = BigInt)]
    incidents: i64,
}

/// How long one report's statement may run (bench/scale/README.md: a month at 2 M).
pub const REPORT_TIMEOUT: &str = "20s";

/// The group's key and label, as SQL over `judged j` and its unit `u`, the unit's `mu` and
/// vehicle type `mt`, and the destination `h`.
fn group_sql(by: Option<GroupBy>) -> (&'static str, &'static str) {
    match by {
        None => ("NULL::text", "NULL::text"),
        Some(GroupBy::Priority) => ("j.priority", "j.priority"),
        Some(GroupBy::VehicleType) => ("mt.name", "mt.name"),
        Some(GroupBy::Base) => ("mu.base", "mu.base"),
        Some(GroupBy::HealthUnit) => ("u.health_unit_id::text", "h.name"),
        Some(GroupBy::Hour) => (
            "to_char(j.received AT TIME ZONE $3, 'HH24')",
            "to_char(j.received AT TIME ZONE $3, 'HH24')",
        ),
        Some(GroupBy::Day) => (
            "to_char(j.received AT TIME ZONE $3, 'YYYY-MM-DD')",
            "to_char(j.received AT TIME ZONE $3, 'YYYY-MM-DD')",
        ),
    }
}

/// The report's statement: one aggregate per phase over that phase's own columns, the
/// branches joined by `UNION ALL` (docs/dispatch-routes.md, "How the report is kept").
/// Each branch reads the range's kept rows (`i`, `u`, each read once), keeps the phases
/// whose status a report counts, and sorts only that phase's seconds of each group: about
/// a tenth of the rows a single aggregate over every phase would sort, each row a few
/// columns wide. Its rows are `judged j` as [`group_sql`] expects: `priority`, `received`,
/// `status`, `seconds`, and `dispatch_id` (the unit whose phase it is, or that ended the
/// incident's phase; null for `call_taking` and `regulation`).
fn report_sql(by: Option<GroupBy>) -> String {
    let (key, label) = group_sql(by);
    // The unit of each phase only when the groups are units' (type, base, destination).
    let units = if matches!(
        by,
        Some(GroupBy::VehicleType | GroupBy::Base | GroupBy::HealthUnit)
    ) {
        "LEFT JOIN u ON u.dispatch_id = j.dispatch_id \
         LEFT JOIN dispatch.mobile_units mu ON mu.id = u.mobile_unit_id \
         LEFT JOIN dispatch.mobile_unit_types mt ON mt.id = mu.type_id \
         LEFT JOIN dispatch.health_units h ON h.id = u.health_unit_id"
    } else {
        ""
    };
    let branches: Vec<String> = Phase::ALL
        .iter()
        .map(|phase| {
            let p = phase.as_str();
            let (from, dispatch_id) = if phase.is_units() {
                ("u", "u.dispatch_id".to_owned())
            } else if matches!(phase, Phase::CallTaking | Phase::Regulation) {
                ("i", "NULL::bigint".to_owned())
            } else {
                ("i", format!("i.{p}_dispatch_id"))
            };
            format!(
                "SELECT {key} AS key, min({label}) AS label, '{p}'::text AS phase,
                        count(*) FILTER (WHERE j.status = 'complete') AS count,
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY j.seconds)
                            FILTER (WHERE j.status = 'complete') AS p50,
                        percentile_cont(0.9) WITHIN GROUP (ORDER BY j.seconds)
                            FILTER (WHERE j.status = 'complete') AS p90,
                        max(j.seconds) FILTER (WHERE j.status = 'complete') AS max,
                        count(*) FILTER (WHERE j.status = 'complete' AND tg.target IS NOT NULL)
                            AS with_target,
                        count(*) FILTER (WHERE j.status = 'complete' AND j.seconds <= tg.target)
                            AS within_target,
                        count(*) FILTER (WHERE j.status = 'missing') AS missing,
                        count(*) FILTER (WHERE j.status = 'out_of_order') AS out_of_order
                   FROM (SELECT {from}.priority, {from}.call_received_at AS received,
                                {from}.{p}_status AS status, {from}.{p}_seconds AS seconds,
                                {dispatch_id} AS dispatch_id
                           FROM {from}
                          WHERE {from}.{p}_status IN ('complete', 'missing', 'out_of_order')) j
                   JOIN tg ON tg.phase = '{p}' AND tg.priority = coalesce(j.priority, '')
                   {units}
                  GROUP BY 1"
            )
        })
        .collect();
    format!(
        "WITH {RANGE}
         SELECT s.*, (SELECT count(*) FROM i) AS incidents
           FROM ({branches}) s
          WHERE $3::text IS NOT NULL
          ORDER BY 1 NULLS LAST",
        branches = branches.join("\n UNION ALL\n")
    )
}

/// `GET /reports/response-times`: per group and phase, over the calls received in
/// `[from, to)`, one statement: counts, `percentile_cont(0.5)` and `(0.9)` (interpolated
/// between the two nearest values), the maximum and the share within target of the
/// `complete` phases; `missing` and `out_of_order` ones counted apart. Every group lists
/// every phase, in order (zero when none was measured).
pub async fn report(
    conn: &mut AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    by: Option<GroupBy>,
    time_zone: &str,
) -> Result<(i64, Vec<ReportGroup>), diesel::result::Error> {
    let sql = report_sql(by);
    // One statement of up to a million rows (a month at 2 M incidents): PostgreSQL's JIT
    // would spend longer compiling it (about a second) than running it, so it is off for
    // this transaction; and a manager waits a few seconds for a month rather than be told
    // 503, so it may run past the pool's statement timeout, to REPORT_TIMEOUT.
    let rows: Vec<StatsRow> = conn
        .transaction::<_, diesel::result::Error, _>(async |c| {
            // Each phase's branch joins its rows to the targets (`tg`, 55 rows), which the
            // planner, estimating one row for a phase, would join in a nested loop that reads
            // the range's rows once per priority (1.6 s against 2.6 s for a month by day at
            // 2 M: bench/scale/README.md). And each branch sorts up to a month's rows of one
            // phase (about 12 MB): in memory rather than in temporary files. One round trip.
            c.batch_execute(&format!(
                "SET LOCAL jit = off; SET LOCAL enable_nestloop = off; \
                 SET LOCAL work_mem = '64MB'; SET LOCAL statement_timeout = '{REPORT_TIMEOUT}'"
            ))
            .await?;
            diesel::sql_query(sql)
                .bind::<Timestamptz, _>(from)
                .bind::<Timestamptz, _>(to)
                .bind::<Text, _>(time_zone)
                .load(c)
                .await
        })
        .await?;
    let incidents = match <[StatsRow]>::first(&rows) {
        Some(r) => r.incidents,
        None => count_calls(&*conn, from, to).await?,
    };
    let mut groups: Vec<ReportGroup> = Vec::new();
    for r in rows {
        let Some(phase) = Phase::parse(&r.phase) else {
            continue;
        };
        if groups.last().is_none_or(|g| g.key != r.key) {
            groups.push(ReportGroup {
                key: r.key.clone(),
                label: r.label.clone(),
                phases: Phase::ALL.iter().map(|p| empty_stats(*p)).collect(),
            });
        }
        let group = groups.last_mut().expect("pushed above");
        if group.label.is_none() {
            group.label = r.label.clone();
        }
        let slot = group
            .phases
            .iter_mut()
            .find(|s| s.phase == phase)
            .expect("every phase has a slot");
        *slot = PhaseStats {
            phase,
            count: r.count,
            p50_seconds: r.p50,
            p90_seconds: r.p90,
            max_seconds: r.max,
            with_target: r.with_target,
            within_target: r.within_target,
            within_target_share: (r.with_target > 0)
                .then(|| r.within_target as f64 / r.with_target as f64),
            missing: r.missing,
            out_of_order: r.out_of_order,
        };
    }
    Ok((incidents, groups))
}

fn empty_stats(phase: Phase) -> PhaseStats {
    PhaseStats {
        phase,
        count: 0,
        p50_seconds: None,
        p90_seconds: None,
        max_seconds: None,
        with_target: 0,
        within_target: 0,
        within_target_share: None,
        missing: 0,
        out_of_order: 0,
    }
}

async fn count_calls(
    mut conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<i64, diesel::result::Error> {
    incidents::table
        .filter(incidents::call_received_at.ge(from))
        .filter(incidents::call_received_at.lt(to))
        .count()
        .get_result(&mut conn)
        .await
}

/// Midnight of `at`'s day in `time_zone` (PostgreSQL's zone names, checked at start).
pub async fn day_start(
    mut conn: &AsyncPgConnection,
    at: DateTime<Utc>,
    time_zone: &str,
) -> Result<DateTime<Utc>> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Timestamptz)]
        start: DateTime<Utc>,
    }
    let row: Row = diesel::sql_query(
        "SELECT (date_trunc('day', $1 AT TIME ZONE $2) AT TIME ZONE $2) AS start",
    )
    .bind::<Timestamptz, _>(at)
    .bind::<Text, _>(time_zone)
    .get_result(&mut conn)
    .await?;
    Ok(row.start)
}

impl DispatchRow {
    /// The unit's times as `domain::times` reads them.
    pub fn times(&self) -> UnitTimes {
        UnitTimes {
            dispatch_id: self.id,
            assigned_at: self.assigned_at,
            en_route_at: self.en_route_at,
            on_scene_at: self.on_scene_at,
            transporting_at: self.transporting_at,
            at_destination_at: self.at_destination_at,
            handed_over_at: self.handed_over_at,
            released_at: self.released_at,
        }
    }

    pub fn view_times(&self) -> DispatchTimes {
        DispatchTimes {
            assigned_at: self.assigned_at,
            en_route_at: self.en_route_at,
            on_scene_at: self.on_scene_at,
            transporting_at: self.transporting_at,
            at_destination_at: self.at_destination_at,
            handed_over_at: self.handed_over_at,
            released_at: self.released_at,
        }
    }
}

/// One bar of the response-time distribution: the responses of `[minute, minute + 1)`
/// minutes, within their target, over it, or without one.
#[derive(Debug, Clone, QueryableByName, PartialEq)]
pub struct ResponseBar {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pub minute: i32,
    #[diesel(sql_type = BigInt)]
    pub within: i64,
    #[diesel(sql_type = BigInt)]
    pub over: i64,
    #[diesel(sql_type = BigInt)]
    pub no_target: i64,
}

/// The measured `response` phases of the calls received in `[from, to)`, per whole minute
/// (the last bar holds everything from `cap` minutes on), each judged against its own
/// priority's target: the manager's page's distribution chart.
pub async fn response_distribution(
    mut conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    cap: i32,
) -> Result<Vec<ResponseBar>, diesel::result::Error> {
    diesel::sql_query(format!(
        "WITH {RANGE}
         SELECT least(floor(i.response_seconds / 60), $3)::int AS minute,
                count(*) FILTER (WHERE i.response_seconds <= tg.target) AS within,
                count(*) FILTER (WHERE i.response_seconds > tg.target) AS over,
                count(*) FILTER (WHERE tg.target IS NULL) AS no_target
           FROM i
           JOIN tg ON tg.phase = 'response' AND tg.priority = coalesce(i.priority, '')
          WHERE i.response_status = 'complete'
          GROUP BY 1 ORDER BY 1"
    ))
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<diesel::sql_types::Integer, _>(cap)
    .load(&mut conn)
    .await
}

/// Midnight of `day` in `time_zone`, as an instant.
pub async fn midnight(
    mut conn: &AsyncPgConnection,
    day: chrono::NaiveDate,
    time_zone: &str,
) -> Result<DateTime<Utc>, diesel::result::Error> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Timestamptz)]
        at: DateTime<Utc>,
    }
    let row: Row = diesel::sql_query("SELECT ($1::timestamp AT TIME ZONE $2) AS at")
        .bind::<diesel::sql_types::Timestamp, _>(day.and_hms_opt(0, 0, 0).unwrap_or_default())
        .bind::<Text, _>(time_zone)
        .get_result(&mut conn)
        .await?;
    Ok(row.at)
}

/// The date `at` falls on in `time_zone`.
pub async fn local_date(
    mut conn: &AsyncPgConnection,
    at: DateTime<Utc>,
    time_zone: &str,
) -> Result<chrono::NaiveDate, diesel::result::Error> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Date)]
        day: chrono::NaiveDate,
    }
    let row: Row = diesel::sql_query("SELECT ($1 AT TIME ZONE $2)::date AS day")
        .bind::<Timestamptz, _>(at)
        .bind::<Text, _>(time_zone)
        .get_result(&mut conn)
        .await?;
    Ok(row.day)
}
