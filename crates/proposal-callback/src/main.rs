use std::process::ExitCode;

use clap::{Parser, Subcommand};
use common::config::CommonConfig;
use common::db;
use proposal_callback::{MIGRATIONS, SCHEMA, seed, startup};

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
    /// Insert the deterministic demo data (idempotent); prints it as JSON.
    Seed,
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
            println!(
                "{}",
                serde_json::to_string_pretty(&seed::run(&mut conn).await?)?
            );
            Ok(())
        }
        Command::Healthcheck => unreachable!("handled before configuration"),
    }
}
