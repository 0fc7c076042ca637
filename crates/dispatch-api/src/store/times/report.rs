//! The response-time report's SQL (docs/dispatch-routes.md, "Response times" and "How the
//! report is kept"), built from typed pieces: the phases and their columns from
//! `domain::times::Phase` (the one table of which phase is whose, and which unit ends an
//! incident's phase), the status words from `PhaseStatus`, the priorities from `Priority`;
//! each statement's text built once. The planner settings the report runs with are
//! [`REPORT_SETTINGS`], the one place they are set.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use crate::domain::incident::Priority;
use crate::domain::times::{GroupBy, Phase, PhaseStatus};
use crate::schema::dispatch::incidents;
use crate::store::read::{PhaseStats, ReportGroup, within_target_share};

/// How long one report's statement may run (bench/scale/README.md: a month at 2 M).
pub const REPORT_TIMEOUT: &str = "20s";

/// What the report's transaction sets (`SET LOCAL`, so only for it), and why:
/// - `jit = off`: one statement of up to a million rows (a month at 2 M incidents), which
///   PostgreSQL's JIT would spend longer compiling (about a second) than running;
/// - `enable_nestloop = off`: each phase's branch joins its rows to the targets (`tg`, 55
///   rows), which the planner, estimating one row for a phase, would join in a nested loop
///   that reads the range's rows once per priority (1.6 s against 2.6 s for a month by day
///   at 2 M: bench/scale/README.md);
/// - `work_mem = 64MB`: each branch sorts up to a month's rows of one phase (about 12 MB),
///   in memory rather than in temporary files;
/// - `statement_timeout`: a manager waits a few seconds for a month rather than be told
///   503, so the report may run past the pool's statement timeout, to [`REPORT_TIMEOUT`].
pub const REPORT_SETTINGS: [(&str, &str); 4] = [
    ("jit", "off"),
    ("enable_nestloop", "off"),
    ("work_mem", "64MB"),
    ("statement_timeout", REPORT_TIMEOUT),
];

/// The statuses a report counts: `complete` phases are measured, `missing` and
/// `out_of_order` ones counted apart.
const COUNTED: [PhaseStatus; 3] = [
    PhaseStatus::Complete,
    PhaseStatus::Missing,
    PhaseStatus::OutOfOrder,
];

/// A word of a text enum as an SQL literal. The words are the enums' own (lower case and
/// `_`), so they need no escaping; the assertion holds any new word to that.
pub(super) fn lit(word: &str) -> String {
    debug_assert!(
        word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
        "{word:?} is not a plain word"
    );
    format!("'{word}'")
}

/// `'a', 'b', ...` of the words.
fn lits<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words.into_iter().map(lit).collect::<Vec<_>>().join(", ")
}

/// Where a phase's columns are: the range's incidents (`i`) or their units (`u`), and the
/// unit it is of or that ended it, as SQL (null for `call_taking` and `regulation`, which
/// involve no unit).
fn source(phase: Phase) -> (&'static str, String) {
    let p = phase.as_str();
    if phase.is_units() {
        ("u", "u.dispatch_id".to_owned())
    } else if matches!(phase, Phase::CallTaking | Phase::Regulation) {
        ("i", "NULL::bigint".to_owned())
    } else {
        ("i", format!("i.{p}_dispatch_id"))
    }
}

