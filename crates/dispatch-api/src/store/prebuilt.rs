//! A hot read whose only bind is one key (`GET /incident/{id}`): its diesel query is built as
//! usual, but its SQL text is rendered once per process and the key is its only bind, so a
//! run walks no query tree. diesel walks the whole tree of a query three times a run (its
//! binds, whether it may be cached, and the statement cache's look-up), which for a select of
//! some thirty columns over five tables cost more instructions than serialising the answer
//! (bench/dispatch/README.md, "Incident detail by instructions"). The statement is cached by
//! the query's type, as diesel caches the query itself.

use std::marker::PhantomData;
use std::sync::OnceLock;

use diesel::QueryResult;
use diesel::pg::{Pg, PgQueryBuilder};
use diesel::query_builder::{AstPass, Query, QueryBuilder, QueryFragment, QueryId};
use diesel::result::Error;
use diesel::sql_types::BigInt;

/// The SQL text of one query, split around its key's placeholder: rendered once.
pub struct Text(OnceLock<Result<(String, String), String>>);

impl Text {
    pub const fn new() -> Self {
        Text(OnceLock::new())
    }

    /// The text of `query` (whose one bind must be its key), rendered on the first call.
    fn of<Q: QueryFragment<Pg>>(&self, query: &Q) -> QueryResult<&(String, String)> {
        self.0
            .get_or_init(|| split(query))
            .as_ref()
            .map_err(|e| Error::QueryBuilderError(e.clone().into()))
    }
}

/// `query`'s SQL, split around `$1`, its only placeholder.
fn split<Q: QueryFragment<Pg>>(query: &Q) -> Result<(String, String), String> {
    let mut builder = PgQueryBuilder::default();
    query.to_sql(&mut builder, &Pg).map_err(|e| e.to_string())?;
    let sql = builder.finish();
    match sql.split_once("$1") {
        Some((before, after)) if !after.contains('$') && !before.contains('$') => {
            Ok((before.to_owned(), after.to_owned()))
        }
        _ => Err(format!("a prebuilt query binds its key alone: {sql}")),
    }
}

/// `query` (of type `Q`) run with `key` as its only bind, from `text`, rendered once.
pub struct Prebuilt<Q> {
    sql: &'static (String, String),
    key: i64,
    query: PhantomData<fn() -> Q>,
}

/// `query`, whose only bind is `key` (a `BigInt`), run from the text `text` holds (rendered
/// from this `query` on the first call). One `Text` per query (a `static` beside it).
pub fn prebuilt<Q: QueryFragment<Pg>>(
    text: &'static Text,
    query: Q,
    key: i64,
) -> QueryResult<Prebuilt<Q>> {
    Ok(Prebuilt {
        sql: text.of(&query)?,
        key,
        query: PhantomData,
    })
}

impl<Q> QueryFragment<Pg> for Prebuilt<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(&self.sql.0);
        out.push_bind_param::<BigInt, i64>(&self.key)?;
        out.push_sql(&self.sql.1);
        Ok(())
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

/// The statement is named by the query's type, one text per type.
impl<Q: 'static> QueryId for Prebuilt<Q> {
    type QueryId = Self;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<Q: Query> Query for Prebuilt<Q> {
    type SqlType = Q::SqlType;
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;

    use super::*;
    use crate::schema::dispatch::incidents;

    /// The SQL and its binds, as diesel's own debug rendering shows them.
    fn render(q: &impl QueryFragment<Pg>) -> String {
        diesel::debug_query::<Pg, _>(q).to_string()
    }

    #[test]
    fn the_text_and_bind_are_the_querys_own() {
        static TEXT: Text = Text::new();
        let query = |id: i64| {
            incidents::table
                .filter(incidents::id.eq(id))
                .select((incidents::id, incidents::number))
        };
        let first = prebuilt(&TEXT, query(7), 7).unwrap();
        assert_eq!(render(&first), render(&query(7)));
        assert!(render(&first).ends_with("-- binds: [7]"));
        // Rendered once; a later key is bound, not written into the text.
        let later = prebuilt(&TEXT, query(42), 42).unwrap();
        assert_eq!(render(&later), render(&query(42)));
        assert!(std::ptr::eq(first.sql, later.sql));
    }

    #[test]
    fn a_query_binding_more_than_its_key_is_refused() {
        static TEXT: Text = Text::new();
        let query = incidents::table
            .filter(incidents::id.eq(1_i64))
            .filter(incidents::version.eq(2));
        assert!(prebuilt(&TEXT, query, 1).is_err());
    }
}
