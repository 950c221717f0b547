//! `chomp site`: a static web site that plays Chomp and answers queries from
//! table directories in the browser, with no server (docs/site.md).
//!
//! The site is written into `SITE.partial` and renamed to `SITE` at the end,
//! so `SITE` is either whole or absent; a copied table file is checked
//! against its manifest's size and SHA-256 before the site can be used.

use anyhow::{anyhow, bail, Context};
use chomp_tables::store::{sha256_hex, write_atomic, Manifest, MANIFEST};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The page as `chomp serve` shows it, marked as a static site: app.js then
/// takes its answers from site.js (the reader imports its zstd decoder from
/// vendor/ by relative path).
fn index_html() -> String {
    let page = include_str!("page/index.html");
    let marked = page.replacen("<html lang=\"en\">", "<html lang=\"en\" data-site=\"static\">", 1);
    assert!(marked.contains("data-site=\"static\""), "page/index.html lost the mark site.rs edits");
    marked
}

/// The site's own files: (name, contents).
fn assets() -> Vec<(&'static str, String)> {
    vec![
        ("index.html", index_html()),
        ("app.js", include_str!("page/app.js").to_string()),
        ("site.js", include_str!("page/site.js").to_string()),
        ("style.css", include_str!("page/style.css").to_string()),
        ("favicon.svg", include_str!("page/favicon.svg").to_string()),
        ("chomp-tables.js", include_str!("../../../js/chomp-tables.js").to_string()),
        ("vendor/fzstd.js", include_str!("../../../js/vendor/fzstd.js").to_string()),
        ("vendor/LICENSE-fzstd", include_str!("../../../js/vendor/LICENSE-fzstd").to_string()),
    ]
}

/// Copies table `rel` of `dir` to the end of `dst` (the file `to`),
/// checking its size and SHA-256 against the manifest's entry; returns the
/// bytes copied.
fn copy_checked(m: &Manifest, dir: &Path, rel: &str, dst: &mut File, to: &Path) -> anyhow::Result<u64> {
    let from = dir.join(rel);
    let entry = &m.files[rel];
    let mut src = File::open(&from).with_context(|| from.display().to_string())?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = src.read(&mut buf).with_context(|| from.display().to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        dst.write_all(&buf[..n]).with_context(|| to.display().to_string())?;
        len += n as u64;
    }
    let sha: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if len != entry.bytes || sha != entry.sha256 {
        bail!("{}: differs from {}/manifest.json (a damaged table: run chomp verify)", from.display(), dir.display());
    }
    Ok(len)
}

/// The name a table directory gets on the site: its last component.
fn site_name(dir: &Path) -> anyhow::Result<String> {
    let name = dir.canonicalize().ok().and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    match name {
        Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) && !n.starts_with('.') => Ok(n),
        _ => bail!(
            "{}: a site names each table directory by its last component, which must be letters, digits, '-', '_' or '.'",
            dir.display()
        ),
    }
}

/// The name of a table directory's pack on the site (`--pack`).
const PACK: &str = "tables.pack";

/// A table directory going onto the site.
struct Source {
    /// Its name on the site (its directory's name).
    name: String,
    dir: PathBuf,
    manifest: Manifest,
    /// The manifest's bytes, as checked.
    manifest_bytes: Vec<u8>,
}

