use diesel::connection::statement_cache::{
    MaybeCached, PrepareForCache, StatementCallbackReturnType,
};
use diesel::QueryResult;
use futures_core::future::BoxFuture;
use futures_util::future::Either;
use futures_util::{FutureExt, TryFutureExt};
use std::future::{self, Future};

pub(crate) struct CallbackHelper<F>(pub(crate) F);

type PrepareFuture<'a, C, S> = Either<
    future::Ready<QueryResult<(MaybeCached<'a, S>, C)>>,
    BoxFuture<'a, QueryResult<(MaybeCached<'a, S>, C)>>,
>;

impl<S, F, C> StatementCallbackReturnType<S, C> for CallbackHelper<F>
where
    F: Future<Output = QueryResult<(S, C)>> + Send,
    S: 'static,
{
    type Return<'a> = PrepareFuture<'a, C, S>;

    fn from_error<'a>(e: diesel::result::Error) -> Self::Return<'a> {
        Either::Left(future::ready(Err(e)))
    }

    fn map_to_no_cache<'a>(self) -> Self::Return<'a>
    where
        Self: 'a,
    {
        Either::Right(
            self.0
                .map_ok(|(stmt, conn)| (MaybeCached::CannotCache(stmt), conn))
                .boxed(),
        )
    }

    fn map_to_cache(stmt: &mut S, conn: C) -> Self::Return<'_> {
        Either::Left(future::ready(Ok((MaybeCached::Cached(stmt), conn))))
    }

    fn register_cache<'a>(
        self,
        callback: impl FnOnce(S) -> &'a mut S + Send + 'a,
    ) -> Self::Return<'a>
    where
        Self: 'a,
    {
        Either::Right(
            self.0
                .map_ok(|(stmt, conn)| (MaybeCached::Cached(callback(stmt)), conn))
                .boxed(),
        )
    }
}

pub(crate) struct QueryFragmentHelper {
    pub(crate) sql: String,
    pub(crate) safe_to_cache: bool,
}

/// What a synchronous look-up in the statement cache found: the statement itself (a query
/// cached by its type, whose SQL was not built), or the SQL of a statement to prepare.
///
/// The future a connection returns cannot hold the query (it may not be `Send`), so the
/// query's SQL used to be built before the future, on every call, even for a statement
/// the cache already held by its type. Looking the statement up first, as diesel's
/// synchronous connections do, skips the query builder for those.
pub(crate) enum CacheLookup<S> {
    Cached(S),
    Sql(String),
}

/// The `prepare_fn` of such a look-up (`StatementCache::cached_statement_non_generic`):
/// it keeps the SQL diesel built for a statement that is not cached yet, and prepares
/// nothing, so that the connection prepares (and caches) it later, in its future.
pub(crate) fn lookup_only<M>(
    _conn: (),
    sql: &str,
    _is_for_cache: PrepareForCache,
    _metadata: &[M],
) -> LookupOnly {
    LookupOnly(sql.to_owned())
}

pub(crate) struct LookupOnly(String);

impl<S> StatementCallbackReturnType<S, ()> for LookupOnly
where
    S: Clone + 'static,
{
    type Return<'a> = QueryResult<CacheLookup<S>>;

    fn from_error<'a>(e: diesel::result::Error) -> Self::Return<'a> {
        Err(e)
    }

    fn map_to_no_cache<'a>(self) -> Self::Return<'a>
    where
        Self: 'a,
    {
        Ok(CacheLookup::Sql(self.0))
    }

    fn map_to_cache(stmt: &mut S, _conn: ()) -> Self::Return<'_> {
        Ok(CacheLookup::Cached(stmt.clone()))
    }

    fn register_cache<'a>(
        self,
        _insert: impl FnOnce(S) -> &'a mut S + Send + 'a,
    ) -> Self::Return<'a>
    where
        Self: 'a,
    {
        // Nothing was prepared: the cache's vacant entry is left as it was.
        Ok(CacheLookup::Sql(self.0))
    }
}
