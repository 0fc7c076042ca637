//! The editable fields of the Basic data, Occurrence and Patient forms: what `POST /incident`
//! creates and `PATCH /incident/{id}` edits. [`Field`] lists them once, in the Basic data
//! form's order, each with its real-time group, its names (stored, on the wire, in the
//! history) and its rule ([`Field::judge`]); the stored form ([`IncidentForm`]), the form as
//! sent ([`RawForm`]) and a PATCH ([`IncidentPatch`]) are plain structs whose every use goes
//! through an exhaustive `match` on [`Field`], so a new field that one of them forgets does
//! not compile. The request bodies (`routes::incident::form`) name the fields as the reads do
//! ([`Field::wire_name`]); the store maps the stored form to its columns
//! (`store::incident_form`). Adding a field is a variant here with its arms, a field of the
//! two structs, its name in the bodies, its column in the store's mapping, and a migration.

use serde::Serialize;
use serde_json::{Value, json};

use super::history::ChangeGroup;
use super::incident::{Priority, Sex};
use super::phone::Phone;
use super::refusal::{FieldFault, Refusal};

common::text_enum! {
    /// One editable field of the incident's forms, by its stored name (its column), in the
    /// Basic data form's order.
    pub enum Field {
        CallerName = "caller_name",
        CallerPhone = "caller_phone",
        Address = "address",
        Complaint = "complaint",
        City = "city",
        RelatedIncidentId = "related_incident_id",
        /// The `name` of an active occurrence type (`GET /shared/default-values`,
        /// `occurrence_types`); any other is 400 listing them (checked by the store).
        OccurrenceType = "occurrence_type",
        /// `low`, `medium`, `high` or `critical`.
        Priority = "priority",
        OccurrenceNotes = "occurrence_notes",
        PatientName = "patient_name",
        PatientAge = "patient_age",
        /// `F`, `M` or `X`.
        PatientSex = "patient_sex",
        /// The patient's destination: the `id` of an active unit of `GET /health-unit`.
        DestinationHealthUnitId = "destination_health_unit_id",
    }
}

/// What a sent value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Free text of at most this many characters; not blank when the field is required.
    Text(usize),
    /// A [`Phone`].
    Phone,
    /// A word of the stored text enum.
    OneOf,
    /// A number in `low..=high`.
    Range(i32, i32),
    /// Checked by the store: a reference.
    Reference,
}

/// How a body treats a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Must be sent on create.
    Required,
    /// May be left out on create (empty then).
    Default,
    /// Nullable: `null` clears it on PATCH.
    Optional,
}

