//! A fresh database per test, cloned from a template that was migrated once.
//!
//! The template's name carries a fingerprint of the migrations directory, so a changed
//! migration builds a new template and every test process agrees on which one to use. Each
//! test database is dropped when its `TestDb` is dropped.
//!
//! Also, for tests of faults: [`PrivatePg`], a PostgreSQL server of the test's own that may be
//! stopped and restarted, [`SmtpSink`], a tiny SMTP server that keeps what it receives, and
//! [`idp::Provider`], an identity provider's key set served over HTTP.

pub mod env_example;
pub mod idp;
pub mod layers;
mod netns;
pub mod pg_tls;
mod pgbouncer;
mod private_pg;
mod replica;
mod smtp_sink;

pub use netns::NetNs;
pub use pgbouncer::PgBouncer;
pub use private_pg::PrivatePg;
pub use replica::Vip;
pub use smtp_sink::{Received, SinkTls, SmtpSink};

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use diesel::connection::SimpleConnection;
use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;

use crate::config::DEFAULT_DATABASE_URL;
use crate::db::{self, Pool, PoolSettings};

type SyncPg = AsyncConnectionWrapper<AsyncPgConnection>;

/// The server the tests use: `DATABASE_URL`, else the machine's local PostgreSQL.
pub fn server_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned())
}

/// `url` with its database name replaced.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{}", &base[..host_end], name);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// A test's own database, with the service's schema migrated.
pub struct TestDb {
    name: String,
    server: String,
    url: String,
    pool: Pool,
    settings: PoolSettings,
}

impl TestDb {
    /// A database with `schema` migrated from `migrations`, whose files live in
    /// `migrations_dir` (pass `concat!(env!("CARGO_MANIFEST_DIR"), "/migrations")`).
    pub async fn new<S>(schema: &'static str, migrations: S, migrations_dir: &str) -> TestDb
    where
        S: MigrationSource<Pg> + Send + 'static,
    {
        let server = server_url();
        let template = {
            let server = server.clone();
            let dir = PathBuf::from(migrations_dir);
            tokio::task::spawn_blocking(move || ensure_template(&server, schema, migrations, &dir))
                .await
                .expect("template thread")
        };
        let name = format!("t_{schema}_{}", uuid::Uuid::new_v4().simple());
        Self::create(server, name, Some(template)).await
    }

    /// A database cloned from a seeded copy of the migrated template: the first test of the
    /// process (per `schema`) clones the template, runs `seed` on it once, and every test of
    /// the process then clones that copy, so seeding costs once per run, not once per test.
    /// Demo data anchored at the moment of seeding stays current for a run; copies older
    /// than an hour (left by earlier runs) are removed.
    pub async fn seeded<S>(
        schema: &'static str,
        migrations: S,
        migrations_dir: &str,
        seed: impl AsyncFnOnce(Pool),
    ) -> TestDb
    where
        S: MigrationSource<Pg> + Send + 'static,
    {
        type Cells =
            std::collections::HashMap<&'static str, std::sync::Arc<tokio::sync::OnceCell<String>>>;
        static SEEDED: Mutex<Option<Cells>> = Mutex::new(None);
        let cell = SEEDED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Default::default)
            .entry(schema)
            .or_default()
            .clone();
        let server = server_url();
        let seeded = cell
            .get_or_init(async || {
                let dir = PathBuf::from(migrations_dir);
                let srv = server.clone();
                let template = tokio::task::spawn_blocking(move || {
                    ensure_template(&srv, schema, migrations, &dir)
                })
                .await
                .expect("template thread");
                let now = unix_now();
                let name = format!("seeded_{schema}_{now}_{}", uuid::Uuid::new_v4().simple());
                let db = Self::create(server.clone(), name.clone(), Some(template)).await;
                seed(db.pool()).await;
                db.pool.close();
                // Kept for the process's tests: not dropped with `db`.
                std::mem::forget(db);
                let srv = server.clone();
                tokio::task::spawn_blocking(move || {
                    drop_seeded_older_than(&srv, schema, now, 3600)
                })
                .await
                .expect("cleanup thread");
                name
            })
            .await
            .clone();
        let name = format!("t_{schema}_{}", uuid::Uuid::new_v4().simple());
        Self::create(server, name, Some(seeded)).await
    }

    /// An empty database, for tests that run the services' own migrations (as processes do).
    pub async fn blank() -> TestDb {
        let name = format!("t_blank_{}", uuid::Uuid::new_v4().simple());
        Self::create(server_url(), name, None).await
    }

    /// Creates database `name` (a copy of `template`, if given) and a pool on it.
    async fn create(server: String, name: String, template: Option<String>) -> TestDb {
        let sql = match template {
            Some(t) => format!("CREATE DATABASE \"{name}\" TEMPLATE \"{t}\" STRATEGY = FILE_COPY"),
            None => format!("CREATE DATABASE \"{name}\""),
        };
        let admin = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = SyncPg::establish(&admin).expect("connect to the test server");
            conn.batch_execute(&sql).expect("create the test database");
        })
        .await
        .expect("create thread");
        let url = with_database(&server, &name);
        let settings = PoolSettings::new("test");
        let pool = db::pool(&url, &settings).expect("test pool");
        TestDb {
            name,
            server,
            url,
            pool,
            settings,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pool(&self) -> Pool {
        self.pool.clone()
    }

    pub fn settings(&self) -> &PoolSettings {
        &self.settings
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        self.pool.close();
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        let server = self.server.clone();
        // A thread of its own: Drop may run inside an async runtime.
        let _ = std::thread::spawn(move || {
            if let Ok(mut conn) = SyncPg::establish(&server) {
                let _ = conn.batch_execute(&sql);
            }
        })
        .join();
    }
}

