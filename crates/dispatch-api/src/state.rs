//! What the handlers share (docs/architecture.md, "Where state lives").

use common::auth::JwtKeys;
use common::db::Pool;
use common::http::OpenApiJson;

use crate::catalog::Catalog;
use crate::realtime::hub::Hub;
use crate::user_cache::UserCache;

/// Everything the handlers and extractors share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub keys: JwtKeys,
    pub openapi: OpenApiJson,
    /// Reference data served from memory (health units, small lists).
    pub catalog: Catalog,
    /// Authenticated users; serves only while `serve`'s change listener runs.
    pub users: UserCache,
    /// This process's WebSocket subscriptions, fed by its listener.
    pub hub: Hub,
}

impl AppState {
    /// Empty caches and hub; `openapi` is the document `GET /openapi.json` serves.
    pub fn new(pool: Pool, keys: JwtKeys, openapi: OpenApiJson) -> Self {
        Self {
            pool,
            keys,
            openapi,
            catalog: Catalog::default(),
            users: UserCache::default(),
            hub: Hub::default(),
        }
    }
}
