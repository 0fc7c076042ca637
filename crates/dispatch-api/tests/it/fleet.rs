//! `/mobile-unit`, `/mobile-unit/options`, `/mobile-unit-type`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::mobile_units;

use crate::support::{Api, keys, set};

#[actix_web::test]
async fn mobile_units_all_or_active_only() {
    let api = Api::new().await;
    let (all_count, active_count): (i64, i64) = {
        let mut conn = api.conn().await;
        let all = mobile_units::table
            .count()
            .get_result(&mut conn)
            .await
            .unwrap();
        let active = mobile_units::table
            .filter(mobile_units::active)
            .count()
            .get_result(&mut conn)
            .await
            .unwrap();
        (all, active)
    };
    assert!(
        active_count < all_count,
        "the demo fleet has inactive units"
    );
    let all = api.get("admin", "/mobile-unit").await;
    assert_eq!(all.array().len() as i64, all_count);
    let active = api.get("frota", "/mobile-unit?active_only=true").await;
    assert_eq!(active.array().len() as i64, active_count);
    for u in active.array() {
        assert_eq!(
            keys(u),
            set(&["id", "name", "plate", "base", "active", "vehicle_type"])
        );
        assert_eq!(keys(&u["vehicle_type"]), set(&["id", "name"]));
        assert_eq!(u["active"], true);
    }
    let explicit_false = api.get("admin", "/mobile-unit?active_only=false").await;
    assert_eq!(explicit_false.ok(), all.ok());
    assert_eq!(
        api.get("frota", "/mobile-unit?active_only=1")
            .await
            .problem(400, "invalid_parameter"),
        Some("active_only".into())
    );

    let options = api.get("frota", "/mobile-unit/options").await;
    let options = options.array();
    assert_eq!(options.len() as i64, active_count);
    let names: Vec<&str> = options
        .iter()
        .map(|o| {
            assert_eq!(keys(o), set(&["id", "name"]));
            o["name"].as_str().unwrap()
        })
        .collect();
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| dispatch_api::search::fold(n));
    assert_eq!(names, sorted);
}

#[actix_web::test]
async fn unit_types_without_active_list_all_for_admin_screens() {
    let api = Api::new().await;
    let all = api.get("admin", "/mobile-unit-type").await;
    let names = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter()
            .map(|t| {
                assert_eq!(keys(t), set(&["id", "name", "description", "active"]));
                t["name"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    assert_eq!(
        names(all.array()),
        [
            "Aeromédico",
            "Ambulancha",
            "Motolância",
            "USA",
            "USB",
            "VIR"
        ]
    );
    let active = api.get("frota", "/mobile-unit-type?active=true").await;
    assert_eq!(names(active.array()), ["Motolância", "USA", "USB", "VIR"]);
    let explicit = api.get("frota", "/mobile-unit-type?active=false").await;
    assert_eq!(explicit.ok(), all.ok());
    assert_eq!(
        api.get("frota", "/mobile-unit-type?active=sim")
            .await
            .problem(400, "invalid_parameter"),
        Some("active".into())
    );
}
