//! `GET /incident/mask`, the incident search: its statements and how they fill a page.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::Error;
use diesel::sql_types::{Bool, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use diesel::expression::SqlLiteral;

use crate::domain::incident::{Priority, State};
use crate::schema::dispatch::*;
use crate::search::{Mask, MaskTerm, Order, Scope};
use crate::store::read::IncidentMaskItem;
use crate::store::{LimitWritten, WriteLimit, digits_of, priority_rank, ref_option};

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
    if mask.order == Order::Queue {
        let rows = queue(conn, mask, caller).await?;
        return Ok(rows.into_iter().map(IncidentMaskItem::from).collect());
    }
    let any_age: Vec<Part<'_>> = vec![Part::same_plan(|| filtered(mask))];
    let rows: Vec<MaskRow> = match &mask.term {
        Some(MaskTerm::Number(number)) => {
            let number = &|| condition(Box::new(incidents::number.eq(number.clone())));
            read(conn, mask, caller, &[Some(Kind::of(number))], &any_age).await?
        }
        Some(MaskTerm::Phone(digits)) => {
            let phone = &|| condition(phone_is(digits));
            read(conn, mask, caller, &[Some(Kind::of(phone))], &any_age).await?
        }
        Some(MaskTerm::PhonePrefix(digits)) => {
            let prefix = Kind {
                condition: &|| condition(phone_starts_with(digits)),
                among_newest: &|| Box::new(phone_words(digits).and(phone_starts_with(digits))),
            };
            read(conn, mask, caller, &[Some(prefix)], &scope(mask)).await?
        }
        Some(MaskTerm::Text(p)) => {
            let word = || {
                incidents::search_text
                    .like(p.prefix.clone())
                    .or(incidents::search_text.like(p.word_prefix.clone()))
            };
            let words: Matching<'_> = &|| Box::new(word());
            let inside: Matching<'_> = &|| {
                Box::new(
                    incidents::search_text
                        .like(p.infix.clone())
                        .and(diesel::dsl::not(word())),
                )
            };
            let kinds = [Some(Kind::of(words)), Some(Kind::of(inside))];
            read(conn, mask, caller, &kinds, &scope(mask)).await?
        }
        None => read(conn, mask, caller, &[None], &scope(mask)).await?,
    };
    Ok(rows.into_iter().map(IncidentMaskItem::from).collect())
}

/// A work queue's page (docs/dispatch-routes.md, "Work queues"): the incidents in its states
/// by priority, critical first, then the longest waiting in its state first; one statement
/// over the open incidents only (every open incident is in the default scope, whatever its
/// age): a long queue of one state is read along the partial index `incidents_queue` and
/// stops at the page. `mine` keeps the caller's among them.
/// The states and the page size are bound, so PostgreSQL plans each request for its states:
/// the partial index needs them at planning, and one state is an equality so that the
/// index's order is the queue's.
async fn queue(conn: &AsyncPgConnection, mask: &Mask, caller: i64) -> Result<Vec<MaskRow>, Error> {
    let mut q = incidents::table
        .select(MaskRow::as_select())
        .order_by((
            priority_rank(incidents::priority),
            incidents::waiting_since,
            incidents::id,
        ))
        .into_boxed();
    q = match mask.states.as_deref().unwrap_or_default() {
        [one] => q.filter(incidents::state.eq(*one)),
        many => q.filter(incidents::state.eq_any(many.to_vec())),
    };
    if mask.mine {
        q = q.filter(
            incidents::regulator_id
                .eq(caller)
                .or(incidents::assigned_to_id.eq(caller)),
        );
    }
    q.limit(mask.limit)
        .offset(mask.offset)
        .load(&mut &*conn)
        .await
}

/// What a row of `incidents` must meet (null counts as not met, as in `WHERE`).
type Condition = Box<dyn BoxableExpression<incidents::table, Pg, SqlType = Nullable<Bool>>>;

/// A condition, built anew for each statement.
type Matching<'m> = &'m dyn Fn() -> Condition;

/// A kind of match (a term's absence: `None`, every row of the scope): the condition its
/// rows meet, and the same condition as `newest_matches` tests it on each of a window's
/// newest rows, where a cheaper test may come first.
#[derive(Clone, Copy)]
struct Kind<'m> {
    condition: Matching<'m>,
    among_newest: Matching<'m>,
}

impl<'m> Kind<'m> {
    fn of(condition: Matching<'m>) -> Self {
        Kind {
            condition,
            among_newest: condition,
        }
    }
}

/// A condition that is never null, as a `Condition`.
fn condition(
    expression: Box<dyn BoxableExpression<incidents::table, Pg, SqlType = Bool>>,
) -> Condition {
    Box::new(expression.nullable())
}

