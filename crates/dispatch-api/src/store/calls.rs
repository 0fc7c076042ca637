//! The calls the switch announces (docs/dispatch-telephony.md): each event judged by
//! `domain::call` against the call as recorded, in one transaction that locks it, and
//! announced on [`CALLS_CHANNEL`] so every replica's `calls` followers hear it once.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};

use crate::domain::call::{self, Applied, Call, CallEvent, CallEventKind, CallOutcome};
use crate::domain::phone;
use crate::domain::times::{Phase, TargetPriority};
use crate::schema::dispatch::{calls, prank_calls, users};
use crate::store::error::{Result, StoreError};

/// `NOTIFY` channel of the calls' events: payload [`CallNotice`] as JSON.
pub const CALLS_CHANNEL: &str = "dispatch_calls";

/// What [`CALLS_CHANNEL`] carries: the event and the call after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallNotice {
    pub event: CallEventKind,
    pub call: Call,
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = calls, treat_none_as_null = true)]
struct CallRow {
    call_id: String,
    caller: Option<String>,
    called: String,
    prank_calls: i32,
    rang_at: DateTime<Utc>,
    answered_at: Option<DateTime<Utc>>,
    answered_by: Option<String>,
    answered_user_id: Option<i64>,
    ended_at: Option<DateTime<Utc>>,
    outcome: Option<CallOutcome>,
    incident_id: Option<i64>,
}

impl From<CallRow> for Call {
    fn from(r: CallRow) -> Self {
        Call {
            call_id: r.call_id,
            caller: r.caller,
            called: r.called,
            prank_calls: r.prank_calls,
            rang_at: r.rang_at,
            answered_at: r.answered_at,
            answered_by: r.answered_by,
            answered_user_id: r.answered_user_id,
            ended_at: r.ended_at,
            outcome: r.outcome,
            incident_id: r.incident_id,
        }
    }
}

impl From<&Call> for CallRow {
    fn from(c: &Call) -> Self {
        CallRow {
            call_id: c.call_id.clone(),
            caller: c.caller.clone(),
            called: c.called.clone(),
            prank_calls: c.prank_calls,
            rang_at: c.rang_at,
            answered_at: c.answered_at,
            answered_by: c.answered_by.clone(),
            answered_user_id: c.answered_user_id,
            ended_at: c.ended_at,
            outcome: c.outcome,
            incident_id: c.incident_id,
        }
    }
}

/// The call `call_id`, if the switch announced it.
pub async fn find(
    mut conn: &AsyncPgConnection,
    call_id: &str,
) -> Result<Option<Call>, diesel::result::Error> {
    let row: Option<CallRow> = calls::table
        .find(call_id)
        .select(CallRow::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(Call::from))
}

/// Records that the call became incident `incident_id` (in the incident's creation).
pub async fn link(
    conn: &mut AsyncPgConnection,
    call_id: &str,
    incident_id: i64,
) -> Result<(), diesel::result::Error> {
    diesel::update(calls::table.find(call_id))
        .set(calls::incident_id.eq(incident_id))
        .execute(conn)
        .await?;
    Ok(())
}

