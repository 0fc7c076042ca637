//! Incidents: their forms, history, decisions, prank calls and recorded intercurrences;
//! the incident search is `mask`.

mod mask;

pub use mask::mask;

use chrono::{DateTime, Utc};
use diesel::expression::SqlLiteral;
use diesel::prelude::*;
use diesel::result::Error;
use diesel::sql_types::{Integer, Nullable, Record, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::form::IncidentForm;
use crate::domain::history::HistoryAction;
use crate::domain::incident::{Priority, Sex, State};
use crate::schema::dispatch::*;
use crate::store::prebuilt;
use crate::store::read::*;
use crate::store::{HealthUnitRow, opt_user, ref_option, user_option};

diesel::alias!(users as regulator_user: RegulatorAlias, users as assignee_user: AssigneeAlias);

/// An incident as its screen reads it: its editable fields (the one list,
/// `domain::form::Field`, its columns `store::incident_form`) and what the writes set.
#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct IncidentRow {
    id: i64,
    number: String,
    state: State,
    version: i32,
    call_received_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    #[diesel(embed)]
    form: IncidentForm,
    regulated_at: Option<DateTime<Utc>>,
    conclusion: Option<String>,
    closed_at: Option<DateTime<Utc>>,
    location_lat: Option<f64>,
    location_lon: Option<f64>,
}

type DetailRow = (
    IncidentRow,
    (i64, String),
    Option<(i64, String)>,
    Option<(i64, String)>,
    Option<HealthUnitRow>,
);

/// The incident's forms with the names of its creator, regulator and assignee and the
/// patient's destination: one statement.
pub async fn detail(
    mut conn: &AsyncPgConnection,
    id: i64,
) -> Result<Option<IncidentDetail>, Error> {
    static TEXT: prebuilt::Text = prebuilt::Text::new();
    let query = incidents::table
        .inner_join(users::table.on(users::id.eq(incidents::created_by)))
        .left_join(
            regulator_user
                .on(incidents::regulator_id.eq(regulator_user.field(users::id).nullable())),
        )
        .left_join(
            assignee_user
                .on(incidents::assigned_to_id.eq(assignee_user.field(users::id).nullable())),
        )
        .left_join(health_units::table)
        .filter(incidents::id.eq(id))
        .select((
            IncidentRow::as_select(),
            (users::id, users::descriptive_name),
            regulator_user
                .fields((users::id, users::descriptive_name))
                .nullable(),
            assignee_user
                .fields((users::id, users::descriptive_name))
                .nullable(),
            Option::<HealthUnitRow>::as_select(),
        ));
    // At most one row: the incident by its key, each join by the other table's key.
    let row: Option<DetailRow> = prebuilt::prebuilt(&TEXT, query, id)?
        .get_result(&mut conn)
        .await
        .optional()?;
    Ok(row.map(
        |(r, created_by, regulator, assignee, destination)| IncidentDetail {
            id: r.id,
            number: r.number,
            state: r.state,
            version: r.version,
            call_received_at: r.call_received_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
            created_by: user_option(created_by),
            basic_data: BasicData {
                caller_name: r.form.caller_name,
                caller_phone: r.form.caller_phone,
                address: r.form.address,
                city: r.form.city,
                complaint: r.form.complaint,
                related_incident_id: r.form.related_incident_id,
                location: r
                    .location_lat
                    .zip(r.location_lon)
                    .map(|(lat, lon)| Location { lat, lon }),
            },
            occurrence: Occurrence {
                occurrence_type: r.form.occurrence_type,
                priority: r.form.priority,
                notes: r.form.occurrence_notes,
            },
            patient: Patient {
                name: r.form.patient_name,
                age: r.form.patient_age,
                sex: r.form.patient_sex,
                destination: destination.map(Into::into),
            },
            regulation: Regulation {
                regulator: opt_user(regulator),
                regulated_at: r.regulated_at,
                assigned_to: opt_user(assignee),
            },
            conclusion: Conclusion {
                text: r.conclusion,
                closed_at: r.closed_at,
            },
            history: None,
        },
    ))
}

/// The incident's history, oldest first.
pub async fn history(mut conn: &AsyncPgConnection, id: i64) -> Result<Vec<HistoryEntry>, Error> {
    let rows: Vec<(
        i32,
        DateTime<Utc>,
        HistoryAction,
        i64,
        String,
        serde_json::Value,
    )> = incident_history::table
        .inner_join(users::table)
        .filter(incident_history::incident_id.eq(id))
        .order_by(incident_history::id)
        .select((
            incident_history::version,
            incident_history::at,
            incident_history::action,
            users::id,
            users::descriptive_name,
            incident_history::changes,
        ))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(version, at, action, uid, uname, changes)| HistoryEntry {
            version,
            at,
            action,
            user: user_option((uid, uname)),
            changes,
        })
        .collect())
}

