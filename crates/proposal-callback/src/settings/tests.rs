//! proposal-callback's settings, read from maps (never the process environment).

use std::time::Duration;

use common::auth::idp::IdpIdentity;
use common::config::{ConfigError, vars};
use common::settings::FromSource;
use common::test_support::env_example;
use serde_json::{Value, json};

use super::*;
use crate::domain::insurer::Insurer;
use crate::registration::config::{credential_var, url_var};

fn read(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    Settings::from_source(&vars(pairs))
}

fn registration(pairs: &[(&str, &str)]) -> Result<RegistrationConfig, ConfigError> {
    read(pairs)?.registration.config()
}

fn email(pairs: &[(&str, &str)]) -> Result<EmailConfig, ConfigError> {
    read(pairs)?.email.config()
}

/// The staff claims of `pairs` (the identity provider itself left out).
fn staff(pairs: &[(&str, &str)]) -> Result<StaffClaims, ConfigError> {
    let settings = read(pairs)?.staff;
    Ok(StaffClaims {
        tenant_claim: settings.jwt_tenant_claim,
        roles_claim: settings.jwt_roles_claim,
        admin_role: settings.jwt_admin_role,
    })
}

fn identity(claims: Value) -> IdpIdentity {
    IdpIdentity {
        user: "maria".into(),
        claims: claims.as_object().unwrap().clone(),
    }
}

#[test]
fn defaults_configure_nothing() {
    let c = registration(&[]).unwrap();
    assert_eq!(c.callback_base_url, "http://127.0.0.1:8081");
    assert_eq!(
        (c.connect_timeout, c.timeout),
        (Duration::from_secs(5), Duration::from_secs(10))
    );
    assert!(c.configured().is_empty());
    // Its answer (502 `not_configured`) is tested with the error's mapping.
    let e = c
        .target(Insurer::Porto, Environment::Homologation)
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("INSURER_PORTO_HOMOLOGATION_URL"),
        "{e}"
    );
}

