//! `/proc` and `/sys` files as typed values: every line and field parsed
//! with bounds checks, a typed error for what does not parse.
