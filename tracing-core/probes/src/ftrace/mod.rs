//! Ftrace's binary side: the layouts the kernel publishes in tracefs and
//! the raw per-CPU ring-buffer pages parsed with them.