/// The kept phases (`store::phases`) of the incidents whose call was received in `[$1, $2)`:
/// `i` holds the range's incidents, `u` their units (unit, destination); and `tg`, the
/// target of every phase for every priority (`''` for none) as it is now: the priority's
/// own, else `any`.
static RANGE: LazyLock<String> = LazyLock::new(|| {
    format!(
        r#"
i AS (
    SELECT * FROM dispatch.incident_phases
     WHERE call_received_at >= $1 AND call_received_at < $2
),
u AS (
    SELECT * FROM dispatch.unit_phases
     WHERE call_received_at >= $1 AND call_received_at < $2
),
-- Materialised: 55 rows computed once, not once per phase judged.
tg AS MATERIALIZED (
    SELECT p.phase, pr.priority, coalesce(t.seconds, ta.seconds) AS target
      FROM unnest(ARRAY[{phases}]) AS p(phase)
     CROSS JOIN unnest(ARRAY['', {priorities}]) AS pr(priority)
      LEFT JOIN dispatch.response_targets t ON t.phase = p.phase AND t.priority = pr.priority
      LEFT JOIN dispatch.response_targets ta ON ta.phase = p.phase AND ta.priority = 'any'
)
"#,
        phases = lits(Phase::ALL.map(Phase::as_str)),
        priorities = lits(Priority::ALL.map(Priority::as_str)),
    )
});

/// [`RANGE`], then its phases one row each: `judged`, `(incident_id, dispatch_id,
/// priority, received, phase, status, seconds, target)`, for the tests that hold the kept
/// phases to the domain (the report itself aggregates each phase's columns: [`report_sql`]).
static JUDGED: LazyLock<String> = LazyLock::new(|| {
    let incident: Vec<String> = Phase::OF_INCIDENT
        .iter()
        .map(|phase| {
            let p = phase.as_str();
            let (_, dispatch_id) = source(*phase);
            format!("({}, i.{p}_status, i.{p}_seconds, {dispatch_id})", lit(p))
        })
        .collect();
    let unit: Vec<String> = Phase::OF_UNIT
        .iter()
        .map(|phase| {
            let p = phase.as_str();
            format!("({}, u.{p}_status, u.{p}_seconds)", lit(p))
        })
        .collect();
    format!(
        r#"
kept AS (
    SELECT i.incident_id, p.dispatch_id, i.priority, i.call_received_at AS received,
           p.phase, p.status, p.seconds
      FROM i
     CROSS JOIN LATERAL (VALUES
        {incident}
     ) AS p(phase, status, seconds, dispatch_id)
    UNION ALL
    SELECT u.incident_id, u.dispatch_id, u.priority, u.call_received_at,
           p.phase, p.status, p.seconds
      FROM u
     CROSS JOIN LATERAL (VALUES
        {unit}
     ) AS p(phase, status, seconds)
),
judged AS (
    SELECT k.incident_id, k.dispatch_id, k.priority, k.received, k.phase, k.status,
           k.seconds, tg.target
      FROM kept k
      JOIN tg ON tg.phase = k.phase AND tg.priority = coalesce(k.priority, '')
)
"#,
        incident = incident.join(",\n        "),
        unit = unit.join(",\n        "),
    )
});

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
    #[diesel(sql_type = Nullable<Integer>)]
    pub target: Option<i32>,
}

/// Every kept phase of the calls received in `[from, to)`, with its current target.
pub async fn judged(
    mut conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<JudgedRow>, diesel::result::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "WITH {range}, {judged} SELECT incident_id, dispatch_id, phase, status, seconds, \
             target FROM judged ORDER BY incident_id, dispatch_id NULLS FIRST, phase",
            range = *RANGE,
            judged = *JUDGED,
        )
    });
    diesel::sql_query(SQL.as_str())
        .bind::<Timestamptz, _>(from)
        .bind::<Timestamptz, _>(to)
        .load(&mut conn)
        .await
}

