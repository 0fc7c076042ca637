//! A unit's progress on an incident: `assigned`, `en_route`, `on_scene`, `transporting`,
//! `at_destination`, `handed_over`, `released`, in that order. `transporting` and
//! `at_destination` may be skipped (no transport), and so may `handed_over` (the patient
//! handed to the hospital's team, the end of the stretcher hold: docs/dispatch-routes.md,
//! "Response times"); nothing goes back; `released` is final and frees the unit.

use common::text_enum;

use super::Refusal;

text_enum! {
    /// A unit's step on its dispatch, in order.
    pub enum Status {
        Assigned = "assigned",
        EnRoute = "en_route",
        OnScene = "on_scene",
        Transporting = "transporting",
        AtDestination = "at_destination",
        HandedOver = "handed_over",
        Released = "released",
    }
}

/// Every allowed step: the next one, or a skip over the transport steps.
pub const TRANSITIONS: &[(Status, Status)] = &[
    (Status::Assigned, Status::EnRoute),
    (Status::EnRoute, Status::OnScene),
    (Status::OnScene, Status::Transporting),
    (Status::OnScene, Status::Released),
    (Status::Transporting, Status::AtDestination),
    (Status::AtDestination, Status::HandedOver),
    (Status::HandedOver, Status::Released),
    // The hand-over not recorded: the stretcher hold is then untimed (flagged, not guessed).
    (Status::AtDestination, Status::Released),
    // Called off before arrival: the unit goes back to the base.
    (Status::Assigned, Status::Released),
    (Status::EnRoute, Status::Released),
];

pub fn transition(from: Status, to: Status) -> Result<Status, Refusal> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(to)
    } else {
        Err(Refusal::InvalidTransition {
            what: "dispatch",
            from: from.as_str(),
            requested: to.as_str().to_owned(),
        })
    }
}

/// A vehicle type: what a technical decision asks for and what a unit is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VehicleType {
    pub id: i32,
    pub name: String,
}

/// The vehicle rule of a dispatch: a unit of another type than the latest technical decision
/// asks for is refused (409 `vehicle_type_mismatch`, naming both types) unless the fleet
/// operator gives a reason to send it anyway, which the history records. A decision that
/// asks for no vehicle type accepts any unit.
pub fn check_vehicle(
    unit_id: i64,
    requested: Option<&VehicleType>,
    offered: &VehicleType,
    override_reason: Option<&str>,
) -> Result<(), Refusal> {
    match requested {
        Some(requested) if requested.id != offered.id && override_reason.is_none() => {
            Err(Refusal::VehicleTypeMismatch {
                unit: unit_id,
                requested: requested.clone(),
                offered: offered.clone(),
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_of_another_type_needs_a_reason() {
        let usa = VehicleType {
            id: 1,
            name: "USA".into(),
        };
        let usb = VehicleType {
            id: 2,
            name: "USB".into(),
        };
        assert_eq!(check_vehicle(7, Some(&usa), &usa, None), Ok(()));
        assert_eq!(check_vehicle(7, None, &usb, None), Ok(()));
        let refused = check_vehicle(7, Some(&usa), &usb, None).unwrap_err();
        assert_eq!(
            refused,
            Refusal::VehicleTypeMismatch {
                unit: 7,
                requested: usa.clone(),
                offered: usb.clone(),
            }
        );
        let said = refused.to_string();
        assert!(said.contains("USA") && said.contains("USB"), "{said}");
        assert_eq!(
            check_vehicle(7, Some(&usa), &usb, Some("USA em manutenção")),
            Ok(())
        );
    }

    #[test]
    fn every_pair_is_allowed_exactly_when_the_table_says_and_never_backwards() {
        for from in Status::ALL {
            for to in Status::ALL {
                let ok = transition(from, to).is_ok();
                assert_eq!(ok, TRANSITIONS.contains(&(from, to)), "{from} -> {to}");
                if ok {
                    assert!(to > from, "{from} -> {to} goes backwards");
                }
            }
        }
        assert!(transition(Status::Released, Status::EnRoute).is_err());
    }
}
