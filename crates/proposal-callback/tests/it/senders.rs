//! Each tenant's own sender, and SMTP as relays behave (docs/proposal-callback.md, "Email"):
//! the From (and a Reply-To only when set) of each tenant's emails, `EMAIL_FROM` as the
//! fallback; the EHLO name; a relay refusing the sender at RCPT backs off and fails no email,
//! a bad recipient still fails its own; a bulk retry of failed emails. Against the local SMTP
//! sink, on a manual clock.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use common::Clock;
use common::settings::FromSource;
use common::test_support::SmtpSink;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use lettre::transport::smtp::extension::ClientId;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::schema::proposal::email_outbox as o;
use proposal_callback::settings::EmailSettings;
use proposal_callback::store::proposals;
use serde_json::{Value, json};

use crate::support::{TestApp, example, read_mail};

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2029-05-06T07:08:09Z")
        .unwrap()
        .with_timezone(&Utc)
}

async fn app(clock: &Clock) -> TestApp {
    let clock = clock.clone();
    TestApp::start_with_state(move |state| state.with_clock(clock)).await
}

const FALLBACK: &str = "Propostas <propostas@fallback.example.com>";

fn config(smtp_url: &str, extra: &[(&str, &str)]) -> EmailConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert("SMTP_URL".into(), smtp_url.into());
    env.insert("EMAIL_FROM".into(), FALLBACK.into());
    env.insert("SMTP_TIMEOUT".into(), "5s".into());
    for (k, v) in extra {
        env.insert((*k).into(), (*v).into());
    }
    EmailSettings::from_source(&env).unwrap().config().unwrap()
}

fn mailer(config: &EmailConfig, clock: &Clock) -> Mailer {
    Mailer::new(config)
        .unwrap()
        .unwrap()
        .with_clock(clock.clone())
}

/// A header's value as the message carries it, if any.
fn header(data: &str, name: &str) -> Option<String> {
    let head = data.split("\n\n").next().unwrap_or("");
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

/// demo-b gets the proposal 99121 too (the seed gives the example proposals to demo-a only).
async fn demo_b_proposal(t: &TestApp) {
    let contact = "locatario.99121@demo-b.example.com";
    proposals::insert_if_absent(&mut *t.conn().await, "demo-b", "99121", contact, t0())
        .await
        .unwrap();
}

async fn put_sender(t: &TestApp, tenant: &str, body: Value) -> (u16, Value) {
    let res = t
        .client
        .put(format!("{}/admin/tenant/sender", t.base))
        .bearer_auth(t.admin(tenant))
        .json(&body)
        .send()
        .await
        .unwrap();
    crate::support::read(res).await
}

/// (status, attempts, last_error, next_attempt_at) of each outbox row, oldest first.
async fn rows(t: &TestApp) -> Vec<(String, i32, Option<String>, DateTime<Utc>)> {
    o::table
        .order(o::id)
        .select((o::status, o::attempts, o::last_error, o::next_attempt_at))
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

#[actix_web::test]
async fn each_tenant_sends_from_its_own_address_and_the_default_is_only_a_fallback() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    demo_b_proposal(&t).await;
    let sink = SmtpSink::start().await;
    let send = mailer(&config(&sink.url(), &[]), &clock);
    for tenant in ["demo-a", "demo-b"] {
        let (s, body) = t.callback(tenant, "too", example("too", "pending")).await;
        assert_eq!(s, 200, "{body}");
    }
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 2);
    let got: Vec<_> = sink
        .messages()
        .iter()
        .map(|m| {
            (
                m.rcpt[0].clone(),
                read_mail(m).from,
                header(&m.data, "Reply-To"),
                m.message_id()
                    .unwrap()
                    .split('@')
                    .nth(1)
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "locatario.99121@demo-a.example.com".to_owned(),
                "Imobiliária Demo A <propostas@demo-a.example.com>".to_owned(),
                None,
                "demo-a.example.com>".to_owned(),
            ),
            (
                "locatario.99121@demo-b.example.com".to_owned(),
                "Imobiliária Demo B <propostas@demo-b.example.com>".to_owned(),
                Some("atendimento@demo-b.example.com".to_owned()),
                "demo-b.example.com>".to_owned(),
            ),
        ]
    );

    // demo-a's admin reads its sender, then removes it: its next email falls back to
    // EMAIL_FROM, while demo-b's stays its own.
    let (s, own) = t
        .get("/admin/tenant/sender", Some(&t.admin("demo-a")))
        .await;
    assert_eq!(
        (s, own),
        (
            200,
            json!({"from_name": "Imobiliária Demo A", "from_address": "propostas@demo-a.example.com", "reply_to": null})
        )
    );
    let none = json!({"from_name": null, "from_address": null, "reply_to": null});
    assert_eq!(put_sender(&t, "demo-a", none.clone()).await, (200, none));
    let (s, _) = t
        .callback("demo-a", "too", example("too", "approved"))
        .await;
    assert_eq!(s, 200);
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 1);
    let last = sink.messages().pop().unwrap();
    assert_eq!(read_mail(&last).from, FALLBACK);
    assert_eq!(header(&last.data, "Reply-To"), None);
    assert!(
        last.message_id()
            .unwrap()
            .ends_with("@fallback.example.com>"),
        "{:?}",
        last.message_id()
    );
}

