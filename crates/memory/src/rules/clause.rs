//! A WHERE clause over `memory_items i` with its parameters: what the record filter
//! ([`crate::rules::filter`]) and the temporal rule ([`crate::rules::temporal`]) both build.

/// A parameter of a [`Filter`].
#[derive(Debug, Clone, PartialEq)]
pub enum FilterValue {
    /// A text.
    Text(String),
    /// An integer (times are epoch milliseconds in both backends).
    Integer(i64),
}

/// A WHERE clause over `memory_items i` with its parameters, one `?` each in order. The
/// SQL is the same in SQLite and PostgreSQL (which numbers the placeholders).
#[derive(Debug, Default)]
pub struct Filter {
    /// The clause.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<FilterValue>,
    /// Transaction-time instant, when the read is historical.
    pub known_at: Option<i64>,
}

impl Filter {
    pub(crate) fn push(&mut self, clause: &str) {
        if !self.sql.is_empty() {
            self.sql.push_str(" AND ");
        }
        self.sql.push_str(clause);
    }
}
