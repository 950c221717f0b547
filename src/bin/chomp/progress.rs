//! Progress of long commands on standard error: a bar on a terminal, else
//! a line every 10 s (logs of batch jobs stay short; `CHOMP_PROGRESS_SECONDS`
//! sets another interval).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What is counted.
#[derive(Clone, Copy)]
pub enum Unit {
    /// Bytes transferred (with a rate).
    Bytes,
    /// Positions or index slots (a share).
    Share,
    /// The word sieve's place in its index (a share of the time): its scan
    /// goes slowly at first and fast at the end, its time growing as about
    /// the 0.4th power of its place (measured on 10x30 and 8x44), so the
    /// share shown is that power, which moves evenly with the clock.
    Scan,
}

/// The share of the work `done` of `total` stands for, in millionths.
fn millionths(unit: Unit, done: u64, total: u64) -> u64 {
    let share = if total == 0 { 0.0 } else { (done as f64 / total as f64).clamp(0.0, 1.0) };
    let share = if let Unit::Scan = unit { share.powf(0.4) } else { share };
    (share * 1e6) as u64
}

/// How often the bar is redrawn.
const TICK: Duration = Duration::from_millis(200);

/// Runs `f` while showing `done` of `total` (updated by `f`) as `label`;
/// nothing if `quiet`.
pub fn watch<T>(label: &str, unit: Unit, done: &AtomicU64, total: &AtomicU64, quiet: bool, f: impl FnOnce() -> T) -> T {
    if quiet {
        return f();
    }
    // Dropping the sender ends the thread at once: a sleep there would hold
    // the command up to a tick after its work is done.
    let (finished, ended) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let t0 = Instant::now();
            let tty = std::io::stderr().is_terminal();
            let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
            let template = match unit {
                Unit::Bytes => "{msg} {bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
                Unit::Share | Unit::Scan => "{msg} {bar:40} {percent}% {elapsed} ETA {eta}",
            };
            bar.set_style(indicatif::ProgressStyle::with_template(template).expect("a valid template"));
            bar.set_message(label.to_string());
            let every = std::env::var(chomp_tables::solve::tunables::PROGRESS_SECONDS)
                .ok()
                .and_then(|s| chomp_tables::solve::tunables::progress_seconds(&s))
                .unwrap_or(10.0);
            let every = Duration::from_secs_f64(every);
            let mut last_line = Instant::now();
            while let Err(mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(TICK) {
                let (d, t) = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
                if tty && matches!(unit, Unit::Scan) {
                    bar.set_length(1_000_000);
                    bar.set_position(millionths(unit, d, t));
                } else if tty {
                    bar.set_length(t);
                    bar.set_position(d);
                } else if last_line.elapsed() >= every && t > 0 {
                    let secs = t0.elapsed().as_secs_f64().max(1e-3);
                    match unit {
                        Unit::Bytes => eprintln!("{label}: {d} of {t} bytes ({:.1} MB/s)", d as f64 / secs / 1e6),
                        Unit::Share | Unit::Scan => {
                            let share = millionths(unit, d, t) as f64 / 1e6;
                            // The time left at the pace so far (the share moves with the clock), once it means something.
                            let left =
                                if share >= 0.05 { format!(", about {:.0} s left", secs * (1.0 - share) / share) } else { String::new() };
                            eprintln!("{label}: {:.0} % after {secs:.0} s{left}", 100.0 * share)
                        }
                    }
                    last_line = Instant::now();
                }
            }
            bar.finish_and_clear();
        });
        let r = f();
        drop(finished);
        r
    })
}
