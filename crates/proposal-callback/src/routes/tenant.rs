//! The admin's own tenant: its name, and the address its operator is told at when an insurer
//! goes silent (docs/proposal-callback.md, "Silent insurers").

use actix_web::{HttpResponse, web};
use common::Problem;
use common::extract::Json;
use diesel_async::AsyncConnection;
use lettre::message::Mailbox;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::domain::sender::Sender;
use crate::domain::zone::{self, Tz};
use crate::error::Error;
use crate::routes::extract::TenantAdmin;
use crate::state::AppState;
use crate::store::tenants::{self, TenantRow};

/// The longest operator address kept (RFC 5321's path limit).
const MAX_ADDRESS_CHARS: usize = 254;

/// The admin's tenant.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantView {
    /// The dsTenantId.
    #[schema(example = "demo-a")]
    pub id: String,
    #[schema(example = "Imobiliária Demo A")]
    pub name: String,
    /// Where the operator's emails go when one of the tenant's insurers goes silent, and when
    /// it calls back; null: nobody is emailed (the metric and the console's banner remain).
    #[schema(example = "Operações <operacoes@demo-a.example.com>")]
    pub operator_email: Option<String>,
    /// The tenant's IANA time zone: the hours its console and emails show, and the hours of
    /// the weekday its insurers' rhythm is learned by.
    #[schema(example = "America/Sao_Paulo")]
    pub time_zone: String,
}

impl From<TenantRow> for TenantView {
    fn from(t: TenantRow) -> Self {
        Self {
            id: t.id,
            name: t.name,
            operator_email: t.operator_email,
            time_zone: t.time_zone,
        }
    }
}

fn no_tenant(id: &str) -> Error {
    Problem::not_found(format!("no tenant {id:?}")).into()
}

/// The admin's tenant: its name and operator address.
#[utoipa::path(
    get,
    path = "/admin/tenant",
    tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, body = TenantView),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: the token names a tenant this service does not have"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn get_tenant(
    admin: TenantAdmin,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    let tenant = tenants::find(&mut conn, &admin.tenant)
        .await?
        .ok_or_else(|| no_tenant(&admin.tenant))?;
    Ok(HttpResponse::Ok().json(TenantView::from(tenant)))
}

/// What an admin changes of the tenant: only the fields given.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantChange {
    /// The operator's address (`ops@example.com` or `Operações <ops@example.com>`); null
    /// removes it; absent leaves it as it is.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, example = "operacoes@demo-a.example.com")]
    pub operator_email: Option<Option<String>>,
    /// The tenant's IANA time zone, as the tz database names it (`America/Manaus`); absent
    /// leaves it as it is.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = String, required = false, example = "America/Manaus")]
    pub time_zone: Option<Option<String>>,
}

/// The zone as it is kept; 400 naming the field when the tz database does not know it.
fn time_zone(raw: Option<&str>) -> Result<Tz, Error> {
    let raw =
        raw.ok_or_else(|| Problem::invalid_payload(Some("time_zone".into()), "must not be null"))?;
    zone::parse(raw).map_err(|why| Problem::invalid_payload(Some("time_zone".into()), why).into())
}

/// A field that is present (null included) is `Some`; an absent one stays `None`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The address as it is kept: parsed as a mailbox (a name is allowed) and written back in
/// its one form; 400 naming the field otherwise.
fn operator_address(raw: &str) -> Result<String, Error> {
    let bad = |why: &str| -> Error {
        Problem::invalid_payload(Some("operator_email".into()), why.to_owned()).into()
    };
    let raw = raw.trim();
    if raw.chars().count() > MAX_ADDRESS_CHARS {
        return Err(bad("is longer than 254 characters"));
    }
    let mailbox: Mailbox = raw
        .parse()
        .map_err(|_| bad("is not an email address (ops@example.com, or Name <ops@example.com>)"))?;
    let kept = mailbox.to_string();
    if kept.chars().count() > MAX_ADDRESS_CHARS {
        return Err(bad("is longer than 254 characters"));
    }
    Ok(kept)
}

