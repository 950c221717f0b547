//! A run killed after its last checkpoint (shard files and temporary files
//! still on disk) and started again ends with exactly the files of a clean run.

use chomp_tables::solve::{run, Options, Plan};
use chomp_tables::Manifest;
use chomp_tables::Universe;

use crate::common::contents;

#[test]
fn leftovers_of_a_killed_run_are_removed_on_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(30), 20);
    let clean = tmp.path().join("clean");
    run(&plan, &Options::new(&clean), |_| {}).unwrap();
    let want = contents(&clean);
    for complete in [true, false] {
        let out = tmp.path().join(format!("killed-{complete}"));
        run(&plan, &Options::new(&out), |_| {}).unwrap();
        if !complete {
            // As if killed right after level 25's checkpoint.
            let mut m = Manifest::read(&out).unwrap();
            m.complete = false;
            m.levels_complete = 25;
            m.levels.truncate(25);
            m.write(&out).unwrap();
        }
        std::fs::create_dir_all(out.join(".work/rank0")).unwrap();
        std::fs::write(out.join(".work/rank0/g0021.bin"), b"shard").unwrap();
        std::fs::write(out.join("losses/L0026.cht.tmp"), b"half").unwrap();
        std::fs::write(out.join("manifest.json.tmp"), b"half").unwrap();
        run(&plan, &Options::new(&out), |_| {}).unwrap();
        let got = contents(&out);
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "complete={complete}");
        assert!(got == want, "complete={complete}: same bytes as a clean run");
    }
}
