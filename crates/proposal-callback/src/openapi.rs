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
    common::docs::plain_summaries(&mut doc);
    doc
}

#[cfg(test)]
mod tests {
    /// The whole document, so that any change to it shows in review.
    #[test]
    fn the_document_is_as_reviewed() {
        insta::assert_json_snapshot!(super::document());
    }

    /// `/docs` lists each route with its summary as plain text: no raw backticks, no line
    /// break.
    #[test]
    fn every_summary_reads_as_plain_text() {
        let doc = serde_json::to_value(super::document()).unwrap();
        let mut summaries = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if let Some(summary) = op["summary"].as_str() {
                    summaries += 1;
                    assert!(
                        !summary.contains('`') && !summary.contains('\n'),
                        "{method} {path}: {summary:?}"
                    );
                }
            }
        }
        assert!(summaries > 10, "{summaries} summaries");
    }
}
