//! The request bodies of the incident's forms, named as the reads name the fields
//! (docs/dispatch-routes.md, "Names"): the Basic data form's fields at the top (as CONTRACT's
//! `POST /incident` takes them), the Occurrence form under `occurrence` and the Patient form
//! under `patient`, with the names `GET /incident/{id}` shows there. `POST /incident` takes
//! the Basic data form plus optionally the other two; `PATCH /incident/{id}` any subset. The
//! fields are judged by `domain::form` (the one list of the editable fields).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use crate::domain::Refusal;
use crate::domain::form::{IncidentForm, IncidentPatch, RawForm};
use crate::routes::extract::Judge;

/// `Some(None)` when the field is `null` (clear it), `None` when it is absent.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The Occurrence form as written: read back as the incident's `occurrence`. `null` clears a
/// field (on PATCH).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OccurrenceBody {
    /// The `name` of an active occurrence type (`GET /shared/default-values`,
    /// `occurrence_types`); any other is 400 listing them.
    #[serde(default, rename = "type", deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub occurrence_type: Option<Option<String>>,
    /// `low`, `medium`, `high` or `critical`.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<crate::domain::incident::Priority>)]
    pub priority: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub notes: Option<Option<String>>,
}

/// The Patient form as written: read back as the incident's `patient`. `null` clears a field
/// (on PATCH).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatientBody {
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub name: Option<Option<String>>,
    /// 0 to 130.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i32>)]
    pub age: Option<Option<i32>>,
    /// `F`, `M` or `X`.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<crate::domain::incident::Sex>)]
    pub sex: Option<Option<String>>,
    /// Where the patient is taken: the `id` of an active unit of `GET /health-unit`, read
    /// back as `patient.destination {id, name, city, uf}`.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub destination_id: Option<Option<i64>>,
}

/// The Basic data form, plus optionally the Occurrence and Patient forms.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIncident {
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub complaint: String,
    #[serde(default)]
    pub city: String,
    /// Another incident this call is about (`GET /incident/mask`'s `id`).
    pub related_incident_id: Option<i64>,
    pub occurrence: Option<OccurrenceBody>,
    pub patient: Option<PatientBody>,
    /// When the phone was answered (RFC 3339): not in the future, at most 24 hours
    /// ago. Default: the moment the incident is created. The start of the response
    /// times (docs/dispatch-routes.md, "Response times").
    #[schema(value_type = Option<String>, format = DateTime)]
    pub call_received_at: Option<DateTime<Utc>>,
}

/// Any subset of the editable fields; `null` clears an optional one.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchIncident {
    pub caller_name: Option<String>,
    pub caller_phone: Option<String>,
    pub address: Option<String>,
    pub complaint: Option<String>,
    pub city: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub related_incident_id: Option<Option<i64>>,
    pub occurrence: Option<OccurrenceBody>,
    pub patient: Option<PatientBody>,
}

/// For each `sent => field`: a field sent is set on the form `raw` and named in `present`
/// (by the stored field's name).
macro_rules! take {
    ($present:expr, $raw:expr; $($sent:expr => $field:ident),+ $(,)?) => {$(
        if let Some(v) = $sent {
            $present.push(stringify!($field));
            $raw.$field = v;
        }
    )+};
}

/// Sets on `raw` each field of the Occurrence and Patient forms that was sent, naming it in
/// `present`.
fn split_forms(
    occurrence: Option<OccurrenceBody>,
    patient: Option<PatientBody>,
    present: &mut Vec<&'static str>,
    raw: &mut RawForm,
) {
    let o = occurrence.unwrap_or_default();
    let p = patient.unwrap_or_default();
    take!(present, raw;
        o.occurrence_type => occurrence_type,
        o.priority => priority,
        o.notes => occurrence_notes,
        p.name => patient_name,
        p.age => patient_age,
        p.sex => patient_sex,
        p.destination_id => destination_health_unit_id,
    );
}

impl PatchIncident {
    /// The fields sent (by their stored names), and a form holding them (the others empty).
    fn split(self) -> (Vec<&'static str>, RawForm) {
        let mut present = Vec::new();
        let mut raw = RawForm::default();
        take!(present, raw;
            self.caller_name => caller_name,
            self.caller_phone => caller_phone,
            self.address => address,
            self.complaint => complaint,
            self.city => city,
            self.related_incident_id => related_incident_id,
        );
        split_forms(self.occurrence, self.patient, &mut present, &mut raw);
        (present, raw)
    }
}

impl CreateIncident {
    /// The form's fields, and when the call was received.
    fn split(self) -> (RawForm, Option<DateTime<Utc>>) {
        let mut raw = RawForm {
            caller_name: self.caller_name,
            caller_phone: self.caller_phone,
            address: self.address,
            complaint: self.complaint,
            city: self.city,
            related_incident_id: self.related_incident_id,
            ..RawForm::default()
        };
        split_forms(self.occurrence, self.patient, &mut Vec::new(), &mut raw);
        (raw, self.call_received_at)
    }
}

/// `POST /incident`'s body, judged: the form, and when the call was received (judged
/// against the write's instant by the store, `domain::times::call_received_at`).
pub struct NewIncident {
    pub form: IncidentForm,
    pub call_received_at: Option<DateTime<Utc>>,
}

impl Judge for CreateIncident {
    type Judged = NewIncident;

    fn judge(self) -> Result<NewIncident, Refusal> {
        let (raw, call_received_at) = self.split();
        Ok(NewIncident {
            form: raw.check(|_| true)?,
            call_received_at,
        })
    }
}

impl Judge for PatchIncident {
    type Judged = IncidentPatch;

    /// Judges the fields sent, on a scratch copy (the stored values are not judged).
    fn judge(self) -> Result<IncidentPatch, Refusal> {
        let (present, raw) = self.split();
        if present.is_empty() {
            return Err(Refusal::NothingToChange);
        }
        let values = raw.check(|f| present.contains(&f))?;
        Ok(IncidentPatch { present, values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_are_written_under_the_names_they_are_read_by() {
        let body: PatchIncident = serde_json::from_value(serde_json::json!({
            "complaint": "dor",
            "occurrence": {"type": "Trauma", "notes": null},
            "patient": {"age": 40, "destination_id": 7}
        }))
        .unwrap();
        let (present, raw) = body.split();
        assert_eq!(
            present,
            [
                "complaint",
                "occurrence_type",
                "occurrence_notes",
                "patient_age",
                "destination_health_unit_id"
            ]
        );
        assert_eq!(raw.occurrence_type.as_deref(), Some("Trauma"));
        assert_eq!(raw.occurrence_notes, None);
        assert_eq!(raw.destination_health_unit_id, Some(7));
        let unknown = serde_json::from_value::<PatchIncident>(
            serde_json::json!({"occurrence_type": "Trauma"}),
        );
        assert!(unknown.is_err(), "the flat name is no field of the body");
    }
}
