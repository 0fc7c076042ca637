//! Incidents: their forms, history, decisions, prank calls and recorded intercurrences.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::result::Error;
use diesel::sql_types::Bool;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::incident::{Priority, Sex, State};
use crate::schema::dispatch::*;
use crate::search::{Mask, MaskTerm, Scope};
use crate::store::{HealthUnitRow, WriteLimit, digits_of, opt_user, ref_option, user_option};
use crate::views::*;

diesel::alias!(users as regulator_user: RegulatorAlias, users as assignee_user: AssigneeAlias);

#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct IncidentRow {
    id: i64,
    number: String,
    state: State,
    version: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    caller_name: String,
    caller_phone: String,
    address: String,
    city: String,
    complaint: String,
    related_incident_id: Option<i64>,
    occurrence_type: Option<String>,
    priority: Option<Priority>,
    occurrence_notes: Option<String>,
    patient_name: Option<String>,
    patient_age: Option<i32>,
    patient_sex: Option<Sex>,
    regulated_at: Option<DateTime<Utc>>,
    conclusion: Option<String>,
    closed_at: Option<DateTime<Utc>>,
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
    let row: Option<DetailRow> = incidents::table
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
        ))
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(
        |(r, created_by, regulator, assignee, destination)| IncidentDetail {
            id: r.id,
            number: r.number,
            state: r.state,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
            created_by: user_option(created_by),
            basic_data: BasicData {
                caller_name: r.caller_name,
                caller_phone: r.caller_phone,
                address: r.address,
                city: r.city,
                complaint: r.complaint,
                related_incident_id: r.related_incident_id,
            },
            occurrence: Occurrence {
                occurrence_type: r.occurrence_type,
                priority: r.priority,
                notes: r.occurrence_notes,
            },
            patient: Patient {
                name: r.patient_name,
                age: r.patient_age,
                sex: r.patient_sex,
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
    let rows: Vec<(i32, DateTime<Utc>, String, i64, String, serde_json::Value)> =
        incident_history::table
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

/// One statement of the mask search: its rows, the newest first.
type MaskQuery<'a> = diesel::dsl::IntoBoxed<
    'a,
    diesel::dsl::Select<incidents::table, diesel::dsl::AsSelect<MaskRow, Pg>>,
    Pg,
>;

/// The states an incident is open in (the default scope keeps them whatever their age).
const OPEN: [State; 4] = [
    State::Registering,
    State::AwaitingRegulation,
    State::Regulated,
    State::Dispatched,
];

/// `GET /incident/mask` (docs/dispatch-routes.md, "Incident search"). Identifiers (a
/// complete number or phone) are looked up by index whatever the incident's age. Any other
/// search reads only its scope, newest first along an index, and stops at the page: by
/// default the incidents created since `since`, then the older ones still open; a text term
/// takes the word-prefix matches of both, then the other matches. Each part is one
/// statement (two pipelined with `mine`), run only while the page is not full: one when the
/// first part fills it, at most four.
pub async fn mask(
    conn: &AsyncPgConnection,
    mask: &Mask,
    caller: i64,
) -> Result<Vec<IncidentMaskItem>, Error> {
    let any_age: Vec<Part<'_>> = vec![Part::same_plan(|| filtered(mask))];
    let rows: Vec<MaskRow> = match &mask.term {
        Some(MaskTerm::Number(number)) => {
            let number = number.clone();
            let matching: Matching<'_> = &move |q| q.filter(incidents::number.eq(number.clone()));
            read(conn, mask, caller, &[matching], &any_age).await?
        }
        Some(MaskTerm::Phone(digits)) => {
            let matching: Matching<'_> = &|q| q.filter(phone_is(digits));
            read(conn, mask, caller, &[matching], &any_age).await?
        }
        Some(MaskTerm::PhonePrefix(digits)) => {
            let matching: Matching<'_> = &|q| q.filter(phone_starts_with(digits));
            read(conn, mask, caller, &[matching], &scope(mask)).await?
        }
        Some(MaskTerm::Text(p)) => {
            let word = || {
                incidents::search_text
                    .like(p.prefix.clone())
                    .or(incidents::search_text.like(p.word_prefix.clone()))
            };
            let words: Matching<'_> = &|q| q.filter(word());
            let inside: Matching<'_> = &|q| {
                q.filter(incidents::search_text.like(p.infix.clone()))
                    .filter(diesel::dsl::not(word()))
            };
            read(conn, mask, caller, &[words, inside], &scope(mask)).await?
        }
        None => read(conn, mask, caller, &[&|q| q], &scope(mask)).await?,
    };
    Ok(rows.into_iter().map(IncidentMaskItem::from).collect())
}

/// A kind of match: the filter it adds.
type Matching<'m> = &'m dyn Fn(MaskQuery<'static>) -> MaskQuery<'static>;

/// A part of the scope: the rows it reads, newest first, and whether one plan serves every
/// value it is run with.
///
/// When it does, the page size is written into the statement rather than bound, so that
/// PostgreSQL may keep one generic plan for the prepared statement instead of planning it
/// again on every request: with `LIMIT $n` the planner prices a generic plan as if it read a
/// tenth of the rows, which at millions of incidents never beats planning anew, and planning
/// cost a quarter of the queue's throughput at 2 M incidents (bench/scale/README.md). A part
/// whose best plan depends on its values keeps the bound limit, and with it a plan made for
/// those values: a text term (a rare word reads the trigram index, a common one walks the
/// newest incidents), a phone prefix (its index needs the prefix at planning), the older open
/// incidents (the partial index `incidents_open` needs the states at planning) and an
/// explicit range (a rare state in a month reads `incidents_state`).
struct Part<'m> {
    rows: Box<dyn Fn() -> MaskQuery<'static> + 'm>,
    same_plan: bool,
}

impl<'m> Part<'m> {
    /// A part that one plan serves whatever its values.
    fn same_plan(rows: impl Fn() -> MaskQuery<'static> + 'm) -> Self {
        Part {
            rows: Box::new(rows),
            same_plan: true,
        }
    }

    /// A part whose plan depends on its values.
    fn per_value(rows: impl Fn() -> MaskQuery<'static> + 'm) -> Self {
        Part {
            rows: Box::new(rows),
            same_plan: false,
        }
    }
}

/// The mask's rows with its state filter, newest first.
fn filtered(mask: &Mask) -> MaskQuery<'static> {
    let mut q = incidents::table
        .select(MaskRow::as_select())
        .order_by((incidents::created_at.desc(), incidents::id.desc()))
        .into_boxed();
    if let Some(states) = &mask.states {
        q = q.filter(incidents::state.eq_any(states.clone()));
    }
    q
}

/// The parts of the scope, in the order their rows come.
fn scope(mask: &Mask) -> Vec<Part<'_>> {
    match mask.scope {
        Scope::Between { since, until } => vec![Part::per_value(move || {
            filtered(mask)
                .filter(incidents::created_at.ge(since))
                .filter(incidents::created_at.lt(until))
        })],
        Scope::Recent { since } => {
            let open: Vec<State> = OPEN
                .into_iter()
                .filter(|s| mask.states.as_ref().is_none_or(|wanted| wanted.contains(s)))
                .collect();
            // The window is read along `incidents_newest` from its newest end, whatever the
            // states asked for: one plan for every request.
            let mut parts: Vec<Part<'_>> = vec![Part::same_plan(move || {
                filtered(mask).filter(incidents::created_at.ge(since))
            })];
            if !open.is_empty() {
                parts.push(Part::per_value(move || {
                    filtered(mask)
                        .filter(incidents::created_at.lt(since))
                        .filter(incidents::state.eq_any(open.clone()))
                }));
            }
            parts
        }
    }
}

