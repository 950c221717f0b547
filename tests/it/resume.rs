//! A run killed after its last checkpoint (shard files and temporary files
//! still on disk) and started again ends with exactly the files of a clean run.

use chomp_tables::solve::{run, Options, Plan};
use chomp_tables::Universe;
use chomp_tables::{Manifest, TableDir};

use crate::common::{contents, files};
use std::collections::BTreeMap;

/// The plan both tests run, and the files of its clean run.
fn clean_run(tmp: &std::path::Path) -> (Plan, BTreeMap<String, Vec<u8>>) {
    let plan = Plan::new(Universe::tiles(30), 20);
    let clean = tmp.join("clean");
    run(&plan, &Options::new(&clean), |_| {}).unwrap();
    (plan, contents(&clean))
}

#[test]
fn leftovers_of_a_killed_run_are_removed_on_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, want) = clean_run(tmp.path());
    for complete in [true, false] {
        let out = tmp.path().join(format!("killed-{complete}"));
        run(&plan, &Options::new(&out), |_| {}).unwrap();
        if !complete {
            // As if killed right after level 25's checkpoint.
            let mut m = Manifest::read(&out).unwrap();
            m.complete = false;
            m.keep_levels(25);
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

#[test]
fn a_failed_runs_checkpoint_lists_exactly_what_is_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, want) = clean_run(tmp.path());
    let out = tmp.path().join("failed");
    run(&plan, &Options::new(&out), |_| {}).unwrap();
    // As if writing level 26 failed: the driver's manifest holds levels
    // 1-25, the disk also tables of 26-30 and the summaries; the last
    // checkpoint on disk was after level 20.
    let mut m = Manifest::read(&out).unwrap();
    m.keep_levels(25);
    let dir = TableDir::new(&out);
    assert_eq!(dir.checkpoint_after_failure(&mut m, 20), 25);
    let on_disk = Manifest::read(&out).unwrap();
    assert_eq!((on_disk.levels_complete, on_disk.complete), (25, false));
    let mut listed: Vec<String> = on_disk.files.keys().cloned().collect();
    listed.push("manifest.json".into());
    listed.sort();
    let present: Vec<String> = files(&out).into_iter().filter(|f| f != ".lock").collect();
    assert_eq!(present, listed, "the files on disk are the manifest's");
    assert!(listed.contains(&"grundy/G0020.cht".to_string()) && !listed.iter().any(|f| f.contains("0026")));
    run(&plan, &Options::new(&out), |_| {}).unwrap();
    assert!(contents(&out) == want, "resumed to the bytes of a clean run");
}
