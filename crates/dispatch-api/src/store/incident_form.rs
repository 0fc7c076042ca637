//! The incident's editable fields as columns of `dispatch.incidents`. The domain's
//! [`IncidentForm`] is a plain struct (docs/architecture.md: the domain knows nothing of the
//! database); here it is read (`Selectable`, `Queryable`: it can be embedded in a row),
//! inserted (`Insertable`) and updated (`AsChangeset`, `None` writing null) through
//! [`Columns`], its mirror, so every query names it as it would a diesel row.

use diesel::deserialize;
use diesel::internal::derives::insertable::UndecoratedInsertRecord;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::AsChangeset;

use crate::domain::form::IncidentForm;
use crate::domain::incident::{Priority, Sex};
use crate::schema::dispatch::incidents;

/// The columns of the editable fields, one per field of [`IncidentForm`].
#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = incidents,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_null = true
)]
pub struct Columns {
    caller_name: String,
    caller_phone: String,
    address: String,
    complaint: String,
    city: String,
    related_incident_id: Option<i64>,
    occurrence_type: Option<String>,
    priority: Option<Priority>,
    occurrence_notes: Option<String>,
    patient_name: Option<String>,
    patient_age: Option<i32>,
    patient_sex: Option<Sex>,
    destination_health_unit_id: Option<i64>,
}

impl From<Columns> for IncidentForm {
    fn from(c: Columns) -> Self {
        IncidentForm {
            caller_name: c.caller_name,
            caller_phone: c.caller_phone,
            address: c.address,
            complaint: c.complaint,
            city: c.city,
            related_incident_id: c.related_incident_id,
            occurrence_type: c.occurrence_type,
            priority: c.priority,
            occurrence_notes: c.occurrence_notes,
            patient_name: c.patient_name,
            patient_age: c.patient_age,
            patient_sex: c.patient_sex,
            destination_health_unit_id: c.destination_health_unit_id,
        }
    }
}

impl From<&IncidentForm> for Columns {
    fn from(f: &IncidentForm) -> Self {
        let f = f.clone();
        Columns {
            caller_name: f.caller_name,
            caller_phone: f.caller_phone,
            address: f.address,
            complaint: f.complaint,
            city: f.city,
            related_incident_id: f.related_incident_id,
            occurrence_type: f.occurrence_type,
            priority: f.priority,
            occurrence_notes: f.occurrence_notes,
            patient_name: f.patient_name,
            patient_age: f.patient_age,
            patient_sex: f.patient_sex,
            destination_health_unit_id: f.destination_health_unit_id,
        }
    }
}

impl Selectable<Pg> for IncidentForm {
    type SelectExpression = <Columns as Selectable<Pg>>::SelectExpression;

    fn construct_selection() -> Self::SelectExpression {
        <Columns as Selectable<Pg>>::construct_selection()
    }
}

impl<ST> Queryable<ST, Pg> for IncidentForm
where
    Columns: Queryable<ST, Pg>,
{
    type Row = <Columns as Queryable<ST, Pg>>::Row;

    fn build(row: Self::Row) -> deserialize::Result<Self> {
        Columns::build(row).map(IncidentForm::from)
    }
}

impl Insertable<incidents::table> for &IncidentForm {
    type Values = <Columns as Insertable<incidents::table>>::Values;

    fn values(self) -> Self::Values {
        Columns::from(self).values()
    }
}

impl UndecoratedInsertRecord<incidents::table> for IncidentForm {}

impl AsChangeset for &IncidentForm {
    type Target = incidents::table;
    type Changeset = <Columns as AsChangeset>::Changeset;

    fn as_changeset(self) -> Self::Changeset {
        Columns::from(self).as_changeset()
    }
}
