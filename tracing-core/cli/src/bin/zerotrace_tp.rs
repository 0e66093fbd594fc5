//! `zerotrace-tp`: a `trace_processor_shell` stand-in (see
//! `zerotrace-tp --help`).

fn main() -> std::process::ExitCode {
    zerotrace_cli::commands::tp_main()
}
