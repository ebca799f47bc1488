//! Migrating the run store in whichever database it lives: an embedded SQLite file (the
//! default) or a PostgreSQL database shared by several Mindgate instances (the location
//! type, [`Database`], is [`mindgate_pg`]'s).

use mindgate_pg::Database;

/// What [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// The schema version before.
    pub from: i64,
    /// The schema version now.
    pub to: i64,
    /// The migrations applied now, in order (empty when the schema was current).
    pub applied: Vec<i64>,
}

/// Brings `database`'s run-store schema up to this build's, creating it when absent
/// (a SQLite file is created; a PostgreSQL database gets the numbered migrations it
/// lacks, each once, even with several instances starting together). A schema newer
/// than this build is refused unchanged.
pub fn migrate(database: &Database) -> crate::Result<MigrateReport> {
    match database {
        Database::Sqlite(path) => {
            let existed = path.exists();
            let from = if existed {
                crate::schema::user_version(path)?
            } else {
                0
            };
            drop(crate::schema::open_writer(path)?);
            let to = crate::SCHEMA_VERSION;
            Ok(MigrateReport {
                from,
                to,
                applied: ((from + 1)..=to).collect(),
            })
        }
        Database::Postgres(url) => {
            let mut client = crate::pg::connect(url)?;
            let from = crate::pg::schema::MIGRATIONS.version(&mut client)?;
            let applied = crate::pg::schema::MIGRATIONS.run(&mut client)?;
            Ok(MigrateReport {
                from,
                to: crate::pg::schema::MIGRATIONS.latest(),
                applied,
            })
        }
    }
}
