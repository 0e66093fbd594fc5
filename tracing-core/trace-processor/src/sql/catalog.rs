//! What a shell lists of the SQL side: the names of the tables (virtual
//! tables over the columnar storage, not in `sqlite_master`) and views, and
//! a table's or view's columns with their declared types.

use super::Engine;
use crate::error::Error;

/// One column of a table or view, as SQLite declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    /// The column's name.
    pub name: String,
    /// Its declared type (`BIGINT`, `DOUBLE`, `STRING`; empty for a view's
    /// computed column).
    pub sql_type: String,
    /// Whether it is declared `NOT NULL` (a table's column that cannot
    /// hold NULL; never a view's).
    pub not_null: bool,
}

impl Engine {
    /// Every table and view, sorted by name.
    pub fn table_names(&self) -> Result<Vec<String>, Error> {
        let mut names: Vec<String> = self.tables.iter().map(|t| t.to_string()).collect();
        let mut stmt = self.conn.prepare(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
             AND name NOT LIKE 'sqlite_%'",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            names.push(row.get(0)?);
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// The columns of table or view `name`, in order; `None` when there is
    /// no such table.
    pub fn columns(&self, name: &str) -> Result<Option<Vec<ColumnInfo>>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, type, \"notnull\" FROM pragma_table_info(?1)")?;
        let mut rows = stmt.query([name])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(ColumnInfo {
                name: row.get(0)?,
                sql_type: row.get(1)?,
                not_null: row.get::<_, i64>(2)? != 0,
            });
        }
        Ok((!out.is_empty()).then_some(out))
    }
}

#[cfg(test)]
mod tests {
    use crate::TraceProcessor;

    #[test]
    fn lists_tables_and_views_sorted_with_their_columns() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let names = tp.table_names().unwrap();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        // A virtual table and a view over it.
        assert!(names.iter().any(|n| n == "__intrinsic_slice"));
        assert!(names.iter().any(|n| n == "slice"));
        let cols = tp.columns("thread").unwrap().unwrap();
        assert_eq!(cols[0].name, "utid");
        let cols = tp.columns("__intrinsic_slice").unwrap().unwrap();
        assert_eq!(
            (cols[0].name.as_str(), cols[0].sql_type.as_str()),
            ("id", "BIGINT")
        );
        assert_eq!(tp.columns("no_such_table").unwrap(), None);
    }
}
