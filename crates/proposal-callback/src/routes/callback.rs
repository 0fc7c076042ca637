//! `POST /callback/{dsTenantId}/{insuranceCompany}`: an insurer's result notification.

use actix_web::{HttpRequest, HttpResponse, web};
use common::extract::{read_body, require_json};

use crate::domain::insurer::Insurer;
use crate::error::Error;
use crate::flow::apply::{self, Processed};
use crate::flow::receive::{self, Arrival, Received};
use crate::routes::extract::InsurerIntegration;
use crate::routes::{CallbackResult, callback_answer};
use crate::state::AppState;

/// 64 KiB on the callback route (docs/proposal-callback.md, "The callback, in order").
pub const BODY_LIMIT: usize = 64 * 1024;

/// Headers kept on a receipt: what helps an operator tell deliveries apart. Never
/// `Authorization`.
const KEPT_HEADERS: [&str; 4] = [
    "content-type",
    "content-length",
    "user-agent",
    "x-request-id",
];

fn valid_tenant(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Receive an insurer's result for a proposal.
///
/// Checks, in order: token (401), tenant id (400), insurer (404 `unknown_insurer`), token of
/// this tenant and insurer (403), `Content-Type` (415), size (413), the integration's Basic
/// token still the one the JWT was issued with (401). Then the raw body is stored as a
/// receipt and parsed (400/422), and the proposal updated (404, 409) unless the callback is
/// older than the last one applied (`stale`) or carries no result (`ignored`). While the
/// integration is paused the receipt is only stored (202 `deferred`).
#[utoipa::path(
    post,
    path = "/callback/{dsTenantId}/{insuranceCompany}",
    tag = "callback",
    security(("bearer" = [])),
    params(
        ("dsTenantId" = String, Path, description = "tenant id, `[A-Za-z0-9_-]{1,64}`"),
        ("insuranceCompany" = String, Path, description = "insurer identifier: `porto`, `tokio` or `too`"),
    ),
    request_body(content = serde_json::Value, content_type = "application/json",
        description = "the insurer's own JSON, at most 64 KiB"),
    responses(
        (status = 200, body = CallbackResult, description = "`processed`; a redelivery of the same insurer event (`duplicate`); the status it already had (`unchanged`); older, by the insurer's event time, than the last callback applied to the proposal (`stale`, nothing applied); an event that carries no analysis result (`ignored`, only `result` in the body). Every one is stored as a receipt."),
        (status = 202, body = CallbackResult, description = "`deferred` (only `result` in the body): the integration is paused; the callback is stored and applied, in arrival order, when an operator resumes it"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_parameter` or `invalid_payload` (not JSON)"),
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`unauthorized`: no token, an invalid or expired one, not a callback token, or one issued before the integration's Basic token was revoked or replaced"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`unknown_insurer` or `proposal_not_found`"),
        (status = 409, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_transition`"),
        (status = 408, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`request_timeout`: the body did not arrive within 10 s of the head"),
        (status = 413, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 422, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`missing_field` (an essential field, the event time included, absent, null or blank) or `invalid_payload` (wrong shape, unknown outcome, unreadable event time, a key given twice, a NUL character in any string); `errors[0].field` names the field"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "database unavailable; retry"),
    )
)]
pub async fn receive(
    req: HttpRequest,
    who: InsurerIntegration,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let tenant = req.match_info().get("dsTenantId").unwrap_or_default();
    let insurer = req.match_info().get("insuranceCompany").unwrap_or_default();
    let result = receive_checked(&req, &who, tenant, insurer, payload, &state).await;
    // Counted under the token's tenant and insurer: the path may name anything.
    apply::count(&who.tenant, who.insurer, &result);
    callback_answer(result)
}

async fn receive_checked(
    req: &HttpRequest,
    who: &InsurerIntegration,
    tenant: &str,
    insurer: &str,
    payload: web::Payload,
    state: &AppState,
) -> Result<Processed, Error> {
    if !valid_tenant(tenant) {
        return Err(common::Problem::invalid_parameter(
            "dsTenantId",
            "must be 1 to 64 of A-Z, a-z, 0-9, `_` and `-`",
        )
        .into());
    }
    let Some(insurer) = Insurer::parse(insurer) else {
        return Err(Error::UnknownInsurer(insurer.to_owned()));
    };
    who.require(tenant, insurer)?;
    require_json(req)?;
    let body = read_body(req, payload.into_inner(), BODY_LIMIT).await?;

    let mut conn = state.pool.get().await?;
    let arrival = Arrival {
        tenant,
        insurer,
        integration_id: who.integration_id,
        headers: kept_headers(req),
        body: &body,
    };
    let Received {
        receipt_id,
        processed,
    } = receive::receive_for_token(&mut conn, &state.clock, &arrival, who.issued_at).await?;
    if let Some(email) = processed.email_id {
        tracing::info!(
            receipt = receipt_id,
            email,
            "transition applied; email queued"
        );
    }
    Ok(processed)
}

fn kept_headers(req: &HttpRequest) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for name in KEPT_HEADERS {
        if let Some(v) = req.headers().get(name).and_then(|v| v.to_str().ok()) {
            map.insert(name.to_owned(), v.into());
        }
    }
    if let Some(addr) = req.peer_addr() {
        map.insert("peer_addr".into(), addr.ip().to_string().into());
    }
    serde_json::Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::valid_tenant;

    #[test]
    fn tenant_ids() {
        for ok in ["demo-a", "A_b-9", &"x".repeat(64)] {
            assert!(valid_tenant(ok), "{ok}");
        }
        for bad in ["", "demo a", "demo.a", "ação", &"x".repeat(65)] {
            assert!(!valid_tenant(bad), "{bad}");
        }
    }
}