/// The call `call_id`, locked until the transaction ends (an incident created from it).
pub async fn lock(
    conn: &mut AsyncPgConnection,
    call_id: &str,
) -> Result<Option<Call>, diesel::result::Error> {
    let row: Option<CallRow> = calls::table
        .find(call_id)
        .select(CallRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(row.map(Call::from))
}

/// One event of the switch, stamped `sent_at` by the switch or received `now`: judged against the call as recorded, written and
/// announced when it changes it; answers the call and whether the event was a replay
/// (nothing written, nothing announced).
pub async fn record(
    conn: &mut AsyncPgConnection,
    call_id: &str,
    event: &CallEvent,
    sent_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(Call, bool)> {
    conn.transaction::<_, StoreError, _>(async |c| {
        // A new call has no row to lock: two first `ringing` events at once both insert,
        // and the later one's upsert writes the same call again.
        let current = lock(c, call_id).await?;
        let prank_count = match (event, &current) {
            (
                CallEvent::Ringing {
                    caller: Some(number),
                    ..
                },
                None,
            ) => {
                let n: i64 = prank_calls::table
                    .filter(prank_calls::phone_key.eq(phone::key_of(number)))
                    .count()
                    .get_result(c)
                    .await?;
                i32::try_from(n).unwrap_or(i32::MAX)
            }
            _ => 0,
        };
        let user_id = match event {
            CallEvent::Answered { by } => users::table
                .filter(users::login.eq(by))
                .select(users::id)
                .first::<i64>(c)
                .await
                .optional()?,
            _ => None,
        };
        match call::apply(
            current.as_ref(),
            call_id,
            event,
            sent_at,
            now,
            prank_count,
            user_id,
        )? {
            Applied::Replayed => Ok((current.expect("a replay is of a recorded call"), true)),
            Applied::Changed(call) => {
                let row = CallRow::from(&call);
                diesel::insert_into(calls::table)
                    .values(&row)
                    .on_conflict(calls::call_id)
                    .do_update()
                    .set(&row)
                    .execute(c)
                    .await?;
                let notice = CallNotice {
                    event: event.kind(),
                    call: call.clone(),
                };
                let payload = serde_json::to_string(&notice).unwrap_or_default();
                diesel::sql_query("SELECT pg_notify($1, $2)")
                    .bind::<diesel::sql_types::Text, _>(CALLS_CHANNEL)
                    .bind::<diesel::sql_types::Text, _>(payload)
                    .execute(c)
                    .await?;
                Ok((call, false))
            }
        }
    })
    .await
}

/// The telephone's figures of one grouping of the calls that rang in a range: how many,
/// answered, abandoned, and the ring-to-answer times against the target.
#[derive(Debug, Clone, PartialEq, diesel::QueryableByName)]
pub struct CallFigures {
    /// `all`, `hour` or `day`.
    #[diesel(sql_type = Text)]
    pub grouping: String,
    /// The hour (`HH`) or day (`YYYY-MM-DD`), centre time; null for `all`.
    #[diesel(sql_type = Nullable<Text>)]
    pub key: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub calls: i64,
    #[diesel(sql_type = BigInt)]
    pub answered: i64,
    #[diesel(sql_type = BigInt)]
    pub abandoned: i64,
    #[diesel(sql_type = Nullable<Double>)]
    pub p50: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    pub p90: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    pub max: Option<f64>,
    /// Answered calls judged against a target (all of them when there is one).
    #[diesel(sql_type = BigInt)]
    pub with_target: i64,
    #[diesel(sql_type = BigInt)]
    pub within_target: i64,
}

/// The calls that rang in `[from, to)`: all of them, by hour and by day of `time_zone`, one
/// statement. A call is answered when someone picked it up, abandoned when it ended
/// unanswered; one still ringing is neither. The `ring_to_answer` target is the `any` one.
pub async fn figures(
    mut conn: &AsyncPgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    time_zone: &str,
) -> Result<Vec<CallFigures>, diesel::result::Error> {
    // The words are the enums': the phase and the outcome, never a misspelt literal.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "
WITH c AS (
    SELECT to_char(rang_at AT TIME ZONE $3, 'HH24') AS hour,
           to_char(rang_at AT TIME ZONE $3, 'YYYY-MM-DD') AS day,
           outcome,
           extract(epoch FROM answered_at - rang_at)::float8 AS seconds
      FROM dispatch.calls
     WHERE rang_at >= $1 AND rang_at < $2
),
tg AS (
    SELECT (SELECT seconds FROM dispatch.response_targets
             WHERE phase = '{phase}' AND priority = '{any}') AS target
)
SELECT CASE WHEN GROUPING(hour) = 0 THEN 'hour' WHEN GROUPING(day) = 0 THEN 'day'
            ELSE 'all' END AS grouping,
       coalesce(hour, day) AS key,
       count(*) AS calls,
       count(seconds) AS answered,
       count(*) FILTER (WHERE outcome = '{abandoned}') AS abandoned,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90,
       max(seconds) AS max,
       count(seconds) FILTER (WHERE tg.target IS NOT NULL) AS with_target,
       count(seconds) FILTER (WHERE seconds <= tg.target) AS within_target
  FROM c CROSS JOIN tg
 GROUP BY GROUPING SETS ((), (hour), (day))
 ORDER BY 1, 2",
            phase = Phase::RingToAnswer.as_str(),
            any = TargetPriority::Any.as_str(),
            abandoned = CallOutcome::Abandoned.as_str(),
        )
    });
    diesel::sql_query(SQL.as_str())
        .bind::<Timestamptz, _>(from)
        .bind::<Timestamptz, _>(to)
        .bind::<Text, _>(time_zone)
        .load(&mut conn)
        .await
}
