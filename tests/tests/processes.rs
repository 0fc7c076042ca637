//! Both services as processes: one database, two schemas, real sockets, real signals.

mod support;

use std::process::Command;

use common::test_support::TestDb;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use support::{Service, bin_dir, get};

#[derive(QueryableByName)]
struct Placement {
    #[diesel(sql_type = diesel::sql_types::Text)]
    table_schema: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    table_name: String,
}

#[tokio::test(flavor = "multi_thread")]
async fn both_services_share_a_database_each_in_its_own_schema() {
    let db = TestDb::blank().await;
    let dispatch = Service::start("dispatch-api", db.url(), &[]);
    let callback = Service::start("proposal-callback", db.url(), &[]);

    for service in [&dispatch, &callback] {
        let (status, _, body) = get(&service.addr, "/healthz", &[]).unwrap();
        assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
        let (status, head, _) =
            get(&service.addr, "/readyz", &[("X-Request-Id", "sys-1")]).unwrap();
        assert_eq!(status, 200);
        assert!(head.contains("x-request-id: sys-1"), "{head}");
        let (status, _, body) = get(&service.addr, "/openapi.json", &[]).unwrap();
        assert_eq!(status, 200);
        assert!(body.contains(r#""openapi":"3.1"#), "{body:.80}");
    }

    let mut conn = db.pool().get().await.unwrap();
    let placed: Vec<Placement> = diesel::sql_query(
        "SELECT table_schema::text AS table_schema, table_name::text AS table_name \
         FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let in_schema = |s: &str| placed.iter().filter(|p| p.table_schema == s).count();
    assert!(
        in_schema("dispatch") >= 3,
        "dispatch tables live in dispatch"
    );
    assert!(
        in_schema("proposal") >= 2,
        "proposal tables live in proposal"
    );
    let elsewhere: Vec<_> = placed
        .iter()
        .filter(|p| p.table_schema != "dispatch" && p.table_schema != "proposal")
        .map(|p| format!("{}.{}", p.table_schema, p.table_name))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "tables outside the two schemas: {elsewhere:?}"
    );
    drop(conn);

    for (name, service) in [("dispatch-api", dispatch), ("proposal-callback", callback)] {
        let (status, logs) = service.terminate();
        assert!(status.success(), "{name} exited with {status}: {logs}");
        assert!(
            logs.contains(&format!("{name} stopped")),
            "{name} drained and said so: {logs}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_without_a_secret_refuses_to_start_and_names_the_variable() {
    let db = TestDb::blank().await;
    for name in ["dispatch-api", "proposal-callback"] {
        let out = Command::new(bin_dir().join(name))
            .arg("serve")
            .env("DATABASE_URL", db.url())
            .env_remove("JWT_SECRET")
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "{name} must not start without JWT_SECRET"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("JWT_SECRET"),
            "{name}"
        );
    }
}