/// A part of the scope: the rows it reads, newest first, whether one plan serves every value
/// it is run with, and the window of creation times it covers, when it is one.
///
/// When one plan serves, the page size is written into the statement rather than bound, so
/// that PostgreSQL may keep one generic plan for the prepared statement instead of planning it
/// again on every request: with `LIMIT $n` the planner prices a generic plan as if it read a
/// tenth of the rows, which at millions of incidents never beats planning anew, and planning
/// cost a quarter of the queue's throughput at 2 M incidents (bench/scale/README.md). A part
/// whose best plan depends on its values keeps the bound limit, and with it a plan made for
/// those values: a text term (a rare word reads the trigram index, a common one walks the
/// newest incidents), a phone prefix (its index needs the prefix at planning), the older open
/// incidents (the partial index `incidents_open` needs the states at planning) and an
/// explicit range (a rare state in a month reads `incidents_state`).
///
/// A word or a phone prefix in a window is first looked for among the window's newest rows
/// (`newest_matches`), whose plan is the same for every term; the statement planned for the
/// term runs only when they do not fill the page.
struct Part<'m> {
    rows: Box<dyn Fn() -> MaskQuery<'static> + 'm>,
    same_plan: bool,
    window: Option<Window>,
}

/// Incidents created at or after `since` (and before `until`, when given).
#[derive(Clone, Copy)]
struct Window {
    since: DateTime<Utc>,
    until: Option<DateTime<Utc>>,
}

impl<'m> Part<'m> {
    /// A part that one plan serves whatever its values.
    fn same_plan(rows: impl Fn() -> MaskQuery<'static> + 'm) -> Self {
        Part {
            rows: Box::new(rows),
            same_plan: true,
            window: None,
        }
    }

    /// A part whose plan depends on its values.
    fn per_value(rows: impl Fn() -> MaskQuery<'static> + 'm) -> Self {
        Part {
            rows: Box::new(rows),
            same_plan: false,
            window: None,
        }
    }

