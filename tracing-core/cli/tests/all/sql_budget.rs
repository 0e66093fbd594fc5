//! `zerotrace sql --max-memory`: a gzip file of 200 MiB of empty packets
//! in under 1 MiB is refused by default as a decompression bomb (exit 5,
//! the message naming the option), a trace over a budget given on the
//! command line is refused naming that limit, the same trace loads under
//! the default, and a size that is not one is a usage error.

use std::io::Write;

use crate::support::{framed, text, zerotrace};

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("zerotrace-sql-budget-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sql(trace: &std::path::Path, extra: &[&str]) -> std::process::Output {
    zerotrace()
        .arg("sql")
        .arg(trace)
        .args(extra)
        .args(["-Q", "SELECT count(*) FROM thread"])
        .output()
        .unwrap()
}

#[test]
fn a_gzip_bomb_is_refused_and_max_memory_sets_the_limit() {
    let d = dir();
    let bomb = d.join("bomb.pftrace.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let chunk: Vec<u8> = [0x0a, 0x00].repeat(1 << 19);
    for _ in 0..200 {
        gz.write_all(&chunk).unwrap();
    }
    std::fs::write(&bomb, gz.finish().unwrap()).unwrap();
    let out = sql(&bomb, &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("more than 100 times") && err.contains("--max-memory"),
        "{err}"
    );

    // 1,000 empty packets: 2,000 bytes, and a record of each.
    let small = d.join("small.pftrace");
    std::fs::write(&small, framed(&vec![Vec::<u8>::new(); 1000])).unwrap();
    let out = sql(&small, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = sql(&small, &["--max-memory", "4K"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("more than 4096 bytes"), "{err}");
    let out = sql(&small, &["--max-memory", "4X"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}
