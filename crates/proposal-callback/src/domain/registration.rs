//! The registration payload the insurer receives (spec: `nomeParceiro`, `clientId`,
//! `apiCallback`, `tokenApi`).

use crate::domain::insurer::Insurer;
use serde::Serialize;

/// The registration payload (spec: `nomeParceiro`, `clientId`, `apiCallback`, `tokenApi`).
/// No `Debug`: it carries the clear token.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationPayload<'a> {
    /// The integration's identifier: `{dsTenantId}/{insurer}` (unique per environment).
    pub nome_parceiro: String,
    pub client_id: &'a str,
    pub api_callback: ApiCallback,
    /// The fixed Basic token the insurer presents at `/callback/auth`.
    pub token_api: &'a str,
}

/// How the insurer reaches us: where it authenticates, and where it posts its callbacks.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApiCallback {
    /// `{CALLBACK_BASE_URL}/callback/auth`
    pub url_autenticacao: String,
    pub metodo_autenticacao: &'static str,
    /// `Basic`: `Authorization: Basic <tokenApi>`.
    pub tipo_autenticacao: &'static str,
    /// `{CALLBACK_BASE_URL}/callback/{dsTenantId}/{insurer}`
    pub url_callback: String,
    pub metodo_callback: &'static str,
    /// `Bearer`: the `access_token` `/callback/auth` answers, as `Authorization: Bearer`.
    pub tipo_autenticacao_callback: &'static str,
}

impl ApiCallback {
    pub fn new(callback_base_url: &str, tenant: &str, insurer: Insurer) -> Self {
        Self {
            url_autenticacao: format!("{callback_base_url}/callback/auth"),
            metodo_autenticacao: "POST",
            tipo_autenticacao: "Basic",
            url_callback: format!("{callback_base_url}/callback/{tenant}/{insurer}"),
            metodo_callback: "POST",
            tipo_autenticacao_callback: "Bearer",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_has_the_specs_fields() {
        let payload = RegistrationPayload {
            nome_parceiro: "demo-a/porto".into(),
            client_id: "cid",
            api_callback: ApiCallback::new("https://cb.example.com", "demo-a", Insurer::Porto),
            token_api: "tok",
        };
        assert_eq!(
            serde_json::to_value(&payload).unwrap(),
            serde_json::json!({
                "nomeParceiro": "demo-a/porto",
                "clientId": "cid",
                "apiCallback": {
                    "urlAutenticacao": "https://cb.example.com/callback/auth",
                    "metodoAutenticacao": "POST",
                    "tipoAutenticacao": "Basic",
                    "urlCallback": "https://cb.example.com/callback/demo-a/porto",
                    "metodoCallback": "POST",
                    "tipoAutenticacaoCallback": "Bearer",
                },
                "tokenApi": "tok",
            })
        );
    }
}