#[test]
fn urls_and_credentials_per_insurer_and_environment() {
    let dir = std::env::temp_dir().join(format!("pcb-reg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret_file = dir.join("secret");
    std::fs::write(&secret_file, "s3cret\n").unwrap();
    let c = registration(&[
        ("CALLBACK_BASE_URL", "https://cb.example.com/base/"),
        (
            "INSURER_PORTO_PRODUCTION_URL",
            "https://api.porto.example/webhook",
        ),
        ("INSURER_PORTO_CLIENT_ID", "porto-id"),
        (
            "INSURER_PORTO_CLIENT_SECRET_FILE",
            secret_file.to_str().unwrap(),
        ),
        ("INSURER_TOKIO_HOMOLOGATION_URL", "http://h.tokio.example/"),
        // A `_FILE` whose file is not mounted: not configured, not an error.
        ("INSURER_TOKIO_CLIENT_ID", "tokio-id"),
        ("INSURER_TOKIO_CLIENT_SECRET_FILE", "/nonexistent/secret"),
        ("REGISTRATION_TIMEOUT", "300ms"),
    ])
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(c.callback_base_url, "https://cb.example.com/base");
    assert_eq!(c.timeout, Duration::from_millis(300));
    assert_eq!(c.configured(), vec!["porto/production".to_owned()]);
    let t = c.target(Insurer::Porto, Environment::Production).unwrap();
    assert_eq!(
        t.url.as_str(),
        "https://api.porto.example/webhook/envio/v1/inclusaoCadastro"
    );
    assert_eq!(t.credentials.client_id.expose_secret(), "porto-id");
    assert_eq!(t.credentials.client_secret.expose_secret(), "s3cret");
    let e = c
        .target(Insurer::Porto, Environment::Homologation)
        .err()
        .unwrap();
    assert!(e.to_string().contains("INSURER_PORTO_HOMOLOGATION_URL"));
    let e = c
        .target(Insurer::Tokio, Environment::Homologation)
        .err()
        .unwrap();
    assert!(e.to_string().contains("INSURER_TOKIO_CLIENT_SECRET"), "{e}");
    // The secret never shows in Debug.
    assert!(!format!("{c:?}").contains("s3cret"));
}

#[test]
fn bad_values_name_their_variable() {
    for (name, value) in [
        ("CALLBACK_BASE_URL", "ftp://x"),
        ("CALLBACK_BASE_URL", "not a url"),
        ("INSURER_TOO_PRODUCTION_URL", "https://user:pw@too.example"),
        ("INSURER_TOO_PRODUCTION_URL", "https://too.example/?a=1"),
        ("REGISTRATION_TIMEOUT", "0s"),
        ("REGISTRATION_CONNECT_TIMEOUT", "5"),
    ] {
        match registration(&[(name, value)]) {
            Err(ConfigError::Invalid { name: n, .. }) => assert_eq!(n, name, "{value}"),
            other => panic!("{name}={value}: {other:?}"),
        }
    }
    // A secret file that exists but cannot be read is an error, not "not configured".
    let dir = std::env::temp_dir();
    match registration(&[("INSURER_TOO_CLIENT_SECRET_FILE", dir.to_str().unwrap())]) {
        Err(ConfigError::Invalid { name, .. }) => {
            assert_eq!(name, "INSURER_TOO_CLIENT_SECRET_FILE")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn config_defaults_and_errors_name_the_variable() {
    let c = email(&[]).unwrap();
    assert!(c.smtp_url.is_none());
    assert_eq!(c.smtp_timeout, DEFAULT_SMTP_TIMEOUT);
    let err = email(&[("SMTP_TIMEOUT", "0s")]).err().unwrap();
    assert!(err.to_string().contains("SMTP_TIMEOUT"));
    assert_eq!(c.from.email.to_string(), "propostas@localhost");
    let err = email(&[("EMAIL_FROM", "not an address")]).err().unwrap();
    assert!(err.to_string().contains("EMAIL_FROM"));
    let err = email(&[("SMTP_URL", "http://x")]).err().unwrap();
    assert!(err.to_string().contains("SMTP_URL"));
    let ok = email(&[("SMTP_URL", "smtp://127.0.0.1:2525")]).unwrap();
    assert!(ok.smtp_url.is_some());
    let err = email(&[("SMTP_URL", "smtp://u:p@relay.example.com")])
        .err()
        .unwrap();
    assert!(err.to_string().contains("SMTP_URL"), "{err}");
    let err = email(&[("SMTP_TLS_CA_FILE", "/nonexistent/ca.pem")])
        .err()
        .unwrap();
    assert!(err.to_string().contains("SMTP_TLS_CA_FILE"), "{err}");
}

#[test]
fn staff_claims_come_from_their_variables() {
    let keycloak = staff(&[
        ("JWT_TENANT_CLAIM", "ds_tenant_id"),
        ("JWT_ROLES_CLAIM", "realm_access.roles"),
        ("JWT_ADMIN_ROLE", "proposal-admin"),
    ])
    .unwrap();
    assert!(
        keycloak
            .admin(&identity(json!({
                "ds_tenant_id": "demo-b",
                "realm_access": {"roles": ["offline_access", "proposal-admin"]}
            })))
            .is_ok_and(|a| a.tenant == "demo-b")
    );
    let err = staff(&[("JWT_ROLES_CLAIM", "realm_access.")]).unwrap_err();
    assert!(err.to_string().contains("JWT_ROLES_CLAIM"), "{err}");
}

#[test]
fn the_staff_identity_provider_and_its_lifetime() {
    assert!(read(&[]).unwrap().staff.config().unwrap().is_none());
    let (idp, claims) = read(&[
        ("JWT_JWKS_URL", "https://idp.example.com/certs"),
        ("JWT_ISSUER", "https://idp.example.com"),
        ("JWT_AUDIENCE", "proposal-console"),
    ])
    .unwrap()
    .staff
    .config()
    .unwrap()
    .unwrap();
    assert_eq!(idp.max_lifetime, Duration::from_secs(24 * 3600));
    assert_eq!(claims, StaffClaims::default());
}

#[test]
fn the_sweeper_and_the_trusted_proxies() {
    let settings = read(&[]).unwrap();
    assert_eq!(settings.sweep.config(), SweepConfig::default());
    assert!(settings.trusted_proxies().is_empty());
    let settings = read(&[
        ("SWEEP_INTERVAL", "5s"),
        ("SWEEP_GRACE", "0s"),
        ("TRUSTED_PROXIES", "10.0.0.0/8"),
    ])
    .unwrap();
    assert_eq!(
        settings.sweep.config(),
        SweepConfig {
            interval: Duration::from_secs(5),
            grace: Duration::ZERO
        }
    );
    assert!(!settings.trusted_proxies().is_empty());
    for (name, value) in [
        ("SWEEP_INTERVAL", "0s"),
        ("SWEEP_GRACE", "soon"),
        ("TRUSTED_PROXIES", "10.0.0.0/33"),
    ] {
        match read(&[(name, value)]) {
            Err(ConfigError::Invalid { name: n, .. }) => assert_eq!(n, name, "{value}"),
            other => panic!("{name}={value}: {other:?}"),
        }
    }
}

#[test]
fn every_insurer_has_its_variables() {
    let variables = Settings::variables();
    for insurer in Insurer::ALL {
        for env in Environment::ALL {
            assert!(variables.contains(&url_var(insurer, env)), "{insurer}");
        }
        for what in ["CLIENT_ID", "CLIENT_SECRET"] {
            let name = credential_var(insurer, what);
            assert!(variables.contains(&name), "{name}");
            assert!(variables.contains(&format!("{name}_FILE")), "{name}_FILE");
        }
    }
}

#[test]
fn env_example_shows_every_variable_read_and_no_other() {
    let text = std::fs::read_to_string(env_example::PATH).unwrap();
    let problems = env_example::problems(&text, "proposal-callback only", &Settings::variables());
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn help_lists_every_variable_with_its_default() {
    let text = common::settings::help(&common::settings::command::<Settings>(), &[]);
    for name in Settings::variables() {
        assert!(text.contains(&name), "{name}: {text}");
    }
    assert!(text.contains("JWT_MAX_LIFETIME [default: 1d]"), "{text}");
    assert!(text.contains("EMAIL_RETRY_MAX [default: 10m]"), "{text}");
    assert!(text.contains("PAGE_SESSION_IDLE [default: 30m]"), "{text}");
    assert!(text.contains("PAGE_SESSION_MAX [default: 8h]"), "{text}");
}
