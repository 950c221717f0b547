//! Table formats 1, 2 and 3 side by side: `chomp convert` turns a directory
//! of any format into exactly the bytes of a format-3 run of the same job,
//! resumes when stopped, refuses a foreign output; every format answers
//! every question the same.

use crate::common::{chomp, chomp_solve, contents, copy_dir};
use chomp_tables::{Manifest, Tables};
use std::path::Path;

fn convert(src: &Path, out: &Path) -> std::process::Output {
    chomp(&["convert", "--tables", src.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
}

#[test]
fn convert_gives_the_bytes_of_a_format_3_run() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str]); 3] = [
        ("tiles", &["--max-tiles", "30", "--grundy-max-tiles", "24"]),
        ("shards", &["--max-tiles", "30", "--grundy-max-tiles", "24", "--shard-positions", "200"]),
        ("box", &["--rows", "5", "--cols", "7", "--grundy"]),
    ];
    for (name, flags) in cases {
        for old in ["1", "2"] {
            if old == "1" && name == "shards" {
                continue; // format 1 has no shards
            }
            // Format 2 always has shards (of up to 2^32 unless asked): so
            // has its conversion, as a format-3 run with the same shards.
            let fresh = tmp.path().join(format!("{name}-{old}-fresh"));
            let shards: &[&str] = if old == "2" && name != "shards" { &["--shard-positions", "4294967296"] } else { &[] };
            chomp_solve(&fresh, &[flags, shards, &["--quiet"]].concat());
            let src = tmp.path().join(format!("{name}-{old}"));
            chomp_solve(&src, &[flags, &["--table-format", old, "--quiet"]].concat());
            assert_eq!(Manifest::read(&src).unwrap().format_version.to_string(), old);
            let out = tmp.path().join(format!("{name}-{old}-to-3"));
            let o = convert(&src, &out);
            assert!(o.status.success(), "{name} {old}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(contents(&out) == contents(&fresh), "{name}: convert of format {old} differs from a format-3 run");
            // Every position of the top levels answers the same in both formats.
            let (a, b) = (Tables::open(&src).unwrap(), Tables::open(&out).unwrap());
            let top = a.manifest().levels_complete;
            for n in [top - 1, top] {
                for r in 0..a.ranking().size(n) {
                    let p = a.ranking().unrank(n, r).unwrap();
                    let (x, y) = (a.answer(&p).unwrap(), b.answer(&p).unwrap());
                    assert_eq!(serde_json::to_string(&x).unwrap(), serde_json::to_string(&y).unwrap());
                }
            }
        }
    }
}

#[test]
fn a_stopped_conversion_resumes_and_a_foreign_output_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, out, fresh) = (tmp.path().join("src"), tmp.path().join("out"), tmp.path().join("fresh"));
    chomp_solve(&src, &["--max-tiles", "28", "--grundy-max-tiles", "20", "--table-format", "1", "--quiet"]);
    chomp_solve(&fresh, &["--max-tiles", "28", "--grundy-max-tiles", "20", "--quiet"]);
    assert!(convert(&src, &out).status.success());
    // As if stopped after level 17's checkpoint, with level 18's tables and a
    // temporary file written.
    let mut m = Manifest::read(&out).unwrap();
    m.complete = false;
    m.keep_levels(17);
    m.files.retain(|name, _| name.ends_with(".cht") && name[name.len() - 8..name.len() - 4].parse::<u32>().unwrap() <= 17);
    m.write(&out).unwrap();
    std::fs::remove_file(out.join("summary.csv")).unwrap();
    std::fs::write(out.join("losses/L0019.cht.tmp"), b"half").unwrap();
    let o = convert(&src, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(contents(&out) == contents(&fresh), "the resumed conversion differs from a format-3 run");
    // Another job's directory is not overwritten.
    let other = tmp.path().join("other");
    chomp_solve(&other, &["--max-tiles", "12", "--quiet"]);
    let before = contents(&other);
    let o = convert(&src, &other);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("another job") && err.trim().lines().count() == 1, "{err}");
    assert!(contents(&other) == before, "the foreign directory was changed");
    // A damaged source is named, and nothing of it is listed as converted.
    let damaged = tmp.path().join("damaged");
    copy_dir(&src, &damaged);
    let victim = damaged.join("losses/L0010.cht");
    let mut bytes = std::fs::read(&victim).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&victim, bytes).unwrap();
    let o = convert(&damaged, &tmp.path().join("from-damaged"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("L0010.cht"), "{err}");
    assert_eq!(Manifest::read(&tmp.path().join("from-damaged")).unwrap().levels_complete, 9);
}
