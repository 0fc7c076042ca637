//! Where the units are and which free unit to send (docs/dispatch-routes.md, "Positions and a
//! recommendation"): a unit is where its latest position says while that position is fresh,
//! at its base after that; the free units of the requested vehicle type are ranked by
//! straight-line distance to the incident, with an arrival estimate at a set speed. No HTTP,
//! no queries: the store hands the candidates in, the route answers what this decides.

use chrono::{DateTime, Duration, Utc};
use common::text_enum;

/// A point on the map (WGS 84 degrees).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub lat: f64,
    pub lon: f64,
}

impl Point {
    /// Which of `lat`, `lon` is out of range, with why: latitude -90..=90, longitude
    /// -180..=180, both finite.
    pub fn fault(&self) -> Option<(&'static str, &'static str)> {
        if !(self.lat.is_finite() && (-90.0..=90.0).contains(&self.lat)) {
            return Some(("lat", "must be a latitude between -90 and 90"));
        }
        if !(self.lon.is_finite() && (-180.0..=180.0).contains(&self.lon)) {
            return Some(("lon", "must be a longitude between -180 and 180"));
        }
        None
    }

    /// Great-circle distance in kilometres (haversine, mean Earth radius 6,371 km).
    pub fn km_to(&self, other: &Point) -> f64 {
        const EARTH_RADIUS_KM: f64 = 6371.0;
        let (la1, la2) = (self.lat.to_radians(), other.lat.to_radians());
        let dlat = la2 - la1;
        let dlon = (other.lon - self.lon).to_radians();
        let a = (dlat / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlon / 2.0).sin().powi(2);
        2.0 * EARTH_RADIUS_KM * a.sqrt().asin()
    }
}

/// How the recommendation judges positions and time: a position older than `max_age` no
/// longer counts (the base does); travel at `speed_kmh` in a straight line.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub max_age: Duration,
    pub speed_kmh: f64,
}

/// Default age after which a unit's reported position is stale: 30 minutes.
pub const DEFAULT_POSITION_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// Default average speed of the arrival estimate: 40 km/h (urban emergency driving).
pub const DEFAULT_SPEED_KMH: f64 = 40.0;

impl Default for Rules {
    fn default() -> Self {
        Self {
            max_age: Duration::from_std(DEFAULT_POSITION_MAX_AGE).expect("30 min"),
            speed_kmh: DEFAULT_SPEED_KMH,
        }
    }
}

/// A reported position and when the unit recorded it.
#[derive(Debug, Clone, Copy)]
pub struct Fix {
    pub at: Point,
    pub recorded_at: DateTime<Utc>,
}

/// Where a unit counts as being, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Whereabouts {
    /// Its latest position, fresh: `age` since it was recorded.
    Reported { at: Point, age: Duration },
    /// Its base: no position, or `stale` (the latest one's age) when one is too old.
    Base { at: Point, stale: Option<Duration> },
    /// Neither a fresh position nor a base with coordinates.
    Unknown,
}

impl Whereabouts {
    pub fn of(fix: Option<Fix>, base: Option<Point>, now: DateTime<Utc>, rules: &Rules) -> Self {
        let age = fix.map(|f| (f, (now - f.recorded_at).max(Duration::zero())));
        match (age, base) {
            (Some((f, age)), _) if age <= rules.max_age => Whereabouts::Reported { at: f.at, age },
            (stale, Some(at)) => Whereabouts::Base {
                at,
                stale: stale.map(|(_, age)| age),
            },
            _ => Whereabouts::Unknown,
        }
    }

    pub fn point(&self) -> Option<Point> {
        match self {
            Whereabouts::Reported { at, .. } | Whereabouts::Base { at, .. } => Some(*at),
            Whereabouts::Unknown => None,
        }
    }
}

/// A unit the recommendation looks at.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: i64,
    pub type_id: i32,
    pub active: bool,
    /// On a dispatch that is not released.
    pub busy: bool,
    pub whereabouts: Whereabouts,
}

/// Why a unit is not recommended, in the order they are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftOut {
    Inactive,
    Busy,
    OtherType,
    /// Free and of the type, but neither a fresh position nor a base on the map.
    NoPosition,
}

impl LeftOut {
    pub fn as_str(self) -> &'static str {
        match self {
            LeftOut::Inactive => "inactive",
            LeftOut::Busy => "busy",
            LeftOut::OtherType => "other_type",
            LeftOut::NoPosition => "no_position",
        }
    }
}

/// A recommended unit: how far, and how long at the rules' speed.
#[derive(Debug, Clone)]
pub struct Ranked<'a> {
    pub unit: &'a Candidate,
    pub distance_km: f64,
    pub eta: Duration,
}

