//! Who is calling: the token's user, loaded from the database on every request, so a user
//! deactivated after the token was issued is refused at once.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use common::Problem;
use common::auth::{JwtKeys, authorization, now_secs};
use common::db::{self, Pool};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use crate::schema::{profiles, users};
use crate::user_cache::UserCache;

/// Profiles of the dispatch centre (CONTRACT §1). A title we do not know grants nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Profile {
    Admin,
    Tarm,
    MedicoRegulador,
    OperadorFrota,
    Other,
}

impl Profile {
    pub fn from_title(title: &str) -> Self {
        match title {
            "ADMIN" => Self::Admin,
            "TARM" => Self::Tarm,
            "MEDICO_REGULADOR" => Self::MedicoRegulador,
            "OPERADOR_FROTA" => Self::OperadorFrota,
            _ => Self::Other,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Self::Admin => "ADMIN",
            Self::Tarm => "TARM",
            Self::MedicoRegulador => "MEDICO_REGULADOR",
            Self::OperadorFrota => "OPERADOR_FROTA",
            Self::Other => "OTHER",
        }
    }
}

/// The value of `users.status` that means active.
pub const ACTIVE: &str = "ativo";

/// Claims of a dispatch access token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The user id, as a decimal string.
    pub sub: String,
    pub exp: i64,
    pub iat: i64,
}

pub fn issue_token(keys: &JwtKeys, user_id: i64, ttl: Duration) -> anyhow::Result<String> {
    let now = now_secs();
    let ttl = i64::try_from(ttl.as_secs())?;
    Ok(keys.issue(&Claims {
        sub: user_id.to_string(),
        iat: now,
        exp: now + ttl,
    })?)
}

/// What an authenticated request knows about its caller.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub id: i64,
    pub descriptive_name: String,
    pub profile: Profile,
}

impl CurrentUser {
    /// 403 unless the caller has one of `allowed`.
    pub fn require(&self, allowed: &[Profile]) -> Result<(), Problem> {
        if allowed.contains(&self.profile) {
            Ok(())
        } else {
            Err(Problem::forbidden(format!(
                "the {} profile may not use this route",
                self.profile.title()
            )))
        }
    }

    pub fn is_admin(&self) -> bool {
        self.profile == Profile::Admin
    }

    /// As [`Self::from_token`], through the replica's user cache (see `user_cache`).
    pub async fn from_token_cached(state: &AuthState, token: &str) -> Result<Self, Problem> {
        let id = Self::verify(&state.keys, token)?;
        if let Some(user) = state.users.get(id) {
            return Ok(user);
        }
        let user = Self::load(&state.pool, id).await?;
        state.users.put(&user);
        Ok(user)
    }

    fn verify(keys: &JwtKeys, token: &str) -> Result<i64, Problem> {
        let claims: Claims = keys.verify(token)?;
        claims
            .sub
            .parse()
            .map_err(|_| Problem::unauthorized("the token's subject is not a user id"))
    }

    /// Verifies `token` and loads its user; 401 when either fails or the user is not active.
    pub async fn from_token(keys: &JwtKeys, pool: &Pool, token: &str) -> Result<Self, Problem> {
        let id = Self::verify(keys, token)?;
        Self::load(pool, id).await
    }

    async fn load(pool: &Pool, id: i64) -> Result<Self, Problem> {
        let mut conn = db::conn(pool).await?;
        let row: Option<(i64, String, String, String)> = users::table
            .inner_join(profiles::table)
            .filter(users::id.eq(id))
            .select((
                users::id,
                users::descriptive_name,
                users::status,
                profiles::title,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db::db_error)?;
        match row {
            Some((id, descriptive_name, status, title)) if status == ACTIVE => Ok(Self {
                id,
                descriptive_name,
                profile: Profile::from_title(&title),
            }),
            Some(_) => Err(Problem::unauthorized("this user is not active")),
            None => Err(Problem::unauthorized("this user does not exist")),
        }
    }
}

/// What the extractor needs from the app: the token keys, the pool and the user cache.
#[derive(Clone)]
pub struct AuthState {
    pub keys: JwtKeys,
    pub pool: Pool,
    pub users: UserCache,
}

impl FromRequest for CurrentUser {
    type Error = Problem;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Problem>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AuthState>>().cloned();
        let token = authorization(req, "Bearer").map(str::to_owned);
        Box::pin(async move {
            let state = state.ok_or_else(Problem::internal)?;
            let token = token.ok_or_else(|| {
                Problem::unauthorized("an `Authorization: Bearer <token>` header is required")
            })?;
            CurrentUser::from_token_cached(&state, &token).await
        })
    }
}