impl Field {
    /// The field's stored name (its column).
    pub const fn name(self) -> &'static str {
        self.as_str()
    }

    /// The group a change of the field moves (the screen's form).
    pub const fn group(self) -> ChangeGroup {
        use Field::*;
        match self {
            CallerName | CallerPhone | Address | Complaint | City | RelatedIncidentId => {
                ChangeGroup::BasicData
            }
            OccurrenceType | Priority | OccurrenceNotes => ChangeGroup::Occurrence,
            PatientName | PatientAge | PatientSex | DestinationHealthUnitId => ChangeGroup::Patient,
        }
    }

    /// The field's name on the wire (docs/dispatch-routes.md, "Names"): the Basic data
    /// form's fields at the top of a write (as CONTRACT's `POST /incident` takes them), the
    /// Occurrence and Patient forms' under `occurrence` and `patient`, with the names the
    /// reads show there (`destination_id`: the `id` of the `destination` the read shows). A
    /// fault names this.
    pub const fn wire_name(self) -> &'static str {
        use Field::*;
        match self {
            OccurrenceType => "occurrence.type",
            Priority => "occurrence.priority",
            OccurrenceNotes => "occurrence.notes",
            PatientName => "patient.name",
            PatientAge => "patient.age",
            PatientSex => "patient.sex",
            DestinationHealthUnitId => "patient.destination_id",
            other => other.name(),
        }
    }

    /// The field's name in a history entry's `changes`: its wire name, a reference without
    /// its `_id` (the entry shows it `{id, name}`, as the read does).
    pub const fn history_name(self) -> &'static str {
        match self {
            Field::DestinationHealthUnitId => "patient.destination",
            other => other.wire_name(),
        }
    }

    const fn kind(self) -> Kind {
        use Field::*;
        match self {
            CallerName | CallerPhone | Address | Complaint => Kind::Required,
            City => Kind::Default,
            RelatedIncidentId
            | OccurrenceType
            | Priority
            | OccurrenceNotes
            | PatientName
            | PatientAge
            | PatientSex
            | DestinationHealthUnitId => Kind::Optional,
        }
    }

    const fn rule(self) -> Rule {
        use Field::*;
        match self {
            CallerName | PatientName => Rule::Text(NAME_MAX),
            CallerPhone => Rule::Phone,
            Address => Rule::Text(300),
            Complaint | OccurrenceNotes => Rule::Text(NOTES_MAX),
            City | OccurrenceType => Rule::Text(100),
            RelatedIncidentId | DestinationHealthUnitId => Rule::Reference,
            Priority | PatientSex => Rule::OneOf,
            PatientAge => Rule::Range(0, 130),
        }
    }

    /// Judges the field's sent value on `raw` by its kind and rule, recording faults on
    /// `check`, and moves it to `form` (meaningless when a fault was recorded: the whole form
    /// is refused then).
    fn judge(self, raw: &mut RawForm, form: &mut IncidentForm, check: &mut Check) {
        use Field::*;
        let wire = self.wire_name();
        match self {
            CallerName => form.caller_name = check.sent_text(self, &mut raw.caller_name),
            CallerPhone => {
                if let Err(e) = Phone::parse(&raw.caller_phone) {
                    check.fail(wire, e.to_string());
                }
                form.caller_phone = std::mem::take(&mut raw.caller_phone);
            }
            Address => form.address = check.sent_text(self, &mut raw.address),
            Complaint => form.complaint = check.sent_text(self, &mut raw.complaint),
            City => form.city = check.sent_text(self, &mut raw.city),
            RelatedIncidentId => form.related_incident_id = raw.related_incident_id,
            OccurrenceType => {
                form.occurrence_type = check.sent_opt_text(self, &mut raw.occurrence_type)
            }
            Priority => {
                let all = super::incident::Priority::ALL;
                form.priority = check.one_of(wire, raw.priority.as_deref(), &all);
            }
            OccurrenceNotes => {
                form.occurrence_notes = check.sent_opt_text(self, &mut raw.occurrence_notes)
            }
            PatientName => form.patient_name = check.sent_opt_text(self, &mut raw.patient_name),
            PatientAge => {
                form.patient_age = raw.patient_age;
                if let Rule::Range(low, high) = self.rule()
                    && raw.patient_age.is_some_and(|n| !(low..=high).contains(&n))
                {
                    check.fail(wire, format!("must be between {low} and {high}"));
                }
            }
            PatientSex => {
                form.patient_sex = check.one_of(wire, raw.patient_sex.as_deref(), &Sex::ALL)
            }
            DestinationHealthUnitId => {
                form.destination_health_unit_id = raw.destination_health_unit_id
            }
        }
    }

    /// The field's value on `form`, as the history records it.
    fn value(self, form: &IncidentForm) -> Value {
        use Field::*;
        match self {
            CallerName => json!(form.caller_name),
            CallerPhone => json!(form.caller_phone),
            Address => json!(form.address),
            Complaint => json!(form.complaint),
            City => json!(form.city),
            RelatedIncidentId => json!(form.related_incident_id),
            OccurrenceType => json!(form.occurrence_type),
            Priority => json!(form.priority),
            OccurrenceNotes => json!(form.occurrence_notes),
            PatientName => json!(form.patient_name),
            PatientAge => json!(form.patient_age),
            PatientSex => json!(form.patient_sex),
            DestinationHealthUnitId => json!(form.destination_health_unit_id),
        }
    }

    /// Sets the field of `to` to its value on `from`.
    fn copy(self, from: &IncidentForm, to: &mut IncidentForm) {
        use Field::*;
        match self {
            CallerName => to.caller_name.clone_from(&from.caller_name),
            CallerPhone => to.caller_phone.clone_from(&from.caller_phone),
            Address => to.address.clone_from(&from.address),
            Complaint => to.complaint.clone_from(&from.complaint),
            City => to.city.clone_from(&from.city),
            RelatedIncidentId => to.related_incident_id = from.related_incident_id,
            OccurrenceType => to.occurrence_type.clone_from(&from.occurrence_type),
            Priority => to.priority = from.priority,
            OccurrenceNotes => to.occurrence_notes.clone_from(&from.occurrence_notes),
            PatientName => to.patient_name.clone_from(&from.patient_name),
            PatientAge => to.patient_age = from.patient_age,
            PatientSex => to.patient_sex = from.patient_sex,
            DestinationHealthUnitId => {
                to.destination_health_unit_id = from.destination_health_unit_id
            }
        }
    }
}