/// The recommendation: free units of `requested` (any type when `None`), nearest first (ties
/// by id), and every other unit with why it was left out. Without an incident location the
/// free units of the type are listed by id with no distance.
pub fn recommend<'a>(
    units: &'a [Candidate],
    requested: Option<i32>,
    incident: Option<Point>,
    rules: &Rules,
) -> (
    Vec<Ranked<'a>>,
    Vec<(&'a Candidate, LeftOut)>,
    Vec<&'a Candidate>,
) {
    let mut ranked = Vec::new();
    let mut unplaced = Vec::new();
    let mut left_out = Vec::new();
    for unit in units {
        let reason = if !unit.active {
            Some(LeftOut::Inactive)
        } else if unit.busy {
            Some(LeftOut::Busy)
        } else if requested.is_some_and(|t| t != unit.type_id) {
            Some(LeftOut::OtherType)
        } else {
            None
        };
        if let Some(reason) = reason {
            left_out.push((unit, reason));
            continue;
        }
        match (unit.whereabouts.point(), incident) {
            (Some(at), Some(to)) => {
                let distance_km = at.km_to(&to);
                let seconds = (distance_km / rules.speed_kmh * 3600.0).round() as i64;
                ranked.push(Ranked {
                    unit,
                    distance_km,
                    eta: Duration::seconds(seconds),
                });
            }
            (None, _) => left_out.push((unit, LeftOut::NoPosition)),
            (Some(_), None) => unplaced.push(unit),
        }
    }
    ranked.sort_by(|a, b| {
        a.distance_km
            .total_cmp(&b.distance_km)
            .then(a.unit.id.cmp(&b.unit.id))
    });
    (ranked, left_out, unplaced)
}

text_enum! {
    /// Why a recommended unit ranks where it does (docs/dispatch-routes.md, "Positions and a
    /// recommendation"). Every listed unit is free and of the type asked for; the distance is
    /// from where it counts as being (its `position.source`).
    pub enum RankReason {
        /// The first: no free unit of the type is nearer the incident.
        Nearest = "nearest",
        /// Farther than the unit ranked just above it.
        Farther = "farther",
        /// As far as the unit just above it (to the metre): ranked after it by id.
        SameDistance = "same_distance",
        /// The incident has no location: the free units of the type are listed by id.
        NoIncidentLocation = "no_incident_location",
    }
}

/// Why each of `ranked` (nearest first, as [`recommend`] ranks them) ranks where it does:
/// the first is the nearest; each next one is farther than the one above it, or as far to
/// the metre (then after it by id).
pub fn rank_reasons(ranked: &[Ranked<'_>]) -> Vec<RankReason> {
    let metres = |r: &Ranked<'_>| (r.distance_km * 1000.0).round();
    ranked
        .iter()
        .enumerate()
        .map(
            |(i, r)| match i.checked_sub(1).map(|above| &ranked[above]) {
                None => RankReason::Nearest,
                Some(above) if metres(above) == metres(r) => RankReason::SameDistance,
                Some(_) => RankReason::Farther,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z")
            .unwrap()
            .to_utc()
    }

    const SJC: Point = Point {
        lat: -23.1896,
        lon: -45.8841,
    };

    #[test]
    fn a_degree_of_latitude_is_about_111_km() {
        let d = SJC.km_to(&Point {
            lat: SJC.lat + 1.0,
            lon: SJC.lon,
        });
        assert!((d - 111.19).abs() < 0.1, "{d}");
    }

    #[test]
    fn a_stale_position_falls_back_to_the_base() {
        let rules = Rules::default();
        let base = Point { lat: 0.0, lon: 0.0 };
        let fix = Fix {
            at: SJC,
            recorded_at: t0() - Duration::minutes(31),
        };
        assert_eq!(
            Whereabouts::of(Some(fix), Some(base), t0(), &rules),
            Whereabouts::Base {
                at: base,
                stale: Some(Duration::minutes(31))
            }
        );
        let fresh = Fix {
            recorded_at: t0() - Duration::minutes(29),
            ..fix
        };
        assert_eq!(
            Whereabouts::of(Some(fresh), Some(base), t0(), &rules),
            Whereabouts::Reported {
                at: SJC,
                age: Duration::minutes(29)
            }
        );
        assert_eq!(
            Whereabouts::of(Some(fix), None, t0(), &rules),
            Whereabouts::Unknown
        );
    }

    #[test]
    fn the_nearest_free_unit_of_the_type_comes_first() {
        let at = |km_north: f64| Whereabouts::Reported {
            at: Point {
                lat: SJC.lat + km_north / 111.19,
                lon: SJC.lon,
            },
            age: Duration::zero(),
        };
        let unit = |id, type_id, active, busy, w| Candidate {
            id,
            type_id,
            active,
            busy,
            whereabouts: w,
        };
        let units = [
            unit(1, 1, true, false, at(8.0)),
            unit(2, 1, true, false, at(2.0)),
            unit(3, 1, true, true, at(0.5)),
            unit(4, 2, true, false, at(0.1)),
            unit(5, 1, false, false, at(0.1)),
            unit(6, 1, true, false, Whereabouts::Unknown),
        ];
        let (ranked, left, _) = recommend(&units, Some(1), Some(SJC), &Rules::default());
        let ids: Vec<i64> = ranked.iter().map(|r| r.unit.id).collect();
        assert_eq!(ids, [2, 1]);
        // 2 km at 40 km/h: three minutes.
        assert_eq!(ranked[0].eta, Duration::seconds(180));
        assert_eq!(
            rank_reasons(&ranked),
            [RankReason::Nearest, RankReason::Farther]
        );
        let why: Vec<(i64, &str)> = left.iter().map(|(u, r)| (u.id, r.as_str())).collect();
        assert_eq!(
            why,
            [
                (3, "busy"),
                (4, "other_type"),
                (5, "inactive"),
                (6, "no_position")
            ]
        );
    }

    #[test]
    fn units_as_far_as_the_one_above_them_say_so() {
        let at = Whereabouts::Reported {
            at: Point {
                lat: SJC.lat + 1.0 / 111.19,
                lon: SJC.lon,
            },
            age: Duration::zero(),
        };
        let units: Vec<Candidate> = [9, 3, 5]
            .map(|id| Candidate {
                id,
                type_id: 1,
                active: true,
                busy: false,
                whereabouts: at,
            })
            .to_vec();
        let (ranked, _, _) = recommend(&units, Some(1), Some(SJC), &Rules::default());
        let ids: Vec<i64> = ranked.iter().map(|r| r.unit.id).collect();
        assert_eq!(ids, [3, 5, 9]);
        assert_eq!(
            rank_reasons(&ranked),
            [
                RankReason::Nearest,
                RankReason::SameDistance,
                RankReason::SameDistance
            ]
        );
    }
}
