//! Identity comes from the token, and the user behind it is checked on every request.

use std::process::Command;
use std::time::Duration;

use common::auth::JwtKeys;
use common::test_support::TestDb;
use dispatch_api::auth::{Claims, CurrentUser, Profile, issue_token};
use dispatch_api::seed;
use secrecy::SecretString;

fn keys() -> JwtKeys {
    crate::support::service_keys()
}

/// A copy of the seeded demo and the report of seeding it again (which writes nothing).
async fn seeded() -> (TestDb, seed::SeedReport) {
    let db = crate::support::seeded_db().await;
    let report = seed::run_with(&mut db.pool().get().await.unwrap(), seed::Scale::Test)
        .await
        .unwrap();
    (db, report)
}

fn id_of(report: &seed::SeedReport, login: &str) -> i64 {
    report.users.iter().find(|u| u.login == login).unwrap().id
}

#[tokio::test(flavor = "multi_thread")]
async fn an_active_users_token_yields_that_user_and_profile() {
    let (db, report) = seeded().await;
    for (login, profile) in [
        ("admin", Profile::Admin),
        ("tarm", Profile::Tarm),
        ("regulador", Profile::MedicoRegulador),
        ("frota", Profile::OperadorFrota),
    ] {
        let id = id_of(&report, login);
        let token = issue_token(&keys(), id, Duration::from_secs(60)).unwrap();
        let user = CurrentUser::from_token(&keys(), &db.pool(), &token)
            .await
            .unwrap();
        assert_eq!((user.id, user.profile), (id, profile), "{login}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn inactive_unknown_expired_and_foreign_tokens_are_401() {
    let (db, report) = seeded().await;
    let pool = db.pool();
    let inactive =
        issue_token(&keys(), id_of(&report, "inativo"), Duration::from_secs(60)).unwrap();
    let unknown = issue_token(&keys(), 999_999, Duration::from_secs(60)).unwrap();
    let now = common::auth::now_secs();
    let expired = keys()
        .issue(&Claims {
            sub: id_of(&report, "admin").to_string(),
            iat: now - 120,
            exp: now - 60,
        })
        .unwrap();
    let not_a_user = keys()
        .issue(&Claims {
            sub: "admin".into(),
            iat: now,
            exp: now + 60,
        })
        .unwrap();
    let foreign = issue_token(
        &dispatch_api::auth::service_keys(
            &SecretString::from("another-secret-another-secret-xx"),
            dispatch_api::auth::DEFAULT_MAX_LIFETIME,
        ),
        id_of(&report, "admin"),
        Duration::from_secs(60),
    )
    .unwrap();
    for (what, token) in [
        ("inactive", inactive),
        ("unknown", unknown),
        ("expired", expired),
        ("not a user id", not_a_user),
        ("foreign key", foreign),
    ] {
        let err = CurrentUser::from_token(&keys(), &pool, &token)
            .await
            .unwrap_err()
            .problem();
        assert_eq!(
            (err.status, err.code.as_ref()),
            (401, "unauthorized"),
            "{what}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_outside_a_routes_list_is_403() {
    let (db, report) = seeded().await;
    let token = issue_token(&keys(), id_of(&report, "frota"), Duration::from_secs(60)).unwrap();
    let user = CurrentUser::from_token(&keys(), &db.pool(), &token)
        .await
        .unwrap();
    assert!(
        user.require(&[Profile::OperadorFrota, Profile::MedicoRegulador])
            .is_ok()
    );
    let err =
        dispatch_api::error::Error::from(user.require(&[Profile::Tarm]).unwrap_err()).problem();
    assert_eq!((err.status, err.code.as_ref()), (403, "forbidden"));
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_twice_changes_nothing() {
    let (db, first) = seeded().await;
    let second = seed::run_with(&mut db.pool().get().await.unwrap(), seed::Scale::Test)
        .await
        .unwrap();
    let ids = |r: &seed::SeedReport| {
        r.users
            .iter()
            .map(|u| (u.login.clone(), u.id))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&second));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_command_prints_a_token_serve_accepts() {
    let (db, report) = seeded().await;
    let secret = "cli-secret-cli-secret-cli-secret-cli";
    let out = Command::new(env!("CARGO_BIN_EXE_dispatch-api"))
        .args(["token", "--login", "regulador", "--ttl", "5m"])
        .env("DATABASE_URL", db.url())
        .env("JWT_SECRET", secret)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap();
    let keys =
        dispatch_api::auth::service_keys(&SecretString::from(secret), Duration::from_secs(3600));
    let claims: Claims = keys.verify(token.trim()).unwrap();
    assert_eq!(
        keys.verify_claims(token.trim()).unwrap()["aud"],
        "dispatch-api"
    );
    assert_eq!(claims.sub, id_of(&report, "regulador").to_string());
    assert!((claims.exp - claims.iat - 300).abs() <= 1);

    let out = Command::new(env!("CARGO_BIN_EXE_dispatch-api"))
        .args(["token", "--login", "nobody"])
        .env("DATABASE_URL", db.url())
        .env("JWT_SECRET", secret)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nobody"));
}

/// `token` against a database nobody migrated (a fresh one, or the default `DATABASE_URL`'s
/// `postgres` after `./dev up` made its own) says which variable and database it used, never
/// the password, and how to migrate or where `./dev` prints tokens.
#[tokio::test(flavor = "multi_thread")]
async fn the_token_command_on_an_unmigrated_database_names_it_and_says_what_to_run() {
    let db = TestDb::blank().await;
    // A password in the URL, so the test sees it is never printed (a local server that trusts
    // the connection ignores it; a server that needs one has it in the URL already).
    let (scheme, rest) = db.url().split_once("://").unwrap();
    let (userinfo, server) = rest.rsplit_once('@').unwrap();
    let (user, password) = match userinfo.split_once(':') {
        Some((user, password)) => (user, password.to_owned()),
        None => (userinfo, "hunter2-not-printed".to_owned()),
    };
    let url = format!("{scheme}://{user}:{password}@{server}");
    let out = Command::new(env!("CARGO_BIN_EXE_dispatch-api"))
        .args(["token", "--login", "maria.costa.5"])
        .env("DATABASE_URL", &url)
        .env("JWT_SECRET", "cli-secret-cli-secret-cli-secret-cli")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains(&password), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "dispatch-api: the database \"{}\" (DATABASE_URL={scheme}://{user}:***@{server}) \
             has no `dispatch` schema: it was never migrated. Run `dispatch-api migrate` \
             against it, or `./dev up`, which migrates and seeds a demo database and prints a \
             token for each profile (`./dev token LOGIN` prints one for any user): \
             relation \"dispatch.users\" does not exist\n",
            db.name()
        )
    );
}

/// A token's `sub` names a user only in its canonical decimal form: `"02"`, `"+2"`, `" 2"` are
/// not user 2 (401 naming `sub`, before any lookup), `"2"` is.
#[tokio::test(flavor = "multi_thread")]
async fn a_sub_that_is_not_a_canonical_user_id_is_refused_naming_sub() {
    let api = crate::support::Api::new().await;
    let id = api.id("admin");
    let now = common::auth::now_secs();
    let token = |sub: String| {
        keys()
            .issue(&Claims {
                sub,
                iat: now,
                exp: now + 60,
            })
            .unwrap()
    };
    for sub in [
        format!("0{id}"),
        format!("+{id}"),
        format!(" {id}"),
        format!("{id} "),
        format!("{id}.0"),
    ] {
        let r = api
            .get_with_token(Some(&token(sub.clone())), "/shared/default-values")
            .await;
        assert_eq!(r.status, 401, "{sub:?}: {}", r.body);
        assert_eq!(r.body["code"], "unauthorized", "{sub:?}");
        assert_eq!(
            r.body["detail"], "the token's `sub` claim is malformed",
            "{sub:?}"
        );
    }
    let r = api
        .get_with_token(Some(&token(id.to_string())), "/shared/default-values")
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["user"]["id"], id);
    let name: String = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use dispatch_api::schema::dispatch::users;
        users::table
            .find(id)
            .select(users::descriptive_name)
            .first(&mut api.conn().await)
            .await
            .unwrap()
    };
    assert_eq!(r.body["user"]["descriptive_name"], name.as_str());
}
