//! dispatch-api's settings, read from maps (never the process environment).

use std::time::Duration;

use common::config::{ConfigError, vars};
use common::settings::FromSource;
use common::test_support::env_example;

use super::*;
use crate::cors::VAR;

fn read(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    Settings::from_source(&vars(pairs))
}

fn tokens(pairs: &[(&str, &str)]) -> Result<TokenSettings, ConfigError> {
    read(pairs)?.tokens()
}

/// The CORS rules of `CORS_ALLOWED_ORIGINS=value`.
fn settings(value: &str) -> Result<CorsSettings, ConfigError> {
    read(&[(VAR, value)]).map(|s| s.cors())
}

#[test]
fn a_shift_is_the_default_lifetime_for_our_tokens_and_the_providers() {
    let settings = tokens(&[]).unwrap();
    assert_eq!(settings.max_lifetime, DEFAULT_MAX_LIFETIME);
    assert!(settings.idp.is_none());
    let settings = tokens(&[
        ("JWT_JWKS_URL", "https://idp.example.org/certs"),
        ("JWT_ISSUER", "https://idp.example.org"),
        ("JWT_AUDIENCE", "dispatch-api"),
    ])
    .unwrap();
    assert_eq!(settings.idp.unwrap().max_lifetime, DEFAULT_MAX_LIFETIME);
    let settings = tokens(&[
        ("JWT_MAX_LIFETIME", "8h"),
        ("JWT_JWKS_URL", "https://idp.example.org/certs"),
        ("JWT_ISSUER", "https://idp.example.org"),
        ("JWT_AUDIENCE", "dispatch-api"),
        ("JWT_USER_CLAIM", "email"),
    ])
    .unwrap();
    assert_eq!(settings.max_lifetime, Duration::from_secs(8 * 3600));
    let idp = settings.idp.unwrap();
    assert_eq!(idp.max_lifetime, Duration::from_secs(8 * 3600));
    assert_eq!(idp.user_claim, "email");
}

#[test]
fn a_bad_setting_is_named() {
    let err = tokens(&[("JWT_MAX_LIFETIME", "forever")]);
    assert!(
        matches!(err, Err(ConfigError::Invalid { ref name, .. }) if name == "JWT_MAX_LIFETIME"),
        "{err:?}"
    );
    let err = tokens(&[("JWT_ISSUER", "https://idp.example.org")]);
    assert!(
        matches!(err, Err(ConfigError::Missing { ref name, .. }) if name == "JWT_JWKS_URL"),
        "{err:?}"
    );
}

#[test]
fn none_by_default() {
    let none = read(&[]).unwrap().cors();
    assert!(!none.is_enabled());
    assert!(!settings(" , ").unwrap().is_enabled());
}

#[test]
fn origins_are_listed_by_commas() {
    assert_eq!(
        settings("https://dispatch.example.org, http://localhost:5173")
            .unwrap()
            .allowed_origins,
        ["https://dispatch.example.org", "http://localhost:5173"]
    );
}

#[test]
fn anything_but_an_origin_is_refused_naming_the_variable() {
    for bad in [
        "*",
        "dispatch.example.org",
        "https://dispatch.example.org/app",
        "ftp://files.example.org",
        "https://",
    ] {
        let err = settings(bad).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Invalid { name, .. } if name == VAR),
            "{bad}: {err:?}"
        );
    }
}

#[test]
fn the_maximum_lifetime_comes_from_jwt_max_lifetime() {
    let lifetime = |pairs: &[(&str, &str)]| {
        common::settings::from_source::<TokenLifetime>(&vars(pairs)).map(|l| l.jwt_max_lifetime)
    };
    assert_eq!(lifetime(&[]).unwrap(), DEFAULT_MAX_LIFETIME);
    assert_eq!(
        lifetime(&[("JWT_MAX_LIFETIME", "8h")]).unwrap(),
        Duration::from_secs(8 * 3600)
    );
    for bad in ["forever", "0s", "12"] {
        assert!(
            matches!(lifetime(&[("JWT_MAX_LIFETIME", bad)]), Err(ConfigError::Invalid { name, .. }) if name == "JWT_MAX_LIFETIME"),
            "{bad}"
        );
    }
}

#[test]
fn the_access_log_writes_on_one_connection_unless_told_one_to_eight() {
    let writers = |pairs: &[(&str, &str)]| read(pairs).map(|s| s.access_log().writers);
    assert_eq!(writers(&[]).unwrap(), 1);
    assert_eq!(writers(&[("ACCESS_LOG_WRITERS", "2")]).unwrap(), 2);
    assert_eq!(writers(&[("ACCESS_LOG_WRITERS", "8")]).unwrap(), 8);
    for bad in ["0", "9", "two", "-1"] {
        assert!(
            matches!(writers(&[("ACCESS_LOG_WRITERS", bad)]), Err(ConfigError::Invalid { name, .. }) if name == "ACCESS_LOG_WRITERS"),
            "{bad}"
        );
    }
}

#[test]
fn the_access_log_lingers_two_milliseconds_unless_told_and_never_past_ten_seconds() {
    let linger = |pairs: &[(&str, &str)]| read(pairs).map(|s| s.access_log().linger);
    assert_eq!(linger(&[]).unwrap(), Duration::from_millis(2));
    assert_eq!(
        linger(&[("ACCESS_LOG_LINGER", "5ms")]).unwrap(),
        Duration::from_millis(5)
    );
    assert_eq!(
        linger(&[("ACCESS_LOG_LINGER", "0ms")]).unwrap(),
        Duration::ZERO
    );
    assert_eq!(
        linger(&[("ACCESS_LOG_LINGER", "2s")]).unwrap(),
        Duration::from_secs(2)
    );
    for bad in ["11s", "1m", "soon", "-1s"] {
        assert!(
            matches!(linger(&[("ACCESS_LOG_LINGER", bad)]), Err(ConfigError::Invalid { name, .. }) if name == "ACCESS_LOG_LINGER"),
            "{bad}"
        );
    }
}

#[test]
fn env_example_shows_every_variable_read_and_no_other() {
    let text = std::fs::read_to_string(env_example::PATH).unwrap();
    let problems = env_example::problems(&text, "dispatch-api only", &Settings::variables());
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn help_lists_every_variable_with_its_default() {
    let text = common::settings::help(&common::settings::command::<Settings>(), &[]);
    for name in Settings::variables() {
        assert!(text.contains(&name), "{name}: {text}");
    }
    assert!(text.contains("JWT_MAX_LIFETIME [default: 12h]"), "{text}");
}

#[test]
fn page_sessions_last_30_minutes_idle_and_8_hours_at_most_unless_set() {
    let rules = |pairs: &[(&str, &str)]| read(pairs).map(|s| s.page_sessions);
    assert_eq!(rules(&[]).unwrap(), common::pages::SessionRules::default());
    let set = rules(&[("PAGE_SESSION_IDLE", "10m"), ("PAGE_SESSION_MAX", "2h")]).unwrap();
    assert_eq!(set.idle, Duration::from_secs(600));
    assert_eq!(set.max, Duration::from_secs(7200));
    for (name, bad) in [("PAGE_SESSION_IDLE", "0s"), ("PAGE_SESSION_MAX", "soon")] {
        assert!(
            matches!(rules(&[(name, bad)]), Err(ConfigError::Invalid { name: ref n, .. }) if n == name),
            "{name}={bad}"
        );
    }
}
