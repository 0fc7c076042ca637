//! Where units are, the recommendation and the fleet board (docs/dispatch-routes.md,
//! "Positions and a recommendation").

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::fleet::{Fix, Point, RankReason, Whereabouts};
use crate::store::read::{FleetBoardUnit, IncidentRef, Location, RefOption};

/// Where a unit counts as being.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitWhereabouts {
    /// `reported` (its latest position, fresh), `base` (its base's: no position, or a stale
    /// one) or `unknown`.
    pub source: String,
    #[schema(required = true)]
    pub location: Option<Location>,
    /// When the latest reported position was recorded (also when it is stale), or null.
    #[schema(required = true)]
    pub recorded_at: Option<DateTime<Utc>>,
    /// Seconds since `recorded_at`, or null.
    #[schema(required = true)]
    pub age_seconds: Option<i64>,
    /// `true` when a reported position exists but is older than the configured age.
    pub stale: bool,
}

impl UnitWhereabouts {
    /// Where the unit counts as being, as the recommendation and the board show it.
    pub fn of(
        w: &Whereabouts,
        fix: Option<Fix>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> UnitWhereabouts {
        let age = fix.map(|f| (now - f.recorded_at).num_seconds().max(0));
        let loc = |p: Point| Location {
            lat: p.lat,
            lon: p.lon,
        };
        match *w {
            Whereabouts::Reported { at, .. } => UnitWhereabouts {
                source: "reported".into(),
                location: Some(loc(at)),
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: false,
            },
            Whereabouts::Base { at, stale } => UnitWhereabouts {
                source: "base".into(),
                location: Some(loc(at)),
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: stale.is_some(),
            },
            Whereabouts::Unknown => UnitWhereabouts {
                source: "unknown".into(),
                location: None,
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: fix.is_some(),
            },
        }
    }
}

/// A free unit of the requested type, with how far it is.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecommendedUnit {
    pub id: i64,
    pub name: String,
    pub base: String,
    pub vehicle_type: RefOption,
    pub position: UnitWhereabouts,
    /// Straight-line distance to the incident's location, km (3 decimals); null when the
    /// incident has no location.
    #[schema(required = true)]
    pub distance_km: Option<f64>,
    /// Estimated seconds to arrive at the configured speed; null without a location.
    #[schema(required = true)]
    pub eta_seconds: Option<i64>,
    /// Its place in `units`, from 1.
    pub rank: usize,
    /// Why it ranks there: `nearest`, `farther` (than the unit above it), `same_distance`
    /// (as the unit above it, to the metre: after it by id) or `no_incident_location`
    /// (listed by id).
    pub rank_reason: RankReason,
}

/// The units of other vehicle types than the one asked for, which `left_out` lists only
/// when asked (`other_types=true`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtherTypes {
    /// How many (active or not, free or busy): 0 when the decision asks for no type.
    pub count: usize,
    /// Whether they are in `left_out` (`other_types=true`).
    pub listed: bool,
}

/// A unit the recommendation left out, and why.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeftOutUnit {
    pub id: i64,
    pub name: String,
    pub vehicle_type: RefOption,
    /// `inactive`, `busy` (on a dispatch not released), `other_type` or `no_position`,
    /// judged in that order.
    pub reason: String,
}

/// `GET /incident/{id}/unit-recommendation`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitRecommendation {
    pub incident: IncidentRef,
    /// The incident's location (`PUT /incident/{id}/location`), or null: then the units are
    /// listed by id with no distance.
    #[schema(required = true)]
    pub location: Option<Location>,
    /// What the latest technical decision asks for; null: any type.
    #[schema(required = true)]
    pub requested_vehicle_type: Option<RefOption>,
    /// The speed of the estimate (`UNIT_SPEED_KMH`).
    pub speed_kmh: f64,
    /// After how long a reported position is stale (`POSITION_MAX_AGE`).
    pub position_max_age_seconds: i64,
    /// Nearest first.
    pub units: Vec<RecommendedUnit>,
    /// The units of the type asked for that are not recommended, with why (and, with
    /// `other_types=true`, the units of other types too).
    pub left_out: Vec<LeftOutUnit>,
    pub other_types: OtherTypes,
}

/// `GET /mobile-unit/board`: one active unit of the fleet board, with where it is and how
/// long it has been in its current step.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BoardUnit {
    #[serde(flatten)]
    pub unit: FleetBoardUnit,
    /// Its reported position while fresh, its base after that (as the recommendation counts).
    pub position: UnitWhereabouts,
    /// Seconds in the current step (from the service's clock); null when free.
    #[schema(required = true)]
    pub seconds_in_step: Option<i64>,
}
