//! Statements kept prepared although diesel would not cache them.
//!
//! diesel caches no `UPDATE`, no insert of a `Vec` of rows or of an `Insertable` with
//! `Option` fields, and no query holding an `sql()` literal: their SQL text may change from
//! one run to the next, so their type cannot name their statement. Such a statement is sent
//! unnamed, parsed and planned by PostgreSQL on every run (patches/diesel-async/PATCHES.md).
//! On a hot path whose statement has only a few shapes (an `UPDATE` with a fixed `SET` list,
//! the few events a callback records), [`kept`] keeps it in the connection's statement cache
//! under its SQL text instead: prepared once per shape and connection, then only bound and run.
//!
//! Never for a statement whose text grows with its input (a batch of any size, an `IN` list):
//! each new text would be one more prepared statement on the connection and on the server.
//! Such a batch can be sent as one array per column instead, which keeps one text
//! (`INSERT ... SELECT * FROM unnest($1::int8[], ...)`, as dispatch-api's access log does).
//! With the cache disabled (transaction poolers, [`super::pool_mode`]) nothing is kept anyway.

use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};

/// `query`, kept in the statement cache by its SQL text (see the module's documentation).
pub fn kept<Q>(query: Q) -> Kept<Q> {
    Kept(query)
}

/// A query kept in the statement cache by its SQL text: [`kept`].
#[derive(Debug, Clone, Copy)]
pub struct Kept<Q>(Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Kept<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

/// No static id: the type does not name one statement, so the cache's key is the SQL text.
impl<Q> QueryId for Kept<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Kept<Q> {
    type SqlType = Q::SqlType;
}