    /// The part is this window, read newest first.
    fn window(self, since: DateTime<Utc>, until: Option<DateTime<Utc>>) -> Self {
        Part {
            window: Some(Window { since, until }),
            ..self
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
        Scope::Between { since, until } => vec![
            Part::per_value(move || {
                filtered(mask)
                    .filter(incidents::created_at.ge(since))
                    .filter(incidents::created_at.lt(until))
            })
            .window(since, Some(until)),
        ],
        Scope::Recent { since } => {
            let open: Vec<State> = OPEN
                .into_iter()
                .filter(|s| mask.states.as_ref().is_none_or(|wanted| wanted.contains(s)))
                .collect();
            // The window is read along `incidents_newest` from its newest end, whatever the
            // states asked for: one plan for every request.
            let mut parts: Vec<Part<'_>> = vec![
                Part::same_plan(move || filtered(mask).filter(incidents::created_at.ge(since)))
                    .window(since, None),
            ];
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
    kinds: &[Option<Kind<'_>>],
    parts: &[Part<'_>],
) -> Result<Vec<MaskRow>, Error> {
    let wanted = (mask.offset + mask.limit) as usize;
    // A word or a phone prefix decides the plan of every part (see `Part`).
    let term_decides_plan = matches!(
        mask.term,
        Some(MaskTerm::Text(_) | MaskTerm::PhonePrefix(_))
    );
    let mut rows: Vec<MaskRow> = Vec::new();
    for kind in kinds {
        for part in parts {
            if rows.len() >= wanted {
                break;
            }
            let query = || match kind {
                Some(kind) => (part.rows)().filter((kind.condition)()),
                None => (part.rows)(),
            };
            let mine = mask.mine.then_some(caller);
            let n = wanted - rows.len();
            if term_decides_plan
                && mine.is_none()
                && let (Some(kind), Some(window)) = (kind, part.window)
            {
                let hit = (kind.among_newest)();
                if let Some(found) = newest_matches(conn, mask, window, hit, n).await? {
                    rows.extend(found);
                    continue;
                }
            }
            rows.extend(if part.same_plan && !term_decides_plan && mine.is_none() {
                query().limit_written(n).load(&mut &*conn).await?
            } else {
                newest(conn, &query, mine, n).await?
            });
        }
    }
    Ok(rows.into_iter().skip(mask.offset as usize).collect())
}

/// How many of a window's newest rows `newest_matches` reads for each row it is asked for: a
/// term found in one recent incident in 25 or more (a common surname, a street kind, the
/// city's usual phone prefix) fills a page of 20 from the newest 500.
const NEWEST_ROWS_PER_ROW: usize = 25;
/// The most rows `newest_matches` reads; a deeper page goes to the statement planned for its
/// term at once.
const NEWEST_ROWS_MAX: usize = 2_000;

/// The `n` newest rows of `window` that meet `hit` (and the mask's states), when they lie
/// among its newest `NEWEST_ROWS_PER_ROW * n` rows; `None` when fewer do.
///
/// One statement that reads the window's newest rows along `incidents_newest` and tests each
/// (`FirstMatches`): its plan does not depend on the term, so PostgreSQL keeps a generic plan
/// for it, and the planner's estimate of how common the term is, which can be far off in
/// the recent window (a phone prefix rare in the history and common this week), cannot
/// lead it to read every match of the term instead (bench/scale/README.md, "Things found").
async fn newest_matches(
    conn: &AsyncPgConnection,
    mask: &Mask,
    window: Window,
    hit: Condition,
    n: usize,
) -> Result<Option<Vec<MaskRow>>, Error> {
    let newest = n * NEWEST_ROWS_PER_ROW;
    if newest > NEWEST_ROWS_MAX {
        return Ok(None);
    }
    let hit: Condition = match &mask.states {
        Some(states) => Box::new(hit.and(incidents::state.eq_any(states.clone()).nullable())),
        None => hit,
    };
    let mut rows = incidents::table
        .select((hit, MaskRow::as_select()))
        .filter(incidents::created_at.ge(window.since))
        .order_by((incidents::created_at.desc(), incidents::id.desc()))
        .into_boxed();
    if let Some(until) = window.until {
        rows = rows.filter(incidents::created_at.lt(until));
    }
    let found: Vec<(Option<bool>, MaskRow)> = FirstMatches {
        newest: rows.limit_written(newest),
        n,
    }
    .load(&mut &*conn)
    .await?;
    Ok((found.len() == n).then(|| found.into_iter().map(|(_, row)| row).collect()))
}

/// `SELECT * FROM (<newest>) AS newest (hit) WHERE hit ORDER BY created_at DESC, id DESC
/// LIMIT <n>`: the first `n` rows of `newest` (rows of `incidents` newest first, led by a
/// boolean column) whose boolean is true. The subquery keeps its own plan: PostgreSQL does not
/// push the outer condition into a subquery with a limit, so the rows are read in the window's
/// order and the reading stops at the `n`-th match. `n` is written into the text, as
/// `LimitWritten` does.
struct FirstMatches<Q> {
    newest: LimitWritten<Q>,
    n: usize,
}

impl<Q: Query> Query for FirstMatches<Q> {
    type SqlType = Q::SqlType;
}

impl<Q> QueryId for FirstMatches<Q> {
    type QueryId = ();
    // The text differs with the limits: the statement cache keys such a query by its text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for FirstMatches<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("SELECT * FROM (");
        self.newest.walk_ast(out.reborrow())?;
        out.push_sql(") AS newest (hit) WHERE hit ORDER BY created_at DESC, id DESC LIMIT ");
        out.push_sql(&self.n.to_string());
        Ok(())
    }
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

/// A condition every phone that `phone_starts_with(digits)` takes also meets, at the cost of
/// a LIKE on the search text instead of a regular expression over the phone: the search text
/// holds the caller's phone digits as a word of their own (migration 2026-11-24-000601), and
/// digits are not changed by its folding, so a phone whose digits start with `digits` (or
/// `55` and `digits`) has a word of the search text starting with them. Tested before
/// `phone_starts_with` on each of a window's newest rows, it spares the regular expression on
/// almost every row that cannot match.
fn phone_words(digits: &str) -> Condition {
    Box::new(
        incidents::search_text
            .like(format!("% {digits}%"))
            .or(incidents::search_text.like(format!("% 55{digits}%"))),
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
            priority: r.priority,
            complaint: r.complaint,
            waiting_since: r.waiting_since,
            requested_vehicle_type: r.requested_vehicle_type.map(ref_option),
        }
    }
}

/// A row of the mask. The vehicle type is a subquery in the select list: PostgreSQL
/// evaluates it only for the rows the statement returns or skips by its OFFSET (after the
/// LIMIT when the rows come in index order, past a sort too, being expensive), so it never
/// changes which index a search reads (plans at 2 M in bench/scale/README.md).
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
    priority: Option<Priority>,
    complaint: String,
    waiting_since: DateTime<Utc>,
    #[diesel(select_expression = super::requested_vehicle_type())]
    #[diesel(select_expression_type = SqlLiteral<super::VehicleTypeRecord>)]
    requested_vehicle_type: Option<(i32, String)>,
}
