//! `--db` and `--memory-db`: a SQLite file path, or a PostgreSQL URL where the store
//! has a PostgreSQL backend: the run database (`--db` of `serve`, `migrate`, `diff`,
//! `export`, `import` and `mcp`, each also read from `MINDGATE_DB`), `--memory-db` and a
//! `memory` command's `--db`. URLs of other databases are refused, and so is a
//! directory.

use std::path::PathBuf;

use mindgate_memory::MemoryDb;
use mindgate_pg::{Database, PostgresUrl, is_postgres_url};

/// The run database the run commands take: a SQLite file or a PostgreSQL database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunDb {
    /// A SQLite file.
    File(PathBuf),
    /// A PostgreSQL database (`postgres://` or `postgresql://`).
    Postgres(Box<PostgresUrl>),
}

impl RunDb {
    /// The store's name for the database `--db` / `MINDGATE_DB` gave, else the SQLite
    /// file `default` names (the home's `mindgate.db`).
    pub fn or_default(db: Option<&RunDb>, default: impl FnOnce() -> PathBuf) -> Database {
        match db {
            Some(RunDb::File(path)) => Database::Sqlite(path.clone()),
            Some(RunDb::Postgres(url)) => Database::Postgres(url.clone()),
            None => Database::Sqlite(default()),
        }
    }
}

/// Schemes that name a PostgreSQL database.
const POSTGRES_SCHEMES: [&str; 2] = ["postgres", "postgresql"];

/// Parses the run database's `--db`: a `postgres://` / `postgresql://` URL, or
/// anything [`parse_db_path`] takes.
pub fn parse_run_db(value: &str) -> Result<RunDb, String> {
    if let Some((scheme, _)) = split_scheme(value) {
        if POSTGRES_SCHEMES
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scheme))
        {
            return PostgresUrl::parse(value)
                .map(|url| RunDb::Postgres(Box::new(url)))
                .map_err(|e| format!("--db: {e}"));
        }
        if !FILE_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(format!(
                "--db takes a SQLite file path or a postgres:// URL; '{scheme}:' URLs are not \
                 supported (for a file whose name starts with '{scheme}:', write ./{value})"
            ));
        }
    }
    parse_db_path(value).map(RunDb::File)
}

/// Schemes that name a SQLite file (`sqlite:PATH`, `sqlite:///abs/path`, `file:PATH`).
const FILE_SCHEMES: [&str; 2] = ["sqlite", "file"];

/// Parses a `--db` value: a plain path, or a `sqlite:` / `file:` URL of a local file.
///
/// Any other `scheme:` prefix (`postgres://…`, `mysql://…`, `https://…`) is
/// refused with a clear message instead of becoming a file named after the
/// scheme. A one-letter prefix is a Windows drive (`C:\…`), not a scheme; a file
/// whose name really starts with `word:` can be given as `./word:…`.
pub fn parse_db_path(value: &str) -> Result<PathBuf, String> {
    parse_file_flag("--db", value)
}

/// Parses a `--memory-db` value (the agent-memory database): a PostgreSQL URL, or a file
/// with the rules of `--db`.
pub fn parse_memory_db(value: &str) -> Result<MemoryDb, String> {
    memory_db("--memory-db", value)
}

/// Parses the `--db` of a `memory` command: a PostgreSQL URL, or a file with the rules of
/// `--db`.
pub fn parse_memory_command_db(value: &str) -> Result<MemoryDb, String> {
    memory_db("--db", value)
}

fn memory_db(flag: &str, value: &str) -> Result<MemoryDb, String> {
    if is_postgres_url(value) {
        return PostgresUrl::parse(value)
            .map(|url| MemoryDb::Postgres(Box::new(url)))
            .map_err(|e| format!("{flag}: {e}"));
    }
    parse_file_flag(flag, value).map(MemoryDb::Sqlite)
}

fn parse_file_flag(flag: &str, value: &str) -> Result<PathBuf, String> {
    let path = parse_file_value(flag, value)?;
    if path.is_dir() {
        return Err(format!(
            "{flag} {value}: is a directory; give the database file (e.g. {})",
            path.join(if flag == "--db" {
                "mindgate.db"
            } else {
                "memory.db"
            })
            .display()
        ));
    }
    Ok(path)
}

fn parse_file_value(flag: &str, value: &str) -> Result<PathBuf, String> {
    if value.trim().is_empty() {
        return Err(format!("{flag} needs a file path"));
    }
    let Some((scheme, rest)) = split_scheme(value) else {
        return Ok(PathBuf::from(value));
    };
    if !FILE_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
        return Err(format!(
            "{flag} takes a SQLite file path; '{scheme}:' URLs are not supported here. Give a \
             file path, `sqlite:PATH` or `file:PATH` (for a file whose name starts with \
             '{scheme}:', write ./{value})"
        ));
    }
    let path = match rest.strip_prefix("//") {
        // `sqlite:///abs/path`, `file://localhost/abs/path`
        Some(after) if after.starts_with('/') => after,
        Some(after) => match after.strip_prefix("localhost/") {
            Some(_) => &after["localhost".len()..],
            None => {
                return Err(format!(
                    "{flag} {value}: a {scheme}: URL must name a local file \
                     ({scheme}:///absolute/path or {scheme}:relative/path)"
                ));
            }
        },
        None => rest,
    };
    if path.contains('?') || path.contains('#') {
        return Err(format!(
            "{flag} {value}: URL parameters are not supported; give just the file path"
        ));
    }
    if path.is_empty() {
        return Err(format!("{flag} {value}: the URL names no file"));
    }
    Ok(PathBuf::from(path))
}

