//! The hospitals' stretcher holds ("retenção de maca", docs/dispatch-routes.md, "Hospital
//! offload"): the units at a hospital's door now, today's holds, and the alerts a unit raises
//! when it stays past the `hospital_hold` target (docs/dispatch-realtime.md, "Hospital
//! offload").
//!
//! An alert is raised by whichever replica's watcher sees it fall due first: the insert into
//! `offload_alerts` (primary key: the dispatch) lets exactly one win, and the winner's
//! statement announces it on [`OFFLOAD_CHANNEL`], so every replica's followers hear it once.
//! The unit's hand-over or release clears it in its own write's transaction.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::dispatch::Status;
use crate::store::error::Result;
use crate::store::read::*;

/// `NOTIFY` channel of the offload alerts: payload the JSON of an `offload.alert` or
/// `offload.cleared` message (`realtime::notice::OffloadNotice`), a few hundred bytes.
pub const OFFLOAD_CHANNEL: &str = "dispatch_offload";

/// The `hospital_hold` target of the incident `i`'s priority (its own, else `any`).
const HOLD_TARGET: &str = "coalesce(
    (SELECT seconds FROM dispatch.response_targets WHERE phase = 'hospital_hold' AND priority = i.priority),
    (SELECT seconds FROM dispatch.response_targets WHERE phase = 'hospital_hold' AND priority = 'any'))";

/// The message's JSON of the alert row `a` (with `i`, `mu`, `h` joined).
const ALERT_JSON: &str = "json_build_object(
    'type', 'offload.alert', 'dispatch_id', a.dispatch_id,
    'incident', json_build_object('id', i.id, 'number', i.number),
    'mobile_unit', json_build_object('id', mu.id, 'name', mu.name),
    'health_unit', CASE WHEN h.id IS NULL THEN NULL
                        ELSE json_build_object('id', h.id, 'name', h.name) END,
    'at_destination_at', a.at_destination_at, 'target_seconds', a.target_seconds,
    'alerted_at', a.alerted_at)::text";

#[derive(QueryableByName)]
struct Json {
    #[diesel(sql_type = Text)]
    json: String,
}

/// The payloads of `rows`, as the channel carries them.
fn payloads(rows: Vec<Json>) -> Vec<String> {
    rows.into_iter().map(|r| r.json).collect()
}

/// Raises every alert due at `now` that no replica has raised yet, and announces each (one
/// statement: the due units are locked, so a hand-over committing meanwhile is seen, and the
/// primary key lets one replica's insert win). Answers the alerts this call raised, each the
/// JSON its announcement carried.
pub async fn raise_due(conn: &mut AsyncPgConnection, now: DateTime<Utc>) -> Result<Vec<String>> {
    let sql = format!(
        "WITH due AS (
            SELECT d.id, coalesce(d.destination_id, i.destination_health_unit_id) AS health_unit_id,
                   d.at_destination_at, {HOLD_TARGET} AS target
              FROM dispatch.dispatches d
              JOIN dispatch.incidents i ON i.id = d.incident_id
             WHERE d.status = 'at_destination'
               AND d.at_destination_at + make_interval(secs => {HOLD_TARGET}) <= $1
               AND NOT EXISTS (SELECT 1 FROM dispatch.offload_alerts x WHERE x.dispatch_id = d.id)
             ORDER BY d.id
             -- Locked, and its status checked again on the newest row once the lock is
             -- had: a hand-over committing meanwhile leaves the unit out.
               FOR UPDATE OF d
         ), raised AS (
            INSERT INTO dispatch.offload_alerts
                   (dispatch_id, health_unit_id, at_destination_at, target_seconds, alerted_at)
            SELECT id, health_unit_id, at_destination_at, target, $1
              FROM due
            ON CONFLICT (dispatch_id) DO NOTHING
            RETURNING *
         )
         SELECT json, pg_notify('{OFFLOAD_CHANNEL}', json) IS NULL AS sent
           FROM (SELECT {ALERT_JSON} AS json, a.dispatch_id
                   FROM raised a
                   JOIN dispatch.dispatches d ON d.id = a.dispatch_id
                   JOIN dispatch.incidents i ON i.id = d.incident_id
                   JOIN dispatch.mobile_units mu ON mu.id = d.mobile_unit_id
                   LEFT JOIN dispatch.health_units h ON h.id = a.health_unit_id) m
          ORDER BY dispatch_id"
    );
    let rows: Vec<Json> = diesel::sql_query(sql)
        .bind::<Timestamptz, _>(now)
        .load(conn)
        .await?;
    Ok(payloads(rows))
}

