//! The skeleton both services run on: the command line, the configuration every command
//! reads, the start-up checks, migrations, the pool and the HTTP server with its drain.
//!
//! A service describes itself once, as a [`Skeleton`] constant, lists its own subcommands
//! (`seed`, `token`, ...) in an enum deriving [`clap::Subcommand`] and implementing
//! [`ServiceCommand`], and its `main` is one call:
//!
//! ```text
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     my_service::SKELETON.run(my_service::startup::serve, commands::run).await
//! }
//! ```
//!
//! [`Skeleton::run`] then gives every service the same command line and the same start:
//!
//! - `serve` (also with no subcommand): `--dev` allows the public development key when
//!   `JWT_SECRET` is unset; logging is set up, then the service's `serve` is called with a
//!   [`Context`], whose [`Context::start`] migrates and builds the pool and whose
//!   [`Context::serve_http`] listens on `BIND` and drains for [`DRAIN`] on SIGTERM/SIGINT;
//! - `migrate`: applies the pending migrations (under the advisory lock) and prints
//!   `{"applied": [...]}`;
//! - `healthcheck`: exits 0 when `GET /healthz` on `BIND` answers 200 (the image's
//!   `HEALTHCHECK`); it reads nothing else, so it works with any configuration;
//! - the service's own subcommands, each called with a [`Context`];
//! - `--help`, `--version`; `serve --help` also lists every variable the service reads, with
//!   its default ([`Skeleton::settings`], `crate::settings::help`).
//!
//! Before any command that uses the database, `DATABASE_URL` is checked: a string that is not
//! a PostgreSQL URL, or a server that cannot be reached or refuses us, stops the command
//! with an error naming the variable and the server (never the password), such as
//! `cannot reach PostgreSQL at 127.0.0.1:5432 (DATABASE_URL): connection refused`.
//! Every error is printed as `<service>: <error>: <cause>` and the exit status is 1.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpServer};
use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use diesel::migration::{Migration, MigrationSource};
use diesel::pg::Pg;
use diesel_migrations::EmbeddedMigrations;

use crate::config::CommonConfig;
use crate::db::{self, Conn, DatabaseUrl, Pool, PoolSettings};
use crate::settings::{CommonSettings, FromSource};

/// How long `serve` lets in-flight requests finish after SIGTERM/SIGINT. The deployments
/// give the process 30 s (Kubernetes' `terminationGracePeriodSeconds`, compose's
/// `stop_grace_period`), a little more than this.
pub const DRAIN: Duration = Duration::from_secs(25);

/// How long a statement of a one-shot command (`seed`, `prune`, `token`) may run, and how
/// long it waits for its connection (docs/operations.md, "Limits and why").
pub const ONE_SHOT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(600);

/// The environment variable holding the database's connection string.
pub const DATABASE_URL: &str = "DATABASE_URL";
/// The variable of the URL for `LISTEN` and the migrations ([`db::PoolMode`]).
pub const DATABASE_DIRECT_URL: &str = "DATABASE_DIRECT_URL";

/// What a service says about itself; everything else the skeleton does the same for both.
#[derive(Clone, Copy)]
pub struct Skeleton {
    /// The binary's name, used in `--help`, in errors (`dispatch-api: ...`), in the logs
    /// (`dispatch-api listening`, `dispatch-api stopped`) and as PostgreSQL
    /// `application_name`.
    pub name: &'static str,
    /// The first line of `--help` (without a final full stop, like the other lines).
    pub about: &'static str,
    /// `--version`: pass `env!("CARGO_PKG_VERSION")`.
    pub version: &'static str,
    /// The help line of `serve`, e.g. "Migrate, then serve HTTP (the default)" (clap's own
    /// help lines end without a full stop).
    pub serve_about: &'static str,
    /// `BIND` when it is unset, e.g. `127.0.0.1:8080`.
    pub default_bind: &'static str,
    /// The service's PostgreSQL schema: its tables and its migrations' bookkeeping live there.
    pub schema: &'static str,
    /// The service's embedded migrations (`embed_migrations!`).
    pub migrations: &'static EmbeddedMigrations,
    /// The service's settings, every variable it reads (pass `<Settings as
    /// clap::Args>::augment_args`): `serve --help` lists them.
    pub settings: fn(clap::Command) -> clap::Command,
}

/// A service's own subcommands, next to `serve`, `migrate` and `healthcheck`.
pub trait ServiceCommand: Subcommand {
    /// Whether the command must have `JWT_SECRET`. When it need not (the default), a
    /// missing secret is no error: the development key stands in, as for `serve --dev`.
    fn needs_jwt_secret(&self) -> bool {
        false
    }

