//! Which records of the reference data a write may refer to, and how it is refused
//! otherwise (422 `invalid_reference` naming the body field; docs/dispatch-routes.md). The
//! store finds the record; these rules judge what it found (`None`: no such record).

use super::Refusal;
use super::user::Profile;

/// A catalogue entry (a technical decision action, an intercurrence) as a write finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub active: bool,
    pub deleted: bool,
}

/// An entry a write may refer to exists, is active and is not deleted; answers its name.
/// `what` names the kind of entry and `id` the one asked for.
pub fn entry(found: Option<Entry>, field: &str, what: &str, id: i32) -> Result<String, Refusal> {
    match found {
        Some(Entry {
            name,
            active: true,
            deleted: false,
        }) => Ok(name),
        Some(_) => Err(Refusal::unusable(
            field,
            format!("{what} {id} is inactive or deleted"),
        )),
        None => Err(Refusal::unusable(
            field,
            format!("{what} {id} does not exist"),
        )),
    }
}

/// A mobile unit type a decision asks for exists and is active (`found`: its name and
/// whether it is active); answers its name.
pub fn vehicle_type(found: Option<(String, bool)>, id: i32) -> Result<String, Refusal> {
    match found {
        Some((name, true)) => Ok(name),
        _ => Err(Refusal::unusable(
            "vehicle_type_id",
            format!("vehicle type {id} does not exist or is inactive"),
        )),
    }
}

/// A destination (a dispatch's or the patient's) is an active health unit; `found` is
/// whether the unit is active.
pub fn destination(found: Option<bool>, field: &str, unit: i64) -> Result<(), Refusal> {
    match found {
        Some(true) => Ok(()),
        Some(false) => Err(Refusal::unusable(
            field,
            format!("health unit {unit} is inactive: it receives no patients"),
        )),
        None => Err(Refusal::unusable(
            field,
            format!("health unit {unit} does not exist"),
        )),
    }
}

/// An incident's occurrence type names an active type of the catalogue (`active`: their
/// names); 400 listing them otherwise.
pub fn occurrence_type(value: &str, active: Vec<String>) -> Result<(), Refusal> {
    if active.iter().any(|name| name == value) {
        Ok(())
    } else {
        Err(Refusal::UnknownOccurrenceType {
            value: value.to_owned(),
            allowed: active,
        })
    }
}

/// A dispatched mobile unit exists (422) and is active (409 `unit_inactive`); `found` is the
/// unit and whether it is active.
pub fn mobile_unit<U>(found: Option<(U, bool)>, id: i64) -> Result<U, Refusal> {
    match found {
        Some((unit, true)) => Ok(unit),
        Some(_) => Err(Refusal::UnitInactive(id)),
        None => Err(Refusal::unusable(
            "mobile_unit_id",
            format!("mobile unit {id} does not exist"),
        )),
    }
}

/// The related incident exists and is another incident than `own` (none on create).
pub fn related_incident(found: bool, related: i64, own: Option<i64>) -> Result<(), Refusal> {
    if own == Some(related) {
        Err(Refusal::unusable(
            "related_incident_id",
            "an incident cannot relate to itself",
        ))
    } else if !found {
        Err(Refusal::unusable(
            "related_incident_id",
            format!("incident {related} does not exist"),
        ))
    } else {
        Ok(())
    }
}

/// Whom an incident may pass to: `SendTo` an active regulating physician, `Transfer` an
/// active employee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taker {
    SendTo,
    Transfer,
}

/// A user as a send-to or a transfer finds them: whether the user is active, their profile,
/// and, for a transfer, whether their employee record is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub active: bool,
    pub profile: Profile,
    pub employee_active: bool,
}