/// The incident's editable fields ([`Field`] lists them), the two words a client spells
/// (`priority`, `patient_sex`) as `P` and `S`: their text enums once judged ([`IncidentForm`]), the
/// text as sent before ([`RawForm`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fields<P, S> {
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub complaint: String,
    pub city: String,
    pub related_incident_id: Option<i64>,
    pub occurrence_type: Option<String>,
    pub priority: Option<P>,
    pub occurrence_notes: Option<String>,
    pub patient_name: Option<String>,
    pub patient_age: Option<i32>,
    pub patient_sex: Option<S>,
    pub destination_health_unit_id: Option<i64>,
}

/// Every field empty.
impl<P, S> Default for Fields<P, S> {
    fn default() -> Self {
        Fields {
            caller_name: String::new(),
            caller_phone: String::new(),
            address: String::new(),
            complaint: String::new(),
            city: String::new(),
            related_incident_id: None,
            occurrence_type: None,
            priority: None,
            occurrence_notes: None,
            patient_name: None,
            patient_age: None,
            patient_sex: None,
            destination_health_unit_id: None,
        }
    }
}

/// The incident's editable fields, as stored.
pub type IncidentForm = Fields<Priority, Sex>;

impl Fields<Priority, Sex> {
    /// Each field's name, group and value (as the history records it), in the form's order.
    pub fn values(&self) -> Vec<(&'static str, ChangeGroup, Value)> {
        Field::ALL
            .into_iter()
            .map(|f| (f.name(), f.group(), f.value(self)))
            .collect()
    }
}

/// The form's fields as a client sends them, before they are judged.
pub type RawForm = Fields<String, String>;

impl Fields<String, String> {
    /// Judges the fields `present` names (all on create; those sent on PATCH) and answers
    /// the typed form, or every fault at once, in the form's order. A field not sent is empty
    /// on a PATCH's scratch copy and is not judged.
    pub fn check(mut self, present: impl Fn(Field) -> bool) -> Result<IncidentForm, Refusal> {
        let mut check = Check::default();
        let mut unsent = Check::default();
        let mut form = IncidentForm::default();
        for field in Field::ALL {
            let on = if present(field) {
                &mut check
            } else {
                &mut unsent
            };
            field.judge(&mut self, &mut form, on);
        }
        check.done()?;
        Ok(form)
    }
}

/// A PATCH's judged fields: `values` holds those named in `present` (the rest is empty).
#[derive(Debug, Clone)]
pub struct IncidentPatch {
    pub present: Vec<Field>,
    pub values: IncidentForm,
}

impl IncidentPatch {
    /// Sets the fields sent on `form`, leaving the others as they are.
    pub fn apply(&self, form: &mut IncidentForm) {
        for field in &self.present {
            field.copy(&self.values, form);
        }
    }
}

/// A field's name on the wire, by its stored name ([`Field::wire_name`]); `field` itself for
/// a name that is no editable field.
pub fn wire_name(field: &'static str) -> &'static str {
    Field::parse(field).map_or(field, Field::wire_name)
}

/// A field's name in a history entry's `changes`, by its stored name
/// ([`Field::history_name`]); `field` itself for a name that is no editable field.
pub fn history_name(field: &'static str) -> &'static str {
    Field::parse(field).map_or(field, Field::history_name)
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

    /// `field`'s sent text, judged by its kind and rule, taken from the raw form.
    fn sent_text(&mut self, field: Field, value: &mut String) -> String {
        if let Rule::Text(max) = field.rule() {
            self.text(
                field.wire_name(),
                value,
                field.kind() == Kind::Required,
                max,
            );
        }
        std::mem::take(value)
    }

    /// `field`'s sent optional text, judged by its rule, taken from the raw form.
    fn sent_opt_text(&mut self, field: Field, value: &mut Option<String>) -> Option<String> {
        if let Rule::Text(max) = field.rule() {
            self.opt_text(field.wire_name(), value.as_deref(), max);
        }
        value.take()
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
        let group = |name: &str| Field::parse(name).map(Field::group);
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
        assert_eq!(names, Field::ALL.map(Field::name));
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
        let form = raw.check(|f| f == Field::PatientAge).unwrap();
        assert_eq!(form.patient_age, Some(40));
        assert_eq!(form.caller_name, "");
    }
}
