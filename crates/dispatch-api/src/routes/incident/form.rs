//! The request bodies of the incident's forms, built from the one list of its editable
//! fields (`domain::form::incident_fields!`): `POST /incident` takes the Basic data form
//! plus optionally the Occurrence and Patient fields; `PATCH /incident/{id}` any subset.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use crate::domain::Refusal;
use crate::domain::form::{IncidentForm, IncidentPatch, RawForm, incident_fields};
use crate::routes::extract::Judge;

/// `Some(None)` when the field is `null` (clear it), `None` when it is absent.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `POST /incident`'s body, one field at a time by kind (a tt-muncher: a struct's fields
/// cannot be macro calls).
macro_rules! create_body {
    ([$($out:tt)*]) => {
        /// The Basic data form, plus optionally the Occurrence and Patient fields.
        #[derive(Debug, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct CreateIncident {
            $($out)*
            /// When the phone was answered (RFC 3339): not in the future, at most 24 hours
            /// ago. Default: the moment the incident is created. The start of the response
            /// times (docs/dispatch-routes.md, "Response times").
            #[schema(value_type = Option<String>, format = DateTime)]
            pub call_received_at: Option<DateTime<Utc>>,
        }
    };
    ([$($out:tt)*] $(#[$m:meta])* $name:ident: $doc:ty, $body:ty, required, $g:ident, [$($r:tt)*]; $($rest:tt)*) => {
        create_body!([$($out)* $(#[$m])* pub $name: $body,] $($rest)*);
    };
    ([$($out:tt)*] $(#[$m:meta])* $name:ident: $doc:ty, $body:ty, default, $g:ident, [$($r:tt)*]; $($rest:tt)*) => {
        create_body!([$($out)* $(#[$m])* #[serde(default)] pub $name: $body,] $($rest)*);
    };
    ([$($out:tt)*] $(#[$m:meta])* $name:ident: $doc:ty, $body:ty, optional, $g:ident, [$($r:tt)*]; $($rest:tt)*) => {
        create_body!([$($out)* $(#[$m])* #[schema(value_type = Option<$doc>)] pub $name: Option<$body>,] $($rest)*);
    };
}

/// `PATCH /incident/{id}`'s body: every field optional, an optional one may be `null`.
macro_rules! patch_body {
    ([$($out:tt)*]) => {
        /// Any subset of the editable fields; `null` clears an optional one.
        #[derive(Debug, Default, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct PatchIncident { $($out)* }
    };
    ([$($out:tt)*] $(#[$m:meta])* $name:ident: $doc:ty, $body:ty, optional, $g:ident, [$($r:tt)*]; $($rest:tt)*) => {
        patch_body!([$($out)*
            #[serde(default, deserialize_with = "nullable")]
            #[schema(value_type = Option<$doc>)]
            pub $name: Option<Option<$body>>,
        ] $($rest)*);
    };
    ([$($out:tt)*] $(#[$m:meta])* $name:ident: $doc:ty, $body:ty, $kind:ident, $g:ident, [$($r:tt)*]; $($rest:tt)*) => {
        patch_body!([$($out)* pub $name: Option<$body>,] $($rest)*);
    };
}

macro_rules! bodies {
    ($($(#[$m:meta])* $name:ident: $stored:ty, $body:ty, $kind:ident, $g:ident, [$($r:tt)*];)+) => {
        create_body!([] $($(#[$m])* $name: $stored, $body, $kind, $g, [$($r)*];)+);
        patch_body!([] $($(#[$m])* $name: $stored, $body, $kind, $g, [$($r)*];)+);

        impl PatchIncident {
            /// The fields sent, and a form holding them (the others empty).
            fn split(self) -> (Vec<&'static str>, RawForm) {
                let mut present = Vec::new();
                let mut raw = RawForm::default();
                $(
                    if let Some(v) = self.$name {
                        present.push(stringify!($name));
                        raw.$name = v;
                    }
                )+
                (present, raw)
            }
        }

        impl CreateIncident {
            /// The form's fields, and when the call was received.
            fn split(self) -> (RawForm, Option<DateTime<Utc>>) {
                (RawForm { $($name: self.$name,)+ }, self.call_received_at)
            }
        }
    };
}
incident_fields!(bodies);

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