/// The user `user` (`found`: the person and what the rule reads of them) may take the
/// incident as `taker` from `by`, the caller; answers the person. Nobody sends or transfers
/// an incident to themself (docs/dispatch-routes.md, "Pickers").
pub fn taker<P>(
    found: Option<(P, Candidate)>,
    taker: Taker,
    user: i64,
    by: i64,
) -> Result<P, Refusal> {
    let (field, what, fits): (&str, &str, fn(&Candidate) -> bool) = match taker {
        Taker::SendTo => ("regulator_id", "an active regulating physician", |c| {
            c.active && c.profile == Profile::MedicoRegulador
        }),
        Taker::Transfer => ("assigned_to_id", "an active employee", |c| {
            c.active && c.employee_active
        }),
    };
    if user == by {
        let verb = match taker {
            Taker::SendTo => "sent",
            Taker::Transfer => "transferred",
        };
        return Err(Refusal::unusable(
            field,
            format!("user {user} is you: an incident is {verb} to someone else"),
        ));
    }
    match found {
        Some((person, c)) if fits(&c) => Ok(person),
        _ => Err(Refusal::unusable(
            field,
            format!("user {user} is not {what}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<impl std::fmt::Debug, Refusal>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn an_entry_is_usable_only_active_and_not_deleted() {
        let e = |active, deleted| {
            Some(Entry {
                name: "x".into(),
                active,
                deleted,
            })
        };
        assert_eq!(entry(e(true, false), "f", "action", 1).unwrap(), "x");
        for (a, d) in [(false, false), (true, true), (false, true)] {
            assert_eq!(
                code(entry(e(a, d), "f", "action", 1)),
                "body field `f`: action 1 is inactive or deleted"
            );
        }
        assert_eq!(
            code(entry(None, "f", "action", 1)),
            "body field `f`: action 1 does not exist"
        );
    }

    #[test]
    fn destinations_and_units() {
        assert!(destination(Some(true), "d", 3).is_ok());
        assert!(code(destination(Some(false), "d", 3)).contains("inactive"));
        assert!(code(destination(None, "d", 3)).contains("does not exist"));
        assert_eq!(mobile_unit(Some((7, true)), 7).unwrap(), 7);
        assert_eq!(
            mobile_unit(Some((7, false)), 7).unwrap_err(),
            Refusal::UnitInactive(7)
        );
        assert!(code(mobile_unit::<i32>(None, 7)).contains("mobile_unit_id"));
        assert!(related_incident(true, 5, Some(5)).is_err());
        assert!(related_incident(false, 5, None).is_err());
        assert!(related_incident(true, 5, Some(6)).is_ok());
        let c = |active, profile, employee_active| Candidate {
            active,
            profile,
            employee_active,
        };
        let doctor = c(true, Profile::MedicoRegulador, false);
        assert_eq!(
            taker(Some(("p", doctor)), Taker::SendTo, 9, 1).unwrap(),
            "p"
        );
        for no in [
            c(false, Profile::MedicoRegulador, true),
            c(true, Profile::Tarm, true),
        ] {
            assert_eq!(
                code(taker(Some(("p", no)), Taker::SendTo, 9, 1)),
                "body field `regulator_id`: user 9 is not an active regulating physician"
            );
        }
        assert_eq!(
            taker(
                Some(("p", c(true, Profile::Tarm, true))),
                Taker::Transfer,
                9,
                1
            )
            .unwrap(),
            "p"
        );
        for no in [c(false, Profile::Tarm, true), c(true, Profile::Tarm, false)] {
            assert_eq!(
                code(taker(Some(("p", no)), Taker::Transfer, 9, 1)),
                "body field `assigned_to_id`: user 9 is not an active employee"
            );
        }
        assert!(taker::<&str>(None, Taker::Transfer, 9, 1).is_err());
        // Never to the caller, whoever they are.
        assert_eq!(
            code(taker(Some(("p", doctor)), Taker::SendTo, 9, 9)),
            "body field `regulator_id`: user 9 is you: an incident is sent to someone else"
        );
        assert_eq!(vehicle_type(Some(("USA".into(), true)), 2).unwrap(), "USA");
        for found in [Some(("USA".into(), false)), None] {
            assert_eq!(
                code(vehicle_type(found, 2)),
                "body field `vehicle_type_id`: vehicle type 2 does not exist or is inactive"
            );
        }
    }
}
