use std::process::ExitCode;

use clap::{Parser, Subcommand};
use common::config::CommonConfig;
use common::db;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::ratelimit::TrustedProxies;
use proposal_callback::registration::config::RegistrationConfig;
use proposal_callback::{MIGRATIONS, SCHEMA, seed, startup, store};

const DEFAULT_BIND: &str = "127.0.0.1:8081";

/// Insurer proposal callback receiver. Configuration comes from the environment (see .env.example).
#[derive(Parser)]
#[command(name = "proposal-callback", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate, then serve HTTP (the default).
    Serve {
        /// Sign tokens with a public development key when JWT_SECRET is unset. Never in production.
        #[arg(long)]
        dev: bool,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Insert the deterministic demo data (idempotent); prints it as JSON, with each
    /// integration's Basic token the first time (only its hash is stored).
    Seed {
        /// Revoke the demo integrations' tokens and print new ones.
        #[arg(long)]
        rotate_tokens: bool,
    },
    /// Delete callback receipts older than a retention period (e.g. `90d`).
    Prune {
        /// `90d`, `12h`, ...: receipts received before now minus this are deleted.
        #[arg(long, value_parser = common::config::parse_duration)]
        older_than: std::time::Duration,
    },
    /// Exit 0 when this service answers GET /healthz on BIND (container healthcheck).
    Healthcheck,
}

#[tokio::main]
async fn main() -> ExitCode {
    let command = Cli::parse()
        .command
        .unwrap_or(Command::Serve { dev: false });
    if let Command::Healthcheck = command {
        let bind = std::env::var("BIND").unwrap_or_else(|_| DEFAULT_BIND.to_owned());
        return common::http::healthcheck(&bind);
    }
    match run(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("proposal-callback: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<()> {
    let dev = !matches!(command, Command::Serve { dev: false });
    let config = CommonConfig::from_env(DEFAULT_BIND, dev)?;
    match command {
        Command::Serve { .. } => {
            common::telemetry::init(config.log_format);
            let email = EmailConfig::from_source(&common::config::Env)?;
            let registration = RegistrationConfig::from_source(&common::config::Env)?;
            let proxies = TrustedProxies::from_source(&common::config::Env)?;
            startup::serve(config, email, registration, proxies).await
        }
        Command::Migrate => {
            let applied = db::migrate_async(config.database_url, SCHEMA, MIGRATIONS).await?;
            println!("{}", serde_json::json!({ "applied": applied }));
            Ok(())
        }
        Command::Seed { rotate_tokens } => {
            db::migrate_async(config.database_url.clone(), SCHEMA, MIGRATIONS).await?;
            let pool = db::pool(&config.database_url, &startup::pool_settings(2))?;
            let mut conn = pool.get().await?;
            println!(
                "{}",
                serde_json::to_string_pretty(&seed::run(&mut conn, rotate_tokens).await?)?
            );
            Ok(())
        }
        Command::Prune { older_than } => {
            let pool = db::pool(&config.database_url, &startup::pool_settings(1))?;
            let mut conn = pool.get().await?;
            let cutoff = chrono::Utc::now() - chrono::Duration::from_std(older_than)?;
            let deleted = store::receipts::prune(&mut conn, cutoff).await?;
            println!(
                "{}",
                serde_json::json!({ "deleted_receipts": deleted, "cutoff": cutoff })
            );
            Ok(())
        }
        Command::Healthcheck => unreachable!("handled before configuration"),
    }
}