/// For each kind of match in order, each part in order, the rows the page still needs; the
/// rows before `offset` are skipped at the end.
async fn read(
    conn: &AsyncPgConnection,
    mask: &Mask,
    caller: i64,
    matching: &[Matching<'_>],
    parts: &[Part<'_>],
) -> Result<Vec<MaskRow>, Error> {
    let wanted = (mask.offset + mask.limit) as usize;
    // A word or a phone prefix decides the plan of every part (see `Part`).
    let term_decides_plan = matches!(
        mask.term,
        Some(MaskTerm::Text(_) | MaskTerm::PhonePrefix(_))
    );
    let mut rows: Vec<MaskRow> = Vec::new();
    for kind in matching {
        for part in parts {
            if rows.len() >= wanted {
                break;
            }
            let query = || kind((part.rows)());
            let mine = mask.mine.then_some(caller);
            let n = wanted - rows.len();
            rows.extend(if part.same_plan && !term_decides_plan && mine.is_none() {
                query().limit_written(n).load(&mut &*conn).await?
            } else {
                newest(conn, &query, mine, n).await?
            });
        }
    }
    Ok(rows.into_iter().skip(mask.offset as usize).collect())
}

/// The `n` newest rows of `query`; with `mine`, only the caller's: those it regulates and
/// those transferred to it, read as two index-ordered statements (pipelined) and merged, so
/// neither reads more than `n` of the caller's rows.
async fn newest(
    conn: &AsyncPgConnection,
    query: &dyn Fn() -> MaskQuery<'static>,
    mine: Option<i64>,
    n: usize,
) -> Result<Vec<MaskRow>, Error> {
    let (mut a, mut b) = (conn, conn);
    let Some(me) = mine else {
        return query().limit(n as i64).load(&mut a).await;
    };
    let (mut rows, assigned) = tokio::try_join!(
        query()
            .filter(incidents::regulator_id.eq(me))
            .limit(n as i64)
            .load::<MaskRow>(&mut a),
        query()
            .filter(incidents::assigned_to_id.eq(me))
            .limit(n as i64)
            .load::<MaskRow>(&mut b),
    )?;
    rows.extend(assigned);
    rows.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
    rows.dedup_by_key(|r| r.id);
    rows.truncate(n);
    Ok(rows)
}

/// The caller's phone is this one: the same key as the writes store (`domain::phone`, one
/// rule for every spelling of a number), on the `incidents_caller_phone_key` index.
fn phone_is(digits: &str) -> Box<dyn BoxableExpression<incidents::table, Pg, SqlType = Bool>> {
    Box::new(incidents::caller_phone_key.eq(crate::domain::phone::key_of(digits)))
}

/// The caller's phone starts with these digits (with or without the 55 country code).
fn phone_starts_with(
    digits: &str,
) -> Box<dyn BoxableExpression<incidents::table, Pg, SqlType = Bool>> {
    Box::new(
        phone_digits()
            .like(format!("{digits}%"))
            .or(phone_digits().like(format!("55{digits}%"))),
    )
}

/// What phone terms are matched on: the digits of the caller's phone, as the
/// `incidents_phone_digits` index holds them.
fn phone_digits() -> digits_of<incidents::caller_phone> {
    digits_of(incidents::caller_phone)
}

impl From<MaskRow> for IncidentMaskItem {
    fn from(r: MaskRow) -> Self {
        IncidentMaskItem {
            id: r.id,
            number: r.number,
            state: r.state,
            caller_name: r.caller_name,
            patient_name: r.patient_name,
            address: r.address,
            created_at: r.created_at,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct MaskRow {
    id: i64,
    number: String,
    state: State,
    caller_name: String,
    patient_name: Option<String>,
    address: String,
    created_at: DateTime<Utc>,
}

/// What the fleet and unit-selection screens read of an incident.
pub struct FleetRow {
    pub summary: IncidentFleetSummary,
    pub patient: Patient,
}

/// The fleet row with the vehicle type of the latest technical decision and the patient's
/// destination, in one statement (a correlated subquery picks the latest decision).
pub async fn fleet_row(mut conn: &AsyncPgConnection, id: i64) -> Result<Option<FleetRow>, Error> {
    let latest_vehicle = diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Integer>>(
        "(SELECT td.mobile_unit_type_id FROM technical_decisions td \
          WHERE td.incident_id = incidents.id ORDER BY td.decided_at DESC, td.id DESC LIMIT 1)",
    );
    type Row = (
        FleetIncidentRow,
        Option<i32>,
        Option<String>,
        Option<HealthUnitRow>,
    );
    let row: Option<Row> = incidents::table
        .left_join(mobile_unit_types::table.on(mobile_unit_types::id.nullable().eq(latest_vehicle)))
        .left_join(health_units::table)
        .filter(incidents::id.eq(id))
        .select((
            FleetIncidentRow::as_select(),
            mobile_unit_types::id.nullable(),
            mobile_unit_types::name.nullable(),
            Option::<HealthUnitRow>::as_select(),
        ))
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(|(r, vt_id, vt_name, destination)| FleetRow {
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
            requested_vehicle_type: crate::store::opt_ref(vt_id, vt_name),
        },
        patient: Patient {
            name: r.patient_name,
            age: r.patient_age,
            sex: r.patient_sex,
            destination: destination.map(Into::into),
        },
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
        String,
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
    type Row = (i64, (i32, String), String, (i64, String), DateTime<Utc>);
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
            "prank_calls.phone_key = (SELECT c.caller_phone_key FROM incidents c WHERE c.id = ",
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
