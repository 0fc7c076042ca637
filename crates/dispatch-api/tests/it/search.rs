//! Search: the work queues of `/incident/mask` (`state`, `mine`), its bounded scope (recent
//! and open by default, `since`/`until`, identifiers of any age), and Unicode folding on the
//! four search routes, the same in Rust and in SQL.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text};
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{employees, health_units, incidents, profiles, users};
use dispatch_api::search::fold;
use serde_json::{Value, json};
use unicode_normalization::UnicodeNormalization;

use crate::client::W;
use crate::support::{Api, Reply};

const OPEN: [&str; 4] = [
    "registering",
    "awaiting_regulation",
    "regulated",
    "dispatched",
];

/// `path?name=value&...`, each value percent-encoded.
fn uri(path: &str, params: &[(&str, &str)]) -> String {
    format!("{path}?{}", serde_urlencoded::to_string(params).unwrap())
}

fn ids(reply: &Reply) -> Vec<i64> {
    reply
        .array()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect()
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The incidents `user` holds: as their regulator or as the one they were transferred to.
fn held_by(
    user: i64,
) -> Box<dyn BoxableExpression<incidents::table, Pg, SqlType = Nullable<Bool>>> {
    Box::new(
        incidents::regulator_id
            .eq(user)
            .or(incidents::assigned_to_id.eq(user)),
    )
}

/// The incidents in `states` of the default scope (open ones, or created in the last 7
/// days), newest first, as the database has them.
async fn in_scope(api: &Api, states: &[&str], assigned_to: Option<i64>) -> Vec<(i64, String)> {
    let since = Utc::now() - Duration::days(7);
    let mut q = incidents::table
        .filter(incidents::state.eq_any(states.to_vec()))
        .filter(
            incidents::created_at
                .ge(since)
                .or(incidents::state.eq_any(OPEN.to_vec())),
        )
        .order_by((incidents::created_at.desc(), incidents::id.desc()))
        .select((incidents::id, incidents::number))
        .into_boxed();
    if let Some(user) = assigned_to {
        q = q.filter(held_by(user));
    }
    q.load(&mut api.conn().await).await.unwrap()
}

/// The incidents in the open `states` as a work queue lists them (docs/dispatch-routes.md,
/// "Work queues"): priority, critical first and none last, then the longest waiting in its
/// state first, then id; all of them, whatever their age.
async fn in_queue(api: &Api, states: &[&str], assigned_to: Option<i64>) -> Vec<i64> {
    let mut q = incidents::table
        .filter(incidents::state.eq_any(states.to_vec()))
        .select((incidents::id, incidents::priority, incidents::waiting_since))
        .into_boxed();
    if let Some(user) = assigned_to {
        q = q.filter(held_by(user));
    }
    let mut rows: Vec<(i64, Option<String>, DateTime<Utc>)> =
        q.load(&mut api.conn().await).await.unwrap();
    let rank = |p: &Option<String>| {
        ["critical", "high", "medium", "low"]
            .iter()
            .position(|r| p.as_deref() == Some(*r))
            .unwrap_or(4)
    };
    rows.sort_by_key(|(id, p, since)| (rank(p), *since, *id));
    rows.into_iter().map(|(id, _, _)| id).collect()
}

#[actix_web::test]
async fn a_regulator_lists_what_awaits_regulation_and_only_that() {
    let w = W::new().await;
    let api = &w.api;
    // Two more awaiting regulation, one of them created long ago and still open; both
    // without a priority, so last in the queue, the one that waits longer first.
    let (fresh, _) = w.incident_in("awaiting_regulation").await;
    let (old, _) = w.incident_in("awaiting_regulation").await;
    diesel::update(incidents::table.find(old))
        .set(incidents::created_at.eq(Utc::now() - Duration::days(90)))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    let expected: Vec<i64> = in_queue(api, &["awaiting_regulation"], None).await;
    assert!(expected.len() >= 3 && expected.len() <= 20, "{expected:?}");
    let queue = api
        .get("regulador", "/incident/mask?state=awaiting_regulation")
        .await;
    assert_eq!(
        ids(&queue),
        expected,
        "every incident awaiting regulation, in queue order"
    );
    assert!(
        queue
            .array()
            .iter()
            .all(|i| i["state"] == "awaiting_regulation")
    );
    assert_eq!(ids(&queue)[expected.len() - 2..], [fresh, old]);
    // `order=newest` lists it newest first, the old open one last.
    let expected: Vec<(i64, String)> = in_scope(api, &["awaiting_regulation"], None)
        .await
        .into_iter()
        .take(20)
        .collect();
    let newest = api
        .get(
            "regulador",
            "/incident/mask?state=awaiting_regulation&order=newest",
        )
        .await;
    assert_eq!(
        newest
            .array()
            .iter()
            .map(|i| (
                i["id"].as_i64().unwrap(),
                i["number"].as_str().unwrap().to_owned()
            ))
            .collect::<Vec<_>>(),
        expected,
        "every incident awaiting regulation, newest first, the old open one last"
    );
    assert_eq!(ids(&newest)[0], fresh);
    assert_eq!(*ids(&newest).last().unwrap(), old);

    // Several states: repeated or comma-separated, the same queue.
    let both = in_queue(api, &["registering", "awaiting_regulation"], None).await;
    let expected: Vec<i64> = both.into_iter().take(20).collect();
    for q in [
        "/incident/mask?state=registering&state=awaiting_regulation",
        "/incident/mask?state=registering,awaiting_regulation",
        "/incident/mask?state=awaiting_regulation,registering&limit=20",
    ] {
        assert_eq!(ids(&api.get("regulador", q).await), expected, "{q}");
    }
    let page = api
        .get(
            "regulador",
            "/incident/mask?state=registering,awaiting_regulation&limit=3&offset=2",
        )
        .await;
    assert_eq!(ids(&page), expected[2..5]);
    // A queue order is for work queues only: named when asked of anything else.
    for q in [
        "/incident/mask?state=closed&order=queue",
        "/incident/mask?order=queue",
        "/incident/mask?state=regulated&q=silva&order=queue",
        "/incident/mask?state=regulated&order=oldest",
    ] {
        let reply = api.get("regulador", q).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some("order".into()),
            "{q}"
        );
    }
    // A state of the past is searched in the recent window only.
    let closed = api.get("regulador", "/incident/mask?state=closed").await;
    let expected: Vec<i64> = in_scope(api, &["closed"], None)
        .await
        .iter()
        .map(|(id, _)| *id)
        .take(20)
        .collect();
    assert_eq!(ids(&closed), expected);

    for (q, unknown) in [
        ("/incident/mask?state=awaiting", "`awaiting`"),
        ("/incident/mask?state=closed,open", "`open`"),
        ("/incident/mask?state=closed&state=", "``"),
    ] {
        let reply = api.get("regulador", q).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some("state".into()),
            "{q}"
        );
        let detail = reply.body["detail"].as_str().unwrap();
        assert!(detail.contains(unknown), "{q}: {detail}");
    }
    let reply = api.get("regulador", "/incident/mask?mine=yes").await;
    assert_eq!(reply.problem(400, "invalid_parameter"), Some("mine".into()));
}

