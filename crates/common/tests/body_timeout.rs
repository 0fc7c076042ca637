//! A body that does not arrive in time is refused with 408, over a real socket: a client
//! that sends its head and then trickles (slowloris) cannot hold a request open for ever.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use common::extract::{BodyTimeout, Json};

async fn echo(body: Json<serde_json::Value>) -> HttpResponse {
    HttpResponse::Ok().json(body.0)
}

/// Sends `head`, then each of `parts` after `pause`, and reads the answer.
fn exchange(addr: std::net::SocketAddr, head: &str, parts: &[&str], pause: Duration) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    for part in parts {
        std::thread::sleep(pause);
        // The server may have answered and closed already.
        let _ = stream.write_all(part.as_bytes());
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_past_the_timeout_is_408_and_one_within_it_is_served() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = HttpServer::new(|| {
        App::new()
            .app_data(BodyTimeout(Duration::from_secs(2)))
            .route("/echo", web::post().to(echo))
    })
    .workers(1)
    .disable_signals()
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    tokio::spawn(server);

    let body = r#"{"caller":"Ana"}"#;
    let head = format!(
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let (first, rest) = body.split_at(4);

    // Trickled over about 100 ms: well within the timeout (2 s, so that a loaded machine
    // does not stretch 100 ms past it), served.
    let started = Instant::now();
    let answer = tokio::task::spawn_blocking({
        let head = head.clone();
        move || exchange(addr, &head, &[first, rest], Duration::from_millis(50))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(body), "{answer}");

    // Half a body, then silence past the timeout: 408 problem+json, not a hang.
    let answer = tokio::task::spawn_blocking(move || {
        exchange(addr, &head, &[first], Duration::from_millis(10))
    })
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(answer.contains(r#""code":"request_timeout""#), "{answer}");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    handle.stop(false).await;
}
