//! Diesel queries, one module per resource. Each function is one statement (one round trip)
//! unless its comment says otherwise. Reads return the store's own read models (`read`);
//! errors are the store's own (`StoreError`: a refusal or the database's, no HTTP); writes
//! return what they did (`writes::Written`, `incident_writes::DispatchWritten`), which the routes
//! answer with. The rules a write obeys are the domain's; the store asks them.
//!
//! Functions take `&AsyncPgConnection` (not `&mut`): diesel-async pipelines queries issued
//! through a shared reference, so a screen route can `try_join!` several of them on one
//! connection and wait about one round trip for all.

/// `NOTIFY` channel of incident changes: payload `<id>:<version>:<group,...>`.
pub const INCIDENT_CHANNEL: &str = "dispatch_incident";
/// `NOTIFY` channel of incidents entering and leaving states (the work queues): payload
/// `<id>:<version>:<from>:<to>`, sent by a trigger on `incidents` (migration 2026-11-24-000501).
pub const QUEUE_CHANNEL: &str = "dispatch_queue";
/// `NOTIFY` channel of the units' steps (the fleet board, docs/dispatch-realtime.md, "The
/// fleet board"): payload the JSON of a `unit.step` message (`read::UnitStep`), or
/// [`fleet::FLEET_RESYNC`] when that would not fit.
pub const FLEET_CHANNEL: &str = "dispatch_fleet";
/// `NOTIFY` channel of reference-data changes (a trigger sends the table's name).
pub const REFERENCE_CHANNEL: &str = "dispatch_reference";

diesel::define_sql_function! {
    /// The folded comparison key of every search (`search::fold`, the same in SQL): lower case,
    /// no accents, compatibility forms decomposed (see migration 2026-11-24-000601).
    #[sql_name = "dispatch.search_key"]
    fn search_key(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

diesel::define_sql_function! {
    /// A phone's digits alone (see migration 2026-11-24-000601): what phone terms match.
    #[sql_name = "dispatch.digits_of"]
    fn digits_of(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

diesel::define_sql_function! {
    /// Locale-independent name order: the folded name's UTF-8 bytes (see migration 000004).
    #[sql_name = "dispatch.search_order"]
    fn search_order(x: diesel::sql_types::Text) -> diesel::sql_types::Bytea;
}

diesel::define_sql_function! {
    /// A work queue's priority order: `critical` 0, `high` 1, `medium` 2, `low` 3, none 4 (see
    /// migration 2026-11-27-100001, which indexes the open incidents by it).
    #[sql_name = "dispatch.priority_rank"]
    fn priority_rank(
        x: diesel::sql_types::Nullable<diesel::sql_types::Text>,
    ) -> diesel::sql_types::Integer;
}

diesel::define_sql_function! {
    /// The first of two ids that is not null.
    fn coalesce(
        x: diesel::sql_types::Nullable<diesel::sql_types::BigInt>,
        y: diesel::sql_types::Nullable<diesel::sql_types::BigInt>,
    ) -> diesel::sql_types::Nullable<diesel::sql_types::BigInt>;
}

pub mod access_log;
pub mod calls;
pub mod dispatches;
pub mod error;
pub mod fleet;
pub mod frame;
pub mod holders;
pub mod idempotency;
mod incident_form;
pub mod incident_writes;
pub mod incidents;
pub mod offload;
pub mod page_sessions;
pub mod phases;
mod prebuilt;
pub mod read;
pub mod reference;
pub mod times;
pub mod users;
pub mod writes;

use diesel::prelude::*;

use crate::schema::dispatch::health_units;
use crate::store::read::{HealthUnitOption, RefOption, UserOption};

/// A health unit as the screens show it (a patient's or a dispatch's destination).
#[derive(Queryable, Selectable)]
#[diesel(table_name = health_units, check_for_backend(diesel::pg::Pg))]
pub struct HealthUnitRow {
    pub id: i64,
    pub name: String,
    pub city: String,
    pub uf: String,
}

impl From<HealthUnitRow> for HealthUnitOption {
    fn from(h: HealthUnitRow) -> Self {
        HealthUnitOption {
            id: h.id,
            name: h.name,
            city: h.city,
            uf: h.uf,
        }
    }
}

pub fn user_option((id, descriptive_name): (i64, String)) -> UserOption {
    UserOption {
        id,
        descriptive_name,
    }
}

pub fn ref_option((id, name): (i32, String)) -> RefOption {
    RefOption { id, name }
}

/// A joined optional reference: both columns null when the row has none.
pub fn opt_ref(id: Option<i32>, name: Option<String>) -> Option<RefOption> {
    id.zip(name).map(ref_option)
}

pub fn opt_user(row: Option<(i64, String)>) -> Option<UserOption> {
    row.map(user_option)
}

/// `query LIMIT n` with `n` written into the statement's text instead of bound, so that
/// PostgreSQL can price (and keep) one generic plan for the prepared statement; see
/// `incidents::Part` for when that is right. Each page size is its own prepared statement.
#[derive(Debug, Clone)]
pub struct LimitWritten<Q> {
    query: Q,
    n: usize,
}

/// [`LimitWritten`] for any select statement without a limit of its own.
pub trait WriteLimit: Sized {
    fn limit_written(self, n: usize) -> LimitWritten<Self> {
        LimitWritten { query: self, n }
    }
}

impl<Q: diesel::query_builder::Query> WriteLimit for Q {}

impl<Q: diesel::query_builder::Query> diesel::query_builder::Query for LimitWritten<Q> {
    type SqlType = Q::SqlType;
}

impl<Q> diesel::query_builder::QueryId for LimitWritten<Q> {
    type QueryId = ();
    // The text differs with `n`: the statement cache keys such a query by its text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: diesel::query_builder::QueryFragment<diesel::pg::Pg>>
    diesel::query_builder::QueryFragment<diesel::pg::Pg> for LimitWritten<Q>
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        out.push_sql(" LIMIT ");
        out.push_sql(&self.n.to_string());
        Ok(())
    }
}
