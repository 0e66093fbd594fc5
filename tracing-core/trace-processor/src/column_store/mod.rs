//! The bottom of the tables: the string pool every text value is an id
//! into, and (with SQL) the frozen columns a loaded table becomes, with
//! their narrow encodings. Everything above (the table declarations, the
//! storage, the SQL layer) imports from here and nothing here imports them.

#[cfg(feature = "sql")]
pub mod encodings;
pub mod strings;
#[cfg(feature = "sql")]
pub mod table;
