//! The heap-cost workload under dhat-rs (its global allocator and heap
//! profiler, writing `dhat-heap.json` in the working directory).
mod workload;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    let _profiler = dhat::Profiler::new_heap();
    println!("{}", workload::run(workload::rounds()));
}
