//! The editable fields of the Basic data, Occurrence and Patient forms: what `POST /incident`
//! creates and `PATCH /incident/{id}` edits. [`incident_fields!`] lists them once, each with
//! its kind, its real-time group and its rule; the stored form, the form as sent and its
//! checks here, and the rows the store reads and writes are built from that list. The request
//! bodies (`routes::incident::form`) name the fields as the reads do ([`wire_name`]). Adding a
//! field is one line there, its name in the bodies, and a migration.

use serde::Serialize;
use serde_json::{Value, json};

use super::history::ChangeGroup;
use super::phone::Phone;
use super::refusal::{FieldFault, Refusal};

/// Calls `$then!` with every editable field, in the Basic data form's order:
/// `name: stored type, body type, kind, group, [rule]` (docs go to `POST /incident`'s body).
///
/// - kind: how a body treats the field: `required` (must be sent on create), `default` (may
///   be left out on create, empty then) or `optional` (nullable; `null` clears it on PATCH).
/// - group: the [`ChangeGroup`] a change of the field moves (the screen's form).
/// - rule: what a sent value must be: `[text(max)]` (free text of at most `max` characters,
///   not blank when required), `[phone]` ([`Phone`]), `[one_of]` (a word of the stored text
///   enum), `[range(low, high)]` (a number in `low..=high`) or `[any]` (checked by the store:
///   a reference).
macro_rules! incident_fields {
    ($then:ident) => {
        $then! {
            caller_name: String, String, required, BasicData, [text($crate::domain::form::NAME_MAX)];
            caller_phone: String, String, required, BasicData, [phone];
            address: String, String, required, BasicData, [text(300)];
            complaint: String, String, required, BasicData, [text($crate::domain::form::NOTES_MAX)];
            city: String, String, default, BasicData, [text(100)];
            related_incident_id: i64, i64, optional, BasicData, [any];
            /// The `name` of an active occurrence type (`GET /shared/default-values`,
            /// `occurrence_types`); any other is 400 listing them (checked by the store).
            occurrence_type: String, String, optional, Occurrence, [text(100)];
            /// `low`, `medium`, `high` or `critical`.
            priority: $crate::domain::incident::Priority, String, optional, Occurrence, [one_of];
            occurrence_notes: String, String, optional, Occurrence, [text($crate::domain::form::NOTES_MAX)];
            patient_name: String, String, optional, Patient, [text($crate::domain::form::NAME_MAX)];
            patient_age: i32, i32, optional, Patient, [range(0, 130)];
            /// `F`, `M` or `X`.
            patient_sex: $crate::domain::incident::Sex, String, optional, Patient, [one_of];
            /// The patient's destination: the `id` of an active unit of `GET /health-unit`.
            destination_health_unit_id: i64, i64, optional, Patient, [any];
        }
    };
}

/// The type of a field of each kind: `Option<T>` when optional.
macro_rules! of_kind {
    (optional, $t:ty) => { Option<$t> };
    ($kind:ident, $t:ty) => { $t };
}

/// Judges one sent value by its kind and rule, recording faults on `$check`; answers the
/// stored value (meaningless when a fault was recorded: the whole form is refused then).
macro_rules! judge {
    ($check:ident, $f:expr, $v:expr, required, $stored:ty, text($max:expr)) => {{
        $check.text($f, &$v, true, $max);
        $v
    }};
    ($check:ident, $f:expr, $v:expr, default, $stored:ty, text($max:expr)) => {{
        $check.text($f, &$v, false, $max);
        $v
    }};
    ($check:ident, $f:expr, $v:expr, optional, $stored:ty, text($max:expr)) => {{
        $check.opt_text($f, $v.as_deref(), $max);
        $v
    }};
    ($check:ident, $f:expr, $v:expr, required, $stored:ty, phone) => {{
        if let Err(e) = Phone::parse(&$v) {
            $check.fail($f, e.to_string());
        }
        $v
    }};
    ($check:ident, $f:expr, $v:expr, optional, $stored:ty, one_of) => {
        $check.one_of($f, $v.as_deref(), &<$stored>::ALL)
    };
    ($check:ident, $f:expr, $v:expr, optional, $stored:ty, range($low:literal, $high:literal)) => {{
        if $v.is_some_and(|n| !($low..=$high).contains(&n)) {
            $check.fail($f, concat!("must be between ", $low, " and ", $high));
        }
        $v
    }};
    ($check:ident, $f:expr, $v:expr, $kind:ident, $stored:ty, any) => {{
        let _ = $check;
        $v
    }};
}

/// A PATCH's judged fields: `values` holds those named in `present` (the rest is empty).
#[derive(Debug, Clone)]
pub struct IncidentPatch {
    pub present: Vec<&'static str>,
    pub values: IncidentForm,
}

