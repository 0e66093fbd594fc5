//! The heap-cost workload on the system allocator: the baseline.
mod workload;

fn main() {
    println!("{}", workload::run(workload::rounds()));
}
