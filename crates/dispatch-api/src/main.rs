use std::process::ExitCode;
use std::time::Duration;

use common::service::{Context, ServiceCommand};
use common::settings::FromSource;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::users;
use dispatch_api::settings::TokenLifetime;
use dispatch_api::{SKELETON, auth, seed, startup};

/// dispatch-api's own subcommands, beside the skeleton's `serve`, `migrate` and `healthcheck`.
#[derive(clap::Subcommand)]
enum Command {
    /// Write the demo data, anchored at now (idempotent; a demo found stale is brought back
    /// to life); prints what exists as JSON, and what it did on stderr.
    Seed {
        /// `demo` (3,000 incidents) or `test` (80, what the tests use).
        #[arg(long, value_enum, default_value = "demo")]
        scale: seed::Scale,
    },
    /// Print a signed access token for a user (local use and tests), bound to this service
    /// (`aud` = dispatch-api).
    Token {
        #[arg(long)]
        login: String,
        /// Lifetime, such as 30m or 8h; at most JWT_MAX_LIFETIME (default 12h).
        #[arg(long, default_value = "8h", value_parser = common::settings::duration)]
        ttl: Duration,
        /// Use the development key when JWT_SECRET is unset (matches `serve --dev`).
        #[arg(long)]
        dev: bool,
    },
}

impl ServiceCommand for Command {
    fn needs_jwt_secret(&self) -> bool {
        matches!(self, Command::Token { dev: false, .. })
    }
}

/// Where a developer whose `token` found no schema gets tokens instead.
const DEV_TOKENS: &str = ", or `./dev up`, which migrates and seeds a demo database and prints a \
                          token for each profile (`./dev token LOGIN` prints one for any user)";

#[tokio::main]
async fn main() -> ExitCode {
    SKELETON.run(startup::serve, run).await
}

async fn run(command: Command, ctx: Context) -> anyhow::Result<()> {
    match command {
        Command::Seed { scale } => {
            ctx.migrate().await?;
            let mut conn = ctx.connection().await?;
            let report = seed::run_with(&mut conn, scale).await?;
            eprintln!("{}", report.timeline.summary());
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        Command::Token { login, ttl, .. } => {
            let mut conn = ctx.connection().await?;
            let found = users::table
                .filter(users::login.eq(&login))
                .select(users::id)
                .first::<i64>(&mut conn)
                .await
                .optional();
            let id = match found {
                Ok(id) => id.ok_or_else(|| anyhow::anyhow!("no user with login {login:?}"))?,
                Err(e) => return Err(ctx.explain_unmigrated(e.into(), DEV_TOKENS).await),
            };
            let lifetime = TokenLifetime::from_env()?.jwt_max_lifetime;
            let keys = auth::service_keys(&ctx.config.jwt_secret, lifetime);
            let token = auth::issue_token(&keys, id, ttl)?;
            println!("{token}");
        }
    }
    Ok(())
}
