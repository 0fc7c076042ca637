//! Statements cached by their SQL text, although diesel would not cache them.
//!
//! diesel caches no `UPDATE`, no insert of a `Vec` of rows or of an `Insertable` with
//! `Option` fields, and no query holding an `sql()` literal: their SQL text may change from
//! one run to the next, so their type cannot name their statement. Such a statement is sent
//! unnamed, parsed and planned by PostgreSQL on every run (patches/diesel-async/PATCHES.md).
//! On a hot path whose statement has only a few shapes (an `UPDATE` with a fixed `SET` list,
//! an insert whose optional fields give it a few texts), [`cached_by_text`] puts it in the
//! connection's statement cache under its SQL text instead: prepared once per text and
//! connection, then only bound and run.
//!
//! Never for a statement whose text grows with its input (a batch of any size, an `IN`
//! list): each new text would be one more prepared statement on the connection and on the
//! server. Such a batch is sent as one array per column instead, which keeps one text
//! (`INSERT ... SELECT * FROM unnest($1::int8[], ...)`, as dispatch-api's access log does).
//! Debug builds (every test) refuse one at [`cached_by_text`]: an insert of a `Vec` of rows,
//! and a call site seen with more than [`MAX_TEXTS`] texts, panic naming the place.
//! With the cache disabled (transaction poolers, [`super::pool_mode`]) nothing is cached
//! anyway.

use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};

/// The most SQL texts one call of [`cached_by_text`] may pass (its statement's optional
/// parts' shapes) before debug builds take its text for one that grows with its input.
pub const MAX_TEXTS: usize = 16;

/// `query`, cached in the connection's statement cache by its SQL text (see the module's
/// documentation). In debug builds, panics on a statement whose text grows with its input.
#[track_caller]
pub fn cached_by_text<Q: QueryFragment<Pg>>(query: Q) -> CachedByText<Q> {
    #[cfg(debug_assertions)]
    check::fixed_text(&query, std::panic::Location::caller());
    CachedByText(query)
}

/// A query cached in the statement cache by its SQL text: [`cached_by_text`].
#[derive(Debug, Clone, Copy)]
pub struct CachedByText<Q>(Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for CachedByText<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

/// No static id: the type does not name one statement, so the cache's key is the SQL text.
impl<Q> QueryId for CachedByText<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for CachedByText<Q> {
    type SqlType = Q::SqlType;
}

/// The debug builds' refusal of a statement whose text grows with its input.
#[cfg(debug_assertions)]
mod check {
    use std::collections::{HashMap, HashSet};
    use std::panic::Location;
    use std::sync::{Mutex, OnceLock};

    use diesel::pg::{Pg, PgQueryBuilder};
    use diesel::query_builder::{QueryBuilder, QueryFragment};

    use super::MAX_TEXTS;

    type Seen = Mutex<HashMap<&'static Location<'static>, HashSet<String>>>;

    /// The texts seen so far, by call site.
    fn seen() -> &'static Seen {
        static SEEN: OnceLock<Seen> = OnceLock::new();
        SEEN.get_or_init(Seen::default)
    }

    /// Panics when `Q` inserts a `Vec` of rows (one text per length), or when the call at
    /// `at` has passed more than [`MAX_TEXTS`] texts.
    pub(super) fn fixed_text<Q: QueryFragment<Pg>>(query: &Q, at: &'static Location<'static>) {
        let ty = std::any::type_name::<Q>();
        assert!(
            !ty.contains("BatchInsert<alloc::vec::Vec<"),
            "cached_by_text at {at}: an insert of a Vec of rows has one text per length; send \
             one array per column instead (common::db::cached_by_text)"
        );
        let mut builder = PgQueryBuilder::default();
        if query.to_sql(&mut builder, &Pg).is_err() {
            return; // diesel reports the error when the statement runs
        }
        let mut seen = seen().lock().unwrap_or_else(|e| e.into_inner());
        let texts = seen.entry(at).or_default();
        texts.insert(builder.finish());
        assert!(
            texts.len() <= MAX_TEXTS,
            "cached_by_text at {at}: more than {MAX_TEXTS} texts, so its statement's text grows \
             with its input; send one array per column instead"
        );
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn a_statement_with_one_text_is_cached_by_it() {
        for _ in 0..(MAX_TEXTS + 5) {
            let _ = cached_by_text(diesel::sql_query("SELECT 1 AS one_text"));
        }
    }

    #[test]
    #[should_panic(expected = "grows with its input")]
    fn a_statement_whose_text_grows_with_its_input_is_refused() {
        // One text per list length, as an `IN ($1, $2, ...)` built by hand would have.
        for n in 1..=(MAX_TEXTS + 1) {
            let list = (1..=n).map(|i| format!("${i}")).collect::<Vec<_>>();
            let _ = cached_by_text(diesel::sql_query(format!(
                "SELECT 1 WHERE 1 IN ({}) -- grows",
                list.join(", ")
            )));
        }
    }

    #[test]
    #[should_panic(expected = "an insert of a Vec of rows")]
    fn an_insert_of_a_vec_of_rows_is_refused() {
        diesel::table! {
            t (id) {
                id -> Int8,
            }
        }
        use diesel::ExpressionMethods;
        let rows = vec![t::id.eq(1_i64), t::id.eq(2_i64)];
        let _ = cached_by_text(diesel::insert_into(t::table).values(rows));
    }
}
