//! Each tenant reads its times in its own IANA time zone (docs/proposal-callback.md, "Time
//! zones"): the admin sets it (checked against the tz database), the console shows every time
//! on the tenant's clock, and the silence watch learns its rhythm by the tenant's local hours.

use chrono::{DateTime, Utc};
use common::Clock;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::domain::silence::Slot;
use proposal_callback::schema::proposal::callback_receipts as r;
use proposal_callback::store::silences;
use serde_json::{Value, json};

use crate::support::{TestApp, edited, example};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

async fn patch_tenant(t: &TestApp, tenant: &str, body: Value) -> (u16, Value) {
    let res = t
        .client
        .patch(format!("{}/admin/tenant", t.base))
        .bearer_auth(t.admin(tenant))
        .json(&body)
        .send()
        .await
        .unwrap();
    crate::support::read(res).await
}

/// The console's session cookie, as signing in sets it.
async fn console_cookie(t: &TestApp, tenant: &str) -> String {
    let res = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/admin/integracao/entrar", t.base))
        .header("sec-fetch-site", "same-origin")
        .form(&[("token", t.admin(tenant))])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    res.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .filter(|c| !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("; ")
}

async fn console_page(t: &TestApp, path: &str, cookie: &str) -> String {
    let res = t
        .client
        .get(format!("{}{path}", t.base))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

#[actix_web::test]
async fn a_tenants_time_zone_is_one_of_the_tz_database_set_by_its_admin() {
    let t = TestApp::start().await;
    let (s, b) = t.get("/admin/tenant", Some(&t.admin("demo-a"))).await;
    assert_eq!(
        (s, b["time_zone"].as_str()),
        (200, Some("America/Sao_Paulo")),
        "{b}"
    );
    for bad in [
        json!("america/manaus"),
        json!("-04:00"),
        json!("UTC-4"),
        json!(" America/Manaus"),
        json!(null),
        json!(4),
    ] {
        let (s, b) = patch_tenant(&t, "demo-a", json!({ "time_zone": bad })).await;
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("invalid_payload")),
            "{bad}: {b}"
        );
        assert!(b.to_string().contains("time_zone"), "{bad}: {b}");
    }
    // Nothing half written: a bad zone beside a good address changes neither.
    let (s, _) = patch_tenant(
        &t,
        "demo-a",
        json!({"operator_email": "new@demo-a.example.com", "time_zone": "Mars/Olympus"}),
    )
    .await;
    assert_eq!(s, 400);
    let (_, b) = t.get("/admin/tenant", Some(&t.admin("demo-a"))).await;
    assert_eq!(b["time_zone"], "America/Sao_Paulo");
    assert_ne!(b["operator_email"], "new@demo-a.example.com");
    let (s, b) = patch_tenant(&t, "demo-a", json!({"time_zone": "America/Rio_Branco"})).await;
    assert_eq!(
        (s, b["time_zone"].as_str()),
        (200, Some("America/Rio_Branco")),
        "{b}"
    );
    let (_, b) = t.get("/admin/tenant", Some(&t.admin("demo-a"))).await;
    assert_eq!(b["time_zone"], "America/Rio_Branco");
    // Another tenant keeps its own.
    let (_, b) = t.get("/admin/tenant", Some(&t.admin("demo-b"))).await;
    assert_eq!(b["time_zone"], "America/Sao_Paulo");
}

/// A callback received at 15:00Z reads 11:00 for a tenant in Manaus, 12:00 in São Paulo's
/// tenant's console.
#[actix_web::test]
async fn the_console_shows_times_on_the_tenants_clock() {
    let clock = Clock::manual(at("2026-11-24T15:00:00Z"));
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    let (s, _) = patch_tenant(&t, "demo-a", json!({"time_zone": "America/Manaus"})).await;
    assert_eq!(s, 200);
    // demo-b has no such proposal: its receipt is stored all the same, as failed.
    for (tenant, status) in [("demo-a", 200), ("demo-b", 404)] {
        let (s, b) = t
            .callback(tenant, "porto", example("porto", "pending"))
            .await;
        assert_eq!(s, status, "{b}");
    }
    let received: Vec<DateTime<Utc>> = r::table
        .select(r::received_at)
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(received, vec![at("2026-11-24T15:00:00Z"); 2]);

    let manaus = console_cookie(&t, "demo-a").await;
    let html = console_page(&t, "/admin/integracao/callbacks", &manaus).await;
    assert!(html.contains("24/11/2026 11:00:00"), "{html}");
    assert!(!html.contains("24/11/2026 12:00:00"), "{html}");
    assert!(html.contains("Fuso America/Manaus"), "{html}");
    let html = console_page(&t, "/admin/integracao", &manaus).await;
    assert!(
        html.contains("24/11/2026 11:00:00"),
        "the last callback: {html}"
    );
    let html = console_page(&t, "/admin/integracao/propostas/POR-2026-000124", &manaus).await;
    assert!(html.contains("24/11/2026 11:00:00"), "{html}");

    let sao_paulo = console_cookie(&t, "demo-b").await;
    let html = console_page(&t, "/admin/integracao/callbacks", &sao_paulo).await;
    assert!(html.contains("24/11/2026 12:00:00"), "{html}");
    assert!(html.contains("Fuso America/Sao_Paulo"), "{html}");
}

/// The gaps between callbacks are grouped by the hour of the weekday on the tenant's clock:
/// callbacks at 14:00Z and 14:10Z on a Tuesday began gaps at 10 h in Manaus, 11 h in São
/// Paulo, and the store counts them in that zone's hour only.
#[actix_web::test]
async fn the_silence_watch_learns_by_the_tenants_local_hours() {
    let clock = Clock::manual(at("2031-03-04T14:00:00Z"));
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    for (i, time) in ["14:00", "14:10", "14:20"].iter().enumerate() {
        clock.set(at(&format!("2031-03-04T{time}:00Z")));
        let body = edited("tokio", "approved", |v| {
            v["event_id"] = json!(format!("evt_zone_{i}"));
        });
        let (s, b) = t.callback("demo-a", "tokio", body).await;
        assert_eq!(s, 200, "{b}");
    }
    let id = t.integration_id("demo-a", "tokio");
    let from = at("2031-03-01T00:00:00Z");
    let to = at("2031-03-05T00:00:00Z");
    let manaus = chrono_tz::America::Manaus;
    let sao_paulo = chrono_tz::America::Sao_Paulo;
    let began = at("2031-03-04T14:00:00Z");
    assert_eq!(
        Slot::of(began, manaus),
        Slot {
            weekday: 2,
            hour: 10,
            zone: manaus
        }
    );
    let mut conn = t.conn().await;
    let slot = |hour, zone| Slot {
        weekday: 2,
        hour,
        zone,
    };
    for (slot, gaps) in [
        (Slot::of(began, manaus), 2),
        (slot(11, manaus), 0),
        (Slot::of(began, sao_paulo), 2),
        (slot(10, sao_paulo), 0),
    ] {
        let found = silences::gaps(&mut conn, id, slot, from, to).await.unwrap();
        assert_eq!(found.hour_count, gaps, "{slot:?}");
        assert_eq!(found.window_count, 2);
    }
}