#[actix_web::test]
async fn a_sender_is_fixed_when_its_email_is_queued() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    let sink = SmtpSink::start().await;
    let send = mailer(&config(&sink.url(), &[]), &clock);
    let (s, _) = t.callback("demo-a", "too", example("too", "pending")).await;
    assert_eq!(s, 200);
    let (s, now) = put_sender(
        &t,
        "demo-a",
        json!({"from_name": "Outro Nome", "from_address": "outro@demo-a.example.com", "reply_to": "sac@demo-a.example.com"}),
    )
    .await;
    assert_eq!(s, 200, "{now}");
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 1);
    let m = &sink.messages()[0];
    assert_eq!(
        read_mail(m).from,
        "Imobiliária Demo A <propostas@demo-a.example.com>"
    );
    assert_eq!(header(&m.data, "Reply-To"), None);
}

#[actix_web::test]
async fn a_bad_sender_is_refused_naming_its_field_and_nothing_changes() {
    let t = TestApp::start().await;
    let before = t
        .get("/admin/tenant/sender", Some(&t.admin("demo-b")))
        .await;
    for (body, field) in [
        (
            json!({"from_name": "X", "from_address": "nope", "reply_to": null}),
            "from_address",
        ),
        (
            json!({"from_name": "X", "from_address": "p@localhost", "reply_to": null}),
            "from_address",
        ),
        (
            json!({"from_name": "X\r\nBcc: a@b.example.com", "from_address": "p@demo-b.example.com", "reply_to": null}),
            "from_name",
        ),
        (
            json!({"from_name": "X", "from_address": null, "reply_to": null}),
            "from_address",
        ),
        (
            json!({"from_name": null, "from_address": "p@demo-b.example.com", "reply_to": "a b@c.d"}),
            "reply_to",
        ),
    ] {
        let (s, problem) = put_sender(&t, "demo-b", body.clone()).await;
        assert_eq!(s, 400, "{body} {problem}");
        assert_eq!(
            problem["errors"][0]["field"],
            json!(field),
            "{body} {problem}"
        );
    }
    let (s, problem) = put_sender(&t, "demo-b", json!({"from": "x@y.z"})).await;
    assert_eq!(s, 400, "{problem}");
    assert_eq!(
        t.get("/admin/tenant/sender", Some(&t.admin("demo-b")))
            .await,
        before
    );
}