    /// Whether the command uses the database (the default). `DATABASE_URL` is then checked
    /// and the server reached before the command runs, so that a bad URL or a server that is
    /// down fails with an error naming both.
    fn uses_database(&self) -> bool {
        true
    }
}

/// For a service without subcommands of its own; pass [`no_commands`] to [`Skeleton::run`].
#[derive(Debug, Subcommand)]
pub enum NoCommands {}

impl ServiceCommand for NoCommands {}

/// The runner for [`NoCommands`].
pub async fn no_commands(command: NoCommands, _: Context) -> anyhow::Result<()> {
    match command {}
}

/// Options of `serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Sign tokens with a public development key when JWT_SECRET is unset. Never in production.
    #[arg(long)]
    pub dev: bool,
}

/// The command line: the shared subcommands and the service's own (`E`).
#[derive(Debug, Subcommand)]
pub enum Command<E: ServiceCommand> {
    /// Migrate, then serve (the default). Its help line is [`Skeleton::serve_about`].
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate,
    #[command(flatten)]
    Service(E),
    /// Exit 0 when this service answers GET /healthz on BIND (container healthcheck).
    Healthcheck,
}

// Its name, help line and version are the service's, set by `Skeleton::parse`.
#[derive(Debug, Parser)]
struct Cli<E: ServiceCommand> {
    #[command(subcommand)]
    command: Option<Command<E>>,
}

impl Skeleton {
    /// Parses the command line (exiting with clap's usage error when it is wrong, or with the
    /// help text), runs the command and reports how it went. `serve` calls `serve`, a
    /// subcommand of the service's own calls `service`; see the [module](self) for the rest.
    pub async fn run<E, S, SFut, R, RFut>(self, serve: S, service: R) -> ExitCode
    where
        E: ServiceCommand,
        S: FnOnce(Context) -> SFut,
        SFut: Future<Output = anyhow::Result<()>>,
        R: FnOnce(E, Context) -> RFut,
        RFut: Future<Output = anyhow::Result<()>>,
    {
        let command = self.parse::<E>(std::env::args_os());
        if let Command::Healthcheck = command {
            let bind = std::env::var("BIND").unwrap_or_else(|_| self.default_bind.to_owned());
            return crate::http::healthcheck(&bind);
        }
        let done = async {
            let ctx = self.context(&command).await?;
            match command {
                Command::Serve(_) => serve(ctx).await,
                Command::Migrate => {
                    ctx.check_not_pooled().await?;
                    let applied = ctx.migrate().await?;
                    println!("{}", serde_json::json!({ "applied": applied }));
                    Ok(())
                }
                Command::Service(c) => service(c, ctx).await,
                Command::Healthcheck => unreachable!("answered before the configuration is read"),
            }
        };
        match done.await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{}: {e:#}", self.name);
                ExitCode::FAILURE
            }
        }
    }

    /// The command line `args` (program name first) as a command; no subcommand is `serve`.
    pub fn parse<E: ServiceCommand>(
        &self,
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
    ) -> Command<E> {
        let settings = (self.settings)(clap::Command::new(self.name));
        let settings = crate::settings::help(&settings, &[("BIND", self.default_bind)]);
        let mut cli = Cli::<E>::command()
            .name(self.name)
            .about(self.about)
            .version(self.version)
            .mut_subcommand("serve", |serve| {
                serve.about(self.serve_about).after_help(settings)
            });
        let matches = cli
            .try_get_matches_from_mut(args)
            .unwrap_or_else(|e| e.exit());
        Cli::<E>::from_arg_matches(&matches)
            .unwrap_or_else(|e| e.format(&mut cli).exit())
            .command
            .unwrap_or(Command::Serve(ServeArgs::default()))
    }

    /// What `command` runs with: the shared settings, read and checked, and the database
    /// found reachable when the command uses it (logging is set up for `serve`).
    async fn context<E: ServiceCommand>(self, command: &Command<E>) -> anyhow::Result<Context> {
        let (dev_key_allowed, uses_database) = match command {
            Command::Serve(args) => (args.dev, true),
            Command::Migrate => (true, true),
            Command::Service(c) => (!c.needs_jwt_secret(), c.uses_database()),
            Command::Healthcheck => (true, false),
        };
        let config = CommonSettings::from_env()?.config(self.default_bind, dev_key_allowed)?;
        // Every connection opened from now on is bounded by it (`db::network`).
        db::network::set_timeout(config.database_timeout);
        let mut database_url = DatabaseUrl::parse(DATABASE_URL, &config.database_url)?;
        if config.database_url_is_default {
            database_url = database_url.defaulted();
        }
        if let Command::Serve(_) = command {
            crate::telemetry::init(config.log_format, &config.log_filter);
        }
        let direct_url = if config.direct_url == config.database_url {
            None
        } else {
            Some(DatabaseUrl::parse(DATABASE_DIRECT_URL, &config.direct_url)?)
        };
        if uses_database {
            database_url.check_reachable().await?;
            if let Some(direct) = &direct_url {
                direct.check_reachable().await?;
            }
        }
        Ok(Context {
            config,
            database_url,
            direct_url,
            skeleton: self,
        })
    }

    /// The pool settings of this service: its schema, its name as `application_name`, at
    /// most `max_size` connections, the defaults of [`PoolSettings`] otherwise.
    pub fn pool_settings(&self, max_size: usize) -> PoolSettings {
        let mut settings = PoolSettings::new(self.name);
        settings.max_size = max_size;
        settings
    }

    /// The migrations as a [`MigrationSource`] that can be passed by value, again and again.
    pub fn migrations(&self) -> StaticMigrations {
        StaticMigrations(self.migrations)
    }
}

