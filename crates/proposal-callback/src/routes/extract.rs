//! Who is calling, as extractors, so a handler cannot forget the check: an insurer's
//! integration ([`InsurerIntegration`], callback JWT) or a tenant's admin ([`TenantAdmin`],
//! admin JWT or the identity provider's staff token, see [`crate::auth::admin`]).

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use common::Problem;
use common::auth::{JwtKeys, authorization, id_claim};
use serde::de::DeserializeOwned;

use std::future::Ready;

use futures_util::FutureExt;
use futures_util::future::{Either, LocalBoxFuture};

use crate::auth::admin::Admin;
use crate::auth::jwt::CallbackClaims;
use crate::domain::insurer::Insurer;
use crate::error::Error;
use crate::state::AppState;

/// The integration a callback's Bearer token was issued to.
#[derive(Debug, Clone)]
pub struct InsurerIntegration {
    pub integration_id: i64,
    pub tenant: String,
    pub insurer: Insurer,
    /// The token's `iat`: the integration's Basic token must not have been revoked or
    /// replaced since, checked when the callback's receipt is stored
    /// (`flow::receive::receive_for_token`).
    pub issued_at: i64,
}

impl InsurerIntegration {
    /// 403 unless the token belongs to the tenant and insurer the path names.
    pub fn require(&self, tenant: &str, insurer: Insurer) -> Result<(), Error> {
        if self.tenant == tenant && self.insurer == insurer {
            Ok(())
        } else {
            Err(Error::Forbidden(
                "this token belongs to another tenant or insurer",
            ))
        }
    }

    fn from_callback_token(req: &HttpRequest) -> Result<Self, Error> {
        let claims: CallbackClaims = verified(
            req,
            keys(req)?,
            "a Bearer token from /callback/auth is required",
        )?;
        // The integration id only in its canonical spelling: `"07"` names no integration.
        let integration_id = id_claim("sub", &claims.sub).map_err(Problem::from)?;
        Ok(InsurerIntegration {
            integration_id,
            tenant: claims.tenant,
            insurer: claims.insurer,
            issued_at: claims.iat,
        })
    }
}

impl FromRequest for InsurerIntegration {
    type Error = Error;
    type Future = std::future::Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Self::from_callback_token(req))
    }
}

/// A tenant's administrator (this service's admin token, or the tenant's identity provider's
/// token of a staff member with the admin role); every admin route is scoped to `tenant`.
pub type TenantAdmin = Admin;

impl FromRequest for Admin {
    type Error = Error;
    type Future = Either<Ready<Result<Self, Error>>, LocalBoxFuture<'static, Result<Self, Error>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = authorization(req, "Bearer").map(str::to_owned);
        let tokens = req
            .app_data::<web::Data<AppState>>()
            .map(|state| state.admin_tokens.clone());
        let mut verify = Box::pin(async move {
            let tokens =
                tokens.ok_or_else(|| Error::Internal("AppState is not registered".into()))?;
            let token = token.ok_or(Error::Unauthorized("an admin Bearer token is required"))?;
            tokens.admin(&token).await
        });
        // This service's own tokens (and every refusal) are decided at once, before the
        // handler runs, as a synchronous extractor would; only a provider's token whose keys
        // must be fetched waits.
        match (&mut verify).now_or_never() {
            Some(decided) => Either::Left(std::future::ready(decided)),
            None => Either::Right(verify),
        }
    }
}

/// The request's Bearer token, verified with `keys`; 401 `missing` without one.
fn verified<C: DeserializeOwned>(
    req: &HttpRequest,
    keys: &JwtKeys,
    missing: &'static str,
) -> Result<C, Error> {
    let token = authorization(req, "Bearer").ok_or(Error::Unauthorized(missing))?;
    keys.verify(token)
        .map_err(|_| Error::Unauthorized("the token is not valid or has expired"))
}

fn keys(req: &HttpRequest) -> Result<&JwtKeys, Error> {
    req.app_data::<web::Data<AppState>>()
        .map(|state| &state.keys)
        .ok_or_else(|| Error::Internal("AppState is not registered".into()))
}