/// Postfix refuses a sender at RCPT (`smtpd_delay_reject`): every email of the session gets
/// `553 5.7.1 <sender>: Sender address rejected`. That is the relay's refusal of us, not of
/// the recipients: no email fails, all wait for the relay's backoff, and the console and the
/// API say the relay refuses the sender.
#[actix_web::test]
async fn a_relay_refusing_the_sender_at_rcpt_fails_no_email() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    for insurer in ["porto", "tokio", "too"] {
        let (s, _) = t
            .callback("demo-a", insurer, example(insurer, "approved"))
            .await;
        assert_eq!(s, 200);
    }
    let sink = SmtpSink::start().await;
    let reply = "553 5.7.1 <propostas@demo-a.example.com>: Sender address rejected: not owned by user relay";
    sink.refuse_every_rcpt(reply, None);
    let send = mailer(&config(&sink.url(), &[]), &clock);
    let pool = t.db.pool();
    assert_eq!(send.run_once(&pool).await.unwrap(), 0);
    assert_eq!(send.run_once(&pool).await.unwrap(), 0);
    let expected = format!(
        "the relay refuses the sender: SMTP RCPT TO: permanent error (553): {}",
        &reply[4..]
    );
    let after = rows(&t).await;
    assert_eq!(
        after
            .iter()
            .map(|(s, n, e, _)| (s.as_str(), *n, e.as_deref()))
            .collect::<Vec<_>>(),
        vec![
            ("queued", 1, Some(expected.as_str())),
            ("queued", 0, None),
            ("queued", 0, None),
        ],
        "one knock, then the relay's backoff"
    );
    assert!(after[0].3 > t0(), "a later next attempt");
    let admin = t.admin("demo-a");
    let (_, failed) = t.get("/admin/emails?status=failed", Some(&admin)).await;
    assert_eq!(failed["items"], json!([]));
    let (_, retrying) = t.get("/admin/emails?status=retrying", Some(&admin)).await;
    assert_eq!(retrying["items"][0]["last_error"], json!(expected));

    // The console's proposal page says so.
    let proposal = retrying["items"][0]["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = console_page(
        &t,
        &admin,
        &format!("/admin/integracao/propostas/{proposal}"),
    )
    .await;
    assert!(
        page.contains("O servidor de e-mail recusa o remetente"),
        "{page}"
    );

    // The relay is fixed: everything goes out.
    sink.accept_everything();
    clock.advance(chrono::Duration::minutes(1));
    assert_eq!(send.run_once(&pool).await.unwrap(), 3);
}

/// A console page as an admin signed in with `token` reads it.
async fn console_page(t: &TestApp, token: &str, path: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let res = client
        .post(format!("{}/admin/integracao/entrar", t.base))
        .header("sec-fetch-site", "same-origin")
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    let cookie = res
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|c| c.starts_with("console_session=") && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned())
        .expect("signed in");
    let res = client
        .get(format!("{}{path}", t.base))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    res.text().await.unwrap()
}

/// A relay that refuses every recipient with one reply (here one naming nobody) refuses us:
/// two emails, two recipients, the same answer.
#[actix_web::test]
async fn every_recipient_refused_with_one_reply_is_the_relays_trouble() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    for insurer in ["porto", "tokio"] {
        t.callback("demo-a", insurer, example(insurer, "approved"))
            .await;
    }
    let sink = SmtpSink::start().await;
    sink.refuse_every_rcpt("554 5.7.1 Relay access denied", None);
    let send = mailer(&config(&sink.url(), &[]), &clock);
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 0);
    let after = rows(&t).await;
    assert!(
        after.iter().all(|(s, n, e, _)| s == "queued"
            && *n == 1
            && e.as_deref().is_some_and(|e| e.starts_with(
                "the relay refuses the sender (every recipient refused with the same reply)"
            ))),
        "{after:?}"
    );
    sink.accept_everything();
    clock.advance(chrono::Duration::minutes(1));
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 2);
}

/// A relay with `reject_non_fqdn_helo_hostname` refuses a bare host name; the worker gives
/// SMTP_HELO_NAME, or by default a fully qualified name.
#[actix_web::test]
async fn the_ehlo_name_is_fully_qualified_as_relays_require() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    t.callback("demo-a", "too", example("too", "pending")).await;
    let sink = SmtpSink::start().await;
    sink.refuse_non_fqdn_helo();
    let pool = t.db.pool();

    // A bare name (what lettre gives by default on a machine called `vm`) is refused.
    let mut bare = config(&sink.url(), &[]);
    bare.hello = ClientId::Domain("vm".into());
    assert_eq!(mailer(&bare, &clock).run_once(&pool).await.unwrap(), 0);
    let error = rows(&t).await[0].2.clone().unwrap();
    assert!(error.contains("504"), "{error}");
    assert!(error.contains("Helo command rejected"), "{error}");

    let named = config(
        &sink.url(),
        &[("SMTP_HELO_NAME", "mail.demo-a.example.com")],
    );
    clock.advance(chrono::Duration::minutes(1));
    assert_eq!(mailer(&named, &clock).run_once(&pool).await.unwrap(), 1);
    assert_eq!(
        sink.helos(),
        vec!["vm".to_owned(), "mail.demo-a.example.com".to_owned()]
    );

    // The default: never a bare name.
    let default = config(&sink.url(), &[]);
    assert!(default.hello.to_string().contains('.'), "{}", default.hello);
    let refused = EmailSettings::from_source(&HashMap::from([(
        "SMTP_HELO_NAME".to_owned(),
        "vm".to_owned(),
    )]));
    assert!(refused.is_err());
}

