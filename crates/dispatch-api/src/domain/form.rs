//! The thirteen fields of the Basic data, Occurrence and Patient forms: what `POST /incident`
//! creates and `PATCH /incident/{id}` edits. [`incident_fields!`] lists them once; the
//! form here and the request bodies (`routes::incident::form`) are built from that list.

use serde::Serialize;

use super::incident::{Priority, Sex};
use super::phone::Phone;
use super::refusal::{FieldFault, Refusal};

/// Calls `$then!` with every editable field, in the Basic data form's order:
/// `name: stored type, body type, kind` (docs go to `POST /incident`'s body) where the kind says how a body treats the field:
/// `required` (must be sent on create), `default` (may be left out on create, empty then)
/// or `optional` (nullable; `null` clears it on PATCH).
macro_rules! incident_fields {
    ($then:ident) => {
        $then! {
            caller_name: String, String, required;
            caller_phone: String, String, required;
            address: String, String, required;
            complaint: String, String, required;
            city: String, String, default;
            related_incident_id: i64, i64, optional;
            occurrence_type: String, String, optional;
            /// `low`, `medium`, `high` or `critical`.
            priority: $crate::domain::incident::Priority, String, optional;
            occurrence_notes: String, String, optional;
            patient_name: String, String, optional;
            patient_age: i32, i32, optional;
            /// `F`, `M` or `X`.
            patient_sex: $crate::domain::incident::Sex, String, optional;
            /// The patient's destination: the `id` of an active unit of `GET /health-unit`.
            destination_health_unit_id: i64, i64, optional;
        }
    };
}
pub(crate) use incident_fields;

/// The stored type of a field of each kind.
macro_rules! stored {
    (optional, $t:ty) => { Option<$t> };
    ($kind:ident, $t:ty) => { $t };
}

/// A PATCH's judged fields: `values` holds those named in `present` (the rest is empty).
#[derive(Debug, Clone)]
pub struct IncidentPatch {
    pub present: Vec<&'static str>,
    pub values: IncidentForm,
}

macro_rules! form_struct {
    ($($(#[$m:meta])* $name:ident: $stored:ty, $body:ty, $kind:ident;)+) => {
        /// The incident's editable fields, as stored.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[derive(diesel::Queryable, diesel::Selectable, diesel::Insertable, diesel::AsChangeset)]
        #[diesel(
            table_name = crate::schema::dispatch::incidents,
            check_for_backend(diesel::pg::Pg),
            treat_none_as_null = true
        )]
        pub struct IncidentForm {
            $(pub $name: stored!($kind, $stored),)+
        }

        impl IncidentPatch {
            /// Sets the fields sent on `form`, leaving the others as they are.
            pub fn apply(&self, form: &mut IncidentForm) {
                $(
                    if self.present.contains(&stringify!($name)) {
                        form.$name = self.values.$name.clone();
                    }
                )+
            }
        }
    };
}
incident_fields!(form_struct);

/// The `changed` group of the real-time event (and the screen's form) a field belongs to.
pub fn group_of(field: &str) -> &'static str {
    match field {
        "occurrence_type" | "priority" | "occurrence_notes" => "occurrence",
        "patient_name" | "patient_age" | "patient_sex" | "destination_health_unit_id" => "patient",
        _ => "basic_data",
    }
}

pub const NAME_MAX: usize = 200;
pub const NOTES_MAX: usize = 4000;

/// The form's fields as a client sends them, before they are judged.
#[derive(Debug, Clone, Default)]
pub struct RawForm {
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub city: String,
    pub complaint: String,
    pub related_incident_id: Option<i64>,
    pub occurrence_type: Option<String>,
    pub priority: Option<String>,
    pub occurrence_notes: Option<String>,
    pub patient_name: Option<String>,
    pub patient_age: Option<i32>,
    pub patient_sex: Option<String>,
    pub destination_health_unit_id: Option<i64>,
}