#[actix_web::test]
async fn mine_lists_what_was_sent_to_the_caller() {
    let w = W::new().await;
    let api = &w.api;
    let other: (i64, String) = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .filter(users::id.ne(api.id("regulador")))
        .select((users::id, users::descriptive_name))
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let number: String = incidents::table
        .find(id)
        .select(incidents::number)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let sent = w
        .post(
            &format!("/incident/{id}/send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": other.0}),
        )
        .await;
    assert_eq!(sent.status.as_u16(), 200, "{}", sent.body);

    // Transferred to them, and both regulated by and transferred to them (listed once).
    let (transferred, _) = w.incident_in("registering").await;
    let (both, _) = w.incident_in("registering").await;
    let mut conn = api.conn().await;
    diesel::update(incidents::table.find(transferred))
        .set(incidents::assigned_to_id.eq(other.0))
        .execute(&mut conn)
        .await
        .unwrap();
    diesel::update(incidents::table.find(both))
        .set((
            incidents::assigned_to_id.eq(other.0),
            incidents::regulator_id.eq(other.0),
        ))
        .execute(&mut conn)
        .await
        .unwrap();
    let theirs = api
        .get_with_token(
            Some(&api.token_of(other.0, std::time::Duration::from_secs(300))),
            "/incident/mask?mine=true",
        )
        .await;
    let numbers: Vec<String> = incidents::table
        .filter(incidents::id.eq_any([transferred, both]))
        .order_by(incidents::id)
        .select(incidents::number)
        .load(&mut conn)
        .await
        .unwrap();
    for id in [transferred, both] {
        assert_eq!(ids(&theirs).iter().filter(|i| **i == id).count(), 1, "{id}");
    }
    let every_state = [OPEN.as_slice(), &["closed", "cancelled", "prank"]].concat();
    let expected: Vec<(i64, String)> = in_scope(api, &every_state, Some(other.0))
        .await
        .into_iter()
        .take(20)
        .collect();
    let listed: Vec<(i64, String)> = theirs
        .array()
        .iter()
        .map(|i| {
            (
                i["id"].as_i64().unwrap(),
                i["number"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        listed[..3],
        [
            (both, numbers[1].clone()),
            (transferred, numbers[0].clone()),
            (id, number.clone())
        ],
        "the newest first: {listed:?}"
    );
    assert_eq!(listed, expected);
    // Their queue of incidents awaiting regulation sent to them, in queue order.
    let queue = api
        .get_with_token(
            Some(&api.token_of(other.0, std::time::Duration::from_secs(300))),
            "/incident/mask?mine=true&state=awaiting_regulation",
        )
        .await;
    assert_eq!(
        ids(&queue),
        in_queue(api, &["awaiting_regulation"], Some(other.0)).await
    );
    let row = queue.array().iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(row["number"], number.as_str());
    // The sender no longer has it.
    let mine = api.get("regulador", "/incident/mask?mine=true").await;
    assert!(!ids(&mine).contains(&id));
    let detail = api.get("regulador", &format!("/incident/{id}")).await;
    assert_eq!(
        detail.ok()["regulation"]["regulator"],
        json!({"id": other.0, "descriptive_name": other.1})
    );
}

/// An incident moved `days_ago`, with a name, a phone and an address of its own.
async fn make_old(api: &Api, days_ago: i64, caller: &str, phone: &str) -> (i64, String) {
    let mut conn = api.conn().await;
    let id: i64 = incidents::table
        .filter(incidents::state.eq("closed"))
        .select(incidents::id)
        .order_by(incidents::id)
        .first(&mut conn)
        .await
        .unwrap();
    let at = Utc::now() - Duration::days(days_ago);
    diesel::update(incidents::table.find(id))
        .set((
            incidents::created_at.eq(at),
            incidents::updated_at.eq(at + Duration::hours(2)),
            incidents::closed_at.eq(at + Duration::hours(2)),
            incidents::caller_name.eq(caller),
            incidents::caller_phone.eq(phone),
            // The key every write stores beside the phone (domain::phone).
            incidents::caller_phone_key.eq(dispatch_api::domain::phone::key_of(phone)),
            incidents::patient_name.eq(caller),
            incidents::address.eq("Travessa do Ouvidor, 12 - Centro"),
        ))
        .returning((incidents::id, incidents::number))
        .get_result(&mut conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn old_incidents_are_reached_by_window_or_identifier_only() {
    let api = Api::new().await;
    let (id, number) = make_old(&api, 60, "Teodoro Quixabeira Silva", "(47) 98765-1234").await;
    let at: DateTime<Utc> = incidents::table
        .find(id)
        .select(incidents::created_at)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let around = [
        ("since", rfc3339(at - Duration::days(1))),
        ("until", rfc3339(at + Duration::days(1))),
    ];
    let mask = |q: &str, window: bool| {
        let mut params = vec![("q", q.to_owned())];
        if window {
            params.extend(around.iter().map(|(k, v)| (*k, v.clone())));
        }
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        uri("/incident/mask", &params)
    };
    // By default, words do not reach it: not its rare name, not a common one, not a phone
    // prefix.
    for q in ["quixabeira", "silva", "Ouvidor", "4798765"] {
        let found = api.get("tarm", &mask(q, false)).await;
        assert!(!ids(&found).contains(&id), "{q}: {}", found.body);
    }
    assert!(ids(&api.get("tarm", &mask("silva", false)).await).len() <= 20);
    // A window around it does, and only it lies there.
    for q in ["quixabeira", "silva", "ouvidor", "4798765", "teodoro q"] {
        assert_eq!(ids(&api.get("tarm", &mask(q, true)).await), [id], "{q}");
    }
    let listed = api
        .get(
            "tarm",
            &uri(
                "/incident/mask",
                &[("since", &around[0].1), ("until", &around[1].1)],
            ),
        )
        .await;
    assert_eq!(ids(&listed), [id]);
    // Its number and its phone, in any format, find it whatever its age.
    for q in [
        number.as_str(),
        "47987651234",
        "(47) 98765-1234",
        "+55 47 98765-1234",
        "5547987651234",
    ] {
        let found = api.get("tarm", &uri("/incident/mask", &[("q", q)])).await;
        assert_eq!(ids(&found), [id], "{q}");
        assert_eq!(found.array()[0]["number"], number.as_str());
        assert_eq!(found.array()[0]["caller_name"], "Teodoro Quixabeira Silva");
    }
    // A phone stored with its country code is the same phone.
    diesel::update(incidents::table.find(id))
        .set((
            incidents::caller_phone.eq("+55 (47) 98765-1234"),
            incidents::caller_phone_key
                .eq(dispatch_api::domain::phone::key_of("+55 (47) 98765-1234")),
        ))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    for q in ["47987651234", "+5547987651234"] {
        let found = api.get("tarm", &uri("/incident/mask", &[("q", q)])).await;
        assert_eq!(ids(&found), [id], "{q}");
    }
    let prefix = api.get("tarm", &mask("4798765", true)).await;
    assert_eq!(ids(&prefix), [id]);
}

/// Gives these incidents a caller (and patient) name and a phone, its key as the writes store it.
async fn call_from(api: &Api, ids: &[i64], name: &str, phone: &str) {
    diesel::update(incidents::table.filter(incidents::id.eq_any(ids)))
        .set((
            incidents::caller_name.eq(name),
            incidents::patient_name.eq(name),
            incidents::caller_phone.eq(phone),
            incidents::caller_phone_key.eq(dispatch_api::domain::phone::key_of(phone)),
        ))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
}

/// A phone prefix or a word shared by more than a page of incidents answers the newest of
/// them in order, page by page, and with a state filter: whether the first statement of the
/// search finds them among the window's newest incidents (25 per row asked for) or the
/// statement planned for the term does, further back; a phone stored with the country code
/// or without.
#[actix_web::test]
async fn a_common_prefix_or_word_answers_its_newest_matches_page_by_page() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    // Every incident in the recent window, an hour apart, in their order.
    let all: Vec<i64> = incidents::table
        .order_by((incidents::created_at.desc(), incidents::id.desc()))
        .select(incidents::id)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(all.len() >= 80, "{} incidents", all.len());
    let now = Utc::now();
    for (i, id) in all.iter().enumerate() {
        diesel::update(incidents::table.find(id))
            .set(incidents::created_at.eq(now - Duration::hours(i as i64 + 1)))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let window: Vec<(i64, String)> = incidents::table
        .filter(incidents::id.eq_any(&all))
        .order_by((incidents::created_at.desc(), incidents::id.desc()))
        .select((incidents::id, incidents::state))
        .load(&mut conn)
        .await
        .unwrap();
    let at = |positions: std::ops::Range<usize>| -> Vec<i64> {
        window[positions].iter().step_by(2).map(|w| w.0).collect()
    };
    // 30 among the newest, 10 at the back, and another prefix only at the back (three of
    // them, past the newest 25 or 50 that a page of one or two reads first).
    let (newest, back, other) = (at(0..60), at(61..80), at(60..65));
    call_from(&api, &newest[..15], "Zenóbia Quelhas", "(47) 3210-4455").await;
    call_from(&api, &newest[15..], "Zenóbia Quelhas", "+55 47 3210-7788").await;
    call_from(&api, &back, "Ana Aquelhas", "(47) 3210-9900").await;
    call_from(&api, &other, "Otília Prates", "(47) 3299-1234").await;

    // What each search must answer: the window's order, word-prefix matches first.
    let in_order = |groups: &[&[i64]], state: Option<&str>| -> Vec<i64> {
        groups
            .iter()
            .flat_map(|group| {
                window
                    .iter()
                    .filter(|w| group.contains(&w.0) && state.is_none_or(|s| w.1 == s))
                    .map(|w| w.0)
            })
            .collect()
    };
    let both: Vec<i64> = newest.iter().chain(&back).copied().collect();
    let cases: [(&str, Vec<i64>, Option<&str>); 5] = [
        ("473210", in_order(&[&both], None), None),
        ("(47) 3210", in_order(&[&both], None), None),
        ("quelhas", in_order(&[&newest, &back], None), None),
        ("473210", in_order(&[&both], Some("closed")), Some("closed")),
        ("473299", in_order(&[&other], None), None),
    ];
    for (q, expected, state) in cases {
        assert!(expected.len() >= 3, "{q}: {expected:?}");
        for (limit, offset) in [
            (20, 0),
            (20, 20),
            (20, 40),
            (7, 3),
            (1, 0),
            (1, 29),
            (2, 1),
            (3, 0),
        ] {
            let mut params = vec![
                ("q", q.to_owned()),
                ("limit", limit.to_string()),
                ("offset", offset.to_string()),
            ];
            params.extend(state.map(|s| ("state", s.to_owned())));
            let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let found = api.get("tarm", &uri("/incident/mask", &params)).await;
            let page: Vec<i64> = expected.iter().skip(offset).take(limit).copied().collect();
            assert_eq!(
                ids(&found),
                page,
                "{q} limit {limit} offset {offset} {state:?}"
            );
        }
    }
    // A page of 20 of the 40: the 20 newest, with what was written.
    let first = api
        .get("tarm", &uri("/incident/mask", &[("q", "473210")]))
        .await;
    assert_eq!(ids(&first), newest[..20]);
    assert_eq!(first.array()[0]["caller_name"], "Zenóbia Quelhas");
    assert_eq!(first.array()[19]["patient_name"], "Zenóbia Quelhas");
}

#[actix_web::test]
async fn the_window_is_bounded_and_named_when_refused() {
    let api = Api::new().await;
    let now = Utc::now();
    let refused = [
        // 32 days.
        vec![
            ("since", rfc3339(now - Duration::days(40))),
            ("until", rfc3339(now - Duration::days(8))),
        ],
        // `until` defaults to now: 60 days.
        vec![("since", rfc3339(now - Duration::days(60)))],
        // Reversed, and empty.
        vec![
            ("since", rfc3339(now - Duration::days(1))),
            ("until", rfc3339(now - Duration::days(2))),
        ],
        vec![
            ("since", rfc3339(now - Duration::days(1))),
            ("until", rfc3339(now - Duration::days(1))),
        ],
    ];
    for params in refused {
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let reply = api.get("tarm", &uri("/incident/mask", &params)).await;
        reply.problem(400, "invalid_parameter");
        let fields: Vec<&str> = reply.body["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["since", "until"], "{params:?}: {}", reply.body);
    }
    // 31 days exactly is accepted; `until` alone means the 7 days before it.
    let ok = [
        vec![
            ("since", rfc3339(now - Duration::days(40))),
            ("until", rfc3339(now - Duration::days(9))),
        ],
        vec![("until", rfc3339(now - Duration::days(100)))],
        vec![("since", rfc3339(now - Duration::days(3)))],
    ];
    for params in ok {
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        api.get("tarm", &uri("/incident/mask", &params)).await.ok();
    }
    let reply = api.get("tarm", "/incident/mask?since=yesterday").await;
    assert_eq!(
        reply.problem(400, "invalid_parameter"),
        Some("since".into())
    );
}

#[actix_web::test]
async fn word_prefix_matches_come_before_infix_ones_then_newest_first() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    let some: Vec<i64> = incidents::table
        .select(incidents::id)
        .order_by(incidents::id)
        .limit(3)
        .load(&mut conn)
        .await
        .unwrap();
    let base = Utc::now() - Duration::days(200);
    // (id, caller, hours after base): the infix match is the newest.
    for (id, caller, hours) in [
        (some[0], "Ana Bessarabova", 1),
        (some[1], "Rui Bessa", 2),
        (some[2], "Ana Abessalom", 3),
    ] {
        diesel::update(incidents::table.find(id))
            .set((
                incidents::caller_name.eq(caller),
                incidents::created_at.eq(base + Duration::hours(hours)),
            ))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let window = [
        ("q", "BESSA".to_owned()),
        ("since", rfc3339(base)),
        ("until", rfc3339(base + Duration::days(1))),
    ];
    let params: Vec<(&str, &str)> = window.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let found = api.get("tarm", &uri("/incident/mask", &params)).await;
    assert_eq!(ids(&found), [some[1], some[0], some[2]]);
    let mut paged = params.clone();
    paged.extend([("limit", "1"), ("offset", "2")]);
    let page = api.get("tarm", &uri("/incident/mask", &paged)).await;
    assert_eq!(ids(&page), [some[2]]);
}

/// Inputs where a naive fold goes wrong: decomposed and stacked accents, ligatures,
/// fullwidth and other compatibility forms, letters without a decomposition, Greek and
/// Cyrillic case, marks of every removed block.
const TRICKY: &[&str] = &[
    "São José dos Campos",
    "Sa\u{0303}o Jose\u{0301}",
    "SA\u{0303}O JOSE\u{0301}",
    "Ｓãｏ　Ｊｏｓé",
    "ﬁﬂ ﬀ Ǆ ǅ ǆ Ĳ",
    "Straße STRASSE ẞ",
    "Æsir Œuvre æ œ Ø ø Þór ð Đ Łódź Ħ ı Ŧ",
    "ΟΔΟΣ Σίσυφος",
    "Ёлка ЙОД",
    "İstanbul",
    "x\u{1AB0}y\u{1DC0}z\u{20D7}w\u{FE20}v",
    "a\u{0301}\u{0327}\u{0308}",
    "① ² ½ ℌ ℡ ㎏",
    "Ǖ ǘ Ṩ ḯ",
    "  (12) 99100-4321  ",
    "50% off_\\",
];

#[actix_web::test]
async fn rust_and_sql_fold_alike() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    for input in TRICKY {
        let sql: String = diesel::select(
            diesel::dsl::sql::<Text>("dispatch.search_key(")
                .bind::<Text, _>(*input)
                .sql(")"),
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        assert_eq!(fold(input), sql, "{input:?}");
    }
    assert_eq!(fold("Sa\u{0303}o Jose\u{0301}"), "sao jose");
    assert_eq!(fold("Ｓãｏ　Ｊｏｓé"), "sao jose");
    assert_eq!(fold("Straße ẞ"), "strasse ss");
    assert_eq!(fold("ﬁﬂ Œuvre Łódź"), "fifl oeuvre lodz");
}

/// The words of `name` that carry an accent, decomposed (NFD) as some keyboards send them.
fn accented_word(name: &str) -> Option<(String, String)> {
    name.split(' ')
        .find(|w| !w.is_ascii())
        .map(|w| (w.to_owned(), w.nfd().collect()))
}

#[actix_web::test]
async fn decomposed_accents_find_what_composed_ones_find_on_every_search() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    // A word of an incident in the default scope (an open one).
    let callers: Vec<String> = incidents::table
        .filter(incidents::state.eq_any(OPEN))
        .select(incidents::caller_name)
        .load(&mut conn)
        .await
        .unwrap();
    let incident_word = callers.iter().find_map(|c| accented_word(c)).unwrap();
    let regulators: Vec<String> = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .select(users::descriptive_name)
        .load(&mut conn)
        .await
        .unwrap();
    let regulator_word = regulators.iter().find_map(|c| accented_word(c)).unwrap();
    let staff: Vec<String> = employees::table
        .inner_join(users::table)
        .filter(employees::active)
        .filter(users::status.eq("ativo"))
        .select(users::descriptive_name)
        .load(&mut conn)
        .await
        .unwrap();
    let employee_word = staff.iter().find_map(|c| accented_word(c)).unwrap();
    let unit_names: Vec<String> = health_units::table
        .filter(health_units::active)
        .select(health_units::name)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(unit_names.iter().any(|n| n.contains("São")));
    let unit_word = ("São".to_owned(), "Sa\u{0303}o".to_owned());

    for (path, param, (composed, decomposed)) in [
        ("/incident/mask", "q", incident_word),
        ("/user/search", "q", regulator_word),
        ("/employee/search", "query", employee_word),
        ("/health-unit", "q", unit_word),
    ] {
        assert_ne!(composed, decomposed);
        let a = api.get("tarm", &uri(path, &[(param, &composed)])).await;
        let b = api.get("tarm", &uri(path, &[(param, &decomposed)])).await;
        let upper: String = decomposed.to_uppercase();
        let c = api.get("tarm", &uri(path, &[(param, &upper)])).await;
        assert!(!a.array().is_empty(), "{path} {composed}");
        assert_eq!(ids(&a), ids(&b), "{path}: {composed} vs {decomposed:?}");
        assert_eq!(ids(&a), ids(&c), "{path}: {composed} vs {upper:?}");
        let names: Vec<&Value> = a.array().iter().collect();
        assert!(!names.is_empty());
    }
}
