//! The OpenAPI 3.1 document of every route.

use common::http::BearerJwt;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "proposal-callback",
        description = "Insurer proposal result callback receiver"
    ),
    paths(
        common::http::healthz,
        common::http::readyz,
        common::http::metrics_doc,
        routes::auth::token,
        routes::callback::receive,
        routes::admin::list_receipts,
        routes::admin::replay,
        routes::admin::list_integrations,
        routes::admin::register_callback,
    ),
    components(schemas(
        common::problem::ProblemDocument,
        common::FieldError,
        routes::CallbackResult,
        routes::auth::AccessToken,
        routes::admin::ReceiptView,
        routes::admin::ReceiptPage,
        routes::admin::IntegrationView,
        crate::proposal::status::Status,
        crate::proposal::status::Outcome,
    )),
    modifiers(&BearerJwt, &BasicAuth),
)]
pub struct ApiDoc;

/// `/callback/auth` takes the Basic token an integration registered with its insurer.
struct BasicAuth;

impl utoipa::Modify for BasicAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "basic",
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Basic).build()),
            );
    }
}

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
