//! The shared settings read from maps (never the process environment), and the parsers.

use std::time::Duration;

use secrecy::ExposeSecret;

use super::*;
use crate::config::{secret, vars as env};

/// The common configuration as `serve` reads it, from `pairs`.
fn common(pairs: &[(&str, &str)], bind: &str, dev: bool) -> Result<CommonConfig, ConfigError> {
    CommonSettings::from_source(&env(pairs))?.config(bind, dev)
}

/// The identity provider as a service with a 24 h maximum lifetime reads it.
fn idp_config(pairs: &[(&str, &str)]) -> Result<Option<IdpConfig>, ConfigError> {
    IdpSettings::from_source(&env(pairs))?.config(DAY)
}

const DAY: Duration = Duration::from_secs(86_400);

#[test]
fn missing_secret_names_the_variable() {
    let err = common(&[], "127.0.0.1:1", false).err().unwrap();
    assert!(matches!(&err, ConfigError::Missing { name, .. } if name == "JWT_SECRET"));
    assert!(err.to_string().contains("JWT_SECRET"));
}

#[test]
fn short_secret_is_refused() {
    let err = common(&[("JWT_SECRET", "short")], "x", false)
        .err()
        .unwrap();
    assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "JWT_SECRET"));
}

#[test]
fn dev_mode_uses_the_dev_key_only_without_a_secret() {
    let cfg = common(&[], "127.0.0.1:9", true).unwrap();
    assert_eq!(cfg.jwt_secret.expose_secret(), DEV_JWT_SECRET);
    assert_eq!(cfg.bind, "127.0.0.1:9");
    assert_eq!(cfg.database_url, DEFAULT_DATABASE_URL);
    assert!(cfg.database_url_is_default);
    assert_eq!(cfg.pool_size, pool_size::default());
    assert!(cfg.pool_size_is_default);
    assert_eq!(cfg.log_filter, DEFAULT_LOG_FILTER);
    let real = "k".repeat(40);
    let cfg = common(&[("JWT_SECRET", &real)], "x", true).unwrap();
    assert_eq!(cfg.jwt_secret.expose_secret(), real);
}

