//! The response-time report from the kept hours (docs/dispatch-routes.md, "How the report is
//! kept"): `incident_phase_hours` and `unit_phase_hours` hold, per UTC hour of the call and
//! priority, every measured interval of the hour and the count of missing and out-of-order
//! phases, kept by triggers in the transaction of every write that changes a kept phase. A
//! report of the range `[from, to)` reads the whole hours inside it from there and the rest
//! (at most an hour at each end) from the kept phases themselves, both as the same rows;
//! here the rows of a group are merged and its figures computed exactly as PostgreSQL's
//! aggregates compute them over the raw rows ([`percentile_cont`]), so the answer is the one
//! the statement over every kept row (`report::report_from_kept_phases`) gives.
//!
//! Only the groupings an hour and a priority decide are answered here: none, `priority`,
//! `hour` and `day`. An hour belongs to one local day and hour of the centre when its zone's
//! offset is whole hours; the statement says when an hour of the range straddles two (a
//! zone such as `Asia/Kolkata`) and the report is then computed from the kept phases.

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::report::{empty_stats, lit};
use crate::domain::incident::Priority;
use crate::domain::times::{GroupBy, Phase, PhaseStatus, Targets};
use crate::store::read::{PhaseStats, ReportGroup, within_target_share};

/// Whether the kept hours answer a report grouped `by`: the groupings an hour of the call and
/// a priority decide.
pub fn answers(by: Option<GroupBy>) -> bool {
    matches!(
        by,
        None | Some(GroupBy::Priority | GroupBy::Hour | GroupBy::Day)
    )
}

/// The group's key of a kept hour `h` (by its first instant) and of a kept phase row `r` (by
/// its call), as the statement over the kept phases keys them (`report::group_sql`); and,
/// for the centre's hours and days, whether the hour's last instant falls in another group
/// than its first. `$5` is the centre's time zone.
fn keys(by: Option<GroupBy>) -> (String, String, String) {
    let local = |format: &str| {
        (
            format!("to_char(h.hour AT TIME ZONE $5, '{format}')"),
            format!("to_char(r.call_received_at AT TIME ZONE $5, '{format}')"),
            format!(
                "to_char(h.hour AT TIME ZONE $5, '{format}') <> \
                 to_char((h.hour + interval '1 hour' - interval '1 microsecond') \
                 AT TIME ZONE $5, '{format}')"
            ),
        )
    };
    match by {
        Some(GroupBy::Day) => local("YYYY-MM-DD"),
        Some(GroupBy::Hour) => local("HH24"),
        Some(GroupBy::Priority) => (
            "nullif(h.priority, '')".to_owned(),
            "r.priority".to_owned(),
            "false".to_owned(),
        ),
        _ => (
            "NULL::text".to_owned(),
            "NULL::text".to_owned(),
            "false".to_owned(),
        ),
    }
}

/// One side of the statement (the incidents' phases or the units'): the kept hours of
/// `[$3, $4)` and the kept phases of `[$1, $3)` and `[$4, $2)` summed per hour the same way,
/// as `(key, priority, split, calls, <phase>_seconds, <phase>_missing,
/// <phase>_out_of_order...)`.
fn side(by: Option<GroupBy>, hours: &str, phases: &str, of: &[Phase], calls: bool) -> String {
    let (key_h, key_r, split) = keys(by);
    let missing = lit(PhaseStatus::Missing.as_str());
    let out_of_order = lit(PhaseStatus::OutOfOrder.as_str());
    let kept: Vec<String> = of
        .iter()
        .map(|p| {
            let p = p.as_str();
            format!("h.{p}_seconds, h.{p}_missing, h.{p}_out_of_order")
        })
        .collect();
    let summed: Vec<String> = of
        .iter()
        .map(|p| {
            let p = p.as_str();
            format!(
                "coalesce(array_agg(r.{p}_seconds) FILTER (WHERE r.{p}_seconds IS NOT NULL), \
                 '{{}}'), (count(*) FILTER (WHERE r.{p}_status = {missing}))::int, \
                 (count(*) FILTER (WHERE r.{p}_status = {out_of_order}))::int"
            )
        })
        .collect();
    let (calls_h, calls_r) = if calls {
        ("h.calls", "count(*)::int")
    } else {
        ("0", "0")
    };
    format!(
        "SELECT {key_h} AS key, h.priority, {split} AS split, {calls_h} AS calls,
                {kept}
           FROM dispatch.{hours} h
          WHERE h.hour >= $3 AND h.hour < $4
         UNION ALL
         SELECT {key_r}, coalesce(r.priority, ''), false, {calls_r},
                {summed}
           FROM dispatch.{phases} r
          WHERE (r.call_received_at >= $1 AND r.call_received_at < $3)
             OR (r.call_received_at >= $4 AND r.call_received_at < $2)
          GROUP BY 1, 2",
        kept = kept.join(",\n                "),
        summed = summed.join(",\n                "),
    )
}