macro_rules! form {
    ($($(#[$m:meta])* $name:ident: $stored:ty, $body:ty, $kind:ident, $group:ident, [$($rule:tt)*];)+) => {
        /// The incident's editable fields, as stored.
        #[derive(Debug, Clone, Default, PartialEq, Serialize)]
        #[derive(diesel::Queryable, diesel::Selectable, diesel::Insertable, diesel::AsChangeset)]
        #[diesel(
            table_name = crate::schema::dispatch::incidents,
            check_for_backend(diesel::pg::Pg),
            treat_none_as_null = true
        )]
        pub struct IncidentForm {
            $(pub $name: of_kind!($kind, $stored),)+
        }

        /// Every editable field's name and the group its change moves, in the form's order.
        pub const FIELDS: [(&str, ChangeGroup); [$(stringify!($name)),+].len()] =
            [$((stringify!($name), ChangeGroup::$group)),+];

        impl IncidentForm {
            /// Each field's name, group and value (as the history records it), in the
            /// form's order.
            pub fn values(&self) -> Vec<(&'static str, ChangeGroup, Value)> {
                vec![$((stringify!($name), ChangeGroup::$group, json!(self.$name))),+]
            }
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

        /// The form's fields as a client sends them, before they are judged.
        #[derive(Debug, Clone, Default)]
        pub struct RawForm {
            $(pub $name: of_kind!($kind, $body),)+
        }

        impl RawForm {
            /// Judges the fields `present` names (all on create; those sent on PATCH) and
            /// answers the typed form, or every fault at once, in the form's order. A field
            /// not sent is empty on a PATCH's scratch copy and is not judged.
            pub fn check(self, present: impl Fn(&str) -> bool) -> Result<IncidentForm, Refusal> {
                let mut check = Check::default();
                let mut unsent = Check::default();
                let form = IncidentForm {
                    $($name: {
                        let on = if present(stringify!($name)) { &mut check } else { &mut unsent };
                        judge!(on, wire_name(stringify!($name)), self.$name, $kind, $stored, $($rule)*)
                    },)+
                };
                check.done()?;
                Ok(form)
            }
        }
    };
}
incident_fields!(form);

/// A field's name on the wire (docs/dispatch-routes.md, "Names"): the Basic data form's
/// fields at the top of a write (as CONTRACT's `POST /incident` takes them), the Occurrence
/// and Patient forms' under `occurrence` and `patient`, with the names the reads show there
/// (`destination_id`: the `id` of the `destination` the read shows). A fault names this.
pub fn wire_name(field: &'static str) -> &'static str {
    match field {
        "occurrence_type" => "occurrence.type",
        "priority" => "occurrence.priority",
        "occurrence_notes" => "occurrence.notes",
        "patient_name" => "patient.name",
        "patient_age" => "patient.age",
        "patient_sex" => "patient.sex",
        "destination_health_unit_id" => "patient.destination_id",
        other => other,
    }
}

/// A field's name in a history entry's `changes`: its wire name, a reference without its
/// `_id` (the entry shows it `{id, name}`, as the read does).
pub fn history_name(field: &'static str) -> &'static str {
    match field {
        "destination_health_unit_id" => "patient.destination",
        other => wire_name(other),
    }
}

pub const NAME_MAX: usize = 200;
pub const NOTES_MAX: usize = 4000;

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
    pub fn one_of<T: Copy + std::fmt::Display>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_field_moves_its_forms_group() {
        use ChangeGroup::*;
        let group = |name: &str| FIELDS.iter().find(|(n, _)| *n == name).map(|(_, g)| *g);
        for f in [
            "caller_name",
            "caller_phone",
            "address",
            "complaint",
            "city",
        ] {
            assert_eq!(group(f), Some(BasicData), "{f}");
        }
        assert_eq!(group("related_incident_id"), Some(BasicData));
        for f in ["occurrence_type", "priority", "occurrence_notes"] {
            assert_eq!(group(f), Some(Occurrence), "{f}");
        }
        for f in [
            "patient_name",
            "patient_age",
            "patient_sex",
            "destination_health_unit_id",
        ] {
            assert_eq!(group(f), Some(Patient), "{f}");
        }
        let names: Vec<&str> = IncidentForm::default()
            .values()
            .iter()
            .map(|(n, _, _)| *n)
            .collect();
        assert_eq!(names, FIELDS.map(|(n, _)| n));
    }

    #[test]
    fn every_fault_is_named_in_the_forms_order() {
        let raw = RawForm {
            caller_name: " ".into(),
            caller_phone: "12".into(),
            address: "Av. Brasil 1".into(),
            complaint: String::new(),
            city: "x".repeat(101),
            priority: Some("urgent".into()),
            patient_age: Some(131),
            patient_sex: Some("Y".into()),
            ..RawForm::default()
        };
        let Err(Refusal::InvalidFields(faults)) = raw.check(|_| true) else {
            panic!("refused")
        };
        let fields: Vec<&str> = faults.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "caller_name",
                "caller_phone",
                "complaint",
                "city",
                "occurrence.priority",
                "patient.age",
                "patient.sex"
            ]
        );
        assert_eq!(faults[5].message, "must be between 0 and 130");
    }

    #[test]
    fn a_patch_judges_only_what_it_sends() {
        let raw = RawForm {
            patient_age: Some(40),
            ..RawForm::default()
        };
        let form = raw.check(|f| f == "patient_age").unwrap();
        assert_eq!(form.patient_age, Some(40));
        assert_eq!(form.caller_name, "");
    }
}