/// A `&'static EmbeddedMigrations` as a migration source (diesel implements it for the
/// value only, which is neither `Copy` nor `Clone`).
#[derive(Clone, Copy)]
pub struct StaticMigrations(pub &'static EmbeddedMigrations);

impl MigrationSource<Pg> for StaticMigrations {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<Pg>>>> {
        <EmbeddedMigrations as MigrationSource<Pg>>::migrations(self.0)
    }
}

/// A database that this build's statements cannot run on yet: its service's schema is not
/// there, or lacks migrations of this build. Said with the variable and the database, never
/// the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmigrated {
    /// The binary's name, for the command to run.
    pub service: &'static str,
    pub schema: &'static str,
    /// The database's name.
    pub database: String,
    /// Where its URL came from, password redacted ([`DatabaseUrl::source`]).
    pub source: String,
    /// Migrations of this build not applied.
    pub pending: usize,
    /// None was ever applied: the schema is missing.
    pub never: bool,
}

impl std::fmt::Display for Unmigrated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            service,
            schema,
            database,
            source,
            pending,
            never,
        } = self;
        write!(f, "the database \"{database}\" ({source}) ")?;
        if *never {
            write!(f, "has no `{schema}` schema: it was never migrated")?;
        } else {
            let s = if *pending == 1 { "" } else { "s" };
            write!(
                f,
                "lacks {pending} migration{s} of this build's `{schema}` schema"
            )?;
        }
        write!(f, ". Run `{service} migrate` against it")
    }
}

/// What a command runs with: the configuration, the checked `DATABASE_URL` (its server was
/// reachable a moment ago), and the service's [`Skeleton`].
pub struct Context {
    pub config: CommonConfig,
    pub database_url: DatabaseUrl,
    /// `DATABASE_DIRECT_URL`, checked, when it differs from `DATABASE_URL`.
    pub direct_url: Option<DatabaseUrl>,
    skeleton: Skeleton,
}

