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
use crate::domain::form::{Field, IncidentForm, IncidentPatch, RawForm};
use crate::domain::refusal::FieldFault;
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
    /// Required, unless `call_id` names a call whose number the switch sent: then that
    /// number (a different one is 400).
    pub caller_phone: Option<String>,
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
    /// The call this incident is about: the SIP Call-ID the switch announced
    /// (docs/dispatch-telephony.md). Its ring time is `call_received_at` and its number the
    /// caller's phone; a different value sent for either is 400 naming it.
    pub call_id: Option<String>,
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

/// The fields a body sent, in the order they are taken, and a form holding them.
#[derive(Default)]
struct Sent {
    present: Vec<Field>,
    raw: RawForm,
}

impl Sent {
    /// A field sent (`Some`) is set on the form (`slot`) and named in `present`.
    fn take<T>(
        &mut self,
        field: Field,
        sent: Option<T>,
        slot: impl FnOnce(&mut RawForm) -> &mut T,
    ) {
        if let Some(v) = sent {
            self.present.push(field);
            *slot(&mut self.raw) = v;
        }
    }

    /// Each field of the Occurrence and Patient forms that was sent.
    fn forms(&mut self, occurrence: Option<OccurrenceBody>, patient: Option<PatientBody>) {
        let o = occurrence.unwrap_or_default();
        let p = patient.unwrap_or_default();
        self.take(Field::OccurrenceType, o.occurrence_type, |r| {
            &mut r.occurrence_type
        });
        self.take(Field::Priority, o.priority, |r| &mut r.priority);
        self.take(Field::OccurrenceNotes, o.notes, |r| &mut r.occurrence_notes);
        self.take(Field::PatientName, p.name, |r| &mut r.patient_name);
        self.take(Field::PatientAge, p.age, |r| &mut r.patient_age);
        self.take(Field::PatientSex, p.sex, |r| &mut r.patient_sex);
        self.take(Field::DestinationHealthUnitId, p.destination_id, |r| {
            &mut r.destination_health_unit_id
        });
    }
}

impl PatchIncident {
    /// The fields sent, and a form holding them (the others empty).
    fn split(self) -> (Vec<Field>, RawForm) {
        let mut sent = Sent::default();
        sent.take(Field::CallerName, self.caller_name, |r| &mut r.caller_name);
        sent.take(Field::CallerPhone, self.caller_phone, |r| {
            &mut r.caller_phone
        });
        sent.take(Field::Address, self.address, |r| &mut r.address);
        sent.take(Field::Complaint, self.complaint, |r| &mut r.complaint);
        sent.take(Field::City, self.city, |r| &mut r.city);
        sent.take(Field::RelatedIncidentId, self.related_incident_id, |r| {
            &mut r.related_incident_id
        });
        sent.forms(self.occurrence, self.patient);
        (sent.present, sent.raw)
    }
}

impl CreateIncident {
    /// The form's fields, and when the call was received.
    fn split(self) -> (RawForm, Option<DateTime<Utc>>) {
        let mut sent = Sent {
            present: Vec::new(),
            raw: RawForm {
                caller_name: self.caller_name,
                caller_phone: self.caller_phone.unwrap_or_default(),
                address: self.address,
                complaint: self.complaint,
                city: self.city,
                related_incident_id: self.related_incident_id,
                ..RawForm::default()
            },
        };
        sent.forms(self.occurrence, self.patient);
        (sent.raw, self.call_received_at)
    }
}

/// `POST /incident`'s body, judged: the form, and when the call was received (judged
/// against the write's instant by the store, `domain::times::call_received_at`).
pub struct NewIncident {
    pub form: IncidentForm,
    pub call_received_at: Option<DateTime<Utc>>,
    /// The call it is about; the form's `caller_phone` is empty when the client left it to
    /// the call.
    pub call_id: Option<String>,
}

impl Judge for CreateIncident {
    type Judged = NewIncident;

    fn judge(mut self) -> Result<NewIncident, Refusal> {
        let call_id = self.call_id.take();
        // Without a call, the caller's phone is the client's to give.
        let phone_from_call = self.caller_phone.is_none() && call_id.is_some();
        if self.caller_phone.is_none() && !phone_from_call {
            return Err(Refusal::InvalidFields(vec![FieldFault {
                field: "caller_phone".into(),
                message: common::extract::REQUIRED.into(),
            }]));
        }
        let (raw, call_received_at) = self.split();
        Ok(NewIncident {
            form: raw.check(|f| !(phone_from_call && f == Field::CallerPhone))?,
            call_received_at,
            call_id,
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
            present.iter().map(|f| f.name()).collect::<Vec<_>>(),
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
