//! `DATABASE_URL`, checked when the configuration is read, and start-up errors that say which
//! variable and which server they are about (never the password).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::Host;

use super::tls;

/// The shape the errors suggest.
const EXPECTED: &str = "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE";

/// How long the start-up check waits for a server to answer.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a service cannot start on its database. Each message names the variable and, once the
/// URL is understood, the server (`host:port`); none shows the URL itself, which may hold a
/// password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartupError {
    #[error("{var} is not a PostgreSQL URL ({reason}); {EXPECTED}")]
    NotPostgres { var: &'static str, reason: String },
    #[error("{var} names no server; {EXPECTED}")]
    NoServer { var: &'static str },
    /// Nothing answers at the address (refused, unknown host, no route, timeout).
    #[error("cannot reach PostgreSQL at {server} ({var}): {cause}")]
    Unreachable {
        var: &'static str,
        server: String,
        cause: String,
    },
    /// The server answers but does not let us in (authentication, unknown database, a server
    /// starting up or shutting down, too many clients).
    #[error("PostgreSQL at {server} ({var}) refused the connection: {cause}")]
    Refused {
        var: &'static str,
        server: String,
        cause: String,
    },
    /// A TLS parameter (`sslrootcert`, `sslcert`, `sslkey`) names a file that cannot be used.
    #[error("{var}: {reason}")]
    TlsFile { var: &'static str, reason: String },
    /// The TLS handshake failed: a certificate from another CA, for another host, ...
    #[error("TLS with PostgreSQL at {server} ({var}) failed: {cause}")]
    Tls {
        var: &'static str,
        server: String,
        cause: String,
    },
}

/// One address the driver would try.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Server {
    Tcp { host: String, port: u16 },
    Socket { dir: String, port: u16 },
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Server::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Server::Tcp { host, port } => write!(f, "{host}:{port}"),
            Server::Socket { dir, port } => write!(f, "{dir}/.s.PGSQL.{port}"),
        }
    }
}

/// A PostgreSQL connection string that the driver accepts and that names a server: a
/// `postgres://` or `postgresql://` URL (or libpq's `key=value` form, which the driver
/// accepts too). Its `Debug` and `Display` show the server only.
#[derive(Clone)]
pub struct DatabaseUrl {
    var: &'static str,
    raw: String,
    servers: Vec<Server>,
    /// `dbname`, else the user's name (the server's default), else empty.
    database: String,
    /// Taken because `var` is unset.
    is_default: bool,
}