impl Context {
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Applies the pending migrations under the advisory lock (replicas starting together
    /// migrate once); returns the versions applied.
    /// They run over `DATABASE_DIRECT_URL`, a session of its own: the lock is a session's.
    pub async fn migrate(&self) -> anyhow::Result<Vec<String>> {
        db::migrate_async(
            self.config.direct_url.clone(),
            self.skeleton.schema,
            self.skeleton.migrations(),
        )
        .await
    }

    /// `serve`'s first steps, the same for every service: warn loudly in development mode,
    /// migrate, then build the pool (`DATABASE_POOL_SIZE` connections, opened on demand).
    pub async fn start(&self) -> anyhow::Result<Pool> {
        if self.config.dev {
            tracing::warn!(
                "DEV MODE: tokens are signed with the public development key; never expose this server"
            );
        }
        self.check_not_pooled().await?;
        if self.server_is_read_only().await {
            // A standby (or a primary being demoted) takes no migration. With nothing to
            // apply the service can still start, answer 503 until the server takes writes,
            // and follow the promotion without a restart (docs/operations.md, "High
            // availability").
            if let Some(why) = self.unmigrated().await? {
                anyhow::bail!(
                    "{why}, and its server is read-only (a standby?): migrate against the primary"
                );
            }
            tracing::warn!(
                "the database is read-only (a standby?): not migrating, every migration of \
                 this build is applied; /readyz answers 503 until it takes writes"
            );
        } else {
            let applied = self.migrate().await?;
            tracing::info!(?applied, "migrations up to date");
        }
        let size = self.config.pool_size;
        let chosen = db::pool_size::chosen(size, self.config.pool_size_is_default);
        tracing::info!(pool_size = size, "database pool: {chosen}");
        let pool = self.pool(size)?;
        if self.config.pool_mode == db::PoolMode::Transaction {
            tracing::info!(
                "DATABASE_POOL_MODE=transaction: no session state, statements unprepared; \
                 LISTEN and migrations over DATABASE_DIRECT_URL"
            );
            db::pool_mode::warn_without_timeout(&pool).await;
        }
        Ok(pool)
    }

    /// Stops with the fix when a session is expected from a transaction pooler: `DATABASE_URL`
    /// in session mode, or `DATABASE_DIRECT_URL` (`db::pool_mode::is_transaction_pooler`).
    pub async fn check_not_pooled(&self) -> anyhow::Result<()> {
        if self.config.pool_mode == db::PoolMode::Session
            && db::pool_mode::is_transaction_pooler(&self.config.database_url).await == Some(true)
        {
            anyhow::bail!(db::pool_mode::POOLER_AT_START);
        }
        if self.config.direct_url != self.config.database_url
            && db::pool_mode::is_transaction_pooler(&self.config.direct_url).await == Some(true)
        {
            anyhow::bail!(
                "DATABASE_DIRECT_URL is a transaction pooler (two of its connections were \
                 served by one PostgreSQL backend in turn): it must reach PostgreSQL itself, or \
                 a pooler in session mode, for LISTEN and the migrations' lock \
                 (docs/operations.md, \"Transaction poolers\")"
            );
        }
        Ok(())
    }

    /// Whether the migrations' server (`DATABASE_DIRECT_URL`) takes no writes: in recovery
    /// or read-only by default. False when it cannot be asked (the migration then says why).
    async fn server_is_read_only(&self) -> bool {
        let Ok(mut conn) = db::tls::connect(&self.config.direct_url).await else {
            return false;
        };
        matches!(db::failover::writable(&mut conn).await, Ok(false))
    }

    /// A pool of at most `max_size` connections with this service's settings.
    pub fn pool(&self, max_size: usize) -> anyhow::Result<Pool> {
        db::pool(&self.config.database_url, &self.pool_settings(max_size))
    }

    /// This service's pool settings for `DATABASE_POOL_MODE`.
    fn pool_settings(&self, max_size: usize) -> PoolSettings {
        let mut settings = self.skeleton.pool_settings(max_size);
        settings.mode = self.config.pool_mode;
        settings
    }

    /// One connection with this service's settings (schema on the search path), for a
    /// one-shot command such as `seed`, `prune` or `token`. Not a request: its statements may
    /// run up to [`ONE_SHOT_STATEMENT_TIMEOUT`] (a seed on a busy machine outlasts the
    /// request path's 5 s), and it waits as long for its one connection.
    pub async fn connection(&self) -> anyhow::Result<Conn> {
        let mut settings = self.pool_settings(1);
        settings.statement_timeout = ONE_SHOT_STATEMENT_TIMEOUT;
        settings.wait_timeout = ONE_SHOT_STATEMENT_TIMEOUT;
        let pool = db::pool(&self.config.database_url, &settings)?;
        pool.get()
            .await
            .map_err(|e| anyhow::anyhow!("no database connection: {e}"))
    }

    /// `error`, a one-shot command's failure on the service's tables, explained when the
    /// cause is a database not migrated up to this build: the error then says which variable
    /// and which database the command used (its URL without the password), that the schema
    /// is missing or behind, and to run `<service> migrate`, followed by `hint` (what else the
    /// command's user may do, such as `, or ./dev up`). Any other failure is returned as it is.
    pub async fn explain_unmigrated(&self, error: anyhow::Error, hint: &str) -> anyhow::Error {
        match self.unmigrated().await {
            Ok(Some(why)) => error.context(format!("{why}{hint}")),
            Ok(None) | Err(_) => error,
        }
    }

    /// How far the database is from this build's schema: `None` when every migration of the
    /// build is applied.
    pub async fn unmigrated(&self) -> anyhow::Result<Option<Unmigrated>> {
        use diesel::QueryableByName;
        use diesel_async::RunQueryDsl;

        #[derive(QueryableByName)]
        struct Applied {
            #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
            table: Option<String>,
        }
        #[derive(QueryableByName)]
        struct Version {
            #[diesel(sql_type = diesel::sql_types::Text)]
            version: String,
        }

        let schema = self.skeleton.schema;
        let known = MigrationSource::<Pg>::migrations(&self.skeleton.migrations())
            .map_err(|e| anyhow::anyhow!("the build's migrations: {e}"))?;
        let mut conn = self.connection().await?;
        let bookkeeping = format!("{schema}.__diesel_schema_migrations");
        let found: Applied = diesel::sql_query("SELECT to_regclass($1)::text AS table")
            .bind::<diesel::sql_types::Text, _>(&bookkeeping)
            .get_result(&mut conn)
            .await?;
        let applied: Vec<String> = match found.table {
            None => Vec::new(),
            Some(_) => diesel::sql_query(format!("SELECT version FROM {bookkeeping}"))
                .load::<Version>(&mut conn)
                .await?
                .into_iter()
                .map(|v| v.version)
                .collect(),
        };
        let pending = known
            .iter()
            .filter(|m| !applied.contains(&m.name().version().to_string()))
            .count();
        Ok((pending > 0).then(|| Unmigrated {
            service: self.skeleton.name,
            schema,
            database: self.database_url.database().to_owned(),
            source: self.database_url.source(),
            pending,
            never: applied.is_empty(),
        }))
    }

    /// Serves `app` (called once per worker) on `BIND` until SIGTERM/SIGINT, then lets
    /// in-flight requests finish for up to [`DRAIN`]. Logs `<service> listening` with the
    /// address, and `<service> stopped` once drained. `on_signal` runs as soon as
    /// SIGTERM/SIGINT arrives, while the server drains: for what never ends by itself, such
    /// as WebSockets, which it can tell to close.
    pub async fn serve_http_with<F, T, B>(
        &self,
        app: F,
        on_signal: impl FnOnce() + Send + 'static,
    ) -> anyhow::Result<()>
    where
        F: Fn() -> App<T> + Send + Clone + 'static,
        T: ServiceFactory<
                ServiceRequest,
                Config = (),
                Response = ServiceResponse<B>,
                Error = actix_web::Error,
                InitError = (),
            > + 'static,
        B: MessageBody + 'static,
    {
        let name = self.skeleton.name;
        let bind = &self.config.bind;
        let server = HttpServer::new(app)
            .bind(bind)
            .with_context(|| format!("cannot listen on {bind} (BIND)"))?
            .shutdown_timeout(DRAIN.as_secs())
            .run();
        tracing::info!(bind = %bind, "{name} listening");
        // actix hears the signal too, and starts draining on it.
        let hook = tokio::spawn(async move {
            shutdown_signal().await;
            on_signal();
        });
        let served = server.await;
        hook.abort();
        served?;
        tracing::info!("{name} stopped");
        Ok(())
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unmigrated(url: DatabaseUrl, pending: usize, never: bool) -> String {
        Unmigrated {
            service: "dispatch-api",
            schema: "dispatch",
            database: url.database().to_owned(),
            source: url.source(),
            pending,
            never,
        }
        .to_string()
    }

    #[test]
    fn an_unmigrated_database_is_named_with_its_variable_never_its_password() {
        let url =
            DatabaseUrl::parse(DATABASE_URL, "postgres://app:hunter2@db:5433/emergency").unwrap();
        assert_eq!(
            unmigrated(url.clone(), 30, true),
            "the database \"emergency\" (DATABASE_URL=postgres://app:***@db:5433/emergency) \
             has no `dispatch` schema: it was never migrated. \
             Run `dispatch-api migrate` against it"
        );
        assert_eq!(
            unmigrated(url, 1, false),
            "the database \"emergency\" (DATABASE_URL=postgres://app:***@db:5433/emergency) \
             lacks 1 migration of this build's `dispatch` schema. \
             Run `dispatch-api migrate` against it"
        );
        let default = DatabaseUrl::parse(DATABASE_URL, crate::config::DEFAULT_DATABASE_URL)
            .unwrap()
            .defaulted();
        assert_eq!(
            unmigrated(default, 30, true),
            "the database \"postgres\" (DATABASE_URL unset, so the default \
             postgres://postgres@127.0.0.1:5432/postgres) has no `dispatch` schema: it was \
             never migrated. Run `dispatch-api migrate` against it"
        );
    }
}
