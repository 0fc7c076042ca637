//! The shared plumbing, proven against the real PostgreSQL: per-test databases, migrations,
//! the operational routes, request ids and problem+json for unknown routes.

use actix_web::http::StatusCode;
use actix_web::test::{self, TestRequest};
use common::db::{self, PoolSettings};
use common::http::{self, OpenApiJson};
use common::test_support::TestDb;
use diesel::QueryableByName;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, embed_migrations};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("tests/fixtures/migrations");
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/migrations");
const SCHEMA: &str = "harness";

async fn test_db() -> TestDb {
    TestDb::new(SCHEMA, MIGRATIONS, DIR).await
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

async fn notes(db: &TestDb) -> i64 {
    let mut conn = db.pool().get().await.unwrap();
    diesel::sql_query("SELECT count(*) AS n FROM harness.notes")
        .get_result::<Count>(&mut conn)
        .await
        .unwrap()
        .n
}

#[tokio::test(flavor = "multi_thread")]
async fn each_test_gets_its_own_migrated_database_dropped_afterwards() {
    let a = test_db().await;
    let b = test_db().await;
    assert_ne!(a.name(), b.name());
    {
        let mut conn = a.pool().get().await.unwrap();
        conn.batch_execute("INSERT INTO harness.notes (body) VALUES ('only in a')")
            .await
            .unwrap();
    }
    assert_eq!(notes(&a).await, 1);
    assert_eq!(notes(&b).await, 0, "b must not see a's row");

    let name = a.name().to_owned();
    drop(a);
    let mut admin = <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(
        &common::test_support::server_url(),
    )
    .await
    .unwrap();
    let left = diesel::sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<diesel::sql_types::Text, _>(&name)
        .get_result::<Count>(&mut admin)
        .await
        .unwrap()
        .n;
    assert_eq!(left, 0, "a dropped TestDb leaves no database behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn migrations_are_idempotent_and_live_in_the_service_schema() {
    let db = test_db().await;
    let again = db::migrate_async(db.url().to_owned(), SCHEMA, MIGRATIONS)
        .await
        .unwrap();
    assert!(again.is_empty(), "nothing left to apply: {again:?}");
    let mut conn = db.pool().get().await.unwrap();
    let n = diesel::sql_query(
        "SELECT count(*) AS n FROM information_schema.tables \
         WHERE table_schema = 'harness' AND table_name IN ('notes', '__diesel_schema_migrations')",
    )
    .get_result::<Count>(&mut conn)
    .await
    .unwrap()
    .n;
    assert_eq!(n, 2);
}

fn openapi() -> OpenApiJson {
    OpenApiJson::new(&utoipa::openapi::OpenApiBuilder::new().build())
}

#[actix_web::test]
async fn readyz_is_503_problem_json_when_the_database_is_down() {
    // A port nothing listens on: bind, learn the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pool = db::pool(
        &format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        &PoolSettings::new("test"),
    )
    .unwrap();
    let app = test::init_service(http::app(
        pool.clone(),
        openapi(),
        http::metrics("t", &pool),
        |_| {},
    ))
    .await;
    let res = test::call_service(&app, TestRequest::get().uri("/readyz").to_request()).await;
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        res.headers().get("content-type").unwrap(),
        "application/problem+json"
    );
    assert_eq!(res.headers().get("retry-after").unwrap(), "1");
    let body: serde_json::Value = test::read_body_json(res).await;
    assert_eq!(body["code"], "unavailable");
    // Liveness does not depend on the database.
    let res = test::call_service(&app, TestRequest::get().uri("/healthz").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
}

#[actix_web::test]
async fn operational_routes_request_ids_metrics_and_unknown_routes() {
    let db = test_db().await;
    let pool = db.pool();
    let app = test::init_service(http::app(
        pool.clone(),
        openapi(),
        http::metrics("t", &pool),
        |_| {},
    ))
    .await;

    let res = test::call_service(&app, TestRequest::get().uri("/readyz").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let generated = res
        .headers()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&generated).is_ok(), "{generated}");

    let res = test::call_service(
        &app,
        TestRequest::get()
            .uri("/healthz")
            .insert_header(("x-request-id", "call-42"))
            .to_request(),
    )
    .await;
    assert_eq!(res.headers().get("x-request-id").unwrap(), "call-42");
    let body: serde_json::Value = test::read_body_json(res).await;
    assert_eq!(body, serde_json::json!({"status": "ok"}));

    let res = test::call_service(&app, TestRequest::get().uri("/no/such/route").to_request()).await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert!(res.headers().contains_key("x-request-id"));
    assert_eq!(
        res.headers().get("content-type").unwrap(),
        "application/problem+json"
    );
    let body: serde_json::Value = test::read_body_json(res).await;
    assert_eq!(body["code"], "not_found");

    let res = test::call_service(&app, TestRequest::get().uri("/openapi.json").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let doc: serde_json::Value = test::read_body_json(res).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));

    let res = test::call_service(&app, TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let text = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
    assert!(
        text.contains(r#"t_http_requests_total{endpoint="/healthz",method="GET",status="200"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"endpoint="UNMATCHED""#),
        "unknown paths are not labelled by their raw path"
    );
    assert!(text.contains("t_db_pool_max 16"), "{text}");
    assert!(text.contains("t_http_requests_duration_seconds_bucket"));
}

#[actix_web::test]
async fn api_reference_is_served_from_the_binary() {
    let db = test_db().await;
    let pool = db.pool();
    let app = test::init_service(http::app(
        pool.clone(),
        openapi(),
        http::metrics("t", &pool),
        |_| {},
    ))
    .await;

    let res = test::call_service(&app, TestRequest::get().uri("/docs").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers().get("content-type").unwrap(),
        "text/html; charset=utf-8"
    );
    let csp = res.headers().get("content-security-policy").unwrap();
    assert!(csp.to_str().unwrap().contains("script-src 'self'"));
    let page = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
    // Nothing is fetched from another host: a closed network still gets the whole page.
    assert!(!page.contains("//"), "{page}");
    let version = common::docs::SWAGGER_UI_VERSION.trim();
    for asset in [
        "docs/swagger-ui.css",
        "docs/swagger-ui-bundle.js",
        "docs/init.js",
    ] {
        assert!(page.contains(&format!("\"{asset}?v={version}\"")), "{page}");
    }

    // Each asset the page names is served, with the vendored bytes.
    let vendored = include_bytes!("../assets/swagger-ui/swagger-ui-bundle.js");
    let res = test::call_service(
        &app,
        TestRequest::get()
            .uri(&format!("/docs/swagger-ui-bundle.js?v={version}"))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers().get("content-type").unwrap(),
        "text/javascript; charset=utf-8"
    );
    assert_eq!(test::read_body(res).await.as_ref(), vendored.as_slice());
    let res = test::call_service(
        &app,
        TestRequest::get().uri("/docs/swagger-ui.css").to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(test::read_body(res).await.len() > 100_000);
    let res = test::call_service(&app, TestRequest::get().uri("/docs/init.js").to_request()).await;
    let init = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
    assert!(init.contains(r#"url: "openapi.json""#), "{init}");
    assert!(init.contains("persistAuthorization: false"), "{init}");

    // The document the page renders is the service's own.
    let res = test::call_service(&app, TestRequest::get().uri("/openapi.json").to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
}

#[actix_web::test]
async fn the_api_reference_with_a_trailing_slash_redirects_to_the_page() {
    let db = test_db().await;
    let pool = db.pool();
    let app = test::init_service(http::app(
        pool.clone(),
        openapi(),
        http::metrics("t", &pool),
        |_| {},
    ))
    .await;

    let res = test::call_service(&app, TestRequest::get().uri("/docs/").to_request()).await;
    assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT);
    // Relative, so `/prefix/docs/` behind a proxy lands on `/prefix/docs`.
    let location = res.headers().get("location").unwrap().to_str().unwrap();
    assert_eq!(location, "../docs");
    let resolved = reqwest::Url::parse("http://127.0.0.1:8080/docs/")
        .unwrap()
        .join(location)
        .unwrap();
    assert_eq!(resolved.as_str(), "http://127.0.0.1:8080/docs");
    let res = test::call_service(&app, TestRequest::get().uri(resolved.path()).to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let page = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
    assert!(page.contains("<title>API reference</title>"), "{page}");
}
