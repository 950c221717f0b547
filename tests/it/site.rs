//! `chomp site`: the static site's files, its copies of the tables (checked
//! on the way), its refusals. The site in a browser: scripts/site-test.sh.

use crate::common::{assert_ok, assert_one_line_error, chomp, chomp_solve, contents, copy_dir, files, text};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fs;
use std::path::Path;
use tempfile::TempDir;

const BOX: &str = "results/box-8x15";

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn site_json(site: &Path) -> Value {
    serde_json::from_slice(&fs::read(site.join("site.json")).unwrap()).unwrap()
}

#[test]
fn a_site_holds_the_page_the_reader_and_checked_copies() {
    let tmp = TempDir::new().unwrap();
    let small = tmp.path().join("losses-30");
    chomp_solve(&small, &["--max-tiles", "30", "--quiet"]);
    let site = tmp.path().join("site");
    let out = chomp(&["site", "--tables", BOX, "--tables", small.to_str().unwrap(), "--out", site.to_str().unwrap(), "--quiet"]);
    assert_ok(&out, "chomp site");
    assert!(text(&out.stdout).contains("2 table directories"), "{}", text(&out.stdout));
    for asset in [
        "index.html",
        "app.js",
        "site.js",
        "style.css",
        "favicon.svg",
        "chomp-tables.js",
        "vendor/fzstd.js",
        "vendor/LICENSE-fzstd",
        "site.json",
    ] {
        assert!(site.join(asset).is_file(), "{asset} missing");
    }
    let page = fs::read_to_string(site.join("index.html")).unwrap();
    assert!(page.contains("data-site=\"static\"") && !page.contains("importmap"));
    assert_eq!(fs::read(site.join("chomp-tables.js")).unwrap(), fs::read("js/chomp-tables.js").unwrap());
    // Each directory's files are copied byte for byte, the manifest pinned by its SHA-256.
    let config = site_json(&site);
    let tables = config["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2);
    for (t, dir) in tables.iter().zip([Path::new(BOX), small.as_path()]) {
        let name = t["name"].as_str().unwrap();
        assert_eq!(t["url"], format!("tables/{name}/"));
        let copy = site.join("tables").join(name);
        assert_eq!(contents(&copy), contents(dir), "{name}: the copy differs");
        assert_eq!(t["manifest_sha256"], sha256(&fs::read(dir.join("manifest.json")).unwrap()));
    }
    assert_eq!(tables[0]["name"], "box-8x15");
    assert_eq!((tables[0]["rows"].as_u64(), tables[0]["cols"].as_u64()), (Some(8), Some(15)));
    assert_eq!(tables[1]["levels_complete"], 30);

    // An existing site is replaced only with --force.
    let again = chomp(&["site", "--tables", BOX, "--out", site.to_str().unwrap()]);
    let line = assert_one_line_error(&again, "an existing site");
    assert!(line.contains("--force"), "{line}");
    assert_eq!(site_json(&site)["tables"].as_array().unwrap().len(), 2, "the refused run changed the site");
    assert_ok(&chomp(&["site", "--tables", BOX, "--out", site.to_str().unwrap(), "--force", "--quiet"]), "--force");
    assert_eq!(site_json(&site)["tables"].as_array().unwrap().len(), 1);
    assert!(!tmp.path().join("site.partial").exists());
}

#[test]
fn a_mirror_site_links_the_tables() {
    let tmp = TempDir::new().unwrap();
    let site = tmp.path().join("site");
    let out = chomp(&["site", "--tables", BOX, "--out", site.to_str().unwrap(), "--mirror", "https://example.org/chomp/", "--quiet"]);
    assert_ok(&out, "chomp site --mirror");
    assert_eq!(site_json(&site)["tables"][0]["url"], "https://example.org/chomp/box-8x15/");
    assert!(!site.join("tables").exists(), "a mirror site copies no tables");
    let bad = chomp(&["site", "--tables", BOX, "--out", tmp.path().join("s2").to_str().unwrap(), "--mirror", "example.org"]);
    assert!(assert_one_line_error(&bad, "a mirror without a scheme").contains("http"));
}

#[test]
fn a_packed_site_holds_every_table_at_its_offset() {
    let tmp = TempDir::new().unwrap();
    let site = tmp.path().join("site");
    let out = chomp(&["site", "--tables", BOX, "--pack", "--out", site.to_str().unwrap(), "--quiet"]);
    assert_ok(&out, "chomp site --pack");
    let entry = &site_json(&site)["tables"][0];
    assert_eq!(entry["pack"]["file"], "tables.pack");
    let dir = site.join("tables/box-8x15");
    let pack = fs::read(dir.join("tables.pack")).unwrap();
    let manifest: Value = serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let listed = manifest["files"].as_object().unwrap();
    let packed = entry["pack"]["files"].as_object().unwrap();
    assert_eq!(packed.len(), listed.len(), "every table of the manifest is packed");
    let mut end = 0;
    for (rel, at) in packed {
        let (offset, bytes) = (at[0].as_u64().unwrap() as usize, at[1].as_u64().unwrap() as usize);
        assert_eq!(offset, end, "{rel}: the tables follow each other");
        assert_eq!(&pack[offset..offset + bytes], &fs::read(Path::new(BOX).join(rel)).unwrap()[..], "{rel}");
        assert_eq!(sha256(&pack[offset..offset + bytes]), listed[rel]["sha256"].as_str().unwrap());
        end = offset + bytes;
    }
    assert_eq!(end, pack.len());
    assert_eq!(files(&dir).len(), 2, "the pack and the manifest, no copies beside them");
    let both =
        chomp(&["site", "--tables", BOX, "--pack", "--mirror", "https://example.org/", "--out", tmp.path().join("s2").to_str().unwrap()]);
    assert!(!both.status.success(), "--pack with --mirror is refused");
}

#[test]
fn a_damaged_table_leaves_no_site() {
    let tmp = TempDir::new().unwrap();
    let damaged = tmp.path().join("box-8x15");
    copy_dir(Path::new(BOX), &damaged);
    let victim = damaged.join("losses/L0040.cht");
    let mut bytes = fs::read(&victim).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 1;
    fs::write(&victim, bytes).unwrap();
    let site = tmp.path().join("site");
    let out = chomp(&["site", "--tables", damaged.to_str().unwrap(), "--out", site.to_str().unwrap(), "--quiet"]);
    let line = assert_one_line_error(&out, "a damaged table");
    assert!(line.contains("L0040.cht"), "{line}");
    assert_eq!(files(tmp.path()).iter().filter(|f| f.starts_with("site")).count(), 0, "something of the site is left");
    // Two directories with one name.
    let twice = chomp(&["site", "--tables", BOX, "--tables", BOX, "--out", site.to_str().unwrap()]);
    assert!(assert_one_line_error(&twice, "two directories named alike").contains("box-8x15"));
}

/// The reader a site embeds (`js/chomp-tables.js`) is generated from the
/// modules of `js/src/` by `js/build.mjs`: the committed file must be exactly
/// what the build makes, or the site would ship code no module holds. Needs
/// Node.js; where it is not runnable the test fails, saying what installs it:
/// a check that could not run never counts as passed.
#[test]
fn the_embedded_reader_is_built_from_js_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = match std::process::Command::new("node").arg(root.join("js").join("build.mjs")).arg("--check").output() {
        Ok(out) => out,
        Err(e) => panic!(
            "node is not runnable ({e}): install Node.js 20 or later (Debian 13: `apt install nodejs`; Debian 12's \
             nodejs is 18, too old: add NodeSource's repository, https://deb.nodesource.com, then `apt install nodejs`), \
             then this test runs `node js/build.mjs --check`"
        ),
    };
    assert!(out.status.success(), "`node js/build.mjs --check` failed: {}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("up to date"), "{}", text(&out.stdout));
}