/// One row of the report: a group's phase. `phase` is read as a [`Phase`], so a word the
/// enum does not know fails the report (a database error naming it) instead of being
/// skipped.
#[derive(Debug, QueryableByName)]
struct StatsRow {
    #[diesel(sql_type = Nullable<Text>)]
    key: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    label: Option<String>,
    #[diesel(sql_type = Text)]
    phase: Phase,
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

/// The group's key and label, as SQL over `judged j` and its unit `u`, the unit's `mu` and
/// vehicle type `mt`, and the destination `h`; `$3` is the centre's time zone, bound only
/// for the groups that name it ([`uses_time_zone`]).
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

/// Whether the groups are the centre's hours or days (the statement then takes `$3`).
fn uses_time_zone(by: Option<GroupBy>) -> bool {
    matches!(by, Some(GroupBy::Hour | GroupBy::Day))
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
    let complete = lit(PhaseStatus::Complete.as_str());
    let missing = lit(PhaseStatus::Missing.as_str());
    let out_of_order = lit(PhaseStatus::OutOfOrder.as_str());
    let counted = lits(COUNTED.map(PhaseStatus::as_str));
    let branches: Vec<String> = Phase::KEPT
        .iter()
        .map(|phase| {
            let p = phase.as_str();
            let name = lit(p);
            let (from, dispatch_id) = source(*phase);
            format!(
                "SELECT {key} AS key, min({label}) AS label, {name}::text AS phase,
                        count(*) FILTER (WHERE j.status = {complete}) AS count,
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY j.seconds)
                            FILTER (WHERE j.status = {complete}) AS p50,
                        percentile_cont(0.9) WITHIN GROUP (ORDER BY j.seconds)
                            FILTER (WHERE j.status = {complete}) AS p90,
                        max(j.seconds) FILTER (WHERE j.status = {complete}) AS max,
                        count(*) FILTER (WHERE j.status = {complete} AND tg.target IS NOT NULL)
                            AS with_target,
                        count(*) FILTER (WHERE j.status = {complete} AND j.seconds <= tg.target)
                            AS within_target,
                        count(*) FILTER (WHERE j.status = {missing}) AS missing,
                        count(*) FILTER (WHERE j.status = {out_of_order}) AS out_of_order
                   FROM (SELECT {from}.priority, {from}.call_received_at AS received,
                                {from}.{p}_status AS status, {from}.{p}_seconds AS seconds,
                                {dispatch_id} AS dispatch_id
                           FROM {from}
                          WHERE {from}.{p}_status IN ({counted})) j
                   JOIN tg ON tg.phase = {name} AND tg.priority = coalesce(j.priority, '')
                   {units}
                  GROUP BY 1"
            )
        })
        .collect();
    format!(
        "WITH {range}
         SELECT s.*, (SELECT count(*) FROM i) AS incidents
           FROM ({branches}) s
          ORDER BY 1 NULLS LAST",
        range = *RANGE,
        branches = branches.join("\n UNION ALL\n")
    )
}

/// The report's statement for each grouping, built once.
static REPORTS: LazyLock<Vec<(Option<GroupBy>, String)>> = LazyLock::new(|| {
    std::iter::once(None)
        .chain(GroupBy::ALL.map(Some))
        .map(|by| (by, report_sql(by)))
        .collect()
});

/// The `SET LOCAL` of [`REPORT_SETTINGS`], one round trip.
static SETTINGS_SQL: LazyLock<String> = LazyLock::new(|| {
    REPORT_SETTINGS
        .iter()
        .map(|(name, value)| format!("SET LOCAL {name} = '{value}'"))
        .collect::<Vec<_>>()
        .join("; ")
});

