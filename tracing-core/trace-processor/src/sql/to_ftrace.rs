//! `TO_FTRACE(id)`: a row of `ftrace_event` as the line the kernel's text
//! `trace` file would show (the systrace format): the task's comm (right
//! aligned in 16, `-` as `_`, `<idle>` for tid 0, `<unknown>` unnamed),
//! tid, tgid, CPU, `....` flags, seconds and microseconds, the event's
//! name (`print` as `tracing_mark_write`) and its fields. The scheduler's
//! and a few other events print their fields the way their kernel format
//! does (`sched_switch`'s `prev_state` as letters, `==>`, kernel
//! functions as symbols or hex, softirq vectors by name); any other event
//! prints each arg as ` key=value` in its arg set's order (`gfp_flags` by
//! the flags' names, `gfp_flags.rs`).

mod gfp_flags;

use crate::hash::HashMap;
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

use crate::column_store::table::{Cell, Table};
use crate::tracker::task_state::{self, KernelVersion};

/// The softirq vectors' names, by number.
const SOFTIRQ_ACTIONS: [&str; 10] = [
    "HI",
    "TIMER",
    "NET_TX",
    "NET_RX",
    "BLOCK",
    "BLOCK_IOPOLL",
    "TASKLET",
    "SCHED",
    "HRTIMER",
    "RCU",
];

/// One arg's value as the serializer reads it.
#[derive(Debug, Clone)]
enum Val {
    Int(i64),
    Uint(u64),
    Str(String),
    Real(f64),
    Null,
}

impl Val {
    fn write(&self, out: &mut String) {
        let _ = match self {
            Val::Int(v) => write!(out, "{v}"),
            Val::Uint(v) => write!(out, "{v}"),
            Val::Str(s) => write!(out, "{s}"),
            Val::Real(v) => write!(out, "{v:.6}"),
            Val::Null => write!(out, "[NULL]"),
        };
    }

    fn int(&self) -> i64 {
        match *self {
            Val::Int(v) => v,
            Val::Uint(v) => v as i64,
            _ => 0,
        }
    }
}

/// The tables the lines are made from.
struct Tables {
    events: Arc<Table>,
    args: Arc<Table>,
    threads: Arc<Table>,
    processes: Arc<Table>,
    /// arg_set_id → first row of `args`, built on the first call (a scan
    /// of every arg, which a load that never calls `TO_FTRACE` should not
    /// pay for).
    arg_start: OnceLock<HashMap<i64, usize>>,
    kernel: Option<KernelVersion>,
}

fn find(tables: &[Arc<Table>], name: &str) -> Option<Arc<Table>> {
    tables.iter().find(|t| t.name == name).cloned()
}

fn col(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

fn int(t: &Table, row: usize, name: &str) -> Option<i64> {
    match t.cell(row, col(t, name)?) {
        Cell::Int(v) => Some(v),
        _ => None,
    }
}

fn text<'a>(t: &'a Table, row: usize, name: &str) -> Option<&'a str> {
    match t.cell(row, col(t, name)?) {
        Cell::Str(s) => Some(s),
        _ => None,
    }
}

/// The kernel version the metadata names (`system_name` Linux,
/// `system_release`).
fn kernel_version(metadata: &Table) -> Option<KernelVersion> {
    let mut name = None;
    let mut release = None;
    for r in 0..metadata.len {
        match text(metadata, r, "name") {
            Some("system_name") => name = text(metadata, r, "str_value"),
            Some("system_release") => release = text(metadata, r, "str_value"),
            _ => {}
        }
    }
    task_state::kernel_version(name?, release?)
}

impl Tables {
    /// The first `args` row of each arg set, built once.
    fn arg_starts(&self) -> &HashMap<i64, usize> {
        self.arg_start.get_or_init(|| {
            let mut starts = HashMap::default();
            for r in 0..self.args.len {
                if let Some(set) = int(&self.args, r, "arg_set_id") {
                    starts.entry(set).or_insert(r);
                }
            }
            starts
        })
    }