/// What the fleet and unit-selection screens read of an incident.
pub struct FleetRow {
    pub summary: IncidentFleetSummary,
    pub patient: Patient,
    /// The caller and who holds the attendance now (the fleet occurrence shows them).
    pub caller_name: String,
    pub caller_phone: String,
    pub assigned_to: Option<UserOption>,
}

/// The SQL type of [`requested_vehicle_type`]: `(id, name)` or null.
pub(crate) type VehicleTypeRecord = Nullable<Record<(Integer, Text)>>;

/// The vehicle type the incident's latest technical decision asks for, `(id, name)`, or null
/// (no decision yet, or the latest asks for none): a correlated subquery of `incidents`, one
/// probe of `technical_decisions_incident` per incident row it is evaluated for.
pub(crate) fn requested_vehicle_type() -> SqlLiteral<VehicleTypeRecord> {
    diesel::dsl::sql(
        "(SELECT ROW(t.id, t.name) FROM dispatch.mobile_unit_types t \
          WHERE t.id = (SELECT td.mobile_unit_type_id FROM dispatch.technical_decisions td \
                         WHERE td.incident_id = incidents.id \
                         ORDER BY td.decided_at DESC, td.id DESC LIMIT 1))",
    )
}

/// The fleet row with the vehicle type of the latest technical decision, the patient's
/// destination and the assignee, in one statement.
pub async fn fleet_row(mut conn: &AsyncPgConnection, id: i64) -> Result<Option<FleetRow>, Error> {
    type Row = (
        FleetIncidentRow,
        Option<(i32, String)>,
        Option<HealthUnitRow>,
        Option<(i64, String)>,
    );
    let row: Option<Row> = incidents::table
        .left_join(health_units::table)
        .left_join(
            assignee_user
                .on(incidents::assigned_to_id.eq(assignee_user.field(users::id).nullable())),
        )
        .filter(incidents::id.eq(id))
        .select((
            FleetIncidentRow::as_select(),
            requested_vehicle_type(),
            Option::<HealthUnitRow>::as_select(),
            assignee_user
                .fields((users::id, users::descriptive_name))
                .nullable(),
        ))
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(|(r, vehicle, destination, assignee)| FleetRow {
        summary: IncidentFleetSummary {
            id: r.id,
            number: r.number,
            state: r.state,
            version: r.version,
            created_at: r.created_at,
            address: r.address,
            city: r.city,
            complaint: r.complaint,
            priority: r.priority,
            requested_vehicle_type: vehicle.map(ref_option),
        },
        patient: Patient {
            name: r.patient_name,
            age: r.patient_age,
            sex: r.patient_sex,
            destination: destination.map(Into::into),
        },
        caller_name: r.caller_name,
        caller_phone: r.caller_phone,
        assigned_to: opt_user(assignee),
    }))
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct FleetIncidentRow {
    id: i64,
    number: String,
    state: State,
    version: i32,
    created_at: DateTime<Utc>,
    address: String,
    city: String,
    complaint: String,
    priority: Option<Priority>,
    patient_name: Option<String>,
    patient_age: Option<i32>,
    patient_sex: Option<Sex>,
    caller_name: String,
    caller_phone: String,
}

/// Whether the incident exists, so an empty list of its rows can tell 404 from `[]`. Cheap
/// (primary key) and sent in the same pipeline as the list.
pub async fn exists(mut conn: &AsyncPgConnection, id: i64) -> Result<bool, Error> {
    diesel::select(diesel::dsl::exists(
        incidents::table.filter(incidents::id.eq(id)),
    ))
    .get_result(&mut conn)
    .await
}

/// The incident's current version; `None` when it does not exist.
pub async fn version(mut conn: &AsyncPgConnection, id: i64) -> Result<Option<i32>, Error> {
    incidents::table
        .find(id)
        .select(incidents::version)
        .first(&mut conn)
        .await
        .optional()
}

/// An incident's current version (re-read by the real-time hub).
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
pub struct IncidentVersion {
    pub id: i64,
    pub version: i32,
}

/// The current versions of `ids` (those that exist), in one statement.
pub async fn versions(
    mut conn: &AsyncPgConnection,
    ids: &[i64],
) -> Result<Vec<IncidentVersion>, Error> {
    incidents::table
        .filter(incidents::id.eq_any(ids))
        .select(IncidentVersion::as_select())
        .load(&mut conn)
        .await
}

