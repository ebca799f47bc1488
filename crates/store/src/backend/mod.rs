//! What both backends share and neither owns: the write-side trait and its row types
//! ([`write_db`]), and the read-side helpers ([`read`]). `pg/` and the SQLite modules
//! (`reader.rs`, `writer/sqlite_db.rs`, `transfer/sqlite_target.rs`) import from here and
//! never from each other; the facades (`RunStore`, `Writer`, `RunImport`) pick a backend.

pub(crate) mod read;
pub(crate) mod write_db;