impl DatabaseUrl {
    /// Checks `raw`, the value of environment variable `var`.
    pub fn parse(var: &'static str, raw: &str) -> Result<Self, StartupError> {
        let not_postgres = |reason: String| StartupError::NotPostgres { var, reason };
        if let Some((scheme, _)) = raw.split_once("://")
            && is_scheme(scheme)
            && !matches!(scheme, "postgres" | "postgresql")
        {
            return Err(not_postgres(format!(
                "its scheme is `{scheme}`, not `postgres` or `postgresql`"
            )));
        }
        // libpq's TLS parameters, which the driver does not know, come out first.
        let (driver_url, params) = tls::split(raw).map_err(not_postgres)?;
        tls::client_config(&params).map_err(|reason| StartupError::TlsFile { var, reason })?;
        let config = tokio_postgres::Config::from_str(&driver_url).map_err(|e| {
            // The driver's own text ("invalid connection string") says little; its cause
            // names the option or position, never a value.
            let reason =
                std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string);
            not_postgres(reason)
        })?;
        let hosts = config.get_hosts();
        let addrs = config.get_hostaddrs();
        let count = hosts.len().max(addrs.len());
        if count == 0 {
            return Err(StartupError::NoServer { var });
        }
        if !hosts.is_empty() && !addrs.is_empty() && hosts.len() != addrs.len() {
            return Err(not_postgres(format!(
                "{} hosts but {} hostaddrs",
                hosts.len(),
                addrs.len()
            )));
        }
        let ports = config.get_ports();
        if ports.len() > 1 && ports.len() != count {
            return Err(not_postgres(format!(
                "{count} hosts but {} ports",
                ports.len()
            )));
        }
        let servers = (0..count)
            .map(|i| {
                let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
                match (addrs.get(i), hosts.get(i)) {
                    (Some(ip), _) => Server::Tcp {
                        host: ip.to_string(),
                        port,
                    },
                    (None, Some(Host::Tcp(host))) => Server::Tcp {
                        host: host.clone(),
                        port,
                    },
                    #[cfg(unix)]
                    (None, Some(Host::Unix(dir))) => Server::Socket {
                        dir: dir.display().to_string(),
                        port,
                    },
                    (None, None) => unreachable!("count is the longer of the two lists"),
                }
            })
            .collect();
        let database = config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or_default()
            .to_owned();
        Ok(Self {
            var,
            raw: raw.to_owned(),
            servers,
            database,
            is_default: false,
        })
    }

    /// The same URL, said to be the default taken because its variable is unset.
    pub fn defaulted(self) -> Self {
        Self {
            is_default: true,
            ..self
        }
    }

    /// The database it names: `dbname`, else the user's name (the server's default for it).
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The connection string fit to print: its password (in the user info, a `password`
    /// parameter or a `password=` pair) replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.raw)
    }

    /// Where the URL came from, password redacted, for messages about its database:
    /// `DATABASE_URL=postgres://app:***@db:5432/app`, or `DATABASE_URL unset, so the default
    /// postgres://postgres@127.0.0.1:5432/postgres`.
    pub fn source(&self) -> String {
        if self.is_default {
            format!("{} unset, so the default {}", self.var, self.redacted())
        } else {
            format!("{}={}", self.var, self.redacted())
        }
    }

    /// The connection string itself, password included: for connecting, never for printing.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The variable it came from.
    pub fn var(&self) -> &'static str {
        self.var
    }

    /// `host:port` of the server (several, comma-separated, when the URL names several).
    pub fn server(&self) -> String {
        self.servers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether a PostgreSQL server answers at this URL and lets us in; each failure is a
    /// [`StartupError`] naming the variable and the server. Waits at most [`REACH_TIMEOUT`]
    /// per step. Used before migrating, so that a wrong or unreachable `DATABASE_URL` reads as
    /// such instead of as the driver's terse error.
    pub async fn check_reachable(&self) -> Result<(), StartupError> {
        // First the socket, whose error says what is wrong (refused, unknown host, ...).
        let mut last = None;
        for server in &self.servers {
            match tokio::time::timeout(REACH_TIMEOUT, open(server)).await {
                Ok(Ok(())) => {
                    last = None;
                    break;
                }
                Ok(Err(e)) => last = Some((server, describe_io(&e))),
                Err(_) => {
                    last = Some((
                        server,
                        format!("no answer within {} s", REACH_TIMEOUT.as_secs()),
                    ))
                }
            }
        }
        if let Some((server, cause)) = last {
            return Err(StartupError::Unreachable {
                var: self.var,
                server: server.to_string(),
                cause,
            });
        }
        // Then PostgreSQL itself: authentication, database name, server state.
        let refused = |cause: String| StartupError::Refused {
            var: self.var,
            server: self.server(),
            cause,
        };
        match tokio::time::timeout(REACH_TIMEOUT, tls::connect(&self.raw)).await {
            Ok(Ok(_conn)) => Ok(()),
            Ok(Err(tls::ConnectError::Tls(cause))) => Err(StartupError::Tls {
                var: self.var,
                server: self.server(),
                cause,
            }),
            Ok(Err(tls::ConnectError::Config(reason))) => Err(StartupError::TlsFile {
                var: self.var,
                reason,
            }),
            Ok(Err(tls::ConnectError::Server(cause))) => Err(refused(cause)),
            Ok(Err(tls::ConnectError::Setup(e))) => Err(refused(describe_connection_error(&e))),
            Err(_) => Err(refused(format!(
                "no answer within {} s",
                REACH_TIMEOUT.as_secs()
            ))),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseUrl")
            .field("var", &self.var)
            .field("server", &self.server())
            .finish_non_exhaustive()
    }
}

/// What a password is printed as.
const HIDDEN: &str = "***";

/// `raw` with every password it holds replaced by [`HIDDEN`]. A URL's user info is taken up
/// to its last `@`, so a password holding `@` or `/` is hidden whole (at worst, more is
/// hidden than the password).
fn redact(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return redact_pairs(raw);
    };
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, rest),
    };
    let mut out = format!("{scheme}://");
    if let Some(userinfo) = userinfo {
        match userinfo.split_once(':') {
            Some((user, _)) => out.push_str(&format!("{user}:{HIDDEN}@")),
            None => out.push_str(&format!("{userinfo}@")),
        }
    }
    match rest.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => format!("password={HIDDEN}"),
                    _ => pair.to_owned(),
                })
                .collect();
            out.push_str(&format!("{path}?{}", query.join("&")));
        }
        None => out.push_str(rest),
    }
    out
}

