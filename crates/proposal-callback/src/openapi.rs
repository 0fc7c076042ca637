//! The OpenAPI 3.1 document of every route.

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "proposal-callback",
        description = "Insurer proposal result callback receiver"
    ),
    paths(common::http::healthz, common::http::readyz, common::http::metrics_doc),
    components(schemas(common::problem::ProblemDocument, common::FieldError))
)]
pub struct ApiDoc;

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
