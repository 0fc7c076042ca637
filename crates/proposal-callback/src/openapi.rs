//! The OpenAPI 3.1 document of every route.

use common::http::BearerJwt;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::routes;

/// What the document holds besides the service's own routes (added by
/// [`routes::document`]): the operational routes every service has, the shared schemas and
/// the security schemes.
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
    ),
    components(schemas(common::problem::ProblemDocument, common::FieldError)),
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
    let mut doc = ApiDoc::openapi();
    routes::document(&mut doc);
    doc
}

#[cfg(test)]
mod tests {
    /// The whole document, so that any change to it shows in review.
    #[test]
    fn the_document_is_as_reviewed() {
        insta::assert_json_snapshot!(super::document());
    }
}
