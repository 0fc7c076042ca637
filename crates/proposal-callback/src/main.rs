use std::process::ExitCode;
use std::time::Duration;

use common::Clock;
use common::service::{Context, ServiceCommand};
use common::settings::FromSource;
use proposal_callback::auth::jwt;
use proposal_callback::settings::Settings;
use proposal_callback::{SKELETON, flow, seed, startup, store};

/// proposal-callback's own subcommands, beside the skeleton's `serve`, `migrate` and
/// `healthcheck`.
#[derive(clap::Subcommand)]
enum Command {
    /// Insert the demo data (idempotent): tenants, integrations, the example proposals, and a
    /// history of callbacks over the last 14 days ending now (added again when it is older
    /// than 12 hours). Prints it as JSON, with each integration's Basic token the first time
    /// (only its hash is stored); says what it did to the history on stderr.
    Seed {
        /// Revoke the demo integrations' tokens and print new ones.
        #[arg(long)]
        rotate_tokens: bool,
        /// Leave the history of callbacks out (tenants, integrations, tokens and the example
        /// proposals only).
        #[arg(long)]
        no_history: bool,
    },
    /// Print a tenant admin token for the admin routes (`/admin/...`), signed with JWT_SECRET.
    Token {
        /// The tenant (dsTenantId) the token's holder administers; it must exist.
        #[arg(long)]
        tenant: String,
        /// An admin token (the only kind this command issues: insurers get theirs from
        /// /callback/auth).
        #[arg(long, required = true)]
        admin: bool,
        /// Lifetime, such as 30m or 8h; at most 24h.
        #[arg(long, default_value = "8h", value_parser = common::settings::duration)]
        ttl: Duration,
        /// Who holds it (the token's `sub`), for the logs.
        #[arg(long, default_value = "administrador")]
        sub: String,
        /// Use the development key when JWT_SECRET is unset (matches `serve --dev`).
        #[arg(long)]
        dev: bool,
    },
    /// Delete callback receipts older than a retention period (e.g. `90d`).
    Prune {
        /// `90d`, `12h`, ...: receipts received before now minus this are deleted.
        #[arg(long, value_parser = common::settings::duration)]
        older_than: Duration,
        /// Receipts deleted per statement (each its own transaction).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..=100_000))]
        batch: i64,
    },
    /// Show, or set with --days, how many days a tenant keeps the raw bodies of its callbacks
    /// (default 90). Past that, `serve` erases them (hourly) and keeps everything else.
    Retention {
        /// The tenant (dsTenantId).
        #[arg(long)]
        tenant: String,
        /// Days a raw body is kept after it arrives: 1 to 3650.
        #[arg(long, value_parser = clap::value_parser!(i32).range(1..=3650))]
        days: Option<i32>,
    },
    /// Erase now the raw bodies past their tenant's retention (what `serve` does every hour):
    /// the receipts stay, with their outcome, references and headers.
    EraseBodies,
}

/// `token` signs with JWT_SECRET (unless `--dev`); every command uses the database.
impl ServiceCommand for Command {
    fn needs_jwt_secret(&self) -> bool {
        matches!(self, Command::Token { dev: false, .. })
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    SKELETON.run(serve, run).await
}

async fn serve(ctx: Context) -> anyhow::Result<()> {
    startup::serve(ctx, Settings::from_env()?).await
}

async fn run(command: Command, ctx: Context) -> anyhow::Result<()> {
    match command {
        Command::Seed {
            rotate_tokens,
            no_history,
        } => {
            ctx.migrate().await?;
            let mut conn = ctx.connection().await?;
            let options = seed::SeedOptions {
                rotate_tokens,
                history: !no_history,
            };
            let report = seed::run(&mut conn, &Clock::system(), options).await?;
            eprintln!("proposal-callback seed: {}", report.history.summary());
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        Command::Token {
            tenant, ttl, sub, ..
        } => {
            let ttl_secs = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
            if !(60..=jwt::ADMIN_TOKEN_MAX_TTL_SECS).contains(&ttl_secs) {
                anyhow::bail!(
                    "--ttl must be between 1m and 24h (the service refuses longer-lived admin tokens)"
                );
            }
            let mut conn = ctx.connection().await?;
            if !store::tenants::exists(&mut conn, &tenant).await? {
                anyhow::bail!("no tenant {tenant:?} (see `proposal-callback seed`)");
            }
            let keys = jwt::service_keys(&ctx.config.jwt_secret);
            println!(
                "{}",
                jwt::issue_admin_token(&keys, &sub, &tenant, ttl_secs)?
            );
        }
        Command::Prune { older_than, batch } => {
            let mut conn = ctx.connection().await?;
            let cutoff = chrono::Duration::from_std(older_than)
                .ok()
                .and_then(|age| Clock::system().now().checked_sub_signed(age))
                .ok_or_else(|| anyhow::anyhow!("--older-than reaches before any date"))?;
            let started = std::time::Instant::now();
            let mut batches = 0_u64;
            let deleted = store::receipts::prune(&mut conn, cutoff, batch, |total| {
                batches += 1;
                if batches.is_multiple_of(100) {
                    tracing::info!(deleted = total, batches, "prune in progress");
                }
            })
            .await?;
            println!(
                "{}",
                serde_json::json!({
                    "deleted_receipts": deleted,
                    "batches": batches,
                    "cutoff": cutoff,
                    "seconds": started.elapsed().as_secs_f64(),
                })
            );
        }
        Command::Retention { tenant, days } => {
            ctx.migrate().await?;
            let mut conn = ctx.connection().await?;
            if let Some(days) = days
                && !store::tenants::set_body_retention_days(&mut conn, &tenant, days).await?
            {
                anyhow::bail!("no tenant {tenant:?} (see `proposal-callback seed`)");
            }
            let Some(days) = store::tenants::body_retention_days(&mut conn, &tenant).await? else {
                anyhow::bail!("no tenant {tenant:?} (see `proposal-callback seed`)");
            };
            println!(
                "{}",
                serde_json::json!({"tenant": tenant, "body_retention_days": days})
            );
        }
        Command::EraseBodies => {
            ctx.migrate().await?;
            let mut conn = ctx.connection().await?;
            let clock = Clock::system();
            let erased = flow::retention::erase_expired_bodies(&mut conn, &clock).await?;
            let mut report = serde_json::to_value(&erased)?;
            report["at"] = serde_json::json!(clock.now());
            println!("{report}");
        }
    }
    Ok(())
}
