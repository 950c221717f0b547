//! The library's shape: one meaning per public type name, and no import
//! circles beyond the two docs/architecture.md justifies.

use std::collections::BTreeMap;
use std::path::Path;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// No two types declared `pub` (any `pub`, `pub(crate)` and `pub(super)`
/// included: structs, enums, traits, aliases) of the library or the binary
/// share a name: a name means one thing wherever it is read.
#[test]
fn no_two_public_types_share_a_name() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        for (i, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let [first, kind, name, ..] = words[..] {
                if first.starts_with("pub") && ["struct", "enum", "trait", "type"].contains(&kind) {
                    let name: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    seen.entry(name).or_default().push(format!("{}:{}", f.display(), i + 1));
                }
            }
        }
    }
    assert!(seen.len() > 100, "the scan found the library's types ({} names)", seen.len());
    let twice: Vec<_> = seen.iter().filter(|(_, at)| at.len() > 1).collect();
    assert!(twice.is_empty(), "public types sharing a name: {twice:#?}");
}

/// At most two import circles among the modules (scripts/import-circles.py,
/// the two of docs/architecture.md); the script itself finds a circle when
/// there is one (a tree with a third circle added fails).
#[test]
fn at_most_two_import_circles() {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = Path::new(root).join("scripts/import-circles.py");
    let out = std::process::Command::new("python3").arg(&script).output().expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("nd::rank nd::slices"), "{text}");
    // A made-up tree with a circle a <-> b is caught.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(tmp.path().join("b.rs"), "use crate::a::A;\npub struct B;\n").unwrap();
    let out = std::process::Command::new("python3").arg(&script).arg(tmp.path()).args(["--most", "0"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stdout).contains("circle: a b"));
}