#[derive(QueryableByName)]
struct Template {
    #[diesel(sql_type = diesel::sql_types::Text)]
    datname: String,
    /// When the template was built (Unix seconds), kept in the database's comment.
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    built_at: Option<String>,
}

/// Another checkout (a colleague's branch, a CI clone) may still be cloning a template of
/// other migrations from the same server; only templates older than this are removed.
const STALE_TEMPLATE_SECS: u64 = 24 * 3600;

fn ensure_template<S>(server: &str, schema: &'static str, migrations: S, dir: &Path) -> String
where
    S: MigrationSource<Pg> + Send,
{
    static READY: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    // The migrations this binary embeds, besides the directory's files: a binary built before
    // a migration was added must not build (or reuse) the template of the newer directory.
    let embedded: Vec<String> = migrations
        .migrations()
        .map(|all| all.iter().map(|m| m.name().to_string()).collect())
        .unwrap_or_default();
    let template = format!("tmpl_{schema}_{:016x}", fingerprint(schema, dir, &embedded));
    let mut ready = READY.lock().unwrap_or_else(|e| e.into_inner());
    if ready.get_or_insert_with(HashSet::new).contains(&template) {
        return template;
    }
    let mut admin = SyncPg::establish(server)
        .unwrap_or_else(|e| panic!("tests need PostgreSQL at {server} (set DATABASE_URL): {e}"));
    admin
        .batch_execute("SELECT pg_advisory_lock(hashtext('test-templates'))")
        .expect("template lock");
    let existing: Vec<Template> = diesel::sql_query(format!(
        "SELECT datname::text AS datname, shobj_description(oid, 'pg_database') AS built_at \
         FROM pg_database WHERE datname LIKE 'tmpl\\_{schema}\\_%'"
    ))
    .load::<Template>(&mut admin)
    .expect("list templates");
    let now = unix_now();
    if !existing.iter().any(|t| t.datname == template) {
        let building = format!("{template}_building");
        admin
            .batch_execute(&format!(
                "DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)"
            ))
            .expect("drop a half-built template database");
        admin
            .batch_execute(&format!("CREATE DATABASE \"{building}\""))
            .expect("create the template database");
        db::migrate(&with_database(server, &building), schema, migrations)
            .expect("migrate the template database");
        admin
            .batch_execute(&format!(
                "ALTER DATABASE \"{building}\" RENAME TO \"{template}\""
            ))
            .expect("name the template database");
        admin
            .batch_execute(&format!("COMMENT ON DATABASE \"{template}\" IS '{now}'"))
            .expect("date the template database");
    }
    // Templates of other migrations: kept while another checkout may still use them.
    let stale = existing.iter().filter(|t| {
        t.datname != template
            && !t.datname.ends_with("_building")
            && t.built_at
                .as_deref()
                .and_then(|b| b.parse::<u64>().ok())
                .is_some_and(|built| now.saturating_sub(built) > STALE_TEMPLATE_SECS)
    });
    for t in stale {
        let _ = admin.batch_execute(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            t.datname
        ));
    }
    admin
        .batch_execute("SELECT pg_advisory_unlock(hashtext('test-templates'))")
        .expect("template unlock");
    ready
        .get_or_insert_with(HashSet::new)
        .insert(template.clone());
    template
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Removes the seeded copies of `schema` made more than `secs` before `now` (by earlier runs).
fn drop_seeded_older_than(server: &str, schema: &str, now: u64, secs: u64) {
    let Ok(mut admin) = SyncPg::establish(server) else {
        return;
    };
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        datname: String,
    }
    let Ok(names) = diesel::sql_query(format!(
        "SELECT datname::text AS datname FROM pg_database WHERE datname LIKE 'seeded\\_{schema}\\_%'"
    ))
    .load::<Name>(&mut admin) else {
        return;
    };
    let prefix = format!("seeded_{schema}_");
    for n in names {
        let made = n.datname[prefix.len()..]
            .split('_')
            .next()
            .and_then(|t| t.parse::<u64>().ok());
        if made.is_some_and(|made| now.saturating_sub(made) > secs) {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                n.datname
            ));
        }
    }
}

/// FNV-1a over the migration files' names and contents, in a stable order, and the names
/// of the migrations the binary embeds.
fn fingerprint(schema: &str, dir: &Path, embedded: &[String]) -> u64 {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            panic!("migrations directory {} is missing", dir.display())
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, files);
            } else {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(schema.as_bytes());
    for name in embedded {
        eat(name.as_bytes());
    }
    for f in files {
        eat(f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .as_bytes());
        eat(&std::fs::read(&f).unwrap_or_default());
    }
    hash
}

/// A page set's icon at `url` (`{base}/icone.svg`) is served as [`crate::pages::icon`]
/// serves it, and `page` (a page's HTML) names it in its `<link rel="icon">`.
pub async fn assert_icon_served(url: &str, page: &str) {
    let path = url
        .find("://")
        .and_then(|i| url[i + 3..].find('/').map(|j| &url[i + 3 + j..]));
    let link = format!(
        r#"<link rel="icon" href="{}" type="image/svg+xml">"#,
        path.unwrap_or(url)
    );
    assert!(page.contains(&link), "no {link} in the page:\n{page}");
    let res = reqwest::get(url).await.unwrap();
    assert_eq!(res.status(), 200, "{url}");
    assert_eq!(
        res.headers()[reqwest::header::CONTENT_TYPE],
        "image/svg+xml"
    );
    assert_eq!(res.text().await.unwrap(), crate::pages::ICON_SVG);
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_the_database_name() {
        assert_eq!(
            with_database("postgres://u@h:5432/postgres", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(
            with_database("postgres://h:1/db?sslmode=disable", "y"),
            "postgres://h:1/y?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "z"), "postgres://h:1/z");
    }
}
