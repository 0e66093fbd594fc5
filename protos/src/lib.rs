//! Perfetto-compatible schemas and the protozero code generated from them.
