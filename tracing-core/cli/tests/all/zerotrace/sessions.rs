//! Sessions that outlive the command: `--detach`, `--attach`,
//! `--background`.

use super::*;

#[test]
fn detach_attach_and_background() {
    let d = dir("detach");
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "600ms",
            "--detach",
            "k",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--attach k"), "{}", stderr(&o));
    let out = d.join("attached.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "k",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());

    // --background: prints the recorder's pid and returns at once.
    let bg = d.join("background.pftrace");
    let start = Instant::now();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "2s",
            "--background",
            "-o",
        ])
        .arg(&bg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!bg.exists(), "returned before the recording ended");
    let pid: u32 = stdout(&o).trim().parse().expect("a pid");
    assert!(pid > 0);
    while !bg.exists() || std::fs::read(&bg).unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the background recorder wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn background_returns_once_the_session_runs_and_fails_in_the_foreground() {
    let d = dir("background-fails");
    let daemon = Daemon::start(&d);
    let run = |args: &[&str]| {
        let start = Instant::now();
        let o = zerotrace()
            .args([
                "--consumer-socket",
                daemon.socket(),
                "record",
                "--background",
            ])
            .args(args)
            .output()
            .unwrap();
        (o, start.elapsed())
    };
    let out = d.join("bg.pftrace");
    let out = out.to_str().unwrap();
    // A config that does not parse: the child's usage error, in the
    // foreground, with its exit code.
    let bad = d.join("bad.pbtxt");
    std::fs::write(&bad, "buffers { size_kb: 64 } no_such_field: 1").unwrap();
    let (o, _) = run(&["-c", bad.to_str().unwrap(), "--txt", "-o", out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no_such_field"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "no pid for a recorder that failed");
    // A session the service refuses (no buffers): exit 3, the reason said.
    let refused = d.join("refused.pbtxt");
    std::fs::write(
        &refused,
        "duration_ms: 5000 data_sources { config { name: \"track_event\" } }",
    )
    .unwrap();
    let (o, _) = run(&["-c", refused.to_str().unwrap(), "--txt", "-o", out]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("no buffers"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // A service that is not there: exit 2.
    let o = zerotrace()
        .args(["--consumer-socket"])
        .arg(d.join("nobody"))
        .args(["record", "--background", "-t", "1s", "-o", out])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!Path::new(out).exists());
    // A good one: the pid once the session is listed by the service, and
    // the recorder goes on after the parent returned (it ends by SIGTERM
    // and still writes the file).
    let (o, _) = run(&["-t", "60s", "-o", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pid: i32 = stdout(&o).trim().parse().expect("a pid");
    let q = zerotrace()
        .args(["--consumer-socket", daemon.socket(), "query"])
        .output()
        .unwrap();
    assert!(
        stdout(&q).contains("(1 started)"),
        "the session runs once the parent returned:\n{}",
        stdout(&q)
    );
    assert!(!Path::new(out).exists());
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let start = Instant::now();
    while std::fs::metadata(out).map_or(true, |m| m.len() == 0) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the background recorder wrote nothing after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn attach_with_no_clobber_keeps_an_existing_file() {
    let d = dir("attach-no-clobber");
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "400ms",
            "--detach",
            "nc",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("kept.pftrace");
    std::fs::write(&out, b"precious").unwrap();
    let attach = |no_clobber: bool| {
        let mut c = zerotrace();
        c.args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "nc",
            "-o",
        ])
        .arg(&out);
        if no_clobber {
            c.arg("--no-clobber");
        }
        c.output().unwrap()
    };
    let o = attach(true);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("--no-clobber"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // The session stayed detached: attaching without --no-clobber gets it.
    let o = attach(false);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());
}

#[test]
fn attach_waits_for_a_session_the_service_writes_and_says_where() {
    let d = dir("attach-file");
    let daemon = Daemon::start(&d);
    let out = d.join("by-service.pftrace");
    let o = zerotrace()
        .env("XDG_RUNTIME_DIR", &d)
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "700ms",
            "-s",
            "1mb",
            "--detach",
            "filekey",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .env("XDG_RUNTIME_DIR", &d)
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "filekey",
        ])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let canonical = std::fs::canonicalize(&out).unwrap();
    assert!(
        e.contains(&format!(
            "the service writes it into {}",
            canonical.display()
        )),
        "{e}"
    );
    assert!(e.contains("the service wrote"), "waited for the end: {e}");
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());

    // A session read back at its end, attached without -o: refused, and
    // left detached for a later attach with -o.
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "700ms",
            "--detach",
            "ringkey",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "ringkey",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("stays detached"), "{}", stderr(&o));
    let ring = d.join("ring.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "ringkey",
            "-o",
        ])
        .arg(&ring)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&ring).unwrap()).is_empty());
}