/// The rows of one side, one per phase with something counted, and (`calls`) its calls in a
/// row of their own (no phase). One pass over the side: PostgreSQL then reads it in line,
/// never materialised.
fn unpivot(side: &str, of: &[Phase], calls: bool) -> String {
    let mut values: Vec<String> = of
        .iter()
        .map(|p| {
            let name = p.as_str();
            format!(
                "({}, 0, {side}.{name}_seconds, {side}.{name}_missing, \
                 {side}.{name}_out_of_order)",
                lit(name)
            )
        })
        .collect();
    if calls {
        values.insert(0, format!("(NULL, {side}.calls, '{{}}', 0, 0)"));
    }
    format!(
        "SELECT {side}.key, nullif({side}.priority, '') AS priority, {side}.split, p.phase,
                p.calls, p.seconds, p.missing, p.out_of_order
           FROM {side} CROSS JOIN LATERAL (VALUES
                {values}
           ) AS p(phase, calls, seconds, missing, out_of_order)
          WHERE p.calls + cardinality(p.seconds) + p.missing + p.out_of_order > 0",
        values = values.join(",\n                "),
    )
}

/// The statement for a grouping the hours answer.
fn hours_sql(by: Option<GroupBy>) -> String {
    format!(
        "WITH ih AS ({incidents}),
         uh AS ({units})
         {incident_rows}
         UNION ALL
         {unit_rows}",
        incidents = side(
            by,
            "incident_phase_hours",
            "incident_phases",
            &Phase::OF_INCIDENT,
            true
        ),
        units = side(
            by,
            "unit_phase_hours",
            "unit_phases",
            &Phase::OF_UNIT,
            false
        ),
        incident_rows = unpivot("ih", &Phase::OF_INCIDENT, true),
        unit_rows = unpivot("uh", &Phase::OF_UNIT, false),
    )
}

/// The statement for each grouping the hours answer, built once.
static STATEMENTS: LazyLock<Vec<(Option<GroupBy>, String)>> = LazyLock::new(|| {
    std::iter::once(None)
        .chain(GroupBy::ALL.map(Some))
        .filter(|by| answers(*by))
        .map(|by| (by, hours_sql(by)))
        .collect()
});

/// Whether the statement for `by` takes the centre's time zone (`$5`).
fn uses_time_zone(by: Option<GroupBy>) -> bool {
    matches!(by, Some(GroupBy::Hour | GroupBy::Day))
}

/// One row of the statement: a phase's measured seconds and counts in one hour (or one end
/// of the range) and priority, or (`phase` null) the calls of that hour.
#[derive(Debug, QueryableByName)]
struct HourRow {
    #[diesel(sql_type = Nullable<Text>)]
    key: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    priority: Option<Priority>,
    #[diesel(sql_type = Bool)]
    split: bool,
    #[diesel(sql_type = Nullable<Text>)]
    phase: Option<Phase>,
    #[diesel(sql_type = Integer)]
    calls: i32,
    #[diesel(sql_type = Array<Double>)]
    seconds: Vec<f64>,
    #[diesel(sql_type = Integer)]
    missing: i32,
    #[diesel(sql_type = Integer)]
    out_of_order: i32,
}

/// `[from, to)` cut at whole UTC hours: the first whole hour's start and the end of the last
/// one (both `to` when the range holds no whole hour: it is read from the kept phases).
fn whole_hours(from: DateTime<Utc>, to: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let hour = TimeDelta::hours(1);
    let floor = |t: DateTime<Utc>| t.duration_trunc(hour).unwrap_or(t);
    let first = floor(from);
    let first = if first < from { first + hour } else { first };
    let end = floor(to);
    if first < end { (first, end) } else { (to, to) }
}

/// A group's phase while its rows are merged.
#[derive(Default)]
struct Merged {
    seconds: Vec<f64>,
    with_target: i64,
    within_target: i64,
    missing: i64,
    out_of_order: i64,
}

/// The report of the calls received in `[from, to)` grouped `by` (one [`answers`]), from the
/// kept hours; `None` when an hour of the range straddles two of the centre's hours or days
/// (the caller then computes it from the kept phases).
pub async fn report(
    conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    by: Option<GroupBy>,
    time_zone: &str,
) -> Result<Option<(i64, Vec<ReportGroup>)>, diesel::result::Error> {
    let sql = STATEMENTS
        .iter()
        .find(|(b, _)| *b == by)
        .map(|(_, sql)| sql.as_str())
        .expect("a statement for every grouping the hours answer");
    let (first, end) = whole_hours(from, to);
    let rows = async {
        let mut c = conn;
        let query = diesel::sql_query(sql)
            .into_boxed::<Pg>()
            .bind::<Timestamptz, _>(from)
            .bind::<Timestamptz, _>(to)
            .bind::<Timestamptz, _>(first)
            .bind::<Timestamptz, _>(end);
        let query = if uses_time_zone(by) {
            query.bind::<Text, _>(time_zone)
        } else {
            query
        };
        query.load::<HourRow>(&mut c).await
    };
    let (rows, targets) = tokio::try_join!(rows, super::targets(conn))?;
    if rows.iter().any(|r| r.split) {
        return Ok(None);
    }
    Ok(Some(merge(rows, &targets)))
}

