//! The routes that answer patient data, as the access log records them
//! (docs/dispatch-access-log.md, "What is recorded"); which views carry that data is
//! `patient_data`'s business.

use common::text_enum;

text_enum! {
    /// A route that answers patient data, as the access log records it (its `route`
    /// column): the method and the OpenAPI path pattern.
    pub enum AccessRoute {
        Detail = "GET /incident/{id}",
        UnitSelection = "GET /incident/{id}/unit-selection",
        FleetSummary = "GET /incident/{id}/fleet-summary",
        FleetOccurrence = "GET /incident/{id}/fleet-occurrence",
        Regulation = "GET /incident/{id}/regulation",
        OccurrenceView = "GET /incident/{id}/occurrence-view",
        Timeline = "GET /incident/{id}/timeline",
        UnitRecommendation = "GET /incident/{id}/unit-recommendation",
        Mask = "GET /incident/mask",
        PrankCalls = "GET /incident/prank-calls/{phone_number}",
        DispatchData = "GET /dispatch/bff/dispatch-data/{id}",
        TechnicalDecisions = "GET /technical-decision/incident/{id}",
    }
}
