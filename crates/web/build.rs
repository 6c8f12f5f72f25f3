//! Embeds the page: every file under `assets/` becomes an entry of
//! `$OUT_DIR/assets.rs`, `(url path, bytes)`, so the binary serves the page
//! offline with no build step but cargo's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let assets = root.join("assets");
    println!("cargo:rerun-if-changed=assets");
    let mut files = Vec::new();
    collect(&assets, &mut files);
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(&assets).ok()?;
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            Some((parts.join("/"), file))
        })
        .collect();
    // Sorted as strings: the server looks names up by binary search.
    named.sort();
    let mut out = String::from("&[\n");
    for (url, file) in &named {
        let _ = writeln!(out, "    ({url:?}, include_bytes!({file:?})),");
        println!("cargo:rerun-if-changed={}", file.display());
    }
    out.push(']');
    let target = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("assets.rs");
    if let Err(e) = std::fs::write(&target, out) {
        panic!("cannot write {}: {e}", target.display());
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect(&path, files),
            Ok(kind) if kind.is_file() => files.push(path),
            _ => {}
        }
    }
}
