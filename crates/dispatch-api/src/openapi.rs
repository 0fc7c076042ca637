//! The OpenAPI 3.1 document of every route: the operational routes and shared schemas
//! declared here, every API route as `routes::routes` registers it.

use common::http::BearerJwt;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::routes::Routes;
use crate::routes::dispatch::StatusBody;
use crate::routes::incident::form::{CreateIncident, OccurrenceBody, PatchIncident, PatientBody};
use crate::routes::incident::writes::{
    CancelBody, CloseBody, DispatchBody, DispatchConflict, Empty, IntercurrenceBody,
    MismatchedUnit, SendToBody, TechnicalDecisionBody, TransferBody,
};
use crate::store::writes::Written;
use crate::views::*;

#[derive(OpenApi)]
#[openapi(
    info(title = "dispatch-api", description = "Emergency medical dispatch service"),
    paths(common::http::healthz, common::http::readyz, common::http::metrics_doc),
    components(schemas(
        common::problem::ProblemDocument, common::FieldError,
        RefOption, UserOption, ProfileView, UserRecord, EmployeeRecord, ProfessionalTypeView,
        MobileUnitTypeView, MobileUnitView, MobileUnitOption, IncidentRef, CurrentDispatch,
        FleetBoardUnit, HealthUnitOption, IncidentMaskItem,
        BasicData, Occurrence, Patient, Regulation, Conclusion, HistoryEntry, IncidentDetail,
        DispatchTimes, DispatchedUnit, DispatchView, PrankCalls, PrankCall, TechnicalDecisionView,
        RecordedIntercurrence, IncidentFleetSummary, UnitSelection, FleetOccurrence, DispatchData,
        RegulationDetail, OccurrenceView, UnallocatedEntry, UnallocatedPage, Lookups,
        DefaultValues, PossibleValues,
        IncidentTimeline, DispatchTimeline, TargetView, ResponseTimesReport, ReportGroup,
        PhaseStats, UnitAtDoor, HoldStats, HospitalOffload, OffloadBoard, OffloadAlert,
        OffloadCleared, OffloadUnit, OffloadHold, UnitStep,
        crate::domain::times::Interval,
        crate::routes::response_targets::Targets, crate::routes::response_targets::PutTargets,
        crate::routes::response_targets::TargetChangeBody,
        Written, DispatchCreated, DispatchProgress, CreateIncident, PatchIncident, OccurrenceBody,
        PatientBody,
        Empty, CancelBody, TechnicalDecisionBody, SendToBody,
        DispatchBody, DispatchConflict, MismatchedUnit, StatusBody, IntercurrenceBody, TransferBody,
        CloseBody,
        // The WebSocket's frames (`GET /ws`): not HTTP bodies, described here for clients.
        crate::realtime::protocol::ClientMessage, crate::realtime::protocol::ServerMessage,
    )),
    modifiers(&BearerJwt),
)]
pub struct ApiDoc;

/// Every API route needs the bearer token and answers its errors as problem+json; this adds
/// both to every operation outside the operational routes, so no handler can forget them.
struct ErrorResponses;

const OPERATIONAL: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

const ERRORS: [(&str, &str); 5] = [
    ("400", "A bad parameter (named in `errors`)"),
    ("401", "No valid token, or the user is not active"),
    (
        "403",
        "The caller's profile may not use this route (`detail` names those that may)",
    ),
    ("404", "No such record"),
    ("503", "The database is unavailable; retry"),
];

/// What a write may answer besides the reads' errors.
const WRITE_ERRORS: [(&str, &str); 12] = [
    (
        "400",
        "Bad body fields (every one named in `errors`, at once) or a bad header",
    ),
    ("401", "No valid token, or the user is not active"),
    (
        "403",
        "The caller's profile may not use this route (`detail` names those that may)",
    ),
    ("404", "No such record"),
    (
        "409",
        "`invalid_transition`, `unit_busy`, `unit_inactive`, `unit_assigned`, \
         `vehicle_type_mismatch`",
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
                (item.put.as_mut(), &WRITE_ERRORS[..]),
                (item.delete.as_mut(), &WRITE_ERRORS[..]),
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

/// The methods the routes use, read from their own document (built from the same
/// `routes::routes` the app serves): what CORS allows (`cors::CorsSettings::layer`), so a
/// route with a new method is allowed without anyone remembering a list.
pub fn methods() -> &'static [actix_web::http::Method] {
    use actix_web::http::Method;
    static METHODS: std::sync::LazyLock<Vec<Method>> = std::sync::LazyLock::new(|| {
        let mut methods = Vec::new();
        for item in document().paths.paths.values() {
            let used = [
                (&item.get, Method::GET),
                (&item.put, Method::PUT),
                (&item.post, Method::POST),
                (&item.delete, Method::DELETE),
                (&item.patch, Method::PATCH),
            ];
            for (operation, method) in used {
                if operation.is_some() && !methods.contains(&method) {
                    methods.push(method);
                }
            }
        }
        methods
    });
    &METHODS
}

pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    crate::routes::routes(&mut Routes::document(&mut doc));
    ErrorResponses.modify(&mut doc);
    common::docs::plain_summaries(&mut doc);
    doc
}
