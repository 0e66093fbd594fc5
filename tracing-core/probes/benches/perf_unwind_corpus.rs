//! What does unwinding cost per recorded `linux.perf` sample, and how often
//! does the unwind-rule cache answer, over real samples rather than one
//! synthetic stack? The corpus (`benches/perf-corpus/`, recorded by
//! `examples/perf_corpus_record.rs`; see its README) holds samples of the
//! oracle's fixture program in `cpu` mode, built without (`proc/1`) and
//! with (`proc/2`) frame pointers: each sample's registers and stack copy,
//! the process's maps and the fixture binary, laid out as a `/proc` root,
//! so this runs without root and on any x86-64 machine.
//!
//! Only the fixture is in the corpus: an unwind that reaches libc (the
//! fixture's C `main` returns into it) ends there with `INVALID_ELF`, the
//! libc frame itself counted. Variants, each a pass over every sample of
//! a build with the process state already built (warm):
//! * `dwarf/nofp`, `dwarf/fp`: DWARF CFI unwinding (the default mode);
//! * `frame_pointer/fp`: the rbp chain of the frame-pointer build;
//! * `dwarf_cold/nofp`: a new unwinder per pass (maps parsed, the ELF
//!   read, framehop's index built: the first sample's cost, then warm).
//!
//! It prints, per build, frames per sample, how the unwinds ended, and the
//! rule cache's hit rate (`Unwinder::stats`). Criterion's throughput is in
//! samples (elements) per second.
//!
//! Run: `cargo bench -p zerotrace-probes --bench perf_unwind_corpus -- --warm-up-time 1 --measurement-time 3`.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod bench {
    use std::collections::BTreeMap;
    use std::hint::black_box;
    use std::path::{Path, PathBuf};

    use criterion::{Criterion, Throughput};
    use zerotrace_probes::perf::unwind::{UnwindMode, Unwinder, UserRegs, UserSample};
    use zerotrace_probes::procfs::root::ProcRoot;

    /// One recorded sample.
    pub struct Recorded {
        regs: UserRegs,
        maxed: bool,
        stack: Vec<u8>,
    }

    /// The corpus's root (a `/proc` tree of its own).
    pub fn corpus_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/perf-corpus")
    }

    fn u64_at(b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&b[at..at + 4]);
        u32::from_le_bytes(w)
    }

    /// The samples of process `pid` of the corpus.
    pub fn load(pid: u32) -> Vec<Recorded> {
        let path = corpus_root().join(format!("proc/{pid}/samples"));
        let b = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            &b[..8],
            b"ZTPERFC1",
            "{}: not a corpus file",
            path.display()
        );
        let mut at = 8;
        let mut out = Vec::new();
        while at < b.len() {
            let regs = UserRegs {
                ip: u64_at(&b, at),
                sp: u64_at(&b, at + 8),
                bp: u64_at(&b, at + 16),
            };
            let flags = u32_at(&b, at + 24);
            let len = u32_at(&b, at + 28) as usize;
            at += 32;
            out.push(Recorded {
                regs,
                maxed: flags & 1 != 0,
                stack: b[at..at + len].to_vec(),
            });
            at += len;
        }
        out
    }

    fn input(r: &Recorded) -> UserSample<'_> {
        UserSample {
            regs: r.regs,
            stack: &r.stack,
            stack_maxed: r.maxed,
        }
    }

    fn unwinder() -> Unwinder {
        Unwinder::with_proc_root(ProcRoot::at(corpus_root()))
    }

    /// Frames per sample, how the unwinds ended, and the innermost-to-
    /// outermost names of the most common stack.
    fn describe(what: &str, pid: u32, samples: &[Recorded], mode: UnwindMode) {
        let mut u = unwinder();
        let mut ends: BTreeMap<String, usize> = BTreeMap::new();
        let mut frames = 0;
        let mut chains: BTreeMap<Vec<String>, usize> = BTreeMap::new();
        for s in samples {
            let out = u.unwind(pid, &input(s), mode);
            frames += out.frames.len();
            *ends
                .entry(format!("{} frames, {:?}", out.frames.len(), out.error))
                .or_default() += 1;
            let names = out
                .frames
                .iter()
                .map(|f| {
                    u.symbolize(pid, f).map_or_else(
                        || {
                            f.mapping
                                .as_ref()
                                .map_or("?".into(), |m| m.mapping.name_lossy().into_owned())
                        },
                        |s| s.name,
                    )
                })
                .collect();
            *chains.entry(names).or_default() += 1;
        }
        let s = u.stats();
        println!(
            "{what}: {} samples, {:.2} frames per sample; ends: {ends:?}; \
             rule cache hit rate {:.4} ({} hits, {} misses); process state {} hits, {} misses; \
             modules {} loaded, {} failed",
            samples.len(),
            frames as f64 / samples.len().max(1) as f64,
            s.rule_cache_hit_rate(),
            s.rule_cache_hits,
            s.rule_cache_misses,
            s.process_hits,
            s.process_misses,
            s.modules.loaded,
            s.modules.failed,
        );
        if let Some((chain, n)) = chains.iter().max_by_key(|(_, n)| **n) {
            println!("{what}: most common stack ({n} samples), leaf first: {chain:?}");
        }
    }

    fn warm(c: &mut Criterion, name: &str, pid: u32, samples: &[Recorded], mode: UnwindMode) {
        let mut u = unwinder();
        for s in samples {
            black_box(u.unwind(pid, &input(s), mode));
        }
        let mut g = c.benchmark_group("perf_unwind_corpus");
        g.throughput(Throughput::Elements(samples.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                for s in samples {
                    black_box(u.unwind(pid, black_box(&input(s)), mode));
                }
            })
        });
        g.finish();
        let st = u.stats();
        println!(
            "{name}: rule cache hit rate over the whole run {:.4} ({} hits, {} misses)",
            st.rule_cache_hit_rate(),
            st.rule_cache_hits,
            st.rule_cache_misses
        );
    }

    pub fn bench(c: &mut Criterion) {
        let nofp = load(1);
        let fp = load(2);
        describe("dwarf/nofp", 1, &nofp, UnwindMode::Dwarf);
        describe("dwarf/fp", 2, &fp, UnwindMode::Dwarf);
        describe("frame_pointer/fp", 2, &fp, UnwindMode::FramePointer);
        warm(c, "dwarf/nofp", 1, &nofp, UnwindMode::Dwarf);
        warm(c, "dwarf/fp", 2, &fp, UnwindMode::Dwarf);
        warm(c, "frame_pointer/fp", 2, &fp, UnwindMode::FramePointer);
        let mut g = c.benchmark_group("perf_unwind_corpus");
        g.throughput(Throughput::Elements(nofp.len() as u64));
        g.sample_size(20);
        g.bench_function("dwarf_cold/nofp", |b| {
            b.iter(|| {
                let mut u = unwinder();
                for s in &nofp {
                    black_box(u.unwind(1, black_box(&input(s)), UnwindMode::Dwarf));
                }
            })
        });
        g.finish();
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn main() {
    let mut c = criterion::Criterion::default().configure_from_args();
    bench::bench(&mut c);
    c.final_summary();
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn main() {}