/// The technical decisions of an incident, oldest first.
pub async fn decisions(
    mut conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Vec<TechnicalDecisionView>, Error> {
    type Row = (
        i64,
        (i32, String),
        Option<i32>,
        Option<String>,
        (i64, String),
        Option<String>,
        DateTime<Utc>,
    );
    let rows: Vec<Row> = technical_decisions::table
        .inner_join(technical_decision_actions::table)
        .inner_join(users::table)
        .left_join(mobile_unit_types::table)
        .filter(technical_decisions::incident_id.eq(incident_id))
        .order_by((technical_decisions::decided_at, technical_decisions::id))
        .select((
            technical_decisions::id,
            (
                technical_decision_actions::id,
                technical_decision_actions::name,
            ),
            mobile_unit_types::id.nullable(),
            mobile_unit_types::name.nullable(),
            (users::id, users::descriptive_name),
            technical_decisions::notes,
            technical_decisions::decided_at,
        ))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, action, vt_id, vt_name, regulator, notes, decided_at)| TechnicalDecisionView {
                id,
                incident_id,
                action: ref_option(action),
                vehicle_type: crate::store::opt_ref(vt_id, vt_name),
                regulator: user_option(regulator),
                notes,
                decided_at,
            },
        )
        .collect())
}

/// How many prank calls to list; `total` still counts them all.
const PRANK_CALLS_SHOWN: i64 = 20;

/// The count of the prank calls `$matching` selects and the 20 newest with their incidents'
/// numbers (kept on the prank call), both read from the index `prank_calls_phone_key` alone,
/// in one pipeline on `$conn`. (`$matching` is written once and built twice, once per statement.)
macro_rules! prank_calls_where {
    ($conn:expr, $matching:expr) => {
        tokio::try_join!(
            async {
                let mut conn = $conn;
                prank_calls::table
                    .filter($matching)
                    .count()
                    .get_result::<i64>(&mut conn)
                    .await
            },
            async {
                let mut conn = $conn;
                prank_calls::table
                    .filter($matching)
                    .order_by((prank_calls::recorded_at.desc(), prank_calls::id.desc()))
                    .select(PrankRow::as_select())
                    .limit(PRANK_CALLS_SHOWN)
                    .load::<PrankRow>(&mut conn)
                    .await
            },
        )
    };
}

/// Prank calls of a phone, given by its key (`domain::phone::Phone::key`), newest first: the
/// 20 newest and the count of all. A number with years of prank calls costs index entries
/// only, no incident row (bench/scale/README.md).
pub async fn prank_calls(conn: &AsyncPgConnection, key: &str) -> Result<PrankCalls, Error> {
    let (total, rows) = prank_calls_where!(conn, prank_calls::phone_key.eq(key))?;
    Ok(prank_page(key.to_owned(), total, rows))
}

/// One prank call with the number of its incident.
#[derive(Queryable, Selectable)]
#[diesel(table_name = prank_calls, check_for_backend(diesel::pg::Pg))]
struct PrankRow {
    incident_id: i64,
    #[diesel(column_name = incident_number)]
    number: String,
    recorded_at: DateTime<Utc>,
}

/// Intercurrences recorded on an incident's attendance, oldest first.
pub async fn recorded_intercurrences(
    mut conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<Vec<RecordedIntercurrence>, Error> {
    type Row = (
        i64,
        (i32, String),
        Option<String>,
        (i64, String),
        DateTime<Utc>,
    );
    let rows: Vec<Row> = incident_intercurrences::table
        .inner_join(intercurrences::table)
        .inner_join(users::table.on(users::id.eq(incident_intercurrences::recorded_by)))
        .filter(incident_intercurrences::incident_id.eq(incident_id))
        .order_by((
            incident_intercurrences::recorded_at,
            incident_intercurrences::id,
        ))
        .select((
            incident_intercurrences::id,
            (intercurrences::id, intercurrences::name),
            incident_intercurrences::notes,
            (users::id, users::descriptive_name),
            incident_intercurrences::recorded_at,
        ))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, intercurrence, notes, by, recorded_at)| RecordedIntercurrence {
                id,
                intercurrence: ref_option(intercurrence),
                notes,
                recorded_by: user_option(by),
                recorded_at,
            },
        )
        .collect())
}

/// Prank calls of the phone of an incident's caller (same key), as [`prank_calls`]: the key is
/// read by a subquery, so this runs in the same pipeline as the incident's own statement.
/// `phone` is left empty for the caller to fill from the incident.
pub async fn prank_calls_of_incident(
    conn: &AsyncPgConnection,
    incident_id: i64,
) -> Result<PrankCalls, Error> {
    let same_phone = || {
        diesel::dsl::sql::<diesel::sql_types::Bool>(
            "prank_calls.phone_key = (SELECT c.caller_phone_key FROM dispatch.incidents c WHERE c.id = ",
        )
        .bind::<diesel::sql_types::BigInt, _>(incident_id)
        .sql(")")
    };
    let (total, rows) = prank_calls_where!(conn, same_phone())?;
    Ok(prank_page(String::new(), total, rows))
}

fn prank_page(phone: String, total: i64, rows: Vec<PrankRow>) -> PrankCalls {
    PrankCalls {
        phone,
        total,
        calls: rows
            .into_iter()
            .map(|r| PrankCall {
                incident_id: r.incident_id,
                number: r.number,
                recorded_at: r.recorded_at,
            })
            .collect(),
    }
}
