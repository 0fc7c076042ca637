use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use common::auth::JwtKeys;
use common::config::{self, CommonConfig};
use common::db;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::users;
use dispatch_api::{MIGRATIONS, SCHEMA, auth, seed, startup};

const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// Emergency dispatch service. Configuration comes from the environment (see .env.example).
#[derive(Parser)]
#[command(name = "dispatch-api", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate, then serve HTTP and WebSockets (the default).
    Serve {
        /// Sign tokens with a public development key when JWT_SECRET is unset. Never in production.
        #[arg(long)]
        dev: bool,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Insert the deterministic demo data (idempotent); prints what exists as JSON.
    Seed,
    /// Print a signed access token for a user (local use and tests).
    Token {
        #[arg(long)]
        login: String,
        /// Lifetime, such as 30m, 8h or 7d.
        #[arg(long, default_value = "8h", value_parser = config::parse_duration)]
        ttl: Duration,
        /// Use the development key when JWT_SECRET is unset (matches `serve --dev`).
        #[arg(long)]
        dev: bool,
    },
    /// Exit 0 when this service answers GET /healthz on BIND (container healthcheck).
    Healthcheck,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve { dev: false });
    if let Command::Healthcheck = command {
        let bind = std::env::var("BIND").unwrap_or_else(|_| DEFAULT_BIND.to_owned());
        return common::http::healthcheck(&bind);
    }
    match run(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dispatch-api: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<()> {
    let dev = matches!(
        command,
        Command::Serve { dev: true } | Command::Token { dev: true, .. }
    );
    // Migrate and seed need no JWT secret; pretend dev so a missing one is no error there.
    let needs_secret = matches!(command, Command::Serve { .. } | Command::Token { .. });
    let config = CommonConfig::from_env(DEFAULT_BIND, dev || !needs_secret)?;
    match command {
        Command::Serve { .. } => {
            common::telemetry::init(config.log_format);
            startup::serve(config).await
        }
        Command::Migrate => {
            let applied = db::migrate_async(config.database_url, SCHEMA, MIGRATIONS).await?;
            println!("{}", serde_json::json!({ "applied": applied }));
            Ok(())
        }
        Command::Seed => {
            db::migrate_async(config.database_url.clone(), SCHEMA, MIGRATIONS).await?;
            let pool = db::pool(&config.database_url, &startup::pool_settings(2))?;
            let mut conn = pool.get().await?;
            let report = seed::run(&mut conn).await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Token { login, ttl, .. } => {
            let pool = db::pool(&config.database_url, &startup::pool_settings(1))?;
            let mut conn = pool.get().await?;
            let id: i64 = users::table
                .filter(users::login.eq(&login))
                .select(users::id)
                .first(&mut conn)
                .await
                .optional()?
                .ok_or_else(|| anyhow::anyhow!("no user with login {login:?}"))?;
            let token = auth::issue_token(&JwtKeys::new(&config.jwt_secret), id, ttl)?;
            println!("{token}");
            Ok(())
        }
        Command::Healthcheck => unreachable!("handled before configuration"),
    }
}
