//! Only with the `bench` feature: what the benchmarks' build adds, and the two variables it
//! reads (through [`crate::settings::Settings`], like every other):
//!
//! - `GET /bench/constant` answers the bytes of the file named by `BENCH_CONSTANT_FILE`
//!   (read once at start), through the same App and middleware as every route.
//!   bench/dispatch/run.sh compares the real routes with it (the framework ceiling).
//! - `BENCH_ACCESS_LOG=off` runs without the access log: the baseline of
//!   bench/access_log/run.sh.

use std::path::PathBuf;
use std::sync::OnceLock;

use actix_web::{HttpResponse, web};
use clap::Args;

/// The benchmark build's settings.
#[derive(Debug, Clone, Args)]
pub struct BenchSettings {
    /// Benchmark builds only: the file `GET /bench/constant` answers (unset: `[]`)
    #[arg(long, env = "BENCH_CONSTANT_FILE")]
    pub bench_constant_file: Option<PathBuf>,

    /// Benchmark builds only: `off` records no read in the access log (the baseline of bench/access_log)
    #[arg(long, env = "BENCH_ACCESS_LOG", default_value = "on", value_parser = ["on", "off"])]
    pub bench_access_log: String,
}

impl BenchSettings {
    /// Whether reads go unrecorded (the access-log benchmark's baseline).
    pub fn access_log_off(&self) -> bool {
        self.bench_access_log == "off"
    }

    /// Reads the constant route's file, once, before the App is built.
    pub fn load_constant(&self) {
        let body = self
            .bench_constant_file
            .as_ref()
            .and_then(|path| std::fs::read(path).ok())
            .unwrap_or_else(|| b"[]".to_vec());
        let _ = CONSTANT.set(web::Bytes::from(body));
    }
}

/// What `GET /bench/constant` answers: set by [`BenchSettings::load_constant`] in `serve`.
static CONSTANT: OnceLock<web::Bytes> = OnceLock::new();

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/bench/constant", web::get().to(constant));
}

async fn constant() -> HttpResponse {
    let body = CONSTANT
        .get()
        .cloned()
        .unwrap_or_else(|| web::Bytes::from_static(b"[]"));
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body)
}
