//! Silent integrations (docs/proposal-callback.md, "Silent insurers"): each integration's
//! last callback, the gaps its history learns from, and the silence episodes
//! (`integration_silences`), opened and closed once each whatever the number of replicas
//! (partial unique index, conditional update).

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::insurer::Insurer;
use crate::domain::silence::{Gaps, LearnedFrom, Slot};
use crate::schema::proposal::integration_silences as s;

/// An integration as the silence check sees it.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct Watched {
    #[diesel(sql_type = BigInt)]
    pub integration_id: i64,
    #[diesel(sql_type = Text)]
    pub tenant_id: String,
    #[diesel(sql_type = Text)]
    pub tenant_name: String,
    /// Where the tenant's operator is told; none: nobody is emailed.
    #[diesel(sql_type = Nullable<Text>)]
    pub operator_email: Option<String>,
    /// The tenant's IANA time zone.
    #[diesel(sql_type = Text)]
    pub time_zone: String,
    #[diesel(sql_type = Text)]
    pub insurer: Insurer,
    #[diesel(sql_type = Text)]
    pub environment: String,
    /// When its newest callback arrived; none before the first.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub last_callback_at: Option<DateTime<Utc>>,
    /// Its open silence, if one is flagged.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub open_silence: Option<i64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub silent_since: Option<DateTime<Utc>>,
    /// How long a silence may last before it is flagged, as the open one was judged.
    #[diesel(sql_type = Nullable<Double>)]
    pub silence_threshold_seconds: Option<f64>,
}

/// Every integration (of `tenant`, or all), with its last callback and its open silence. The
/// last callback is one backward step on `callback_receipts_integration_received` each.
pub async fn watched(
    conn: &mut AsyncPgConnection,
    tenant: Option<&str>,
) -> QueryResult<Vec<Watched>> {
    diesel::sql_query(
        "SELECT i.id AS integration_id, i.tenant_id, t.name AS tenant_name, t.operator_email, \
                t.time_zone, \
                i.insurer, i.environment, \
                (SELECT max(r.received_at) FROM proposal.callback_receipts r \
                  WHERE r.integration_id = i.id) AS last_callback_at, \
                s.id AS open_silence, s.since AS silent_since, \
                s.threshold_seconds AS silence_threshold_seconds \
         FROM proposal.integrations i \
         JOIN proposal.tenants t ON t.id = i.tenant_id \
         LEFT JOIN proposal.integration_silences s \
                ON s.integration_id = i.id AND s.cleared_at IS NULL \
         WHERE $1::text IS NULL OR i.tenant_id = $1 \
         ORDER BY i.id",
    )
    .bind::<Nullable<Text>, _>(tenant)
    .load(conn)
    .await
}

#[derive(QueryableByName)]
struct GapRow {
    #[diesel(sql_type = BigInt)]
    hour_count: i64,
    #[diesel(sql_type = Nullable<Double>)]
    hour_p99: Option<f64>,
    #[diesel(sql_type = BigInt)]
    window_count: i64,
    #[diesel(sql_type = Nullable<Double>)]
    window_p99: Option<f64>,
}

