//! The integrations console's HTTP rules (the pages themselves are driven in a real browser
//! by `tests/tests/browser.rs`): the session cookie, the sign-in refusals, cross-site posts,
//! another tenant's ids, and that the pages are not API.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::schema::proposal::callback_receipts as r;
use reqwest::redirect::Policy;
use reqwest::{Response, header};

use crate::support::{TestApp, example};

use std::time::Duration;

use chrono::Utc;
use common::Clock;
use common::pages::{SessionId, SessionRules};
use proposal_callback::schema::proposal::console_sessions as cs;

const CONSOLE: &str = "/admin/integracao";

/// A browser-like client that shows redirects instead of following them.
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

fn location(res: &Response) -> &str {
    res.headers()[header::LOCATION].to_str().unwrap()
}

/// Signs in with `token`; the session cookie (`name=value`) the answer sets, if any, and the
/// answer.
async fn sign_in(t: &TestApp, token: &str) -> (Option<String>, Response) {
    let res = client()
        .post(format!("{}{CONSOLE}/entrar", t.base))
        .header("sec-fetch-site", "same-origin")
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    let session = set_cookies(&res)
        .into_iter()
        .find(|c| c.starts_with("console_session=") && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned());
    (session, res)
}

async fn page(t: &TestApp, path: &str, cookie: &str) -> (u16, String) {
    let res = client()
        .get(format!("{}{path}", t.base))
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

#[actix_web::test]
async fn the_token_lives_in_a_session_cookie_of_the_console_only() {
    let t = TestApp::start().await;
    let token = t.admin("demo-a");
    let (session, res) = sign_in(&t, &token).await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), CONSOLE);
    let cookie = set_cookies(&res)
        .into_iter()
        .find(|c| c.starts_with("console_session="))
        .unwrap();
    let session = session.unwrap();
    let id = session.strip_prefix("console_session=").unwrap();
    assert_eq!(id.len(), 43, "a random 256-bit id, never the token");
    assert!(!cookie.contains(&token));
    assert_eq!(
        cookie,
        format!("console_session={id}; Path=/admin/integracao; HttpOnly; SameSite=Strict"),
        "no Max-Age or Expires: it dies with the browser session"
    );
    let (status, html) = page(&t, CONSOLE, &session).await;
    assert_eq!(status, 200);
    assert!(html.contains("Porto Seguro") && html.contains("Cliente <strong>demo-a</strong>"));
    assert!(!html.contains(&token), "the token is never in a page");

    // Over https (as a proxy says), the cookie is Secure.
    let res = client()
        .post(format!("{}{CONSOLE}/entrar", t.base))
        .header("sec-fetch-site", "same-origin")
        .header("x-forwarded-proto", "https")
        .form(&[("token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert!(
        set_cookies(&res)
            .iter()
            .any(|c| c.starts_with("console_session=") && c.ends_with("; Secure")),
        "{:?}",
        set_cookies(&res)
    );

    // Sign-out drops it.
    let res = client()
        .post(format!("{}{CONSOLE}/sair", t.base))
        .header("sec-fetch-site", "same-origin")
        .header(header::COOKIE, &session)
        .send()
        .await
        .unwrap();
    assert_eq!(location(&res), "/admin/integracao/entrar");
    assert!(
        set_cookies(&res)
            .iter()
            .any(|c| c.starts_with("console_session=;") && c.contains("Max-Age=0"))
    );
    // And ends the session: a copy of the old cookie opens nothing.
    let (status, said) = page(&t, CONSOLE, &session).await;
    assert_eq!(status, 303, "{said}");
    assert!(!said.contains("Porto Seguro"));
}

#[actix_web::test]
async fn tokens_the_admin_routes_refuse_open_no_session() {
    let t = TestApp::start().await;
    let callback_token = t.bearer("demo-a", "porto");
    for token in ["", "not a token", "a.b.c", callback_token.as_str()] {
        let (session, res) = sign_in(&t, token).await;
        assert_eq!(res.status(), 303, "{token}");
        assert_eq!(location(&res), "/admin/integracao/entrar", "{token}");
        assert_eq!(session, None, "{token}");
    }
    // Without a session, and with a session whose token does not pass, the pages send to
    // sign-in.
    let forged = format!("console_session={}", "A".repeat(43));
    let as_token = format!("console_session={}", t.admin("demo-a"));
    for cookie in ["", "console_session=a.b.c", &forged, &as_token] {
        let res = client()
            .get(format!("{}{CONSOLE}/callbacks", t.base))
            .header(header::COOKIE, cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 303, "{cookie}");
        assert_eq!(location(&res), "/admin/integracao/entrar");
    }
}

/// The service after one porto callback of demo-a (none registered from the console), and
/// demo-a's administrator's session cookie.
async fn demo_a_after_a_porto_callback() -> (TestApp, String) {
    let t = TestApp::start().await;
    let (status, _) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!(status, 200);
    let (session, _) = sign_in(&t, &t.admin("demo-a")).await;
    (t, session.unwrap())
}

#[actix_web::test]
async fn a_cross_site_post_is_refused_and_changes_nothing() {
    let (t, session) = demo_a_after_a_porto_callback().await;
    let id: i64 = r::table
        .select(r::id)
        .first(&mut t.conn().await)
        .await
        .unwrap();
    for headers in [
        vec![("sec-fetch-site", "cross-site")],
        vec![("origin", "http://evil.example")],
        vec![],
    ] {
        let mut req = client()
            .post(format!("{}{CONSOLE}/callbacks/{id}/reprocessar", t.base))
            .header(header::COOKIE, &session)
            .form(&[("resultado", "")]);
        for (k, v) in &headers {
            req = req.header(*k, *v);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 403, "{headers:?}");
        assert!(
            res.text()
                .await
                .unwrap()
                .contains("não partiu de uma página deste console")
        );
    }
    let attempts: i32 = r::table
        .find(id)
        .select(r::attempts)
        .first(&mut t.conn().await)
        .await
        .unwrap();
    assert_eq!(attempts, 1, "not replayed");
}

#[actix_web::test]
async fn another_tenants_ids_give_pages_without_their_data() {
    let t = TestApp::start().await;
    let (status, _) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!(status, 200);
    let (session, _) = sign_in(&t, &t.admin("demo-b")).await;
    let session = session.unwrap();
    let id: i64 = r::table
        .select(r::id)
        .first(&mut t.conn().await)
        .await
        .unwrap();
    let (status, html) = page(&t, &format!("{CONSOLE}/callbacks/{id}"), &session).await;
    assert_eq!(status, 404);
    assert!(html.contains(&format!("Não há callback nº {id} neste cliente")));
    assert!(!html.contains("idProposta"));
    let (status, html) = page(&t, &format!("{CONSOLE}/propostas/99121"), &session).await;
    assert_eq!(status, 404);
    assert!(!html.contains("locatario.99121"));
    let (_, html) = page(&t, &format!("{CONSOLE}/callbacks"), &session).await;
    assert!(html.contains("Nenhum callback recebido ainda"), "{html}");
    let res = client()
        .post(format!(
            "{}{CONSOLE}/integracoes/{}/registrar",
            t.base,
            t.integration_id("demo-a", "porto")
        ))
        .header("sec-fetch-site", "same-origin")
        .header(header::COOKIE, &session)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // Unknown pages are HTML too, and the console is not in the OpenAPI document.
    let (status, html) = page(&t, &format!("{CONSOLE}/nada"), &session).await;
    assert_eq!(status, 404);
    assert!(html.starts_with("<!DOCTYPE html>"));
    let (_, doc) = t.get("/openapi.json", None).await;
    assert!(
        !doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .any(|p| p.starts_with(CONSOLE)),
        "pages are not API"
    );
}

#[actix_web::test]
async fn a_nul_in_a_typed_text_is_a_400_page_naming_it() {
    let t = TestApp::start().await;
    let (session, _) = sign_in(&t, &t.admin("demo-a")).await;
    let session = session.unwrap();
    for (path, names) in [
        (format!("{CONSOLE}/propostas/%00"), "O número da proposta"),
        (
            format!("{CONSOLE}/propostas/99121%00"),
            "O número da proposta",
        ),
        (
            format!("{CONSOLE}/propostas?id=%00"),
            "O número da proposta",
        ),
        (format!("{CONSOLE}/callbacks?proposta=%00"), "“proposta”"),
        (
            format!("{CONSOLE}/callbacks?resultado=failed%00"),
            "“resultado”",
        ),
        (
            format!("{CONSOLE}/callbacks?seguradora=%00"),
            "“seguradora”",
        ),
    ] {
        let (status, html) = page(&t, &path, &session).await;
        assert_eq!(status, 400, "{path}: {html}");
        assert!(html.starts_with("<!DOCTYPE html>"), "{path}");
        assert!(html.contains("Pedido inválido"), "{path}: {html}");
        assert!(
            html.contains(names) && html.contains("caractere nulo (%00)"),
            "{path}: {html}"
        );
    }
    // The same pages without it still answer.
    let (status, _) = page(&t, &format!("{CONSOLE}/propostas/99121"), &session).await;
    assert_eq!(status, 200);
    let (status, _) = page(&t, &format!("{CONSOLE}/callbacks?proposta=99121"), &session).await;
    assert_eq!(status, 200);
}

/// Where a GET of the console with `cookie` ends: 200 and the page, or the sign-in page's
/// address and the message it will show.
async fn visit(t: &TestApp, cookie: &str) -> (u16, String) {
    let res = client()
        .get(format!("{}{CONSOLE}", t.base))
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    if status == 303 {
        let flash = set_cookies(&res)
            .into_iter()
            .find(|c| c.starts_with("console_flash="))
            .map(|c| {
                let v = c
                    .split(';')
                    .next()
                    .unwrap()
                    .trim_start_matches("console_flash=");
                percent_encoding::percent_decode_str(v)
                    .decode_utf8()
                    .unwrap()
                    .into_owned()
            })
            .unwrap_or_default();
        return (status, format!("{} {flash}", location(&res)));
    }
    (status, res.text().await.unwrap())
}

#[actix_web::test]
async fn a_session_ends_when_idle_and_at_its_absolute_end() {
    let clock = Clock::manual(Utc::now());
    let rules = SessionRules {
        idle: Duration::from_secs(30 * 60),
        max: Duration::from_secs(90 * 60),
    };
    let t =
        TestApp::start_with_state(|s| s.with_clock(clock.clone()).with_page_sessions(rules)).await;
    let signed_in = |html: &str| html.contains("Cliente <strong>demo-a</strong>");
    let token = proposal_callback::auth::jwt::issue_admin_token(&t.keys, "ops", "demo-a", 8 * 3600)
        .unwrap();

    let (session, _) = sign_in(&t, &token).await;
    let session = session.unwrap();
    clock.advance(chrono::Duration::minutes(29));
    let (status, html) = visit(&t, &session).await;
    assert!(status == 200 && signed_in(&html), "{html}");
    clock.advance(chrono::Duration::minutes(31));
    let (status, said) = visit(&t, &session).await;
    assert_eq!(status, 303);
    assert!(
        said.contains("/admin/integracao/entrar") && said.contains("parada"),
        "{said}"
    );

    // In use every 25 minutes, it still ends 90 minutes (PAGE_SESSION_MAX) after sign-in.
    let (session, _) = sign_in(&t, &token).await;
    let session = session.unwrap();
    for _ in 0..3 {
        clock.advance(chrono::Duration::minutes(25));
        let (status, html) = visit(&t, &session).await;
        assert!(status == 200 && signed_in(&html), "{html}");
    }
    clock.advance(chrono::Duration::minutes(20));
    let (status, said) = visit(&t, &session).await;
    assert_eq!(status, 303);
    assert!(said.contains("fim do seu prazo"), "{said}");
}

#[actix_web::test]
async fn a_session_lives_no_longer_than_its_token_and_is_stored_hashed() {
    let t = TestApp::start().await;
    let token = t.admin("demo-a");
    let (session, _) = sign_in(&t, &token).await;
    let value = session.unwrap().split_once('=').unwrap().1.to_owned();
    let mut conn = t.conn().await;
    type At = chrono::DateTime<Utc>;
    let rows: Vec<(Vec<u8>, String, String, String, At, At)> = cs::table
        .select((
            cs::id_hash,
            cs::tenant_id,
            cs::subject,
            cs::role,
            cs::created_at,
            cs::expires_at,
        ))
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let (hash, tenant, subject, role, created, expires) = &rows[0];
    assert_eq!(
        (tenant.as_str(), subject.as_str(), role.as_str()),
        ("demo-a", "ops", "admin")
    );
    // The admin token lives ten minutes: the session no longer.
    let life = *expires - *created;
    assert!(life <= chrono::Duration::minutes(10) && life > chrono::Duration::minutes(9));
    assert_eq!(*hash, SessionId::parse(&value).unwrap().hash());
    #[derive(QueryableByName)]
    struct Json {
        #[diesel(sql_type = diesel::sql_types::Text)]
        t: String,
    }
    let text =
        diesel::sql_query("SELECT row_to_json(s)::text AS t FROM proposal.console_sessions s")
            .get_result::<Json>(&mut conn)
            .await
            .unwrap()
            .t;
    assert!(!text.contains(&value) && !text.contains(&token), "{text}");
}

/// The sign-in page, the console's pages and its error pages name their icon, and it is
/// served (an SVG): a browser asks for no `/favicon.ico`, which would answer 404.
#[actix_web::test]
async fn the_pages_name_an_icon_that_is_served() {
    let t = TestApp::start().await;
    let icon = format!("{}{CONSOLE}/icone.svg", t.base);
    let res = client()
        .get(format!("{}{CONSOLE}/entrar", t.base))
        .send()
        .await
        .unwrap();
    common::test_support::assert_icon_served(&icon, &res.text().await.unwrap()).await;
    let (session, _) = sign_in(&t, &t.admin("demo-a")).await;
    let session = session.unwrap();
    for path in [CONSOLE.to_owned(), format!("{CONSOLE}/nada")] {
        let (_, html) = page(&t, &path, &session).await;
        common::test_support::assert_icon_served(&icon, &html).await;
    }
}

/// The integrations table says what is true of each callback: one whose insurer calls back
/// though the console registered nothing is "Registrado fora do console", one that never
/// called back "Não registrado"; no internal column name, and the viewer is named with the
/// sign-in's word.
#[actix_web::test]
async fn the_callback_state_says_what_is_true() {
    let (t, session) = demo_a_after_a_porto_callback().await;
    let (_, html) = page(&t, CONSOLE, &session).await;
    let row = |id: i64| {
        let start = html
            .find(&format!("<tr id=\"integracao-{id}\">"))
            .unwrap_or_else(|| panic!("no row {id}: {html}"));
        let end = start + html[start..].find("</tr>").unwrap();
        html[start..end].to_owned()
    };
    let porto = row(t.integration_id("demo-a", "porto"));
    assert!(
        porto.contains(r#"<span class="badge badge-ok">Registrado fora do console</span>"#),
        "{porto}"
    );
    assert!(porto.contains("Nenhum feito pelo console"), "{porto}");
    let tokio = row(t.integration_id("demo-a", "tokio"));
    assert!(
        tokio.contains(r#"<span class="badge badge-neutro">Não registrado</span>"#),
        "{tokio}"
    );
    assert!(html.contains(r#"<th scope="col">Callback</th>"#));
    assert!(!html.contains("is_callback_active"), "{html}");
    assert!(!html.contains("Nunca registrado"), "{html}");
    // The URL may break after each "/", nowhere else.
    assert!(
        html.contains(
            "<span>callback/</span><wbr><span>demo-a/</span><wbr><span>porto</span></code>"
        ),
        "{porto}"
    );
}
