//! The workspace's files for `@path` completion: what `.gitignore` and
//! friends do not hide, relative, with `/` separators, at most
//! [`MAX_FILES`] of them.

use std::path::Path;

const MAX_FILES: usize = 20_000;

pub fn index(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(root).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        let parts: Vec<String> =
            relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        files.push(parts.join("/"));
        if files.len() == MAX_FILES {
            break;
        }
    }
    files.sort();
    files
}