/// `Some((scheme, rest))` when `value` starts with a URL scheme of two or more characters.
fn split_scheme(value: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = value.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let is_scheme = scheme.len() >= 2
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    is_scheme.then_some((scheme, rest))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_pass_unchanged() {
        for p in [
            "mindgate.db",
            "/tmp/x.db",
            "./postgres:x.db",
            "C:\\runs\\m.db",
            "a/b:c.db",
        ] {
            assert_eq!(parse_db_path(p), Ok(PathBuf::from(p)), "{p}");
        }
    }

    #[test]
    fn sqlite_and_file_urls_name_local_files() {
        let cases = [
            ("sqlite:runs.db", "runs.db"),
            ("sqlite:///var/lib/m.db", "/var/lib/m.db"),
            ("SQLITE:///var/lib/m.db", "/var/lib/m.db"),
            ("file:/tmp/m.db", "/tmp/m.db"),
            ("file://localhost/tmp/m.db", "/tmp/m.db"),
        ];
        for (given, path) in cases {
            assert_eq!(parse_db_path(given), Ok(PathBuf::from(path)), "{given}");
        }
    }

    #[test]
    fn other_schemes_and_bad_urls_are_refused() {
        for bad in [
            "postgres://u:p@db.example/mindgate",
            "postgresql://localhost/m",
            "mysql://h/m",
            "https://example.com/m.db",
            "redis:6379",
            "sqlite://host/m.db",
            "sqlite:m.db?mode=ro",
            "sqlite:",
            "",
        ] {
            let err = parse_db_path(bad).expect_err(bad);
            assert!(err.contains("--db"), "{bad}: {err}");
        }
        let err = parse_db_path("postgres://h/m").expect_err("postgres");
        assert!(err.contains("'postgres:' URLs are not supported"), "{err}");
        let err = parse_memory_db("mysql://h/m").expect_err("mysql");
        assert!(
            err.starts_with("--memory-db takes a SQLite file path"),
            "{err}"
        );
        // The memory store also lives in PostgreSQL, with the run store's URL rules.
        for (flag_parse, url) in [
            (
                parse_memory_db as fn(&str) -> Result<MemoryDb, String>,
                "postgres://u:p@h/m",
            ),
            (parse_memory_command_db, "postgresql://h:5433/m"),
            (parse_memory_db, "POSTGRES://u:p@h/m"),
        ] {
            let parsed = flag_parse(url).expect(url);
            let pg = parsed.postgres_url().expect("a PostgreSQL database");
            assert!(!format!("{parsed} {parsed:?}").contains(":p@"), "{parsed}");
            assert_eq!(pg.target(), PostgresUrl::parse(url).expect(url).target());
        }
        let err = parse_memory_db("postgres:///no-host").expect_err("no host");
        assert!(err.contains("names no host"), "{err}");
        let err = parse_memory_db("postgres://h:notaport/m").expect_err("bad port");
        assert!(err.starts_with("--memory-db: "), "{err}");
        assert_eq!(
            parse_memory_command_db("m.db"),
            Ok(MemoryDb::Sqlite("m.db".into()))
        );
    }

    #[test]
    fn the_run_database_takes_postgres_urls_and_refuses_other_schemes() {
        for url in [
            "postgres://mg@127.0.0.1:5432/runs",
            "postgresql://localhost/m",
            "POSTGRES://mg:pw@db.internal/runs?connect_timeout=2",
        ] {
            match parse_run_db(url) {
                Ok(RunDb::Postgres(pg)) => assert!(!pg.to_string().contains("pw@"), "{pg}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        assert_eq!(
            parse_run_db("sqlite:runs.db"),
            Ok(RunDb::File(PathBuf::from("runs.db")))
        );
        for bad in [
            "mysql://h/m",
            "postgres:///no-host",
            "https://example.com/m.db",
        ] {
            let err = parse_run_db(bad).expect_err(bad);
            assert!(err.contains("--db"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = std::env::temp_dir();
        let err = parse_memory_db(&dir.display().to_string()).expect_err("dir");
        assert!(err.contains("is a directory"), "{err}");
        assert!(err.contains("memory.db"), "{err}");
        let err = parse_db_path(&format!("sqlite:{}", dir.display())).expect_err("dir");
        assert!(
            err.starts_with("--db ") && err.contains("mindgate.db"),
            "{err}"
        );
    }
}