#[test]
fn malformed_values_name_the_variable_and_value() {
    let secret = "s".repeat(32);
    let err = common(
        &[("JWT_SECRET", &secret), ("LOG_FORMAT", "xml")],
        "x",
        false,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("LOG_FORMAT"), "{err}");
    assert!(err.to_string().contains("xml"), "{err}");
    let err = common(
        &[("JWT_SECRET", &secret), ("DATABASE_POOL_SIZE", "lots")],
        "x",
        false,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("DATABASE_POOL_SIZE"), "{err}");
    for bad in ["0", "257"] {
        let err = common(
            &[("JWT_SECRET", &secret), ("DATABASE_POOL_SIZE", bad)],
            "x",
            false,
        )
        .err()
        .unwrap();
        assert!(
            matches!(&err, ConfigError::Invalid { name, .. } if name == "DATABASE_POOL_SIZE"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn the_pool_size_is_computed_from_the_host_unless_set() {
    let secret = "s".repeat(32);
    let cfg = common(&[("JWT_SECRET", &secret)], "x", false).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(cfg.pool_size, (2 * cores + 1).min(256));
    assert!(cfg.pool_size_is_default);
    for (set, size) in [("16", 16), ("1", 1), ("256", 256), (" 4 ", 4)] {
        let cfg = common(
            &[("JWT_SECRET", &secret), ("DATABASE_POOL_SIZE", set)],
            "x",
            false,
        )
        .unwrap();
        assert_eq!(cfg.pool_size, size, "{set:?}");
        assert!(!cfg.pool_size_is_default, "{set:?}");
    }
}

#[test]
fn a_secret_never_appears_in_an_error() {
    #[derive(Debug, clap::Args)]
    struct Checked {
        #[arg(long, env = "X", help_heading = SECRETS, value_parser = |s: &str| s.parse::<u8>())]
        x: Option<u8>,
    }
    let err = Checked::from_source(&env(&[("X", "hunter2")])).unwrap_err();
    assert!(matches!(&err, ConfigError::Invalid { name, .. } if name == "X"));
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn secrets_can_come_from_a_file() {
    let dir = std::env::temp_dir().join(format!("cfg-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("secret");
    std::fs::write(&path, "from-a-file\n").unwrap();
    let s = secret(&env(&[("X_FILE", path.to_str().unwrap())]), "X")
        .unwrap()
        .unwrap();
    assert_eq!(s.expose_secret(), "from-a-file");
    let err = secret(&env(&[("X_FILE", "/nonexistent/secret")]), "X").unwrap_err();
    assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "X_FILE"));
    // The settings read JWT_SECRET_FILE the same way.
    let long = "f".repeat(40);
    std::fs::write(&path, format!("{long}\n")).unwrap();
    let cfg = common(&[("JWT_SECRET_FILE", path.to_str().unwrap())], "x", false).unwrap();
    assert_eq!(cfg.jwt_secret.expose_secret(), long);
    let err = common(&[("JWT_SECRET_FILE", "/nonexistent/secret")], "x", false)
        .err()
        .unwrap();
    assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "JWT_SECRET_FILE"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn optional_secrets_and_duration_variables() {
    #[derive(Debug, clap::Args)]
    struct Optional {
        #[arg(long, env = "X", help_heading = OPTIONAL_SECRETS, value_parser = secret_text)]
        x: Option<SecretString>,
    }
    fn secret_text(raw: &str) -> Result<SecretString, std::convert::Infallible> {
        super::secret(raw)
    }
    let dir = std::env::temp_dir().join(format!("cfg-opt-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let (full, empty) = (dir.join("full"), dir.join("empty"));
    std::fs::write(&full, "s3cret\n").unwrap();
    std::fs::write(&empty, "\n").unwrap();
    let get = |pairs: &[(&str, &str)]| Optional::from_source(&env(pairs)).map(|o| o.x);
    assert!(get(&[]).unwrap().is_none());
    let s = get(&[("X_FILE", full.to_str().unwrap())]).unwrap().unwrap();
    assert_eq!(s.expose_secret(), "s3cret");
    assert!(
        get(&[("X_FILE", empty.to_str().unwrap())])
            .unwrap()
            .is_none()
    );
    assert!(get(&[("X_FILE", "/nonexistent/secret")]).unwrap().is_none());
    let err = get(&[("X_FILE", dir.to_str().unwrap())]).unwrap_err();
    assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "X_FILE"));
    std::fs::remove_dir_all(dir).unwrap();

    #[derive(Debug, clap::Args)]
    struct Times {
        #[arg(long, env = "T", default_value = show(Duration::from_secs(7)), value_parser = duration)]
        t: Duration,
        #[arg(long, env = "P", default_value = show(Duration::from_secs(7)), value_parser = positive_duration)]
        p: Duration,
    }
    let times = |pairs: &[(&str, &str)]| Times::from_source(&env(pairs));
    let d = Duration::from_secs(7);
    assert_eq!(times(&[]).unwrap().t, d);
    assert_eq!(times(&[("T", "0s")]).unwrap().t, Duration::ZERO);
    assert_eq!(
        times(&[("P", "300ms")]).unwrap().p,
        Duration::from_millis(300)
    );
    for bad in ["0s", "5"] {
        let err = times(&[("P", bad)]).unwrap_err();
        assert!(
            matches!(err, ConfigError::Invalid { name, .. } if name == "P"),
            "{bad}"
        );
    }
}

#[test]
fn durations() {
    assert_eq!(duration("8h"), Ok(Duration::from_secs(8 * 3600)));
    assert_eq!(duration("90d"), Ok(Duration::from_secs(90 * 86_400)));
    assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(duration("30m"), Ok(Duration::from_secs(30 * 60)));
    assert_eq!(duration("5s"), Ok(Duration::from_secs(5)));
    assert_eq!(duration(" 12h\n"), Ok(Duration::from_secs(12 * 3600)));
    assert!(duration("8").is_err());
    assert!(duration("h").is_err());
    assert!(duration("3w").is_err());
    // Too large for a Duration: refused, not wrapped round.
    assert!(duration("99999999999999999999d").is_err());
    assert!(duration("213503982334602d").is_err());
    for d in [12 * 3600, 86_400, 600, 30, 1] {
        let d = Duration::from_secs(d);
        assert_eq!(duration(&show(d)), Ok(d), "{}", show(d));
    }
    assert_eq!(show(Duration::from_millis(1500)), "1500ms");
    assert_eq!(show(Duration::from_secs(12 * 3600)), "12h");
}

#[test]
fn a_token_lifetime_is_at_least_a_second() {
    #[derive(Debug, clap::Args)]
    struct Lifetime {
        #[arg(long, env = "JWT_MAX_LIFETIME", default_value = show(DAY), value_parser = lifetime)]
        jwt_max_lifetime: Duration,
    }
    let read = |pairs: &[(&str, &str)]| Lifetime::from_source(&env(pairs));
    assert_eq!(read(&[]).unwrap().jwt_max_lifetime, DAY);
    assert_eq!(
        read(&[("JWT_MAX_LIFETIME", "8h")])
            .unwrap()
            .jwt_max_lifetime,
        Duration::from_secs(8 * 3600)
    );
    for bad in ["forever", "0s", "12", "500ms"] {
        assert!(
            matches!(read(&[("JWT_MAX_LIFETIME", bad)]), Err(ConfigError::Invalid { name, .. }) if name == "JWT_MAX_LIFETIME"),
            "{bad}"
        );
    }
}

#[test]
fn the_process_environment_is_not_read() {
    // Whatever the environment of the test process holds, a map without DATABASE_URL leaves
    // it unset.
    let settings = CommonSettings::from_source(&env(&[])).unwrap();
    assert!(settings.database_url.is_none());
    assert!(settings.jwt_secret.is_none());
}

#[test]
fn help_lists_every_variable_with_its_default() {
    let text = help(&command::<CommonSettings>(), &[]);
    for name in CommonSettings::variables() {
        assert!(text.contains(&name), "{name} in {text}");
    }
    assert!(
        text.contains(&format!(
            "DATABASE_POOL_SIZE\n          Connections in the pool, opened on demand (1 to 256) \
             [default: 2 x cores + 1 = {} on this host (",
            pool_size::default()
        )),
        "{text}"
    );
    assert!(text.contains("JWT_SECRET or JWT_SECRET_FILE"), "{text}");
    assert_eq!(
        CommonSettings::variables(),
        [
            "DATABASE_URL",
            "DATABASE_POOL_SIZE",
            "DATABASE_POOL_MODE",
            "DATABASE_DIRECT_URL",
            "DATABASE_TIMEOUT",
            "BIND",
            "LOG_FORMAT",
            "RUST_LOG",
            "JWT_SECRET",
            "JWT_SECRET_FILE"
        ]
    );
}

#[test]
fn no_provider_when_nothing_is_set() {
    assert_eq!(idp_config(&[]).unwrap(), None);
}

#[test]
fn a_provider_with_defaults() {
    let config = idp_config(&[
        (
            "JWT_JWKS_URL",
            "https://idp.example.org/realms/samu/protocol/openid-connect/certs",
        ),
        ("JWT_ISSUER", "https://idp.example.org/realms/samu"),
        ("JWT_AUDIENCE", "dispatch-api"),
    ])
    .unwrap()
    .unwrap();
    assert_eq!(config.issuer, "https://idp.example.org/realms/samu");
    assert_eq!(config.audience, "dispatch-api");
    assert_eq!(config.user_claim, "preferred_username");
    assert_eq!(config.max_lifetime, DAY);
    assert_eq!(config.fetch_timeout, Duration::from_secs(5));
    assert_eq!(config.min_refresh_interval, Duration::from_secs(10));
    assert_eq!(config.cache_ttl, Duration::from_secs(3600));
}

#[test]
fn every_idp_error_names_its_variable() {
    let url = ("JWT_JWKS_URL", "https://idp.example.org/certs");
    let iss = ("JWT_ISSUER", "https://idp.example.org");
    let aud = ("JWT_AUDIENCE", "dispatch-api");
    let name_of = |pairs: &[(&str, &str)]| match idp_config(pairs) {
        Err(ConfigError::Missing { name, .. } | ConfigError::Invalid { name, .. }) => name,
        other => panic!("{pairs:?}: {other:?}"),
    };
    assert_eq!(name_of(&[url, aud]), "JWT_ISSUER");
    assert_eq!(name_of(&[url, iss]), "JWT_AUDIENCE");
    assert_eq!(name_of(&[iss, aud]), "JWT_JWKS_URL");
    assert_eq!(
        name_of(&[("JWT_JWKS_URL", "not a url"), iss, aud]),
        "JWT_JWKS_URL"
    );
    assert_eq!(
        name_of(&[("JWT_JWKS_URL", "http://idp.example.org/certs"), iss, aud]),
        "JWT_JWKS_URL",
        "keys over plain http could be swapped on the way"
    );
    assert_eq!(
        name_of(&[url, iss, aud, ("JWT_JWKS_TIMEOUT", "0s")]),
        "JWT_JWKS_TIMEOUT"
    );
    assert_eq!(
        name_of(&[url, iss, aud, ("JWT_JWKS_CACHE_TTL", "soon")]),
        "JWT_JWKS_CACHE_TTL"
    );
    idp_config(&[("JWT_JWKS_URL", "http://127.0.0.1:9/certs"), iss, aud])
        .unwrap()
        .unwrap();
}
