//! Progress of long commands on standard error: a bar on a terminal, else
//! a line every 10 s (logs of batch jobs stay short; `CHOMP_PROGRESS_SECONDS`
//! sets another interval).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What is counted.
#[derive(Clone, Copy)]
pub enum Unit {
    /// Bytes transferred (with a rate).
    Bytes,
    /// Positions or index slots (a share).
    Share,
}

/// Runs `f` while showing `done` of `total` (updated by `f`) as `label`;
/// nothing if `quiet`.
pub fn watch<T>(label: &str, unit: Unit, done: &AtomicU64, total: &AtomicU64, quiet: bool, f: impl FnOnce() -> T) -> T {
    if quiet {
        return f();
    }
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = Instant::now();
            let tty = std::io::stderr().is_terminal();
            let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
            let template = match unit {
                Unit::Bytes => "{msg} {bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
                Unit::Share => "{msg} {bar:40} {percent}% {elapsed} ETA {eta}",
            };
            bar.set_style(indicatif::ProgressStyle::with_template(template).expect("a valid template"));
            bar.set_message(label.to_string());
            let every = std::env::var(chomp_tables::solve::tunables::PROGRESS_SECONDS)
                .ok()
                .and_then(|s| chomp_tables::solve::tunables::progress_seconds(&s))
                .unwrap_or(10.0);
            let every = Duration::from_secs_f64(every);
            let mut last_line = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                let (d, t) = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
                if tty {
                    bar.set_length(t);
                    bar.set_position(d);
                } else if last_line.elapsed() >= every && t > 0 {
                    let secs = t0.elapsed().as_secs_f64().max(1e-3);
                    match unit {
                        Unit::Bytes => eprintln!("{label}: {d} of {t} bytes ({:.1} MB/s)", d as f64 / secs / 1e6),
                        Unit::Share => eprintln!("{label}: {:.0} % after {secs:.0} s", 100.0 * d as f64 / t as f64),
                    }
                    last_line = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            bar.finish_and_clear();
        });
        let r = f();
        finished.store(true, Ordering::Relaxed);
        r
    })
}
