//! The signing secret `serve` is given: long enough, and not one of the well-known values the
//! repository ships as examples (anyone who has read the repository could sign tokens with
//! those).

use secrecy::{ExposeSecret, SecretString};

use crate::config::{ConfigError, DEV_JWT_SECRET};

/// The shortest HS256 secret accepted, in bytes (deploy/README.md generates them with
/// `openssl rand -base64 48`: 64 bytes).
pub const MIN_SECRET_BYTES: usize = 32;

/// The secrets published in this repository, each refused by [`check_secret`]:
///
/// - `.env.example`: `JWT_SECRET`, `DISPATCH_JWT_SECRET`, `PROPOSAL_JWT_SECRET`;
/// - `docker-compose.yml`: the defaults of `DISPATCH_JWT_SECRET` and `PROPOSAL_JWT_SECRET`
///   (the same values as `.env.example`);
/// - `deploy/k8s/dispatch-api/secret.example.yaml` and
///   `deploy/k8s/proposal-callback/secret.example.yaml`: `JWT_SECRET` (one value, shared by
///   both files);
/// - `crates/common/src/config.rs`: `DEV_JWT_SECRET`, the key of `serve --dev`, which must
///   not be given as a real `JWT_SECRET`.
///
/// When an example file gains a value, add it here.
pub const PLACEHOLDER_SECRETS: &[&str] = &[
    "local-dev-only-example-secret-change-me-0123456789",
    "local-dev-only-dispatch-secret-change-me-0123456789",
    "local-dev-only-proposal-secret-change-me-0123456789",
    "REPLACE_ME-not-a-real-secret-generate-with-openssl-rand-base64-48",
    DEV_JWT_SECRET,
];

/// Words that mark a value as a placeholder whatever its exact spelling (compared without
/// regard to case): the example files use them, and a generated secret never contains them.
const PLACEHOLDER_MARKERS: &[&str] = &[
    "replace_me",
    "replace-me",
    "change-me",
    "changeme",
    "not-a-real-secret",
    "do-not-deploy",
];

/// Refuses a signing secret shorter than [`MIN_SECRET_BYTES`] or one of the placeholders the
/// repository ships ([`PLACEHOLDER_SECRETS`], or any value with a placeholder marker such as
/// `change-me` or `REPLACE_ME`). `var` names the variable the secret came from, and the error
/// names it (never the value):
///
/// ```
/// use common::auth::check_secret;
/// use secrecy::SecretString;
///
/// let placeholder = SecretString::from("REPLACE_ME-not-a-real-secret-generate-with-openssl-rand-base64-48");
/// let err = check_secret(&placeholder, "JWT_SECRET").unwrap_err();
/// assert!(err.to_string().starts_with("environment variable JWT_SECRET is invalid"));
/// ```
pub fn check_secret(secret: &SecretString, var: &str) -> Result<(), ConfigError> {
    let value = secret.expose_secret();
    let invalid = |reason: String| ConfigError::Invalid {
        name: var.to_owned(),
        reason,
    };
    let trimmed = value.trim();
    let lowered = trimmed.to_ascii_lowercase();
    if PLACEHOLDER_SECRETS.contains(&trimmed)
        || PLACEHOLDER_MARKERS.iter().any(|m| lowered.contains(m))
    {
        return Err(invalid(
            "it is a placeholder published in the repository's examples; \
             generate a secret (for example `openssl rand -base64 48`)"
                .into(),
        ));
    }
    if value.len() < MIN_SECRET_BYTES {
        return Err(invalid(format!(
            "it is {} bytes long; it must be at least {MIN_SECRET_BYTES} \
             (for example `openssl rand -base64 48`)",
            value.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: &str) -> Result<(), ConfigError> {
        check_secret(&SecretString::from(value.to_owned()), "JWT_SECRET")
    }

    #[test]
    fn every_published_placeholder_is_refused_naming_the_variable_not_the_value() {
        for placeholder in PLACEHOLDER_SECRETS {
            let err = check(placeholder).unwrap_err();
            let ConfigError::Invalid { name, reason } = &err else {
                panic!("{err:?}")
            };
            assert_eq!(name, "JWT_SECRET");
            assert!(reason.contains("placeholder"), "{reason}");
            assert!(!err.to_string().contains(placeholder), "{err}");
        }
    }

    #[test]
    fn placeholders_are_refused_in_any_case_and_with_surrounding_blanks() {
        assert!(check("  local-dev-only-dispatch-secret-change-me-0123456789\n").is_err());
        assert!(check("my-own-but-CHANGEME-later-0123456789012345").is_err());
        assert!(check("replace_me-with-something-longer-than-32-bytes").is_err());
    }

    #[test]
    fn a_short_secret_is_refused_with_its_length() {
        let err = check("0123456789abcdef0123456789abcde").unwrap_err();
        assert_eq!(
            err,
            ConfigError::Invalid {
                name: "JWT_SECRET".into(),
                reason: "it is 31 bytes long; it must be at least 32 \
                         (for example `openssl rand -base64 48`)"
                    .into()
            }
        );
    }

    #[test]
    fn a_generated_secret_is_accepted() {
        check("q3JvZx0m5yq9cQ2Yt4mS7nKpV8wZ1bXe4uHj6LdRf0A=").unwrap();
        check("0123456789abcdef0123456789abcdef").unwrap();
    }

    /// The list above is the repository's: each example file still carries these values, so
    /// a renamed placeholder cannot slip past the check unnoticed.
    #[test]
    fn the_list_matches_the_example_files() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let read = |path: &str| {
            std::fs::read_to_string(format!("{root}/{path}"))
                .unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let files = [
            read(".env.example"),
            read("docker-compose.yml"),
            read("deploy/k8s/dispatch-api/secret.example.yaml"),
            read("deploy/k8s/proposal-callback/secret.example.yaml"),
        ]
        .join("\n");
        for placeholder in &PLACEHOLDER_SECRETS[..PLACEHOLDER_SECRETS.len() - 1] {
            assert!(
                files.contains(placeholder),
                "{placeholder} is not in the examples"
            );
        }
        // Every JWT secret value the examples assign is in the list.
        for line in files.lines() {
            let line = line.trim();
            if line.starts_with('#') || !line.contains("JWT_SECRET") {
                continue;
            }
            let value = if let Some((_, v)) = line.split_once(":-") {
                v.trim_end_matches('}')
            } else if let Some(v) = line.strip_prefix("JWT_SECRET: ") {
                v.trim_matches('"')
            } else if let Some((key, v)) = line.split_once('=')
                && key.ends_with("JWT_SECRET")
            {
                v
            } else {
                continue;
            };
            assert!(
                PLACEHOLDER_SECRETS.contains(&value),
                "{value} (from {line:?}) is missing from PLACEHOLDER_SECRETS"
            );
        }
    }
}
