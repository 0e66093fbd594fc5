//! Error paths: each with its exit code and one line saying what to do;
//! options that would be dropped; a closed pipe.

use super::*;

#[test]
fn errors_say_what_to_do_with_their_exit_codes() {
    let d = dir("errors");
    // No service: exit 2, names the socket and zerotraced.
    let missing = d.join("no-such-socket");
    let o = zerotrace()
        .arg("--consumer-socket")
        .arg(&missing)
        .args(["record", "-t", "1s", "-o"])
        .arg(d.join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(missing.to_str().unwrap()) && e.contains("zerotraced"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one line: {e}");

    // A bad text config: exit 1, FILE:LINE:COL, the line and a caret.
    let cfg = d.join("bad.pbtxt");
    std::fs::write(
        &cfg,
        "buffers { size_kb: 64 }\ndata_sources { config { nmae: \"x\" } }\n",
    )
    .unwrap();
    let o = zerotrace()
        .args(["record", "--txt", "-c"])
        .arg(&cfg)
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let first = format!("zerotrace: {}:2:25 error: ", cfg.display());
    assert!(e.starts_with(&first), "{e}");
    assert!(
        e.contains("data_sources { config { nmae: \"x\" } }\n"),
        "{e}"
    );
    assert!(
        e.trim_end().ends_with(&format!("{}^", " ".repeat(24))),
        "{e}"
    );

    // Unwritable output: exit 4 once the session is recorded.
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "100ms",
            "-o",
        ])
        .arg(d.join("no/such/dir/t.pftrace"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));

    // --no-clobber with an existing file: exit 4, nothing recorded.
    let existing = d.join("existing.pftrace");
    std::fs::write(&existing, b"keep").unwrap();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--no-clobber",
            "-o",
        ])
        .arg(&existing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");

    // A file that is not a trace: exit 5.
    let junk = d.join("junk");
    std::fs::write(&junk, [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap();
    let o = zerotrace().arg("stats").arg(&junk).output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));

    // A missing trace file: exit 4.
    let o = zerotrace()
        .arg("dump")
        .arg(d.join("missing"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    use std::io::{BufRead, BufReader};
    let genuine =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/genuine-session.pftrace");
    for cmd in ["dump", "stats"] {
        let mut child = zerotrace()
            .arg(cmd)
            .arg(&genuine)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader goes away after one line.
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{cmd}: {}", stderr(&o));
    }
}

#[test]
fn options_that_would_be_dropped_are_errors() {
    let d = dir("dropped-options");
    let cfg = d.join("c.pbtxt");
    std::fs::write(&cfg, "buffers { size_kb: 64 } duration_ms: 100").unwrap();
    // No service: each of these must fail as a usage error (exit 1) before
    // the service is asked for anything (exit 2).
    let missing = d.join("no-such-socket");
    let run = |args: &[&str]| {
        let o = zerotrace()
            .arg("--consumer-socket")
            .arg(&missing)
            .arg("record")
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), stderr(&o))
    };
    let c = cfg.to_str().unwrap();
    let out = d.join("t.pftrace");
    let out = out.to_str().unwrap();
    for (args, says) in [
        (vec!["-c", c, "--txt", "-t", "5s", "-o", out], "-t/--time"),
        (
            vec!["-c", c, "--txt", "-b", "1mb", "-o", out],
            "-b/--buffer",
        ),
        (vec!["-c", c, "--txt", "-s", "1mb", "-o", out], "-s/--size"),
        (vec!["-c", c, "--txt", "--ds", "x", "-o", out], "--ds"),
        (vec!["-c", c, "--txt", "cat*", "-o", out], "categories"),
        (vec!["--txt", "-t", "1s", "-o", out], "no -c"),
        (
            vec!["-t", "1s", "--detach", "k", "-o", out],
            "nothing would write",
        ),
        (
            vec!["--attach", "k", "-t", "1s"],
            "--attach takes no config",
        ),
        (vec!["-t", "1s", "--background", "-o", "-"], "-o FILE"),
        (
            vec!["-t", "1s", "--background", "--detach", "k", "-o", out],
            "cannot be combined",
        ),
    ] {
        let (code, e) = run(&args);
        assert_eq!(code, Some(1), "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
    assert!(!Path::new(out).exists());

    // The global --consumer-socket on a command that connects to nothing
    // would be ignored: a usage error too.
    let trace = d.join("some.pftrace");
    std::fs::write(&trace, b"").unwrap();
    for cmd in [
        vec!["dump", trace.to_str().unwrap()],
        vec!["stats", trace.to_str().unwrap()],
        vec!["convert", trace.to_str().unwrap()],
        vec!["demo", "-o", out],
    ] {
        let o = zerotrace()
            .arg("--consumer-socket")
            .arg(&missing)
            .args(&cmd)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
        assert!(e.contains("does not connect"), "{cmd:?}: {e}");
    }
    assert!(!Path::new(out).exists());
}
