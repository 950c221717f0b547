//! Which engine `chomp solve` takes for a box when `--engine` is not
//! given: the dry runs' prices of both, and what each can take.

use crate::args::RunFlags;
use chomp_tables::cluster::Comm;
use chomp_tables::solve::memory;
use chomp_tables::solve::Plan;
use std::path::Path;

/// The box engine's estimate above which `chomp solve` (no `--engine`)
/// takes the few-row engine where that is at least twice as fast: below
/// it both take half a minute or less, and the box engine's level tables
/// serve every reader (the JavaScript one too).
const PICK_SECONDS: f64 = 30.0;

/// The engine `chomp solve` uses when `--engine` is not given, and why, in
/// one line: the few-row engine for a box (losses only, one process) that
/// the box engine cannot take or that it prices at less than half the box
/// engine's estimate, when that is at least [`PICK_SECONDS`] (the dry
/// runs' prices of both); a directory that holds a run keeps its engine.
pub fn pick_engine(plan: &Plan, out: &Path, flags: &RunFlags, comm: &dyn Comm) -> (crate::args::Engine, String) {
    use crate::args::Engine;
    let u = &plan.universe;
    let (Some(rows), Some(cols), None) = (u.rows, u.cols, u.tiles) else {
        return (Engine::Box, "the box engine (the universe is not a box)".into());
    };
    if plan.grundy_max_tiles > 0 || plan.count_moves || plan.shard_positions.is_some() || plan.table_format != 3 || comm.processes() > 1 {
        return (Engine::Box, "the box engine (the few-row engine finds losses only, in one process)".into());
    }
    let Ok(shape) = chomp_tables::fewrow::FewRowBox::new(rows, cols) else {
        return (
            Engine::Box,
            format!("the box engine (the few-row engine takes at most {} rows or columns)", chomp_tables::fewrow::MAX_ROWS),
        );
    };
    // A few-row directory has a manifest too (of its own format): ask it first.
    if crate::fewrow::holds_run(out) {
        return (Engine::FewRow, format!("the few-row engine ({} holds a run of it)", out.display()));
    }
    if out.join("manifest.json").exists() {
        return (Engine::Box, format!("the box engine ({} holds a run of it)", out.display()));
    }
    let threads = rayon::current_num_threads();
    let allowed = flags.max_memory.or_else(memory::available_memory);
    let few = crate::fewrow::price(shape, threads, allowed);
    let few_fits = allowed.is_none_or(|a| few.bytes.is_some_and(|b| b <= a));
    let ranking = match plan.validate() {
        Ok(r) => r,
        Err(e) if few_fits => {
            return (
                Engine::FewRow,
                format!("the few-row engine, about {} (the box engine cannot: {e})", crate::solve::human_duration(few.seconds)),
            )
        }
        // Neither fits: the few-row engine's refusal names the memory its table needs.
        Err(e) => return (Engine::FewRow, format!("the few-row engine (the box engine cannot: {e})")),
    };
    if !few_fits {
        return (Engine::Box, "the box engine (the few-row engine's table does not fit in the memory allowed)".into());
    }
    let hold = memory::holding(flags.max_memory, false, comm);
    let est = memory::preflight(&ranking, plan, 1, threads, hold);
    let boxed: f64 = est.iter().map(|e| e.seconds).sum();
    let versus =
        format!("about {} against the box engine's {}", crate::solve::human_duration(few.seconds), crate::solve::human_duration(boxed));
    if crate::solve::beyond_machine(&est, flags.max_memory, out, false).is_some() || (boxed >= PICK_SECONDS && 2.0 * few.seconds < boxed) {
        (Engine::FewRow, format!("the few-row engine, {versus} (--engine box to force the other)"))
    } else {
        (Engine::Box, format!("the box engine, {versus} (--engine few-row to force the other)"))
    }
}