/// The report in one statement over every kept phase of the range (one aggregate per phase:
/// [`report_sql`]); the groupings by a unit's type, base or destination are computed so, and
/// the tests hold the kept hours to it.
pub async fn report_from_kept_phases(
    conn: &mut AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    by: Option<GroupBy>,
    time_zone: &str,
) -> Result<(i64, Vec<ReportGroup>), diesel::result::Error> {
    let sql = REPORTS
        .iter()
        .find(|(b, _)| *b == by)
        .map(|(_, sql)| sql.as_str())
        .expect("a statement for every grouping");
    let rows: Vec<StatsRow> = conn
        .transaction::<_, diesel::result::Error, _>(async |c| {
            c.batch_execute(&SETTINGS_SQL).await?;
            let query = diesel::sql_query(sql)
                .into_boxed::<Pg>()
                .bind::<Timestamptz, _>(from)
                .bind::<Timestamptz, _>(to);
            let query = if uses_time_zone(by) {
                query.bind::<Text, _>(time_zone)
            } else {
                query
            };
            query.load(c).await
        })
        .await?;
    let incidents = match <[StatsRow]>::first(&rows) {
        Some(r) => r.incidents,
        None => count_calls(&*conn, from, to).await?,
    };
    let mut groups: Vec<ReportGroup> = Vec::new();
    for r in rows {
        if groups.last().is_none_or(|g| g.key != r.key) {
            groups.push(ReportGroup {
                key: r.key.clone(),
                label: r.label.clone(),
                phases: Phase::KEPT.iter().map(|p| empty_stats(*p)).collect(),
            });
        }
        let group = groups.last_mut().expect("pushed above");
        if group.label.is_none() {
            group.label = r.label.clone();
        }
        let slot = group
            .phases
            .iter_mut()
            .find(|s| s.phase == r.phase)
            .expect("every phase has a slot");
        *slot = PhaseStats {
            phase: r.phase,
            count: r.count,
            p50_seconds: r.p50,
            p90_seconds: r.p90,
            max_seconds: r.max,
            with_target: r.with_target,
            within_target: r.within_target,
            within_target_share: within_target_share(r.within_target, r.with_target),
            missing: r.missing,
            out_of_order: r.out_of_order,
        };
    }
    Ok((incidents, groups))
}

pub(super) fn empty_stats(phase: Phase) -> PhaseStats {
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

/// One bar of the response-time distribution: the responses of `[minute, minute + 1)`
/// minutes, within their target, over it, or without one.
#[derive(Debug, Clone, QueryableByName, PartialEq)]
pub struct ResponseBar {
    #[diesel(sql_type = Integer)]
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
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let response = lit(Phase::Response.as_str());
        format!(
            "WITH {range}
             SELECT least(floor(i.response_seconds / 60), $3)::int AS minute,
                    count(*) FILTER (WHERE i.response_seconds <= tg.target) AS within,
                    count(*) FILTER (WHERE i.response_seconds > tg.target) AS over,
                    count(*) FILTER (WHERE tg.target IS NULL) AS no_target
               FROM i
               JOIN tg ON tg.phase = {response} AND tg.priority = coalesce(i.priority, '')
              WHERE i.response_status = {complete}
              GROUP BY 1 ORDER BY 1",
            range = *RANGE,
            complete = lit(PhaseStatus::Complete.as_str()),
        )
    });
    diesel::sql_query(SQL.as_str())
        .bind::<Timestamptz, _>(from)
        .bind::<Timestamptz, _>(to)
        .bind::<Integer, _>(cap)
        .load(&mut conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_and_priority_is_in_the_targets_table_once() {
        for phase in Phase::ALL {
            assert_eq!(RANGE.matches(&lit(phase.as_str())).count(), 1, "{phase}");
        }
        for priority in Priority::ALL {
            assert!(RANGE.contains(&lit(priority.as_str())), "{priority}");
        }
    }

    #[test]
    fn only_the_hour_and_day_statements_take_the_time_zone() {
        for (by, sql) in REPORTS.iter() {
            assert_eq!(sql.contains("$3"), uses_time_zone(*by), "{by:?}");
        }
        assert_eq!(REPORTS.len(), GroupBy::ALL.len() + 1);
    }

    #[test]
    fn the_settings_are_set_local_in_one_batch() {
        assert_eq!(
            SETTINGS_SQL.as_str(),
            "SET LOCAL jit = 'off'; SET LOCAL enable_nestloop = 'off'; \
             SET LOCAL work_mem = '64MB'; SET LOCAL statement_timeout = '20s'"
        );
    }
}
