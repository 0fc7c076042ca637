//! What the handlers share (docs/architecture.md, "Where state lives").

use chrono_tz::Tz;
use common::Clock;
use common::auth::idp::IdpVerifier;
use common::auth::{JwtKeys, TokenVerifier};
use common::db::Pool;
use common::http::OpenApiJson;
use common::pages::SessionRules;

use crate::access_log::{AccessLog, AccessLogSettings};
use crate::catalog::Catalog;
use crate::domain::fleet::Rules;
use crate::realtime::hub::Hub;
use crate::telephony::Telephony;
use crate::token_cache::VerifiedTokens;
use crate::user_cache::UserCache;

/// The centre's time zone when `CENTRE_TIME_ZONE` is unset (SAMU centres of the south-east).
pub const DEFAULT_TIME_ZONE: &str = "America/Sao_Paulo";
/// [`DEFAULT_TIME_ZONE`], from the tz database.
pub const DEFAULT_ZONE: Tz = chrono_tz::America::Sao_Paulo;

/// Everything the handlers and extractors share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    /// The service's own keys and, when configured, the identity provider's.
    pub tokens: TokenVerifier,
    pub openapi: OpenApiJson,
    /// Reference data served from memory (health units, small lists).
    pub catalog: Catalog,
    /// Authenticated users; serves only while `serve`'s change listener runs.
    pub users: UserCache,
    /// The service's own tokens already verified with `tokens` (`token_cache::VerifiedTokens`): a
    /// state given other keys needs a new one.
    pub verified_tokens: VerifiedTokens,
    /// This process's WebSocket subscriptions, fed by its listener.
    pub hub: Hub,
    /// The one source of "now": what a write records and a search counts from.
    pub clock: Clock,
    /// The centre's time zone (`CENTRE_TIME_ZONE`, from the tz database): where its days
    /// begin, for the reports and the offload board, and the clock the pages show times on.
    /// PostgreSQL is given its name (`Tz::name`), checked at start to be one it knows too.
    pub time_zone: Tz,
    /// Who read which incident's patient data (docs/dispatch-access-log.md): the writer's
    /// handle.
    pub access_log: AccessLog,
    /// When a unit's position is stale and how fast units travel, for the recommendation
    /// (`POSITION_MAX_AGE`, `UNIT_SPEED_KMH`).
    pub fleet: Rules,
    /// How long the manager page's sessions live (`PAGE_SESSION_IDLE`, `PAGE_SESSION_MAX`).
    pub page_sessions: SessionRules,
    /// The softphones' accounts and the switch's token (docs/dispatch-telephony.md).
    pub telephony: Telephony,
}

impl AppState {
    /// Empty caches and hub; `openapi` is the document `GET /openapi.json` serves. Only the
    /// service's own tokens are accepted until [`AppState::with_idp`]. The access log's
    /// writer starts on the current runtime with the default settings
    /// ([`AppState::with_access_log`] replaces it).
    pub fn new(pool: Pool, keys: JwtKeys, openapi: OpenApiJson) -> Self {
        Self {
            access_log: AccessLog::start(pool.clone(), AccessLogSettings::default()),
            pool,
            tokens: TokenVerifier::new(keys),
            openapi,
            catalog: Catalog::default(),
            users: UserCache::default(),
            verified_tokens: VerifiedTokens::default(),
            hub: Hub::default(),
            clock: Clock::system(),
            time_zone: DEFAULT_ZONE,
            fleet: Rules::default(),
            page_sessions: SessionRules::default(),
            telephony: Telephony::default(),
        }
    }

    /// Gives softphones their credentials and takes the switch's events as `telephony` says.
    pub fn with_telephony(mut self, telephony: Telephony) -> Self {
        self.telephony = telephony;
        self
    }

    /// Counts days and hours in `zone`, and shows times on its clock.
    pub fn with_time_zone(mut self, zone: Tz) -> Self {
        self.time_zone = zone;
        self
    }

    /// Judges positions and arrival times by `rules`.
    pub fn with_fleet(mut self, rules: Rules) -> Self {
        self.fleet = rules;
        self
    }

    /// Ends the manager page's sessions by `rules`.
    pub fn with_page_sessions(mut self, rules: SessionRules) -> Self {
        self.page_sessions = rules;
        self
    }

    /// Runs on `clock` instead of the system's (tests, benchmarks).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Records reads with this writer (`AccessLog::off`, in the `bench` build only: not at
    /// all, the benchmark's baseline).
    pub fn with_access_log(mut self, log: AccessLog) -> Self {
        self.access_log = log;
        self
    }

    /// Accepts the identity provider's tokens too.
    pub fn with_idp(mut self, idp: IdpVerifier) -> Self {
        self.tokens = self.tokens.with_idp(idp);
        self
    }
}
