//! `zerotrace`: record, query, dump, stats, convert, flamegraph, relay
//! and demo (see `zerotrace --help`).

fn main() -> std::process::ExitCode {
    zerotrace_cli::commands::main()
}