/// The integration's gaps between consecutive callbacks received in `[from, to]`: those that
/// began in `slot` (its hour of its weekday in its zone, as [`Slot::of`]) and all of them, each with its p99
/// (nearest rank). A gap that began a flagged silence is left out.
pub async fn gaps(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    slot: Slot,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> QueryResult<Gaps> {
    let row: GapRow = diesel::sql_query(
        "WITH arrivals AS ( \
             SELECT received_at AS at, \
                    lead(received_at) OVER (ORDER BY received_at, id) AS next_at \
             FROM proposal.callback_receipts \
             WHERE integration_id = $1 AND received_at >= $2 AND received_at <= $3 \
         ), gaps AS ( \
             SELECT extract(epoch FROM next_at - at)::float8 AS secs, \
                    extract(isodow FROM at AT TIME ZONE $6)::int AS dow, \
                    extract(hour FROM at AT TIME ZONE $6)::int AS hour \
             FROM arrivals a \
             WHERE next_at IS NOT NULL \
               AND NOT EXISTS (SELECT 1 FROM proposal.integration_silences s \
                               WHERE s.integration_id = $1 AND s.since = a.at) \
         ) \
         SELECT count(*) FILTER (WHERE dow = $4 AND hour = $5) AS hour_count, \
                percentile_disc(0.99) WITHIN GROUP (ORDER BY secs) \
                    FILTER (WHERE dow = $4 AND hour = $5) AS hour_p99, \
                count(*) AS window_count, \
                percentile_disc(0.99) WITHIN GROUP (ORDER BY secs) AS window_p99 \
         FROM gaps",
    )
    .bind::<BigInt, _>(integration_id)
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Integer, _>(slot.weekday as i32)
    .bind::<Integer, _>(slot.hour as i32)
    .bind::<Text, _>(slot.zone.name())
    .get_result(conn)
    .await?;
    Ok(Gaps {
        hour_count: row.hour_count,
        hour_p99: row.hour_p99,
        window_count: row.window_count,
        window_p99: row.window_p99,
    })
}

/// A silence as it is flagged.
#[derive(Debug, Clone, Copy)]
pub struct NewSilence {
    pub integration_id: i64,
    pub since: DateTime<Utc>,
    pub flagged_at: DateTime<Utc>,
    pub threshold_seconds: f64,
    pub usual_gap_seconds: f64,
    pub learned_from: LearnedFrom,
    pub samples: i64,
}

/// Opens the silence, unless one is open for the integration already, this one was flagged
/// before (its start is unique), or a callback arrived after `since` meanwhile. The id when
/// this call opened it: only then is the operator told.
pub async fn open(conn: &mut AsyncPgConnection, new: &NewSilence) -> QueryResult<Option<i64>> {
    #[derive(QueryableByName)]
    struct Opened {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }
    diesel::sql_query(
        "INSERT INTO proposal.integration_silences \
             (integration_id, since, flagged_at, threshold_seconds, usual_gap_seconds, \
              learned_from, samples) \
         SELECT $1, $2, $3, $4, $5, $6, $7 \
         WHERE NOT EXISTS (SELECT 1 FROM proposal.callback_receipts \
                           WHERE integration_id = $1 AND received_at > $2) \
         ON CONFLICT DO NOTHING \
         RETURNING id",
    )
    .bind::<BigInt, _>(new.integration_id)
    .bind::<Timestamptz, _>(new.since)
    .bind::<Timestamptz, _>(new.flagged_at)
    .bind::<Double, _>(new.threshold_seconds)
    .bind::<Double, _>(new.usual_gap_seconds)
    .bind::<Text, _>(new.learned_from.as_str())
    .bind::<Integer, _>(i32::try_from(new.samples).unwrap_or(i32::MAX))
    .get_result::<Opened>(conn)
    .await
    .optional()
    .map(|o| o.map(|o| o.id))
}

/// A silence episode, as stored.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = s)]
pub struct SilenceRow {
    pub id: i64,
    pub integration_id: i64,
    pub since: DateTime<Utc>,
    pub flagged_at: DateTime<Utc>,
    pub threshold_seconds: f64,
    pub usual_gap_seconds: f64,
    pub learned_from: LearnedFrom,
    pub samples: i32,
    pub ended_at: Option<DateTime<Utc>>,
    pub cleared_at: Option<DateTime<Utc>>,
    pub alert_email_id: Option<i64>,
    pub resume_email_id: Option<i64>,
}

/// Closes the open silence `id` at `now` if a callback arrived after its start: ended when
/// the first of them arrived. The row when this call closed it (another replica that closed
/// it first leaves nothing to close here).
pub async fn close(
    conn: &mut AsyncPgConnection,
    id: i64,
    now: DateTime<Utc>,
) -> QueryResult<Option<SilenceRow>> {
    let first_after = diesel::dsl::sql::<Nullable<Timestamptz>>(
        "(SELECT min(r.received_at) FROM proposal.callback_receipts r \
          WHERE r.integration_id = integration_silences.integration_id \
            AND r.received_at > integration_silences.since)",
    );
    diesel::update(
        s::table
            .find(id)
            .filter(s::cleared_at.is_null())
            .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(
                "EXISTS (SELECT 1 FROM proposal.callback_receipts r \
                  WHERE r.integration_id = integration_silences.integration_id \
                    AND r.received_at > integration_silences.since)",
            )),
    )
    .set((s::ended_at.eq(first_after), s::cleared_at.eq(Some(now))))
    .returning(SilenceRow::as_returning())
    .get_result(conn)
    .await
    .optional()
}

/// Records the operator's email of the silence's start (`alert`) or end.
pub async fn set_email(
    conn: &mut AsyncPgConnection,
    id: i64,
    email_id: i64,
    alert: bool,
) -> QueryResult<()> {
    let q = diesel::update(s::table.find(id));
    if alert {
        q.set(s::alert_email_id.eq(Some(email_id)))
            .execute(conn)
            .await?;
    } else {
        q.set(s::resume_email_id.eq(Some(email_id)))
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// The integration's silences, newest first.
pub async fn of_integration(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> QueryResult<Vec<SilenceRow>> {
    s::table
        .filter(s::integration_id.eq(integration_id))
        .order(s::id.desc())
        .select(SilenceRow::as_select())
        .load(conn)
        .await
}
