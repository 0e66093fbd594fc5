//! The line on stderr that shows how far a large trace has loaded: bytes
//! read of the file's size and the rate, redrawn in place (`\r`) at most
//! ten times a second, and erased when the trace is loaded. It appears
//! only once loading has taken a tenth of a second, so a small trace
//! never flashes one; the caller draws it only when stderr is a terminal.
//! Pure: the caller passes the times and writes the text.

use std::time::{Duration, Instant};

use zerotrace_trace_processor::LoadProgress;

/// The least time between two drawings, and before the first.
const EVERY: Duration = Duration::from_millis(100);

/// The progress line of one load.
#[derive(Debug)]
pub struct ProgressLine {
    name: String,
    start: Instant,
    last: Option<Instant>,
    /// Characters of the text drawn last (to blank what is left of it).
    drawn: usize,
}

/// Bytes in megabytes, one decimal.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

impl ProgressLine {
    /// The line for loading the file `name`, started at `start`.
    pub fn new(name: impl Into<String>, start: Instant) -> Self {
        ProgressLine {
            name: name.into(),
            start,
            last: None,
            drawn: 0,
        }
    }

    /// What to write to stderr for `p` at `now`, if it is time to redraw.
    pub fn update(&mut self, p: LoadProgress, now: Instant) -> Option<String> {
        let elapsed = now.saturating_duration_since(self.start);
        if elapsed < EVERY {
            return None;
        }
        let due = match self.last {
            None => true,
            Some(last) => p.reading_done || now.saturating_duration_since(last) >= EVERY,
        };
        if !due {
            return None;
        }
        self.last = Some(now);
        let text = if p.reading_done {
            format!(
                "loading {}: {} read, sorting and parsing",
                self.name,
                mb(p.read)
            )
        } else {
            let rate = p.read as f64 / 1e6 / elapsed.as_secs_f64();
            match p.total.filter(|&t| t > 0) {
                Some(total) => format!(
                    "loading {}: {} of {} ({}%), {rate:.1} MB/s",
                    self.name,
                    mb(p.read),
                    mb(total),
                    p.read.saturating_mul(100) / total
                ),
                None => format!("loading {}: {}, {rate:.1} MB/s", self.name, mb(p.read)),
            }
        };
        let len = text.chars().count();
        let pad = self.drawn.saturating_sub(len);
        self.drawn = len;
        Some(format!("\r{text}{}", " ".repeat(pad)))
    }

    /// What erases the line, if one was drawn.
    pub fn clear(&mut self) -> Option<String> {
        if self.drawn == 0 {
            return None;
        }
        let blank = format!("\r{}\r", " ".repeat(self.drawn));
        self.drawn = 0;
        Some(blank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(read: u64, done: bool) -> LoadProgress {
        LoadProgress {
            read,
            total: Some(200_000_000),
            reading_done: done,
        }
    }

    #[test]
    fn draws_at_most_every_tenth_of_a_second_then_erases() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut p = ProgressLine::new("t.pftrace", t0);
        // Nothing in the first tenth of a second.
        assert_eq!(p.update(at(1_000_000, false), ms(50)), None);
        assert_eq!(p.clear(), None);
        let first = p.update(at(50_000_000, false), ms(500)).unwrap();
        assert_eq!(
            first,
            "\rloading t.pftrace: 50.0 MB of 200.0 MB (25%), 100.0 MB/s"
        );
        assert_eq!(p.update(at(60_000_000, false), ms(550)), None);
        let second = p.update(at(100_000_000, false), ms(1000)).unwrap();
        assert_eq!(
            second,
            "\rloading t.pftrace: 100.0 MB of 200.0 MB (50%), 100.0 MB/s"
        );
        // The end of reading is drawn at once, padded over the longer text.
        let done = p.update(at(200_000_000, true), ms(1001)).unwrap();
        let text = "loading t.pftrace: 200.0 MB read, sorting and parsing";
        let n = text.len();
        assert_eq!(
            done,
            format!("\r{text}{}", " ".repeat(second.len() - 1 - n))
        );
        assert_eq!(p.clear().unwrap(), format!("\r{}\r", " ".repeat(n)));
        assert_eq!(p.clear(), None);
    }

    #[test]
    fn an_unknown_size_shows_bytes_and_rate() {
        let t0 = Instant::now();
        let mut p = ProgressLine::new("x", t0);
        let line = p.update(
            LoadProgress {
                read: 3_000_000,
                total: None,
                reading_done: false,
            },
            t0 + Duration::from_secs(1),
        );
        assert_eq!(line.unwrap(), "\rloading x: 3.0 MB, 3.0 MB/s");
    }
}
