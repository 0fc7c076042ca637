//! `/health-unit`, `/technical-decision-action`, `/intercurrence`, `/professional-type`,
//! `/unallocated`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{health_units, unallocated, users};
use dispatch_api::search::fold;
use serde_json::{Value, json};

use crate::support::{Api, keys, set};

fn names(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|x| x["name"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn health_units_search_is_accent_blind_prefix_first_and_capped() {
    let api = Api::new().await;
    let reply = api.get("tarm", "/health-unit?q=sao%20jose").await;
    let found = reply.array();
    assert!(!found.is_empty() && found.len() <= 20);
    for h in found {
        assert_eq!(keys(h), set(&["id", "name", "city", "uf"]));
        let name = fold(h["name"].as_str().unwrap());
        assert!(name.contains("sao") && name.contains("jose"), "{h}");
    }
    // Prefix matches first, then infix ones, then the words apart; each group in name order.
    let folded: Vec<String> = names(found).iter().map(|n| fold(n)).collect();
    let group = |n: &String| {
        if n.starts_with("sao jose") {
            0
        } else if n.contains("sao jose") {
            1
        } else {
            2
        }
    };
    let ranked: Vec<(i32, &String)> = folded.iter().map(|n| (group(n), n)).collect();
    let mut sorted = ranked.clone();
    sorted.sort();
    assert_eq!(ranked, sorted);

    // "hospital" matches many: 20 at most, paging continues where the page ended.
    let first = api.get("tarm", "/health-unit?q=HOSPITAL").await;
    assert_eq!(first.array().len(), 20);
    let five = api
        .get("tarm", "/health-unit?q=hospital&limit=5&offset=5")
        .await;
    assert_eq!(five.array()[..], first.array()[5..10]);
    let no_q = api.get("tarm", "/health-unit").await;
    assert_eq!(no_q.array().len(), 20);

    // Inactive units are no destination.
    let (inactive_id, inactive_name): (i64, String) = health_units::table
        .filter(health_units::active.eq(false))
        .select((health_units::id, health_units::name))
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let mut offset = 0;
    loop {
        let q = fold(&inactive_name).replace(' ', "%20");
        let page = api
            .get("tarm", &format!("/health-unit?q={q}&offset={offset}"))
            .await;
        let page = page.array();
        assert!(page.iter().all(|h| h["id"] != inactive_id));
        if page.len() < 20 {
            break;
        }
        offset += 20;
    }
}

/// Every word of `q` in any order, accent- and case-blind, and `city` narrowing to one city
/// (its whole name, folded): the patient destination picker of docs/dispatch-routes.md.
#[actix_web::test]
async fn health_units_match_every_word_in_any_order_and_a_city_narrows_them() {
    let api = Api::new().await;
    let all: Vec<(i64, String, String)> = health_units::table
        .filter(health_units::active)
        .select((health_units::id, health_units::name, health_units::city))
        .load(&mut api.conn().await)
        .await
        .unwrap();
    // What a search must find, by its definition: (group, folded name, id), in order. Units
    // of the same name in several cities come in any order among themselves, so a search is
    // compared by its names in order and by its ids as a set.
    let expected = |q: &str, city: Option<&str>| -> Vec<(i32, String, i64)> {
        let words: Vec<&str> = q.split_whitespace().collect();
        let mut hits: Vec<(i32, String, i64)> = all
            .iter()
            .filter(|(_, _, c)| city.is_none_or(|city| fold(c) == city))
            .filter_map(|(id, name, _)| {
                let n = fold(name);
                let group = if n.starts_with(q) {
                    0
                } else if n.contains(q) {
                    1
                } else if words.iter().all(|w| n.contains(w)) {
                    2
                } else {
                    return None;
                };
                Some((group, n, *id))
            })
            .collect();
        hits.sort();
        hits
    };
    let listed = async |uri: String| -> Vec<(String, i64)> {
        let mut found = Vec::new();
        loop {
            let page = api
                .get("tarm", &format!("{uri}&offset={}", found.len()))
                .await;
            let n = page.array().len();
            found.extend(
                page.array()
                    .iter()
                    .map(|h| (fold(h["name"].as_str().unwrap()), h["id"].as_i64().unwrap())),
            );
            if n < 20 {
                return found;
            }
        }
    };
    let same = |found: &[(String, i64)], expected: &[(i32, String, i64)], what: &str| {
        let names: Vec<&String> = found.iter().map(|f| &f.0).collect();
        let want: Vec<&String> = expected.iter().map(|e| &e.1).collect();
        assert_eq!(names, want, "{what}");
        let mut ids: Vec<i64> = found.iter().map(|f| f.1).collect();
        let mut want: Vec<i64> = expected.iter().map(|e| e.2).collect();
        ids.sort();
        want.sort();
        assert_eq!(ids, want, "{what}");
    };
    for (q, encoded) in [
        ("hosp sao", "hosp%20sao"),
        ("sao hosp", "S%C3%83O%20Hosp"),
        ("municipal hospital", "municipal%20hospital"),
        ("sa de", "sa%20de"),
    ] {
        let found = listed(format!("/health-unit?q={encoded}")).await;
        same(&found, &expected(q, None), q);
        assert!(!found.is_empty(), "{q}");
        let narrowed = listed(format!("/health-unit?q={encoded}&city=bel%C3%A9m")).await;
        same(&narrowed, &expected(q, Some("belem")), q);
        assert!(narrowed.len() < found.len(), "{q}");
    }
    // A city alone lists its units in name order; a city with none lists nothing.
    let belem = listed("/health-unit?city=BELEM".to_owned()).await;
    same(&belem, &expected("", Some("belem")), "Belém");
    assert!(!belem.is_empty());
    assert!(
        api.get("tarm", "/health-unit?city=Atlantida")
            .await
            .array()
            .is_empty()
    );
    let long = format!("/health-unit?city={}", "x".repeat(101));
    let reply = api.get("tarm", &long).await;
    assert_eq!(reply.problem(400, "invalid_parameter"), Some("city".into()));
}

#[actix_web::test]
async fn reference_lists_hide_inactive_and_deleted_records() {
    let api = Api::new().await;
    let actions = api.get("regulador", "/technical-decision-action").await;
    assert_eq!(
        names(actions.array()),
        [
            "Acionamento do Corpo de Bombeiros",
            "Encaminhamento a unidade de saúde",
            "Envio de motolância",
            "Envio de USA",
            "Envio de USB",
            "Orientação médica por telefone",
            "Transferência inter-hospitalar"
        ]
    );
    for a in actions.array() {
        assert_eq!(keys(a), set(&["id", "name"]));
    }
    let inter = api.get("frota", "/intercurrence").await;
    assert_eq!(
        names(inter.array()),
        [
            "Agressão à equipe",
            "Endereço não localizado",
            "Falta de maca na unidade de destino",
            "Óbito no local",
            "Paciente recusou atendimento",
            "Pane mecânica",
            "Pneu furado",
            "Trânsito intenso"
        ]
    );
    let all = api.get("admin", "/professional-type").await;
    assert_eq!(all.array().len(), 9);
    let active = api
        .get("admin", "/professional-type?active_only=true")
        .await;
    assert_eq!(active.array().len(), 7);
    for t in active.array() {
        assert_eq!(keys(t), set(&["id", "name", "active"]));
        assert_eq!(t["active"], true);
    }
    assert_eq!(
        api.get("admin", "/professional-type?active_only=yes")
            .await
            .problem(400, "invalid_parameter"),
        Some("active_only".into())
    );
}

#[actix_web::test]
async fn unallocated_pages_with_or_without_the_caller() {
    let api = Api::new().await;
    let total: i64 = unallocated::table
        .inner_join(users::table)
        .filter(users::status.eq("ativo"))
        .count()
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
    let reply = api.get("frota", "/unallocated").await;
    let body = reply.ok();
    assert_eq!(keys(body), set(&["items", "page", "page_size", "total"]));
    assert_eq!(
        (body["page"].clone(), body["page_size"].clone()),
        (json!(1), json!(20))
    );
    assert_eq!(body["total"], total);
    let me = api.id("frota");
    let mine = |v: &Value| {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["user"]["id"] == me)
    };
    let e = &body["items"][0];
    assert_eq!(
        keys(e),
        set(&["id", "user", "professional_type", "reason", "since"])
    );
    assert_eq!(keys(&e["user"]), set(&["id", "descriptive_name"]));

    let big = api.get("frota", "/unallocated?page_size=100").await;
    assert!(mine(big.ok()));
    assert_eq!(big.ok()["items"].as_array().unwrap().len() as i64, total);
    let without = api
        .get("frota", "/unallocated?page_size=100&include_self=false")
        .await;
    assert!(!mine(without.ok()));
    assert_eq!(without.ok()["total"], total - 1);

    // Page 2 continues page 1.
    let all = big.ok()["items"].as_array().unwrap();
    assert!(all.len() >= 4);
    let p1 = api.get("frota", "/unallocated?page=1&page_size=2").await;
    let p2 = api.get("frota", "/unallocated?page=2&page_size=2").await;
    assert_eq!(p1.ok()["items"].as_array().unwrap()[..], all[..2]);
    assert_eq!(p2.ok()["items"].as_array().unwrap()[..], all[2..4]);
    let past = api
        .get("frota", "/unallocated?page=500&page_size=100")
        .await;
    assert_eq!(past.ok()["items"], json!([]));
    assert_eq!(past.ok()["total"], total);

    for (uri, field) in [
        ("/unallocated?page=0", "page"),
        ("/unallocated?page=-1", "page"),
        ("/unallocated?page=x", "page"),
        ("/unallocated?page_size=0", "page_size"),
        ("/unallocated?page_size=101", "page_size"),
        ("/unallocated?include_self=maybe", "include_self"),
    ] {
        let reply = api.get("frota", uri).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some(field.into()),
            "{uri}"
        );
    }
}

#[actix_web::test]
async fn reference_data_is_served_from_memory_until_refreshed() {
    let api = Api::new().await;
    let id: i64 = health_units::table
        .filter(health_units::active)
        .select(health_units::id)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    assert!(
        api.get("tarm", "/health-unit?q=xyzzy")
            .await
            .array()
            .is_empty()
    );
    diesel::update(health_units::table.find(id))
        .set(health_units::name.eq("Hospital Xyzzy de Açaí"))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    // The snapshot does not change under a request...
    assert!(
        api.get("tarm", "/health-unit?q=xyzzy")
            .await
            .array()
            .is_empty()
    );
    // ...until a write calls refresh().
    let state = api.state();
    state.catalog.refresh(&state.pool).await.unwrap();
    let found = api.get("tarm", "/health-unit?q=XYZZY%20de%20acai").await;
    assert_eq!(found.array().len(), 1);
    assert_eq!(found.array()[0]["id"], id);
}
