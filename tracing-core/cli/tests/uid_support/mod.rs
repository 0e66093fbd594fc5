//! What the tests that act as another user share: whether this test may
//! run (it needs root to run a process as another uid, and CI, which sets
//! `ZEROTRACE_REQUIRE_ROOT`, requires it), the test binary run again as
//! another uid for one test's other-user part, and a directory that user
//! may write. (Each hostile test binary, and `all/`, includes it.)

#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// `nobody` (and `nogroup`): the other user.
pub const NOBODY: u32 = 65534;

/// Whether this test may run as root; says so in one line where not, and
/// fails where CI requires it.
pub fn root_or_say(test: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    let msg = format!("{test} did not run: it needs root (to run a process as another user)");
    assert!(
        std::env::var_os("ZEROTRACE_REQUIRE_ROOT").is_none(),
        "{msg}"
    );
    println!("{msg}");
    false
}

/// Runs the test `test` (its harness name, for `--exact`) of this test
/// binary again as `uid` (and gid `uid`), alone and with its output shown,
/// with `env` set to `value` to tell it to play the other user's part:
/// what it printed and how it ended.
pub fn run_as(uid: u32, test: &str, env: &str, value: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env, value)
        .uid(uid)
        .gid(uid)
        .output()
        .unwrap()
}

/// Makes `dir` anew, empty and owned by `uid` (and gid `uid`): where the
/// other user's process writes.
pub fn dir_owned_by(dir: &Path, uid: u32) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
}
