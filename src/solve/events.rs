//! What a run reports while it works, for progress display and balance
//! reports.

use super::memory::LevelEstimate;
use crate::report::summary::LevelStats;

/// What the driver reports after each level.
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// The level's statistics.
    pub stats: LevelStats,
    /// Last level of the run.
    pub max_tiles: u32,
    /// Seconds spent in the sieve.
    pub sieve_seconds: f64,
    /// Seconds spent on Grundy values (0 when none).
    pub grundy_seconds: f64,
    /// Marks pushed by the sieve.
    pub marks: u64,
    /// Child look-ups of the Grundy pass.
    pub lookups: u64,
    /// Positions checked against the rules once the level was written
    /// (0: not checked).
    pub checked: u64,
    /// Seconds of that check.
    pub check_seconds: f64,
    /// The largest gather of the level: every process's bytes together,
    /// what each process receives (0 on one process, where nothing travels).
    pub largest_gather_bytes: u64,
    /// The most rounds one of the level's gathers took (each process
    /// sends at most `CHOMP_COLLECTIVE_BYTES` a round; 0 on one process).
    pub gather_rounds: u64,
}

/// Events of a run, for progress display.
#[derive(Clone, Debug)]
pub enum Event {
    /// The estimate of the levels left (time, memory, disk), once the
    /// directory is locked and its completed levels known (coordinator only).
    Estimate {
        /// One estimate per level left.
        levels: Vec<LevelEstimate>,
        /// Threads in all, over every process.
        threads: usize,
    },
    /// Resuming after `levels_complete` levels of an earlier run.
    Resumed {
        /// Levels already done.
        levels_complete: u32,
    },
    /// The mark bits of levels `from..=to` are held from now on: a new
    /// window, when the pending levels' bits do not fit at once
    /// (`crate::solve::sieve::Holding`). Not sent when one window holds
    /// every level.
    Window {
        /// Its first level.
        from: u32,
        /// Its last level.
        to: u32,
        /// Bytes of mark bits this process holds for it.
        bytes: u64,
    },
    /// A small box was solved at once by the word sieve
    /// ([`crate::solve::words`]): every level's losses are known; the
    /// levels that follow only write their tables.
    WordSieve {
        /// Bytes it holds (its bit set, the scan's ring, the index tables).
        bytes: u64,
        /// Its seconds.
        seconds: f64,
        /// The losses it found.
        losses: u64,
    },
    /// The levels of this run are not checked as they are written: no
    /// sample was asked for, or the tables are not in format 3 (coordinator only).
    Unchecked {
        /// The positions asked for per level.
        samples: u64,
        /// The table format.
        format: u16,
    },
    /// A level is starting.
    Started {
        /// The level.
        tiles: u32,
    },
    /// A level is finished (checkpointed with the next checkpoint: see
    /// [`super::Options::checkpoint_seconds`]).
    Level(LevelReport),
    /// The manifest now lists levels `1..=levels_complete`: a run stopped
    /// from here on resumes after them (coordinator only).
    Checkpointed {
        /// The levels it lists.
        levels_complete: u32,
    },
    /// The run ended; the work of every process (coordinator only).
    Processes(Vec<ProcessWork>),
}

/// What one process did during a run (for balance and memory reports;
/// `chomp run --report-json` writes it).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ProcessWork {
    /// The process, `0..processes`.
    pub process: usize,
    /// Its node's first process (the processes of a node share the
    /// Grundy values of smaller levels).
    pub node: usize,
    /// Marks pushed by its share of the sieve.
    pub marks: u64,
    /// Parents its sieve enumerated (a rank computed for each, whether the
    /// process owns it or not; the marks are those it owns).
    pub enumeration_steps: u64,
    /// Positions it scanned for marks.
    pub scanned: u64,
    /// Positions whose Grundy value it computed.
    pub evaluated: u64,
    /// Child look-ups of its Grundy work.
    pub lookups: u64,
    /// Seconds of the levels it spent working (sieve, Grundy values,
    /// tables, checks): the levels' wall time less `wait_seconds`.
    pub compute_seconds: f64,
    /// CPU seconds (every thread) it spent in the levels outside
    /// collectives: its work, whether or not it had a core to itself
    /// (processes sharing cores stretch `compute_seconds`, not this).
    pub compute_cpu_seconds: f64,
    /// Seconds of the levels it spent in collectives (waiting for the other
    /// processes, and exchanging losses and values).
    pub wait_seconds: f64,
    /// Its CPU time (user and system, every thread) over the whole run, in seconds.
    pub cpu_seconds: f64,
    /// Its peak resident memory in KiB (0 where unknown).
    pub peak_kib: u64,
    /// Its resident memory at the end of the last level, while every
    /// level's values are still mapped, in KiB.
    pub rss_kib: u64,
    /// Its proportional share of that memory (pages shared with the node's
    /// other processes divided among them), in KiB: the processes' shares
    /// add up to what the node holds.
    pub pss_kib: u64,
    /// The most bytes of mark bits (with their thread copies) it held at
    /// once: its shares of a window's levels ([`crate::index::split::Layout`]).
    pub mark_bytes: u64,
    /// Bytes of decided tables it read back (on a resume and when a window
    /// opens): each table is read by one process and its losses gathered.
    pub table_bytes_read: u64,
}

impl ProcessWork {
    /// Fixed-size encoding, for gathering every process's report.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        [
            self.process as u64,
            self.marks,
            self.scanned,
            self.evaluated,
            self.lookups,
            self.peak_kib,
            self.node as u64,
            self.rss_kib,
            self.pss_kib,
            self.enumeration_steps,
            self.compute_seconds.to_bits(),
            self.wait_seconds.to_bits(),
            self.cpu_seconds.to_bits(),
            self.compute_cpu_seconds.to_bits(),
            self.mark_bytes,
            self.table_bytes_read,
        ]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
    }

    /// Inverse of [`ProcessWork::to_bytes`].
    pub(crate) fn from_bytes(b: &[u8]) -> Self {
        let v: Vec<u64> = b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        ProcessWork {
            process: v[0] as usize,
            marks: v[1],
            scanned: v[2],
            evaluated: v[3],
            lookups: v[4],
            peak_kib: v[5],
            node: v[6] as usize,
            rss_kib: v[7],
            pss_kib: v[8],
            enumeration_steps: v[9],
            compute_seconds: f64::from_bits(v[10]),
            wait_seconds: f64::from_bits(v[11]),
            cpu_seconds: f64::from_bits(v[12]),
            compute_cpu_seconds: f64::from_bits(v[13]),
            mark_bytes: v[14],
            table_bytes_read: v[15],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProcessWork;

    #[test]
    fn process_work_survives_its_encoding() {
        let w = ProcessWork {
            process: 3,
            node: 2,
            marks: 5,
            enumeration_steps: 7,
            scanned: 11,
            evaluated: 13,
            lookups: 17,
            compute_seconds: 1.25,
            wait_seconds: 0.5,
            cpu_seconds: 2.75,
            compute_cpu_seconds: 1.125,
            peak_kib: 19,
            rss_kib: 23,
            pss_kib: 29,
            mark_bytes: 31,
            table_bytes_read: 37,
        };
        assert_eq!(ProcessWork::from_bytes(&w.to_bytes()), w);
    }
}