    fn args(&self, set: Option<i64>) -> Vec<(String, Val)> {
        let Some(set) = set else {
            return Vec::new();
        };
        let Some(&start) = self.arg_starts().get(&set) else {
            return Vec::new();
        };
        let a = &self.args;
        let mut out = Vec::new();
        for r in start..a.len {
            if int(a, r, "arg_set_id") != Some(set) {
                break;
            }
            let key = text(a, r, "key").unwrap_or("").to_owned();
            let v = match text(a, r, "value_type") {
                Some("uint") | Some("pointer") => {
                    Val::Uint(int(a, r, "int_value").unwrap_or(0) as u64)
                }
                Some("int") | Some("bool") => Val::Int(int(a, r, "int_value").unwrap_or(0)),
                Some("string") | Some("json") => {
                    Val::Str(text(a, r, "string_value").unwrap_or("").to_owned())
                }
                Some("real") => match a.cell(r, col(a, "real_value").unwrap_or(0)) {
                    Cell::Real(v) => Val::Real(v),
                    _ => Val::Null,
                },
                _ => Val::Null,
            };
            out.push((key, v));
        }
        out
    }

    fn line(&self, id: i64) -> Option<String> {
        let e = &self.events;
        let row = usize::try_from(id).ok().filter(|r| *r < e.len)?;
        let ts = int(e, row, "ts")?;
        let name = text(e, row, "name").unwrap_or("");
        let utid = int(e, row, "utid").and_then(|u| usize::try_from(u).ok());
        let cpu = int(e, row, "ucpu").unwrap_or(0);
        let (tid, comm, upid) = match utid.filter(|u| *u < self.threads.len) {
            Some(u) => (
                int(&self.threads, u, "tid").unwrap_or(0),
                text(&self.threads, u, "name").unwrap_or(""),
                int(&self.threads, u, "upid"),
            ),
            None => (0, "", None),
        };
        let tgid = upid
            .and_then(|p| usize::try_from(p).ok())
            .filter(|p| *p < self.processes.len)
            .and_then(|p| int(&self.processes, p, "pid"))
            .unwrap_or(0);
        let comm = if tid == 0 {
            "<idle>"
        } else if comm.is_empty() {
            "<unknown>"
        } else {
            comm
        };
        let mut out = String::new();
        let comm: String = comm
            .chars()
            .map(|c| if c == '-' { '_' } else { c })
            .collect();
        let tgid = if tgid == 0 {
            "-----".to_string()
        } else {
            format!("{tgid:>5}")
        };
        let _ = write!(
            out,
            "{comm:>16}-{tid:<5} ({tgid}) [{cpu:03}] .... {}.{:06}: ",
            ts / 1_000_000_000,
            (ts % 1_000_000_000) / 1000
        );
        out.push_str(
            if matches!(
                name,
                "print" | "g2d_tracing_mark_write" | "dpu_tracing_mark_write"
            ) {
                "tracing_mark_write"
            } else {
                name
            },
        );
        out.push(':');
        let args = self.args(int(e, row, "arg_set_id"));
        self.fields(name, &args, &mut out);
        Some(out)
    }

