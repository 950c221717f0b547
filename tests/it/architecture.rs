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

/// At most two import circles among the crate's modules, the library's and
/// the binary's together (scripts/import-circles.py, the two of
/// docs/architecture.md); the script itself finds a circle when there is
/// one, in the library or in a binary, and counts them together.
#[test]
fn at_most_two_import_circles() {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = Path::new(root).join("scripts/import-circles.py");
    let out = std::process::Command::new("python3").arg(&script).output().expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("nd::rank nd::slices"), "{text}");
    // A made-up tree with a circle a <-> b in the library and x <-> y in a
    // binary's modules is caught: two circles.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(tmp.path().join("b.rs"), "use crate::a::A;\npub struct B;\n").unwrap();
    let bin = tmp.path().join("bin").join("tool");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("main.rs"), "mod x;\nmod y;\nfn main() {}\n").unwrap();
    std::fs::write(bin.join("x.rs"), "use crate::y::Y;\npub struct X;\n").unwrap();
    std::fs::write(bin.join("y.rs"), "pub struct Y;\npub fn y() { let _ = crate::x::X; }\n").unwrap();
    let run = |most: &str| std::process::Command::new("python3").arg(&script).arg(tmp.path()).args(["--most", most]).output().unwrap();
    let out = run("1");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("circle: a b") && text.contains("circle in the binary tool: x y") && text.contains("2 import circles"), "{text}");
    assert!(run("2").status.success());
}