/// Three emails the relay refused for good, sent again in one call: previewed first (nothing
/// changes), then retried, then in the sink.
#[actix_web::test]
async fn failed_emails_are_retried_in_bulk_by_filter() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    let sink = SmtpSink::start().await;
    let contacts = [
        ("porto", "POR-2026-000123"),
        ("tokio", "548812"),
        ("too", "99121"),
    ];
    for (insurer, _) in contacts {
        t.callback("demo-a", insurer, example(insurer, "approved"))
            .await;
    }
    let recipients: Vec<String> = o::table
        .order(o::id)
        .select(o::recipient)
        .load(&mut t.conn().await)
        .await
        .unwrap();
    for r in &recipients {
        sink.refuse_rcpt(r, &format!("550 5.1.1 <{r}>: user unknown"), Some(1));
    }
    let send = mailer(&config(&sink.url(), &[]), &clock);
    let pool = t.db.pool();
    assert_eq!(send.run_once(&pool).await.unwrap(), 0);
    assert!(
        rows(&t).await.iter().all(|r| r.0 == "failed"),
        "{:?}",
        rows(&t).await
    );

    let admin = t.admin("demo-a");
    let post = |path: &'static str, body: Value| {
        let t = &t;
        let admin = admin.clone();
        async move {
            t.post(
                path,
                Some(&admin),
                "application/json",
                body.to_string().into_bytes(),
            )
            .await
        }
    };
    // A filter that matches none, then one insurer's, then all of them as a preview.
    let (s, none) = post(
        "/admin/emails/retry?dry_run=true",
        json!({"failure": "content"}),
    )
    .await;
    assert_eq!((s, &none["retried"]), (200, &json!(0)), "{none}");
    let (_, porto) = post(
        "/admin/emails/retry?dry_run=true",
        json!({"insurer": "porto", "failure": "recipient"}),
    )
    .await;
    assert_eq!(porto["retried"], json!(1), "{porto}");
    let (_, preview) = post(
        "/admin/emails/retry?dry_run=true",
        json!({"since": "2029-05-06T00:00:00Z", "until": "2029-05-07T00:00:00Z"}),
    )
    .await;
    assert_eq!(
        (&preview["dry_run"], &preview["retried"], &preview["more"]),
        (&json!(true), &json!(3), &json!(false)),
        "{preview}"
    );
    assert!(rows(&t).await.iter().all(|r| r.0 == "failed"));
    let (s, bad) = post("/admin/emails/retry", json!({"failure": "spam"})).await;
    assert_eq!(s, 400, "{bad}");
    assert!(rows(&t).await.iter().all(|r| r.0 == "failed"));

    // The console shows the tenant's sender and offers the bulk retry.
    let page = console_page(&t, &admin, "/admin/integracao").await;
    assert!(
        page.contains("Imobiliária Demo A &#60;propostas@demo-a.example.com&#62;"),
        "{page}"
    );
    assert!(page.contains("Reenviar os 3 e-mails recusados"), "{page}");

    let (s, done) = post("/admin/emails/retry", json!({})).await;
    assert_eq!((s, &done["retried"]), (200, &json!(3)), "{done}");
    assert_eq!(send.run_once(&pool).await.unwrap(), 3);
    let mut got: Vec<_> = sink.messages().iter().map(|m| m.rcpt[0].clone()).collect();
    got.sort();
    let mut want = recipients.clone();
    want.sort();
    assert_eq!(got, want);
}

/// The text of a relay that cannot be reached says it once.
#[actix_web::test]
async fn an_unreachable_relay_is_described_once() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    t.callback("demo-a", "too", example("too", "pending")).await;
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let send = mailer(&config(&format!("smtp://127.0.0.1:{port}"), &[]), &clock);
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 0);
    let error = rows(&t).await[0].2.clone().unwrap();
    assert!(
        error.starts_with("SMTP connect (greeting, EHLO): Connection error: "),
        "{error}"
    );
    assert!(
        !error.contains("Connection error: Connection error"),
        "{error}"
    );
}