/// When the next alert falls due (a unit at a door without one), if any unit is at a door.
pub async fn next_due(conn: &mut AsyncPgConnection) -> Result<Option<DateTime<Utc>>> {
    #[derive(QueryableByName)]
    struct Next {
        #[diesel(sql_type = Nullable<Timestamptz>)]
        at: Option<DateTime<Utc>>,
    }
    let sql = format!(
        "SELECT min(d.at_destination_at + make_interval(secs => {HOLD_TARGET})) AS at
           FROM dispatch.dispatches d
           JOIN dispatch.incidents i ON i.id = d.incident_id
          WHERE d.status = 'at_destination'
            AND NOT EXISTS (SELECT 1 FROM dispatch.offload_alerts x WHERE x.dispatch_id = d.id)"
    );
    let next: Next = diesel::sql_query(sql).get_result(conn).await?;
    Ok(next.at)
}

/// The alerts not cleared yet, oldest first, each the JSON of its `offload.alert`: what a
/// new follower of the queue is told.
pub async fn open_alerts(conn: &mut AsyncPgConnection) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT {ALERT_JSON} AS json
           FROM dispatch.offload_alerts a
           JOIN dispatch.dispatches d ON d.id = a.dispatch_id
           JOIN dispatch.incidents i ON i.id = d.incident_id
           JOIN dispatch.mobile_units mu ON mu.id = d.mobile_unit_id
           LEFT JOIN dispatch.health_units h ON h.id = a.health_unit_id
          WHERE a.cleared_at IS NULL
          ORDER BY a.alerted_at, a.dispatch_id"
    );
    let rows: Vec<Json> = diesel::sql_query(sql).load(conn).await?;
    Ok(payloads(rows))
}

/// The unit of `dispatch_id` left the door (`by` is `handed_over` or `released`): its alert,
/// if one was raised, is cleared and the clearing announced, in the write's transaction.
pub async fn clear(conn: &mut AsyncPgConnection, dispatch_id: i64, by: Status) -> Result<()> {
    let sql = format!(
        "WITH cleared AS (
            UPDATE dispatch.offload_alerts a
               SET cleared_at = coalesce(d.handed_over_at, d.released_at), cleared_by = $2
              FROM dispatch.dispatches d
             WHERE a.dispatch_id = $1 AND d.id = a.dispatch_id AND a.cleared_at IS NULL
            RETURNING a.*
         )
         SELECT pg_notify('{OFFLOAD_CHANNEL}', json_build_object(
                    'type', 'offload.cleared', 'dispatch_id', a.dispatch_id,
                    'incident', json_build_object('id', i.id, 'number', i.number),
                    'mobile_unit', json_build_object('id', mu.id, 'name', mu.name),
                    'health_unit', CASE WHEN h.id IS NULL THEN NULL
                                        ELSE json_build_object('id', h.id, 'name', h.name) END,
                    'by', a.cleared_by, 'at_destination_at', a.at_destination_at,
                    'cleared_at', a.cleared_at,
                    'held_seconds', extract(epoch FROM a.cleared_at - a.at_destination_at))::text)
                IS NULL AS sent
           FROM cleared a
           JOIN dispatch.dispatches d ON d.id = a.dispatch_id
           JOIN dispatch.incidents i ON i.id = d.incident_id
           JOIN dispatch.mobile_units mu ON mu.id = d.mobile_unit_id
           LEFT JOIN dispatch.health_units h ON h.id = a.health_unit_id"
    );
    #[derive(QueryableByName)]
    struct Sent {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        #[allow(dead_code)]
        sent: bool,
    }
    let _: Vec<Sent> = diesel::sql_query(sql)
        .bind::<BigInt, _>(dispatch_id)
        .bind::<Text, _>(by.as_str())
        .load(conn)
        .await?;
    Ok(())
}

#[derive(QueryableByName)]
struct DoorRow {
    #[diesel(sql_type = BigInt)]
    dispatch_id: i64,
    #[diesel(sql_type = BigInt)]
    incident_id: i64,
    #[diesel(sql_type = Text)]
    number: String,
    #[diesel(sql_type = BigInt)]
    unit_id: i64,
    #[diesel(sql_type = Text)]
    unit_name: String,
    #[diesel(sql_type = Timestamptz)]
    at_destination_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Integer>)]
    target: Option<i32>,
    #[diesel(embed)]
    health_unit: UnitName,
}

/// A hospital's columns `h_id`, `h_name`, `h_city`, `h_uf` (all null for none).
#[derive(QueryableByName)]
struct UnitName {
    #[diesel(sql_type = Nullable<BigInt>)]
    h_id: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    h_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    h_city: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    h_uf: Option<String>,
}

