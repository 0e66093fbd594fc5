//! Which allocations a heap profile records, and for how many bytes, so
//! that its totals are unbiased estimates of the real ones (heapprofd's
//! rule): every byte allocated is sampled on its own with probability
//! 1/`interval`, and an allocation counts `interval` bytes for each of its
//! bytes that was sampled. An allocation of at least `interval` bytes is
//! always recorded, at its exact size, and an interval of 1 records every
//! allocation exactly.
//!
//! The gaps between sampled bytes of a Poisson process are exponential:
//! the sampler keeps the bytes left to the next sampled one, subtracts each
//! allocation, and draws a new gap each time the count crosses zero. The
//! draw uses a small generator of its own (xorshift64*, seeded per
//! sampler) and a logarithm of its own, so a sample never allocates,
//! locks or calls into libc or libm.

/// One thread's (or one client's) sampler.
#[derive(Debug, Clone, Copy)]
pub struct Sampler {
    interval: u64,
    /// Bytes until the next sampled byte; at or below zero, one is due.
    to_next: i64,
    rng: u64,
}

impl Sampler {
    /// A placeholder that never samples, until it is replaced by a real
    /// one (a thread-local's constant initial value).
    pub const UNSET: Sampler = Sampler {
        interval: u64::MAX,
        to_next: i64::MAX,
        rng: 1,
    };

    /// A sampler of `interval` bytes (0 is taken as 1, every allocation),
    /// its generator seeded with `seed` (any value; 0 is replaced).
    pub fn new(interval: u64, seed: u64) -> Self {
        let mut s = Sampler {
            interval: interval.max(1),
            to_next: 0,
            rng: if seed == 0 {
                0x9E37_79B9_7F4A_7C15
            } else {
                seed
            },
        };
        s.to_next = s.next_gap();
        s
    }

    /// The sampling interval in bytes.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The common case, cheaply: when an allocation of `size` bytes is not
    /// sampled, counts it and says so (`true`); `false` leaves the
    /// sampler untouched for [`Sampler::sample_size`] to decide.
    #[inline]
    pub fn skip(&mut self, size: u64) -> bool {
        if size < self.interval && (size as i64) < self.to_next && size <= i64::MAX as u64 {
            self.to_next -= size as i64;
            true
        } else {
            false
        }
    }

    /// The bytes an allocation of `size` counts for: 0 when it is not
    /// recorded, `size` itself when `size >= interval`, else `interval`
    /// times the number of its bytes that were sampled.
    #[inline]
    pub fn sample_size(&mut self, size: u64) -> u64 {
        if size >= self.interval {
            return size;
        }
        // to_next is in 1..=2^62 here; one subtraction cannot overflow.
        self.to_next -= i64::try_from(size).unwrap_or(i64::MAX);
        if self.to_next > 0 {
            return 0;
        }
        let mut samples = 0u64;
        while self.to_next <= 0 {
            self.to_next = self.to_next.saturating_add(self.next_gap());
            samples += 1;
        }
        samples.saturating_mul(self.interval)
    }

    /// An exponential gap of mean `interval` bytes, at least 1.
    fn next_gap(&mut self) -> i64 {
        if self.interval == 1 {
            return 1;
        }
        // xorshift64* (Vigna): a full-period 64-bit generator.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // A uniform in (0, 1]: the top 53 bits, plus one.
        let u = ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let gap = -ln_unit(u) * self.interval as f64;
        // Capped so the count never leaves i64 (an interval is at most a
        // few MB in practice; the cap is 2^62 bytes).
        (gap as i64).clamp(1, 1 << 62)
    }
}