impl RawForm {
    /// Judges the fields `present` names (all on create; those sent on PATCH) and answers
    /// the typed form, or every fault at once.
    pub fn check(self, present: impl Fn(&str) -> bool) -> Result<IncidentForm, Refusal> {
        let mut check = Check::default();
        let text = |check: &mut Check, f: &str, v: &str, req: bool, max: usize| {
            if present(f) {
                check.text(f, v, req, max);
            }
        };
        text(&mut check, "caller_name", &self.caller_name, true, NAME_MAX);
        text(&mut check, "address", &self.address, true, 300);
        text(&mut check, "city", &self.city, false, 100);
        text(&mut check, "complaint", &self.complaint, true, NOTES_MAX);
        if present("caller_phone")
            && let Err(e) = Phone::parse(&self.caller_phone)
        {
            check.fail("caller_phone", e.to_string());
        }
        let opt = [
            ("occurrence_type", self.occurrence_type.as_deref(), 100),
            (
                "occurrence_notes",
                self.occurrence_notes.as_deref(),
                NOTES_MAX,
            ),
            ("patient_name", self.patient_name.as_deref(), NAME_MAX),
        ];
        for (field, value, max) in opt {
            if present(field) {
                check.opt_text(field, value, max);
            }
        }
        // Fields not sent are empty on a PATCH's scratch copy, so these judge only those sent.
        let priority = check.one_of("priority", self.priority.as_deref(), &Priority::ALL);
        let sex = check.one_of("patient_sex", self.patient_sex.as_deref(), &Sex::ALL);
        if present("patient_age") && self.patient_age.is_some_and(|a| !(0..=130).contains(&a)) {
            check.fail("patient_age", "must be between 0 and 130");
        }
        check.done()?;
        Ok(IncidentForm {
            caller_name: self.caller_name,
            caller_phone: self.caller_phone,
            address: self.address,
            city: self.city,
            complaint: self.complaint,
            related_incident_id: self.related_incident_id,
            occurrence_type: self.occurrence_type,
            priority,
            occurrence_notes: self.occurrence_notes,
            patient_name: self.patient_name,
            patient_age: self.patient_age,
            patient_sex: sex,
            destination_health_unit_id: self.destination_health_unit_id,
        })
    }
}

/// Collects every bad field, so the client fixes them all at once.
#[derive(Default)]
pub struct Check(Vec<FieldFault>);

impl Check {
    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(FieldFault {
            field: field.to_owned(),
            message: message.into(),
        });
    }

    /// Free text: `required` (not blank), at most `max` characters, no control characters
    /// other than line breaks and tabs.
    pub fn text(&mut self, field: &str, value: &str, required: bool, max: usize) {
        let n = value.trim().chars().count();
        if required && n == 0 {
            self.fail(field, "must not be empty");
        } else if value.chars().count() > max {
            self.fail(field, format!("must be at most {max} characters"));
        } else if value
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        {
            // PostgreSQL's text cannot hold a NUL at all; the other control characters
            // would reach the screens as garbage. Line breaks and tabs are free text.
            self.fail(
                field,
                "must not contain control characters other than line breaks and tabs",
            );
        }
    }

    pub fn opt_text(&mut self, field: &str, value: Option<&str>, max: usize) {
        if let Some(v) = value {
            self.text(field, v, false, max);
        }
    }

    /// The value of a text enum, or a fault listing every spelling.
    fn one_of<T: Copy + std::fmt::Display>(
        &mut self,
        field: &str,
        value: Option<&str>,
        all: &[T],
    ) -> Option<T> {
        let v = value?;
        let found = all.iter().copied().find(|t| t.to_string() == v);
        if found.is_none() {
            let names: Vec<String> = all.iter().map(ToString::to_string).collect();
            self.fail(field, format!("must be one of {}", names.join(", ")));
        }
        found
    }

    pub fn done(self) -> Result<(), Refusal> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Refusal::InvalidFields(self.0))
        }
    }
}
