//! Both services against a PostgreSQL that takes TLS only (`ssl = on`, `hostssl` lines), with
//! `sslmode=verify-full` and a CA of the test's own: seeding, migrating, serving, the
//! callback's transaction, dispatch's search and its `LISTEN` connection, all encrypted.

mod support;

use common::test_support::PrivatePg;
use common::test_support::pg_tls::TestCa;

use support::{
    Service, basic_token, callback_jwt, client, count, dispatch_token, porto, read, seed_both,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_services_run_over_verify_full_tls() {
    let ca = TestCa::new("system test CA");
    let cert = ca.server_cert(&["localhost", "127.0.0.1"]);
    let pg = tokio::task::spawn_blocking(move || PrivatePg::start_tls(&cert))
        .await
        .unwrap();
    let ca_file = ca.pem_file();
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        pg.port,
        ca_file.path()
    );
    let tokens = seed_both(&url);
    let dispatch = Service::start("dispatch-api", &url, &[]);
    let callback = Service::start("proposal-callback", &url, &[]);
    let http = client();

    // A callback's transition, read back.
    let jwt = callback_jwt(
        &http,
        &callback.base(),
        &basic_token(&tokens, "demo-a/porto"),
    )
    .await;
    support::insert_proposals(&url, "TLS-", 1).await;
    let res = http
        .post(format!("{}/callback/demo-a/porto", callback.base()))
        .bearer_auth(&jwt)
        .header("content-type", "application/json")
        .body(porto("TLS-0", "APROVADA"))
        .send()
        .await
        .unwrap();
    let (status, _, body) = read(res).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        count(
            &url,
            "SELECT count(*) AS n FROM proposal.integration_history h \
             JOIN proposal.proposals p ON p.id = h.proposal_id WHERE p.proposal_id = 'TLS-0'",
        )
        .await,
        1
    );

    // Dispatch's search on its pool.
    let token = dispatch_token(&url, "tarm");
    let res = http
        .get(format!("{}/incident/mask?q=silva&limit=5", dispatch.base()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let (status, _, body) = read(res).await;
    assert_eq!(status, 200, "{body}");

    // Every client connection, the listener's included, is encrypted (the server allows no
    // other, and says so).
    // The listener connects on its own after `serve` is ready: waited for, then checked.
    let listener = "SELECT count(*) AS n FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
                    WHERE a.application_name = 'dispatch-api-listener'";
    for _ in 0..100 {
        if count(&url, listener).await > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        count(&url, &format!("{listener} AND s.ssl")).await,
        1,
        "dispatch-api's LISTEN connection over TLS"
    );
    let plain = count(
        &url,
        "SELECT count(*) AS n FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
         WHERE a.backend_type = 'client backend' AND NOT s.ssl",
    )
    .await;
    assert_eq!(plain, 0);
    drop((dispatch, callback));
}
