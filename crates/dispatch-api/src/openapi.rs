//! The OpenAPI 3.1 document of every route.

use common::http::BearerJwt;
use utoipa::OpenApi;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};

use crate::routes::{employees, fleet, incidents, reference, shared, users, writes};
use crate::store::incident_writes::{DispatchCreated, DispatchProgress};
use crate::store::writes::Written;
use crate::views::*;

#[derive(OpenApi)]
#[openapi(
    info(title = "dispatch-api", description = "Emergency medical dispatch service"),
    paths(
        common::http::healthz, common::http::readyz, common::http::metrics_doc,
        users::list, users::search, users::get,
        employees::of_user, employees::search,
        shared::default_values, shared::possible_values,
        incidents::mask, incidents::prank_calls, incidents::detail,
        incidents::unit_selection, incidents::fleet_summary, incidents::fleet_occurrence,
        incidents::regulation, incidents::occurrence_view,
        fleet::list, fleet::options, fleet::of_incident, fleet::types,
        fleet::dispatches_of_incident, fleet::dispatch_data,
        reference::health_units, reference::decision_actions, reference::decisions_of_incident,
        reference::intercurrences, reference::professional_types, reference::unallocated,
        writes::create, writes::patch, writes::submit, writes::cancel, writes::prank_call,
        writes::technical_decision, writes::send_to, writes::dispatch, writes::dispatch_status,
        writes::intercurrence, writes::transfer, writes::close,
        crate::realtime::ws::ws,
    ),
    components(schemas(
        common::problem::ProblemDocument, common::FieldError,
        RefOption, UserOption, ProfileView, UserRecord, EmployeeRecord, ProfessionalTypeView,
        MobileUnitTypeView, MobileUnitView, MobileUnitOption, HealthUnitOption, IncidentMaskItem,
        BasicData, Occurrence, Patient, Regulation, Conclusion, HistoryEntry, IncidentDetail,
        DispatchTimes, DispatchedUnit, DispatchView, PrankCalls, PrankCall, TechnicalDecisionView,
        RecordedIntercurrence, IncidentFleetSummary, UnitSelection, FleetOccurrence, DispatchData,
        RegulationDetail, OccurrenceView, UnallocatedEntry, UnallocatedPage, Lookups,
        DefaultValues, PossibleValues,
        Written, DispatchCreated, DispatchProgress, writes::CreateIncident, writes::PatchIncident,
        writes::Empty, writes::CancelBody, writes::TechnicalDecisionBody, writes::SendToBody,
        writes::DispatchBody, writes::StatusBody, writes::IntercurrenceBody, writes::TransferBody,
        writes::CloseBody,
    )),
    modifiers(&BearerJwt, &ErrorResponses),
)]
pub struct ApiDoc;

/// Every API route needs the bearer token and answers its errors as problem+json; this adds
/// both to every operation outside the operational routes, so no handler can forget them.
struct ErrorResponses;

const OPERATIONAL: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

const ERRORS: [(&str, &str); 5] = [
    ("400", "A bad parameter (named in `errors`)"),
    ("401", "No valid token, or the user is not active"),
    ("403", "The caller's profile may not use this route"),
    ("404", "No such record"),
    ("503", "The database is unavailable; retry"),
];

/// What a write may answer besides the reads' errors.
const WRITE_ERRORS: [(&str, &str); 12] = [
    ("400", "A bad body field or header (named in `errors`)"),
    ("401", "No valid token, or the user is not active"),
    ("403", "The caller's profile may not use this route"),
    ("404", "No such record"),
    (
        "409",
        "`invalid_transition`, `unit_busy`, `unit_inactive`, `unit_assigned`",
    ),
    (
        "412",
        "`version_conflict`: the If-Match is not the incident's version",
    ),
    (
        "408",
        "`request_timeout`: the body did not arrive within 10 s of the head",
    ),
    ("413", "The body is larger than 256 KiB"),
    ("415", "The body is not application/json"),
    (
        "422",
        "`invalid_reference` (a referenced record is unusable) or `idempotency_key_reused`",
    ),
    ("428", "`precondition_required`: If-Match is missing"),
    ("503", "The database is unavailable; retry"),
];

impl utoipa::Modify for ErrorResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let problem = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ProblemDocument")))
            .build();
        for (path, item) in openapi.paths.paths.iter_mut() {
            if OPERATIONAL.contains(&path.as_str()) {
                continue;
            }
            let ops = [
                (item.get.as_mut(), &ERRORS[..]),
                (item.post.as_mut(), &WRITE_ERRORS[..]),
                (item.patch.as_mut(), &WRITE_ERRORS[..]),
            ];
            for (op, errors) in ops {
                let Some(op) = op else { continue };
                for (status, description) in errors {
                    let response = ResponseBuilder::new()
                        .description(*description)
                        .content("application/problem+json", problem.clone())
                        .build();
                    op.responses
                        .responses
                        .entry((*status).to_owned())
                        .or_insert(response.into());
                }
                op.security = Some(vec![SecurityRequirement::new(
                    "bearer",
                    Vec::<String>::new(),
                )]);
            }
        }
    }
}

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
