//! An incident's place on the map and the unit to send there (docs/dispatch-routes.md,
//! "Positions and a recommendation").

use actix_web::http::StatusCode;
use actix_web::web;
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::domain::Refusal;
use crate::domain::fleet::{LeftOut, Point, RankReason, rank_reasons, recommend};
use crate::domain::refusal::FieldFault;
use crate::patient_data::AccessRoute;
use crate::routes::extract::Caller;
use crate::routes::extract::{FleetOrRegulator, Judge, Locator, Post, Versioned};
use crate::routes::recorded::record;
use crate::routes::{Reply, Routes};
use crate::state::AppState;
use crate::store::fleet;
use crate::store::writes::Written;
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_locate, locate)
        .add(__path_recommendation, recommendation);
}

/// `PUT /incident/{id}/location`'s body: the point picked on the client's map, or `null` to
/// clear it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationBody {
    #[schema(required = true)]
    pub location: Option<Location>,
}

impl Judge for LocationBody {
    type Judged = Option<Location>;
    fn judge(self) -> Result<Option<Location>, Refusal> {
        if let Some(l) = self.location
            && let Some((field, message)) = (Point {
                lat: l.lat,
                lon: l.lon,
            })
            .fault()
        {
            return Err(Refusal::InvalidFields(vec![FieldFault {
                field: format!("location.{field}"),
                message: message.to_owned(),
            }]));
        }
        Ok(self.location)
    }
}

/// Where the incident is, from the client's map (what the recommendation measures from).
/// The history records it as `located`; `incident.updated` carries `basic_data`.
#[utoipa::path(put, path = "/incident/{id}/location", tag = "writes", request_body = LocationBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn locate(
    state: web::Data<AppState>,
    w: Versioned<Post<Locator, LocationBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, to, expected| {
        Ok(fleet::locate_incident(c, user, id.0, expected, to).await?)
    })
    .await
}

/// `GET /incident/{id}/unit-recommendation`'s parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RecommendationParams {
    /// `true` also lists the units of other vehicle types than the one asked for in
    /// `left_out` (reason `other_type`, or `inactive`/`busy` when judged first); default
    /// `false`: only their count (`other_types.count`).
    pub other_types: Option<bool>,
}

/// Which unit to send: the free units of the vehicle type the latest technical decision
/// asks for, nearest first by straight-line distance from the incident's location, each
/// with where it counts as being (its reported position while fresh, its base after
/// `POSITION_MAX_AGE`), an arrival estimate at `UNIT_SPEED_KMH` and why it ranks where it
/// does (`rank`, `rank_reason`); every other unit of that type with why it was left out
/// (`busy`, `inactive`, `no_position`); the units of other types counted
/// (`other_types.count`), and listed in `left_out` with `other_types=true`.
#[utoipa::path(get, path = "/incident/{id}/unit-recommendation", tag = "fleet",
    params(("id" = i64, Path, description = "incident id"), RecommendationParams),
    responses((status = 200, body = UnitRecommendation)))]
pub async fn recommendation(
    state: web::Data<AppState>,
    user: Caller<FleetOrRegulator>,
    id: Path<i64>,
    params: Query<RecommendationParams>,
) -> Reply {
    let conn = state.pool.get().await?;
    let now = state.clock.now();
    let rules = state.fleet;
    let (incident, units) = tokio::try_join!(
        fleet::incident_for_recommendation(&conn, id.0),
        fleet::units_on_map(&conn, now, &rules)
    )?;
    let (incident, location, requested) =
        incident.ok_or_else(|| Refusal::not_found("incident", id.0))?;
    let candidates: Vec<_> = units.iter().map(|u| u.candidate.clone()).collect();
    let point = location.map(|l| Point {
        lat: l.lat,
        lon: l.lon,
    });
    let requested_id = requested.as_ref().map(|t| t.id);
    let (ranked, left_out, unplaced) = recommend(&candidates, requested_id, point, &rules);
    let by_id = |id: i64| {
        units
            .iter()
            .find(|u| u.candidate.id == id)
            .expect("a listed unit")
    };
    let listed = |id: i64, distance: Option<f64>, eta: Option<i64>, why: RankReason| {
        let u = by_id(id);
        RecommendedUnit {
            id,
            name: u.name.clone(),
            base: u.base.clone(),
            vehicle_type: u.vehicle_type.clone(),
            position: UnitWhereabouts::of(&u.candidate.whereabouts, u.fix, now),
            distance_km: distance.map(|d| (d * 1000.0).round() / 1000.0),
            eta_seconds: eta,
            rank: 0,
            rank_reason: why,
        }
    };
    let mut out: Vec<RecommendedUnit> = ranked
        .iter()
        .zip(rank_reasons(&ranked))
        .map(|(r, why)| {
            let eta = Some(r.eta.num_seconds());
            listed(r.unit.id, Some(r.distance_km), eta, why)
        })
        .collect();
    out.extend(
        unplaced
            .iter()
            .map(|c| listed(c.id, None, None, RankReason::NoIncidentLocation)),
    );
    for (i, unit) in out.iter_mut().enumerate() {
        unit.rank = i + 1;
    }
    let other_type = |type_id: i32| requested_id.is_some_and(|t| t != type_id);
    let list_others = params.0.other_types.unwrap_or(false);
    let other_types = OtherTypes {
        count: left_out
            .iter()
            .filter(|(c, _)| other_type(c.type_id))
            .count(),
        listed: list_others,
    };
    let left_out = left_out
        .iter()
        .filter(|(c, _)| list_others || !other_type(c.type_id))
        .map(|(c, why): &(_, LeftOut)| {
            let u = by_id(c.id);
            LeftOutUnit {
                id: c.id,
                name: u.name.clone(),
                vehicle_type: u.vehicle_type.clone(),
                reason: why.as_str().to_owned(),
            }
        })
        .collect();
    let view = UnitRecommendation {
        incident,
        location,
        requested_vehicle_type: requested,
        speed_kmh: rules.speed_kmh,
        position_max_age_seconds: rules.max_age.num_seconds(),
        units: out,
        left_out,
        other_types,
    };
    record(&state, &user, AccessRoute::UnitRecommendation, view, conn)
        .await?
        .ok()
}