    fn fields(&self, name: &str, args: &[(String, Val)], out: &mut String) {
        let get = |k: &str| args.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        // ` key=value` for a field present, under its own or another key.
        let arg = |out: &mut String, field: &str, key: &str| {
            if let Some(v) = get(field) {
                let _ = write!(out, " {key}=");
                v.write(out);
            }
        };
        let kernel_fn = |out: &mut String, v: &Val| match v {
            Val::Uint(x) => {
                let _ = write!(out, "{x:x}");
            }
            other => other.write(out),
        };
        let hex = |out: &mut String, v: Option<&Val>| {
            if let Some(v) = v {
                let _ = write!(out, "{:x}", v.int() as u64);
            }
        };
        match name {
            "sched_switch" => {
                arg(out, "prev_comm", "prev_comm");
                arg(out, "prev_pid", "prev_pid");
                arg(out, "prev_prio", "prev_prio");
                if let Some(v) = get("prev_state") {
                    let state = task_state::task_state_text_sep(v.int(), self.kernel, '|')
                        .unwrap_or_else(|| "?".to_string());
                    let _ = write!(out, " prev_state={state}");
                }
                out.push_str(" ==>");
                arg(out, "next_comm", "next_comm");
                arg(out, "next_pid", "next_pid");
                arg(out, "next_prio", "next_prio");
            }
            "sched_wakeup" => {
                arg(out, "comm", "comm");
                arg(out, "pid", "pid");
                arg(out, "prio", "prio");
                if let Some(v) = get("target_cpu") {
                    let _ = write!(out, " target_cpu={:03}", v.int());
                }
            }
            "sched_blocked_reason" => {
                arg(out, "pid", "pid");
                arg(out, "io_wait", "iowait");
                if let Some(v) = get("caller") {
                    out.push_str(" caller=");
                    kernel_fn(out, v);
                }
            }
            "cgroup_attach_task" => {
                arg(out, "dst_root", "dst_root");
                arg(out, "dst_id", "dst_id");
                arg(out, "cname", "cgroup");
                arg(out, "dst_level", "dst_level");
                arg(out, "dst_path", "dst_path");
                arg(out, "pid", "pid");
                arg(out, "comm", "comm");
            }
            "print" => {
                out.push(' ');
                if let Some(Val::Str(s)) = get("buf") {
                    out.push_str(s.strip_suffix('\n').unwrap_or(s));
                }
            }
            "workqueue_activate_work" | "workqueue_execute_end" => {
                out.push_str(" work struct ");
                hex(out, get("work"));
            }
            "workqueue_execute_start" => {
                out.push_str(" work struct ");
                hex(out, get("work"));
                out.push_str(": function ");
                if let Some(v) = get("function") {
                    kernel_fn(out, v);
                }
            }
            "workqueue_queue_work" => {
                out.push_str(" work struct=");
                hex(out, get("work"));
                if let Some(v) = get("function") {
                    out.push_str(" function=");
                    kernel_fn(out, v);
                }
                if let Some(v) = get("workqueue") {
                    out.push_str(" workqueue=");
                    hex(out, Some(v));
                }
                for k in ["req_cpu", "cpu"] {
                    if let Some(v) = get(k) {
                        v.write(out);
                    }
                }
            }
            "irq_handler_entry" => {
                arg(out, "irq", "irq");
                arg(out, "name", "name");
            }
            "irq_handler_exit" => {
                arg(out, "irq", "irq");
                out.push_str(" ret=");
                if let Some(v) = get("ret") {
                    out.push_str(if v.int() != 0 { "handled" } else { "unhandled" });
                }
            }
            "softirq_entry" | "softirq_exit" => {
                arg(out, "vec", "vec");
                out.push_str(" [action=");
                if let Some(v) = get("vec") {
                    match SOFTIRQ_ACTIONS.get(v.int() as usize) {
                        Some(a) => out.push_str(a),
                        None => v.write(out),
                    }
                }
                out.push(']');
            }
            _ => {
                for (k, v) in args {
                    let _ = write!(out, " {k}=");
                    match v {
                        // An allocation's flags by their kernel names.
                        Val::Int(_) | Val::Uint(_) if k == "gfp_flags" => {
                            gfp_flags::write_gfp_flags(v.int() as u64, self.kernel, out);
                        }
                        _ => v.write(out),
                    }
                }
            }
        }
    }
}

/// Registers `to_ftrace` over the built tables.
pub fn register(conn: &Connection, tables: &[Arc<Table>]) -> rusqlite::Result<()> {
    let (Some(events), Some(args), Some(threads), Some(processes)) = (
        find(tables, "__intrinsic_ftrace_event"),
        find(tables, "__intrinsic_args"),
        find(tables, "__intrinsic_thread"),
        find(tables, "__intrinsic_process"),
    ) else {
        return Ok(());
    };
    let kernel = find(tables, "__intrinsic_metadata").and_then(|m| kernel_version(&m));
    let t = Arc::new(Tables {
        events,
        args,
        threads,
        processes,
        arg_start: OnceLock::new(),
        kernel,
    });
    conn.create_scalar_function(
        "to_ftrace",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let id = match ctx.get_raw(0) {
                ValueRef::Integer(v) => v,
                _ => {
                    return Err(rusqlite::Error::UserFunctionError(
                        "Usage: to_ftrace(id)".into(),
                    ));
                }
            };
            t.line(id).ok_or_else(|| {
                rusqlite::Error::UserFunctionError(
                    format!("to_ftrace: Cannot serialize row id {id}").into(),
                )
            })
        },
    )
}
