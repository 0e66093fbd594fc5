//! The sched tables (declared in the next step).

/// The sched tables' declarations.
pub const TABLES: &[super::TableDecl] = &[];
