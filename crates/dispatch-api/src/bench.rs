//! Only with the `bench` feature: `GET /bench/constant` answers the bytes of the file named by
//! `BENCH_CONSTANT_FILE` (read once at start), through the same App and middleware as every
//! route. bench/dispatch/run.sh compares the real routes with it (the framework ceiling).

use actix_web::{HttpResponse, web};

#[derive(Clone)]
struct Constant(web::Bytes);

pub fn configure(cfg: &mut web::ServiceConfig) {
    let body = std::env::var("BENCH_CONSTANT_FILE")
        .ok()
        .and_then(|path| std::fs::read(path).ok())
        .unwrap_or_else(|| b"[]".to_vec());
    cfg.app_data(web::Data::new(Constant(web::Bytes::from(body))))
        .route("/bench/constant", web::get().to(constant));
}

async fn constant(body: web::Data<Constant>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body.0.clone())
}