impl UnitName {
    fn option(self) -> Option<HealthUnitOption> {
        Some(HealthUnitOption {
            id: self.h_id?,
            name: self.h_name?,
            city: self.h_city?,
            uf: self.h_uf?,
        })
    }
}

#[derive(QueryableByName)]
struct HoldRow {
    #[diesel(embed)]
    health_unit: UnitName,
    #[diesel(sql_type = BigInt)]
    holds: i64,
    #[diesel(sql_type = Nullable<Double>)]
    p50: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    p90: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    max: Option<f64>,
}

/// A hospital (or none) and what the board shows of it.
pub type ByHospital<T> = Vec<(Option<HealthUnitOption>, T)>;

/// The units at a hospital's door now, and per hospital the holds of units that arrived since
/// `today_from` and were handed over (to `now`): two statements in one pipeline.
pub async fn board(
    conn: &AsyncPgConnection,
    now: DateTime<Utc>,
    today_from: DateTime<Utc>,
) -> Result<(ByHospital<UnitAtDoor>, ByHospital<HoldStats>)> {
    let doors = async {
        let mut c = conn;
        let sql = format!(
            "SELECT d.id AS dispatch_id, i.id AS incident_id, i.number, mu.id AS unit_id,
                    mu.name AS unit_name, d.at_destination_at, {HOLD_TARGET} AS target,
                    h.id AS h_id, h.name AS h_name, h.city AS h_city, h.uf AS h_uf
               FROM dispatch.dispatches d
               JOIN dispatch.incidents i ON i.id = d.incident_id
               JOIN dispatch.mobile_units mu ON mu.id = d.mobile_unit_id
               LEFT JOIN dispatch.health_units h
                 ON h.id = coalesce(d.destination_id, i.destination_health_unit_id)
              WHERE d.status = 'at_destination'
              ORDER BY d.at_destination_at, d.id"
        );
        diesel_async::RunQueryDsl::load::<DoorRow>(diesel::sql_query(sql), &mut c).await
    };
    let holds = async {
        let mut c = conn;
        diesel_async::RunQueryDsl::load::<HoldRow>(
            diesel::sql_query(
                "SELECT h.id AS h_id, min(h.name) AS h_name, min(h.city) AS h_city,
                        min(h.uf) AS h_uf, count(*) AS holds,
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY s.secs) AS p50,
                        percentile_cont(0.9) WITHIN GROUP (ORDER BY s.secs) AS p90,
                        max(s.secs) AS max
                   FROM dispatch.dispatches d
                   JOIN dispatch.incidents i ON i.id = d.incident_id
                   LEFT JOIN dispatch.health_units h
                     ON h.id = coalesce(d.destination_id, i.destination_health_unit_id)
                  CROSS JOIN LATERAL (SELECT extract(epoch FROM d.handed_over_at
                                                     - d.at_destination_at)::float8 AS secs) s
                  WHERE d.at_destination_at >= $1 AND d.at_destination_at < $2
                    AND d.handed_over_at IS NOT NULL AND d.handed_over_at <= $2
                    AND d.handed_over_at >= d.at_destination_at
                  GROUP BY 1",
            )
            .bind::<Timestamptz, _>(today_from)
            .bind::<Timestamptz, _>(now),
            &mut c,
        )
        .await
    };
    let (doors, holds) = tokio::try_join!(doors, holds)?;
    let doors = doors
        .into_iter()
        .map(|r| {
            let held = (now - r.at_destination_at)
                .num_microseconds()
                .unwrap_or(0)
                .max(0) as f64
                / 1e6;
            (
                r.health_unit.option(),
                UnitAtDoor {
                    dispatch_id: r.dispatch_id,
                    incident: IncidentRef {
                        id: r.incident_id,
                        number: r.number,
                    },
                    mobile_unit: MobileUnitOption {
                        id: r.unit_id,
                        name: r.unit_name,
                    },
                    at_destination_at: r.at_destination_at,
                    held_seconds: held,
                    held_minutes: (held / 60.0).floor() as i64,
                    target_seconds: r.target,
                    over_target: r.target.is_some_and(|t| held > f64::from(t)),
                },
            )
        })
        .collect();
    let holds = holds
        .into_iter()
        .map(|r| {
            (
                r.health_unit.option(),
                HoldStats {
                    holds: r.holds,
                    p50_seconds: r.p50,
                    p90_seconds: r.p90,
                    max_seconds: r.max,
                },
            )
        })
        .collect();
    Ok((doors, holds))
}