/// The natural logarithm of `u` in (0, 1], without libm (a call to its
/// `log` cost a sample a tenth of its time): `u = m * 2^e` with `m` in
/// [sqrt(1/2), sqrt(2)), and `ln m = 2 atanh(t)`, `t = (m - 1) / (m + 1)`,
/// whose series to `t^9` is within 4e-9 of it there (|t| < 0.172). A
/// relative error of that size in a gap is far below the sampling's own
/// noise.
#[inline]
fn ln_unit(u: f64) -> f64 {
    const LN_2: f64 = std::f64::consts::LN_2;
    let bits = u.to_bits();
    // `u` is normal: at least 2^-53 (the caller's uniform), at most 1.
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let series = 1.0 + t2 * (1.0 / 3.0 + t2 * (1.0 / 5.0 + t2 * (1.0 / 7.0 + t2 * (1.0 / 9.0))));
    e as f64 * LN_2 + 2.0 * t * series
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logarithm_agrees_with_libms_over_the_uniforms_range() {
        let mut worst = 0f64;
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut check = |u: f64| {
            let (got, want) = (ln_unit(u), u.ln());
            let err = if want == 0.0 {
                got.abs()
            } else {
                ((got - want) / want).abs()
            };
            worst = worst.max(err);
        };
        // Around the split at sqrt(1/2), on both sides.
        let split = std::f64::consts::FRAC_1_SQRT_2;
        for u in [
            1.0,
            0.5,
            1.0 - f64::EPSILON,
            2f64.powi(-53),
            split,
            split * (1.0 + 4.0 * f64::EPSILON),
            split * (1.0 - 4.0 * f64::EPSILON),
        ] {
            check(u);
        }
        // A thousand under Miri, which interprets every operation.
        for _ in 0..if cfg!(miri) { 1_000 } else { 1_000_000 } {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
            check(((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64);
            // And small ones, where the exponent does the work.
            check(((r >> 11) as f64 + 1.0) / 2f64.powi(80).min(1e30));
        }
        assert!(worst < 1e-8, "worst relative error {worst:e}");
    }

    #[test]
    fn an_interval_of_one_records_every_allocation_exactly() {
        let mut s = Sampler::new(1, 7);
        for size in [1, 2, 3, 100, 4096, 0] {
            assert_eq!(s.sample_size(size), size);
        }
        assert_eq!(Sampler::new(0, 7).interval(), 1);
    }

    #[test]
    fn allocations_of_at_least_the_interval_are_always_recorded_at_their_size() {
        let mut s = Sampler::new(4096, 1);
        for size in [4096, 4097, 1 << 20] {
            assert_eq!(s.sample_size(size), size);
        }
    }

    #[test]
    fn small_allocations_count_whole_intervals() {
        let mut s = Sampler::new(4096, 3);
        for _ in 0..100_000 {
            let b = s.sample_size(24);
            assert_eq!(b % 4096, 0);
        }
    }

    /// The estimate is unbiased: over N allocations of size s the recorded
    /// total has mean N*s and (Poisson) standard deviation
    /// sqrt(N*s*interval); each seed's total lies within 5 of them (a
    /// false failure is a 1-in-3.5-million event per seed, and the seeds
    /// are fixed, so the test is deterministic).
    #[test]
    fn totals_are_unbiased_within_the_poisson_bound() {
        let (n, size, interval) = (200_000u64, 48u64, 4096u64);
        let expected = (n * size) as f64;
        let sigma = (expected * interval as f64).sqrt();
        for seed in 1..=20 {
            let mut s = Sampler::new(interval, seed);
            let total: u64 = (0..n).map(|_| s.sample_size(size)).sum();
            let z = (total as f64 - expected) / sigma;
            assert!(z.abs() < 5.0, "seed {seed}: total {total}, z {z:.2}");
        }
    }

    #[test]
    fn extreme_sizes_and_intervals_neither_overflow_nor_stall() {
        let mut s = Sampler::new(u64::MAX, 5);
        assert_eq!(s.sample_size(u64::MAX), u64::MAX);
        let b = s.sample_size(u64::MAX - 1);
        assert!(b == 0 || b % u64::MAX == 0, "{b}");
        let mut s = Sampler::new(2, 5);
        for _ in 0..1000 {
            assert!(s.sample_size(1) <= 2 * 64);
        }
    }
}