/// libpq's `key=value` form with the value of `password` hidden: values are single-quoted
/// (with `\'` and `\\` escapes) or run to the next space.
fn redact_pairs(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            out.push(c);
            chars.next();
            continue;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        out.push_str(&key);
        while let Some(&c) = chars.peek() {
            if !c.is_whitespace() {
                break;
            }
            out.push(c);
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            continue;
        }
        out.push('=');
        chars.next();
        while let Some(c) = chars.next_if(|c| c.is_whitespace()) {
            out.push(c);
        }
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            value.push('\'');
            while let Some(c) = chars.next() {
                value.push(c);
                match c {
                    '\\' => value.extend(chars.next()),
                    '\'' => break,
                    _ => {}
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(c);
                if c == '\\' {
                    value.extend(chars.next());
                }
            }
        }
        out.push_str(if key == "password" { HIDDEN } else { &value });
    }
    out
}

/// RFC 3986: a letter, then letters, digits, `+`, `-`, `.`.
fn is_scheme(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

async fn open(server: &Server) -> std::io::Result<()> {
    match server {
        Server::Tcp { host, port } => {
            tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
        }
        #[cfg(unix)]
        Server::Socket { dir, port } => {
            tokio::net::UnixStream::connect(format!("{dir}/.s.PGSQL.{port}")).await?;
        }
        #[cfg(not(unix))]
        Server::Socket { .. } => {}
    }
    Ok(())
}

/// `Connection refused (os error 111)` -> `connection refused`.
fn describe_io(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => format!("{:?}", e.kind()),
    }
}

