//! Response times (docs/dispatch-routes.md, "Response times"): the targets, an incident's
//! timeline (the phases judged by `domain::times`), the centre's days; and the report
//! (`report`), computed in PostgreSQL from the phases the writes keep already judged by
//! `domain::times` (`store::phases`), against the targets as they are when the report is
//! read.

mod hours;
mod report;

pub use report::{
    JudgedRow, REPORT_TIMEOUT, ResponseBar, judged, report_from_kept_phases, response_distribution,
};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::domain::incident::{Priority, State};
use crate::domain::times::{
    self, IncidentTimes, Phase, Target, TargetPriority, Targets, UnitTimes,
};
use crate::schema::dispatch::*;
use crate::store::dispatches::DispatchRow;
use crate::store::error::{Result, StoreError};
use crate::store::read::*;
use crate::store::writes::Author;
use crate::store::{HealthUnitRow, coalesce};

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
    conn.transaction::<_, StoreError, _>(async |c| {
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
    #[diesel(embed)]
    destination: Option<HealthUnitRow>,
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
        // A unit goes to its dispatch's own destination, else the patient's: the same
        // `destination` as every dispatch read (`store::dispatches::of_incident`).
        dispatches::table
            .inner_join(mobile_units::table.inner_join(mobile_unit_types::table))
            .inner_join(incidents::table)
            .left_join(
                health_units::table.on(health_units::id.nullable().eq(coalesce(
                    dispatches::destination_id,
                    incidents::destination_health_unit_id,
                ))),
            )
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
            destination: u.destination.map(Into::into),
            phases: times::unit_phases(&times, t, &targets, now),
        })
        .collect();
    Ok(Some(IncidentTimeline {
        id: row.id,
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

/// Midnight of `at`'s day in `time_zone` (PostgreSQL's zone names, checked at start).
pub async fn day_start(
    mut conn: &AsyncPgConnection,
    at: DateTime<Utc>,
    time_zone: &str,
) -> Result<DateTime<Utc>, diesel::result::Error> {
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

/// `GET /reports/response-times`: per group and phase, over the calls received in
/// `[from, to)`: counts, `percentile_cont(0.5)` and `(0.9)` (interpolated between the two
/// nearest values), the maximum and the share within target of the `complete` phases;
/// `missing` and `out_of_order` ones counted apart. Every group lists every phase, in order
/// (zero when none was measured). From the kept hours when they answer the grouping
/// (`hours`: none, priority, hour, day), else from the kept phases; the same figures either
/// way (tests/it/times.rs compares them).
pub async fn report(
    conn: &mut AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    by: Option<crate::domain::times::GroupBy>,
    time_zone: &str,
) -> Result<(i64, Vec<crate::store::read::ReportGroup>), diesel::result::Error> {
    if hours::answers(by)
        && let Some(report) = hours::report(conn, from, to, by, time_zone).await?
    {
        return Ok(report);
    }
    report::report_from_kept_phases(conn, from, to, by, time_zone).await
}