/// The groups of the rows, in the order of their keys (null last, as the statement over the
/// kept phases orders them: the keys are priority words, hours and ISO dates, which every
/// collation orders as their bytes), each with every phase in order; a group appears when
/// one of its phases counted something (measured, missing or out of order).
fn merge(rows: Vec<HourRow>, targets: &Targets) -> (i64, Vec<ReportGroup>) {
    let mut incidents = 0i64;
    let mut groups: HashMap<Option<String>, HashMap<Phase, Merged>> = HashMap::new();
    for row in rows {
        incidents += i64::from(row.calls);
        let Some(phase) = row.phase else { continue };
        let m = groups.entry(row.key).or_default().entry(phase).or_default();
        if let Some(target) = targets.seconds(phase, row.priority) {
            let target = f64::from(target);
            m.with_target += row.seconds.len() as i64;
            m.within_target += row.seconds.iter().filter(|s| **s <= target).count() as i64;
        }
        m.missing += i64::from(row.missing);
        m.out_of_order += i64::from(row.out_of_order);
        m.seconds.extend(row.seconds);
    }
    let mut keys: Vec<Option<String>> = groups.keys().cloned().collect();
    keys.sort_by(|a, b| match (a, b) {
        (Some(a), Some(b)) => a.as_bytes().cmp(b.as_bytes()),
        (a, b) => a.is_none().cmp(&b.is_none()),
    });
    let groups = keys
        .into_iter()
        .map(|key| {
            let mut phases = groups.remove(&key).unwrap_or_default();
            ReportGroup {
                label: key.clone(),
                key,
                phases: Phase::KEPT
                    .iter()
                    .map(|p| match phases.remove(p) {
                        Some(m) => stats(*p, m),
                        None => empty_stats(*p),
                    })
                    .collect(),
            }
        })
        .collect();
    (incidents, groups)
}

fn stats(phase: Phase, mut m: Merged) -> PhaseStats {
    PhaseStats {
        phase,
        count: m.seconds.len() as i64,
        p50_seconds: percentile_cont(&mut m.seconds, 0.5),
        p90_seconds: percentile_cont(&mut m.seconds, 0.9),
        max_seconds: m.seconds.iter().copied().reduce(f64::max),
        with_target: m.with_target,
        within_target: m.within_target,
        within_target_share: within_target_share(m.within_target, m.with_target),
        missing: m.missing,
        out_of_order: m.out_of_order,
    }
}

/// PostgreSQL's `percentile_cont(p)` over `values` (reordered), to the last bit: the values
/// at rows `floor(p * (n - 1))` and `ceil(..)` of the sorted values, and between them
/// `lo + (hi - lo) * (p * (n - 1) - floor(..))` (its `percentile_cont_final_common` and
/// `float8_lerp`, the same operations on the same doubles); `None` for no values.
pub fn percentile_cont(values: &mut [f64], p: f64) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let rank = p * (n - 1) as f64;
    let (first, second) = (rank.floor(), rank.ceil());
    let (_, lo, above) = values.select_nth_unstable_by(first as usize, f64::total_cmp);
    let lo = *lo;
    if second == first {
        return Some(lo);
    }
    // The next value in order is the smallest of those above the first.
    let hi = above.iter().copied().fold(f64::INFINITY, f64::min);
    Some(lo + (hi - lo) * (rank - first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_range_is_cut_at_its_whole_utc_hours() {
        assert_eq!(
            whole_hours(at("2031-03-10T12:20:00Z"), at("2031-03-11T12:20:00Z")),
            (at("2031-03-10T13:00:00Z"), at("2031-03-11T12:00:00Z"))
        );
        assert_eq!(
            whole_hours(at("2031-03-10T03:00:00Z"), at("2031-03-11T03:00:00Z")),
            (at("2031-03-10T03:00:00Z"), at("2031-03-11T03:00:00Z"))
        );
        // No whole hour: everything from the kept phases.
        assert_eq!(
            whole_hours(at("2031-03-10T12:20:00Z"), at("2031-03-10T13:10:00Z")),
            (at("2031-03-10T13:10:00Z"), at("2031-03-10T13:10:00Z"))
        );
    }

    #[test]
    fn percentiles_interpolate_as_postgresql_does() {
        // docs/dispatch-routes.md, "The report": 420, 590, 610, 900 -> p50 600, p90 813.
        let mut v = vec![900.0, 420.0, 610.0, 590.0];
        assert_eq!(percentile_cont(&mut v, 0.5), Some(600.0));
        assert_eq!(percentile_cont(&mut v, 0.9), Some(813.0));
        assert_eq!(percentile_cont(&mut [7.5], 0.9), Some(7.5));
        assert_eq!(percentile_cont(&mut [], 0.5), None);
    }

    #[test]
    fn only_the_hour_and_day_statements_take_the_time_zone() {
        for (by, sql) in STATEMENTS.iter() {
            assert_eq!(sql.contains("$5"), uses_time_zone(*by), "{by:?}");
        }
        assert_eq!(STATEMENTS.len(), 4);
    }
}
