//! The profiling tables (declared in the next step).

/// The profiling tables' declarations.
pub const TABLES: &[super::TableDecl] = &[];
