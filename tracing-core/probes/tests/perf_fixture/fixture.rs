//! The program the `perf` oracle tests sample (compiled by the tests with
//! `rustc`, release with debug info, once with and once without frame
//! pointers). Each mode spends its time in known functions:
//!
//! - `cpu`: rounds of three leaves under distinct callers, in the ratio
//!   60/30/10 of this thread's CPU time (a two-instruction loop whose
//!   count is corrected after each call by the CPU time it took); `leaf_c` is a naked
//!   function that sets up no frame in either build.
//! - `syscalls`: `syscall_loop` writes one byte to `/dev/null` at a time.
//! - `block`: `wait_on_pipe` blocks reading a pipe that `pace_writer`
//!   (another thread) feeds a byte every two milliseconds.
//! - `work SECONDS`: the `cpu` mode's leaves with fixed loop counts (no
//!   correction), for the cost benchmark (`cargo xtask perf-cost`): after
//!   `ready` it waits for a line on stdin, runs for SECONDS of wall time
//!   and prints `work ITERATIONS NANOSECONDS` (the loop turns done, the
//!   time taken), then exits.
//!
//! The other modes run until killed, after printing `ready` (in `cpu` mode
//! once the loop counts have settled).

use std::hint::black_box;
use std::io::{Read, Write};

/// The CPU time a round of the three leaves takes, in nanoseconds.
const ROUND_NS: f64 = 20e6;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), in nanoseconds: what
/// a CPU-clock sampler divides, whatever else runs on the machine.
fn thread_cpu_ns() -> f64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock 3 is
    // CLOCK_THREAD_CPUTIME_ID on Linux.
    unsafe { clock_gettime(3, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// A leaf's loop count for its share of a round, corrected after every
/// call by the CPU time the call took (the three loops differ in speed
/// with their alignment, and the machine's speed varies).
struct Share {
    share: f64,
    ns_per_iter: f64,
}

impl Share {
    fn iterations(&self) -> u64 {
        ((ROUND_NS * self.share / self.ns_per_iter) as u64).max(1000)
    }

    fn run(&mut self, call: impl FnOnce(u64) -> u64) {
        let n = self.iterations();
        let t = thread_cpu_ns();
        black_box(call(black_box(n)));
        let per = (thread_cpu_ns() - t).max(1.0) / n as f64;
        self.ns_per_iter = 0.8 * self.ns_per_iter + 0.2 * per;
    }
}

/// `n` turns of `dec; jnz`: time proportional to `n` whatever the build.
#[inline(never)]
fn leaf_a(n: u64) -> u64 {
    let mut n = n.max(1);
    unsafe { std::arch::asm!("2:", "dec {0}", "jnz 2b", inout(reg) n) };
    n
}

/// `leaf_a`'s loop spelled differently, so that the linker cannot fold
/// the two functions into one symbol.
#[inline(never)]
fn leaf_b(n: u64) -> u64 {
    let mut n = n.max(1);
    unsafe { std::arch::asm!("2:", "sub {0}, 1", "jnz 2b", inout(reg) n) };
    n.wrapping_add(2)
}

/// The same loop with no frame at all, even with frame pointers forced;
/// its call frame information says so (the return address at the CFA).
#[unsafe(naked)]
extern "C" fn leaf_c(n: u64) -> u64 {
    std::arch::naked_asm!(
        ".cfi_startproc",
        "mov rax, rdi",
        "2:",
        "dec rax",
        "jnz 2b",
        "ret",
        ".cfi_endproc"
    )
}

#[inline(never)]
fn caller_a(n: u64) -> u64 {
    black_box(leaf_a(black_box(n))) + 1
}

#[inline(never)]
fn caller_b(n: u64) -> u64 {
    black_box(leaf_b(black_box(n))) + 1
}

#[inline(never)]
fn caller_c(n: u64) -> u64 {
    black_box(leaf_c(black_box(n))) + 1
}

#[inline(never)]
fn syscall_loop() {
    let mut null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null opens");
    loop {
        let _ = black_box(null.write(b"x"));
    }
}

#[inline(never)]
fn wait_on_pipe(r: &mut std::io::PipeReader) -> usize {
    let mut b = [0u8; 1];
    black_box(r.read(&mut b).unwrap_or(0))
}

#[inline(never)]
fn pace_writer(mut w: std::io::PipeWriter) {
    loop {
        std::thread::sleep(std::time::Duration::from_millis(2));
        if w.write_all(b"x").is_err() {
            return;
        }
    }
}

/// Rounds of the three leaves (60/30/10 of the loop turns) until `span`
/// of wall time has passed: the loop turns done and the nanoseconds taken.
#[inline(never)]
fn work_for(span: std::time::Duration) -> (u64, u128) {
    const ROUND: [u64; 3] = [600_000, 300_000, 100_000];
    let start = std::time::Instant::now();
    let mut done = 0u64;
    loop {
        black_box(caller_a(black_box(ROUND[0])));
        black_box(caller_b(black_box(ROUND[1])));
        black_box(caller_c(black_box(ROUND[2])));
        done += ROUND.iter().sum::<u64>();
        let elapsed = start.elapsed();
        if elapsed >= span {
            return (done, elapsed.as_nanos());
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let ready = || {
        println!("ready");
        let _ = std::io::stdout().flush();
    };
    match mode.as_str() {
        "cpu" => {
            let mut shares = [0.6, 0.3, 0.1].map(|share| Share {
                share,
                ns_per_iter: 1.0,
            });
            let round = |s: &mut [Share; 3]| {
                s[0].run(caller_a);
                s[1].run(caller_b);
                s[2].run(caller_c);
            };
            // Settle the estimates before anyone samples.
            for _ in 0..20 {
                round(&mut shares);
            }
            ready();
            loop {
                round(&mut shares);
            }
        }
        "syscalls" => {
            ready();
            syscall_loop()
        }
        "block" => {
            ready();
            let (mut r, w) = std::io::pipe().expect("a pipe");
            std::thread::spawn(move || pace_writer(w));
            loop {
                black_box(wait_on_pipe(&mut r));
            }
        }
        "work" => {
            let seconds: f64 = std::env::args()
                .nth(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(5.0);
            ready();
            let mut go = String::new();
            let _ = std::io::stdin().read_line(&mut go);
            let (iterations, ns) = work_for(std::time::Duration::from_secs_f64(seconds));
            println!("work {iterations} {ns}");
            let _ = std::io::stdout().flush();
        }
        other => {
            eprintln!("usage: fixture cpu|syscalls|block|work SECONDS (not {other:?})");
            std::process::exit(2);
        }
    }
}