/// The server's own words (`password authentication failed for user "x"`, `database "y" does
/// not exist`) rather than the driver's wrapping of them.
fn describe_connection_error(e: &diesel::ConnectionError) -> String {
    use diesel::ConnectionError as E;
    match e {
        E::CouldntSetupConfiguration(diesel::result::Error::DatabaseError(_, info)) => {
            info.message().to_owned()
        }
        E::BadConnection(m) | E::InvalidConnectionUrl(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VAR: &str = "DATABASE_URL";

    fn server(raw: &str) -> String {
        DatabaseUrl::parse(VAR, raw).unwrap().server()
    }

    #[test]
    fn names_the_server_of_each_accepted_form() {
        assert_eq!(server("postgres://u@127.0.0.1:5432/db"), "127.0.0.1:5432");
        assert_eq!(
            server("postgresql://u:pw@db.internal/app"),
            "db.internal:5432"
        );
        assert_eq!(server("postgres://[::1]:6543/x"), "[::1]:6543");
        assert_eq!(server("postgres://h1:1,h2:2/x"), "h1:1, h2:2");
        assert_eq!(server("host=pg port=7 user=u"), "pg:7");
        assert_eq!(
            server("postgres:///db?host=/run/postgresql"),
            "/run/postgresql/.s.PGSQL.5432"
        );
    }

    #[test]
    fn refuses_what_is_not_postgresql_and_says_so_without_the_password() {
        for raw in [
            "mysql://root:hunter2@127.0.0.1/db",
            "http://user:hunter2@example.com/",
            "not a url hunter2",
            "postgres://u:hunter2@127.0.0.1:notaport/db",
        ] {
            let err = DatabaseUrl::parse(VAR, raw).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("DATABASE_URL is not a PostgreSQL URL ("),
                "{raw}: {text}"
            );
            assert!(text.ends_with(EXPECTED), "{raw}: {text}");
            assert!(!text.contains("hunter2"), "{raw}: {text}");
        }
        assert_eq!(
            DatabaseUrl::parse(VAR, "mysql://root:hunter2@127.0.0.1/db")
                .unwrap_err()
                .to_string(),
            format!(
                "DATABASE_URL is not a PostgreSQL URL (its scheme is `mysql`, not `postgres` \
                 or `postgresql`); {EXPECTED}"
            )
        );
        assert_eq!(
            DatabaseUrl::parse(VAR, "postgres://u:hunter2@127.0.0.1:notaport/db")
                .unwrap_err()
                .to_string(),
            format!(
                "DATABASE_URL is not a PostgreSQL URL (invalid value for option `port`); \
                 {EXPECTED}"
            )
        );
    }

    #[test]
    fn a_url_without_a_server_is_named_as_such() {
        let err = DatabaseUrl::parse(VAR, "postgres:///db").unwrap_err();
        assert_eq!(err, StartupError::NoServer { var: VAR });
        assert_eq!(
            err.to_string(),
            format!("DATABASE_URL names no server; {EXPECTED}")
        );
    }

    #[test]
    fn debug_shows_the_server_not_the_password() {
        let url = DatabaseUrl::parse(VAR, "postgres://u:hunter2@db:5433/app").unwrap();
        let shown = format!("{url:?}");
        assert!(shown.contains("db:5433"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(url.expose(), "postgres://u:hunter2@db:5433/app");
    }

    #[test]
    fn the_printed_url_hides_the_password_and_names_the_database() {
        for (raw, printed, database) in [
            (
                "postgres://u:hunter2@db:5433/app",
                "postgres://u:***@db:5433/app",
                "app",
            ),
            ("postgres://u@db/app", "postgres://u@db/app", "app"),
            ("postgresql://u:hunter2@db", "postgresql://u:***@db", "u"),
            (
                "postgres://u:hun%40ter2@db/app?sslmode=disable",
                "postgres://u:***@db/app?sslmode=disable",
                "app",
            ),
            (
                "postgres://db/app?user=u&password=hunter2&sslmode=disable",
                "postgres://db/app?user=u&password=***&sslmode=disable",
                "app",
            ),
            (
                "host=pg user=u password=hunter2 dbname=app",
                "host=pg user=u password=*** dbname=app",
                "app",
            ),
            (
                "host=pg password = 'hun ter\\'2' user=u",
                "host=pg password = *** user=u",
                "u",
            ),
        ] {
            let url = DatabaseUrl::parse(VAR, raw).unwrap();
            assert_eq!(url.redacted(), printed, "{raw}");
            assert_eq!(url.database(), database, "{raw}");
            assert_eq!(url.source(), format!("DATABASE_URL={printed}"), "{raw}");
        }
        // A password that should have been percent-encoded is hidden whole all the same.
        let url = DatabaseUrl::parse(VAR, "postgres://u:hun@ter/2@db/app").unwrap();
        assert_eq!(url.redacted(), "postgres://u:***@db/app");
        let default = DatabaseUrl::parse(VAR, "postgres://postgres@127.0.0.1:5432/postgres")
            .unwrap()
            .defaulted();
        assert_eq!(
            default.source(),
            "DATABASE_URL unset, so the default postgres://postgres@127.0.0.1:5432/postgres"
        );
    }

    #[test]
    fn io_errors_read_as_a_phrase() {
        let refused = std::io::Error::from_raw_os_error(111);
        if cfg!(target_os = "linux") {
            assert_eq!(describe_io(&refused), "connection refused");
        }
        let other = std::io::Error::other(
            "failed to lookup address information: Name or service not known",
        );
        assert_eq!(
            describe_io(&other),
            "failed to lookup address information: Name or service not known"
        );
    }
}