/// Writes the site (see the command's help).
pub fn site(dirs: &[PathBuf], out: &Path, mirror: Option<&str>, pack: bool, force: bool, quiet: bool) -> anyhow::Result<ExitCode> {
    if out.exists() && !force {
        bail!("{} exists: choose another --out, or --force to replace it", out.display());
    }
    let mirror = match mirror {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => Some(url.trim_end_matches('/').to_string()),
        Some(url) => bail!("--mirror {url:?}: give an http:// or https:// address"),
        None => None,
    };
    // Every directory opens and has a distinct name before anything is written.
    let mut sources = Vec::new();
    for dir in dirs {
        let path = dir.join(MANIFEST);
        if !path.is_file() {
            // Its one-line reason: a file, no such directory, no manifest.json.
            Manifest::read(dir)?;
        }
        let bytes = fs::read(&path).with_context(|| path.display().to_string())?;
        let text = String::from_utf8(bytes.clone()).map_err(|_| anyhow!("{}: not UTF-8", path.display()))?;
        let m = Manifest::parse(&path, &text)?;
        let name = site_name(dir)?;
        if sources.iter().any(|s: &Source| s.name == name) {
            bail!("two table directories are named {name}: a site needs distinct names");
        }
        sources.push(Source { name, dir: dir.clone(), manifest: m, manifest_bytes: bytes });
    }
    let mut staging = out.as_os_str().to_os_string();
    staging.push(".partial");
    let staging = PathBuf::from(staging);
    if staging.exists() {
        fs::remove_dir_all(&staging).with_context(|| staging.display().to_string())?;
    }
    fs::create_dir_all(&staging).with_context(|| staging.display().to_string())?;
    // Nothing half-written stays behind: an error removes the staging directory.
    let written = write_site(&staging, &sources, mirror.as_deref(), pack, quiet);
    let copied = match written {
        Ok(copied) => copied,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if out.exists() {
        fs::remove_dir_all(out).with_context(|| out.display().to_string())?;
    }
    fs::rename(&staging, out).with_context(|| out.display().to_string())?;
    println!(
        "chomp site: wrote {} ({} table director{}{}): serve it from a static host that answers range requests",
        out.display(),
        sources.len(),
        if sources.len() == 1 { "y" } else { "ies" },
        match &mirror {
            Some(base) => format!(", read from {base}"),
            None => format!(", {:.1} MiB copied", copied as f64 / (1 << 20) as f64),
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes the site's files into `staging`; returns the table bytes copied.
fn write_site(staging: &Path, sources: &[Source], mirror: Option<&str>, pack: bool, quiet: bool) -> anyhow::Result<u64> {
    for (name, text) in assets() {
        let path = staging.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        write_atomic(&path, text.as_bytes())?;
    }
    let mut listed = Vec::new();
    let mut copied = 0u64;
    for Source { name, dir, manifest: m, manifest_bytes } in sources {
        let mut packed = None;
        let url = match mirror {
            Some(base) => format!("{base}/{name}/"),
            None => {
                let to = staging.join("tables").join(name);
                let mut bytes = 0u64;
                if pack {
                    // One file of every table, in the manifest's order; where each lies goes into site.json.
                    let target = to.join(PACK);
                    fs::create_dir_all(&to).with_context(|| to.display().to_string())?;
                    let mut dst = File::create(&target).with_context(|| target.display().to_string())?;
                    let mut files = serde_json::Map::new();
                    for rel in m.files.keys() {
                        let len = copy_checked(m, dir, rel, &mut dst, &target)?;
                        files.insert(rel.clone(), json!([bytes, len]));
                        bytes += len;
                    }
                    dst.sync_all().with_context(|| target.display().to_string())?;
                    packed = Some(json!({ "file": PACK, "files": files }));
                } else {
                    for rel in m.files.keys() {
                        let target = to.join(rel);
                        fs::create_dir_all(target.parent().expect("a file in a directory")).with_context(|| to.display().to_string())?;
                        let mut dst = File::create(&target).with_context(|| target.display().to_string())?;
                        bytes += copy_checked(m, dir, rel, &mut dst, &target)?;
                        dst.sync_all().with_context(|| target.display().to_string())?;
                    }
                }
                write_atomic(&to.join(MANIFEST), manifest_bytes)?;
                if !quiet {
                    progress!(
                        "chomp site: copied {name}: {} files, {:.1} MiB, each checked",
                        m.files.len() + 1,
                        bytes as f64 / (1 << 20) as f64
                    );
                }
                copied += bytes;
                format!("tables/{name}/")
            }
        };
        let mut entry = json!({
            "name": name,
            "url": url,
            "manifest_sha256": sha256_hex(manifest_bytes),
            "format_version": m.format_version,
            "rows": m.universe.rows,
            "cols": m.universe.cols,
            "tiles": m.universe.tiles,
            "levels_complete": m.levels_complete,
            "grundy_max_tiles": m.grundy_max_tiles.min(m.levels_complete),
        });
        if let Some(p) = packed {
            entry["pack"] = p;
        }
        listed.push(entry);
    }
    let config = serde_json::to_string_pretty(&json!({ "tables": listed })).expect("plain data") + "\n";
    write_atomic(&staging.join("site.json"), config.as_bytes())?;
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_marked_static() {
        let page = index_html();
        assert!(page.starts_with("<!doctype html>"));
        assert_eq!(page.matches("data-site=\"static\"").count(), 1);
        assert!(!page.contains("importmap"), "the reader imports its decoder by relative path");
        // Relative addresses: the site may live under a path of its host.
        assert!(!page.contains("href=\"/") && !page.contains("src=\"/"));
    }

    #[test]
    fn names_are_plain() {
        assert!(site_name(Path::new("/nonexistent/x")).is_err());
        let dir = std::env::temp_dir().join(format!("chomp-site-name-{}", std::process::id()));
        fs::create_dir_all(dir.join("box-8x15")).unwrap();
        assert_eq!(site_name(&dir.join("box-8x15")).unwrap(), "box-8x15");
        assert_eq!(site_name(&dir.join("box-8x15/.")).unwrap(), "box-8x15");
        fs::remove_dir_all(&dir).unwrap();
    }
}