/// Change the admin's tenant: the operator address the silence watch emails, its time zone.
#[utoipa::path(
    patch,
    path = "/admin/tenant",
    tag = "admin",
    security(("bearer" = [])),
    request_body(content = TenantChange, content_type = "application/json"),
    responses(
        (status = 200, body = TenantView, description = "the tenant as it is now"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_payload` naming `operator_email` (not an address), `time_zone` (not a zone of the tz database) or an unknown field"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: the token names a tenant this service does not have"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn patch_tenant(
    admin: TenantAdmin,
    Json(change): Json<TenantChange>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let address = match &change.operator_email {
        None => None,
        Some(None) => Some(None),
        Some(Some(raw)) => Some(Some(operator_address(raw)?)),
    };
    let zone = change
        .time_zone
        .as_ref()
        .map(|raw| time_zone(raw.as_deref()))
        .transpose()?;
    let mut conn = state.pool.get().await?;
    let tenant = conn
        .transaction::<_, Error, _>(async |conn| {
            if let Some(address) = &address {
                let row = tenants::set_operator_email(conn, &admin.tenant, address.as_deref())
                    .await?;
                if let Some(row) = &row {
                    tracing::info!(tenant = %row.id, admin = %admin.sub, operator_email = row.operator_email.as_deref().unwrap_or("-"), "tenant's operator address changed");
                }
            }
            if let Some(zone) = zone {
                let row = tenants::set_time_zone(conn, &admin.tenant, zone).await?;
                if let Some(row) = &row {
                    tracing::info!(tenant = %row.id, admin = %admin.sub, time_zone = %row.time_zone, "tenant's time zone changed");
                }
            }
            Ok(tenants::find(conn, &admin.tenant).await?)
        })
        .await?
    .ok_or_else(|| no_tenant(&admin.tenant))?;
    Ok(HttpResponse::Ok().json(TenantView::from(tenant)))
}

/// Who the tenant's emails come from (docs/proposal-callback.md, "Email"). Null
/// `from_address`: the service's `EMAIL_FROM`; null `reply_to`: no Reply-To (replies go to
/// `From`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SenderSettings {
    /// The From name, e.g. the agency's; requires `from_address`.
    #[schema(example = "Imobiliária Demo A")]
    pub from_name: Option<String>,
    /// The From address: ASCII, at a fully qualified domain the relay accepts as a sender.
    #[schema(example = "propostas@demo-a.example.com")]
    pub from_address: Option<String>,
    /// Where customers' replies go, when not to `From`.
    #[schema(example = "atendimento@demo-a.example.com")]
    pub reply_to: Option<String>,
}

impl From<Sender> for SenderSettings {
    fn from(s: Sender) -> Self {
        Self {
            from_name: s.from_name().map(str::to_owned),
            from_address: s.from_address().map(str::to_owned),
            reply_to: s.reply_to().map(str::to_owned),
        }
    }
}

/// The sender of the admin's tenant's emails.
#[utoipa::path(
    get,
    path = "/admin/tenant/sender",
    tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, body = SenderSettings),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: the token names a tenant this service does not have"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn get_sender(
    admin: TenantAdmin,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    let sender = tenants::sender(&mut conn, &admin.tenant)
        .await?
        .ok_or_else(|| no_tenant(&admin.tenant))?;
    Ok(HttpResponse::Ok().json(SenderSettings::from(sender)))
}

/// Set the sender of the tenant's emails, all three fields (null: none). Emails queued from
/// now on carry it; those already queued keep the sender they were written with.
#[utoipa::path(
    put,
    path = "/admin/tenant/sender",
    tag = "admin",
    security(("bearer" = [])),
    request_body(content = SenderSettings, content_type = "application/json"),
    responses(
        (status = 200, body = SenderSettings, description = "the sender as it is now"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_payload` naming the field: `from_address` or `reply_to` not an ASCII address at a fully qualified domain, `from_name` empty, too long or with a line break, `from_name` without `from_address`, or an unknown field"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: the token names a tenant this service does not have"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn put_sender(
    admin: TenantAdmin,
    Json(body): Json<SenderSettings>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let sender = sender(&body)?;
    let mut conn = state.pool.get().await?;
    if !tenants::set_sender(&mut conn, &admin.tenant, &sender).await? {
        return Err(no_tenant(&admin.tenant));
    }
    tracing::info!(tenant = %admin.tenant, admin = %admin.sub, from_address = sender.from_address().unwrap_or("-"), reply_to = sender.reply_to().unwrap_or("-"), "tenant's sender changed");
    Ok(HttpResponse::Ok().json(SenderSettings::from(sender)))
}

/// The sender an admin (API or console) sets, validated; 400 naming the field otherwise.
pub fn sender(s: &SenderSettings) -> Result<Sender, Error> {
    Sender::new(
        s.from_name.as_deref(),
        s.from_address.as_deref(),
        s.reply_to.as_deref(),
    )
    .map_err(|bad| Problem::invalid_payload(Some(bad.field.into()), bad.why).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_addresses_are_mailboxes_kept_in_one_form() {
        assert_eq!(
            operator_address(" ops@example.com ").unwrap(),
            "ops@example.com"
        );
        assert_eq!(
            operator_address("Operações <ops@example.com>").unwrap(),
            "Operações <ops@example.com>"
        );
        for bad in ["", "ops", "ops@", "a@b.c\r\nBcc: x@y.z", &"a".repeat(250)] {
            let e = operator_address(bad).unwrap_err();
            assert_eq!(e.problem().status, 400, "{bad:?}");
        }
    }

    #[test]
    fn absent_null_and_given_are_told_apart() {
        let read = |s: &str| {
            serde_json::from_str::<TenantChange>(s)
                .unwrap()
                .operator_email
        };
        assert_eq!(read("{}"), None);
        assert_eq!(read(r#"{"operator_email": null}"#), Some(None));
        assert_eq!(
            read(r#"{"operator_email": "a@b.c"}"#),
            Some(Some("a@b.c".into()))
        );
        assert!(serde_json::from_str::<TenantChange>(r#"{"name": "x"}"#).is_err());
    }
}
