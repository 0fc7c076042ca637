//! The manager page's sessions (docs/dispatch-routes.md, "The manager's page"): sign-in opens
//! a server-side session named by a random id in the cookie (never the token), which ends at
//! sign-out, when idle, at its absolute end, and when its user is no longer active.

use std::time::Duration;

use chrono::Utc;
use common::Clock;
use common::pages::SessionId;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{page_sessions, users};
use reqwest::redirect::Policy;
use reqwest::{Response, header};

use crate::support::Api;

const SESSION: &str = "reports_session";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

fn set_cookies(res: &Response) -> Vec<String> {
    res.headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// Signs in with `token`: the session cookie (`name=value`) the answer sets, if any.
pub(crate) async fn sign_in(api: &Api, token: &str) -> Option<String> {
    let res = client()
        .post(format!("http://{}/reports/entrar", api.addr))
        .header("sec-fetch-site", "same-origin")
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    set_cookies(&res)
        .into_iter()
        .find(|c| c.starts_with(&format!("{SESSION}=")) && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned())
}

/// What `GET /reports` shows with `cookie`: the page's status and text, or where it sends.
async fn reports(api: &Api, cookie: &str) -> (u16, String) {
    let res = client()
        .get(format!("http://{}/reports", api.addr))
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    if status == 303 {
        let to = res.headers()[header::LOCATION].to_str().unwrap().to_owned();
        let flash = set_cookies(&res)
            .into_iter()
            .find(|c| c.starts_with("reports_flash="))
            .map(|c| {
                let v = c
                    .split(';')
                    .next()
                    .unwrap()
                    .trim_start_matches("reports_flash=");
                percent_encoding::percent_decode_str(v)
                    .decode_utf8()
                    .unwrap()
                    .into_owned()
            })
            .unwrap_or_default();
        return (status, format!("{to} {flash}"));
    }
    (status, res.text().await.unwrap())
}

/// Whether `cookie` opens the page: its text names the signed-in manager.
async fn opens(api: &Api, cookie: &str, who: &str) -> bool {
    let (status, text) = reports(api, cookie).await;
    match status {
        200 => {
            assert!(
                text.contains("Tempos de resposta") && text.contains(who),
                "{text}"
            );
            true
        }
        303 => {
            assert!(text.starts_with("/reports/entrar"), "{text}");
            false
        }
        _ => panic!("{status}: {text}"),
    }
}

async fn sign_out(api: &Api, cookie: &str) -> Response {
    client()
        .post(format!("http://{}/reports/sair", api.addr))
        .header("sec-fetch-site", "same-origin")
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn signing_out_ends_the_session_the_old_cookie_opens_nothing() {
    let api = Api::new().await;
    let token = api.token_for("admin", Duration::from_secs(8 * 3600));
    let cookie = sign_in(&api, &token).await.expect("a session");
    assert!(!cookie.contains(&token), "the cookie never holds the token");
    assert!(opens(&api, &cookie, "Ana Administradora").await);

    let res = sign_out(&api, &cookie).await;
    assert_eq!(res.status(), 303);
    assert!(
        set_cookies(&res)
            .iter()
            .any(|c| c.starts_with(&format!("{SESSION}=;")) && c.contains("Max-Age=0"))
    );
    // The browser forgot it; a copy of it is refused.
    assert!(!opens(&api, &cookie, "Ana Administradora").await);
    let (_, said) = reports(&api, &cookie).await;
    assert!(said.contains("Sua sessão terminou"), "{said}");
    // The CSV too.
    let res = client()
        .get(format!(
            "http://{}/reports/tempos.csv?de=2026-01-01&ate=2026-01-02",
            api.addr
        ))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    // Signing in again opens a new session, not the old one.
    let again = sign_in(&api, &token).await.unwrap();
    assert_ne!(again, cookie);
    assert!(opens(&api, &again, "Ana Administradora").await);
    assert!(!opens(&api, &cookie, "Ana Administradora").await);
}

#[actix_web::test]
async fn the_table_keeps_only_the_ids_hash() {
    let api = Api::new().await;
    let token = api.token("regulador");
    let cookie = sign_in(&api, &token).await.unwrap();
    let value = cookie.split_once('=').unwrap().1.to_owned();
    assert_eq!(value.len(), 43);
    let rows: Vec<(Vec<u8>, i64, String)> = page_sessions::table
        .select((
            page_sessions::id_hash,
            page_sessions::user_id,
            page_sessions::profile,
        ))
        .load(&mut api.conn().await)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let (hash, user_id, profile) = &rows[0];
    assert_eq!(*user_id, api.id("regulador"));
    assert_eq!(profile, "MEDICO_REGULADOR");
    // No column holds the cookie's value or the token, as text or as bytes.
    let text: String =
        diesel::sql_query("SELECT row_to_json(s)::text AS t FROM dispatch.page_sessions s")
            .get_result::<Row>(&mut api.conn().await)
            .await
            .unwrap()
            .t;
    assert!(!text.contains(&value) && !text.contains(&token), "{text}");
    assert_ne!(hash.as_slice(), value.as_bytes());
    assert_eq!(*hash, SessionId::parse(&value).unwrap().hash());
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    t: String,
}

#[actix_web::test]
async fn a_forged_or_unknown_id_and_a_token_as_cookie_open_nothing() {
    let api = Api::new().await;
    let token = api.token("admin");
    let _real = sign_in(&api, &token).await.unwrap();
    for cookie in [
        format!("{SESSION}={token}"),
        format!("{SESSION}={}", "A".repeat(43)),
        format!("{SESSION}=a.b.c"),
        format!("{SESSION}="),
        String::new(),
    ] {
        assert!(!opens(&api, &cookie, "Ana").await, "{cookie}");
    }
}

#[actix_web::test]
async fn a_session_left_idle_ends_and_one_in_use_lives_to_its_token_end() {
    let clock = Clock::manual(Utc::now());
    let api = Api::at(clock.clone()).await;
    // Idle: PAGE_SESSION_IDLE (30 min by default) without a request.
    let cookie = sign_in(&api, &api.token_for("admin", Duration::from_secs(8 * 3600)))
        .await
        .unwrap();
    clock.advance(chrono::Duration::minutes(29));
    assert!(opens(&api, &cookie, "Ana Administradora").await);
    clock.advance(chrono::Duration::minutes(29));
    assert!(
        opens(&api, &cookie, "Ana Administradora").await,
        "seen 29 min ago"
    );
    clock.advance(chrono::Duration::minutes(31));
    let (_, said) = reports(&api, &cookie).await;
    assert!(said.contains("parada por tempo demais"), "{said}");
    assert!(!opens(&api, &cookie, "Ana").await);

    // Absolute: never past the pasted token's own expiry, however busy.
    let cookie = sign_in(&api, &api.token_for("admin", Duration::from_secs(20 * 60)))
        .await
        .unwrap();
    clock.advance(chrono::Duration::minutes(15));
    assert!(opens(&api, &cookie, "Ana Administradora").await);
    clock.advance(chrono::Duration::minutes(6));
    let (_, said) = reports(&api, &cookie).await;
    assert!(said.contains("fim do seu prazo"), "{said}");
}

#[actix_web::test]
async fn a_deactivated_users_session_ends_at_its_next_request() {
    let api = Api::new().await;
    let cookie = sign_in(&api, &api.token("regulador")).await.unwrap();
    assert!(opens(&api, &cookie, "Dra. Regina Reguladora").await);
    let inactive: String = users::table
        .filter(users::login.eq("inativo"))
        .select(users::status)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    diesel::update(users::table.filter(users::login.eq("regulador")))
        .set(users::status.eq(&inactive))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    let (_, said) = reports(&api, &cookie).await;
    assert!(said.contains("não está mais ativo"), "{said}");
    // Ended for good: revoked, even were the user active again.
    let revoked: Option<chrono::DateTime<Utc>> = page_sessions::table
        .select(page_sessions::revoked_at)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    assert!(revoked.is_some());
}

/// The sign-in page and the page name their icon, and it is served (an SVG, cached): a
/// browser asks for no `/favicon.ico`, which would answer 404.
#[actix_web::test]
async fn the_pages_name_an_icon_that_is_served() {
    let api = Api::new().await;
    let icon = format!("http://{}/reports/icone.svg", api.addr);
    let res = client()
        .get(format!("http://{}/reports/entrar", api.addr))
        .send()
        .await
        .unwrap();
    common::test_support::assert_icon_served(&icon, &res.text().await.unwrap()).await;
    let cookie = sign_in(&api, &api.token("admin")).await.unwrap();
    let (status, page) = reports(&api, &cookie).await;
    assert_eq!(status, 200);
    common::test_support::assert_icon_served(&icon, &page).await;
}
