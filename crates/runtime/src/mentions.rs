//! The workspace's files for `@path` completion: what `.gitignore` and
//! friends do not hide, relative, with `/` separators, at most
//! [`MAX_FILES`] of them; and the files a prompt mentions as `@path`,
//! which go with it as attachments (read by the runtime, through the jail).

use std::path::Path;

use axon_protocol::Attachment;

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

/// The files of `index` that `prompt` mentions as `@path`, once each, in
/// the order they are mentioned. A mention of anything else (an address,
/// a decorator) is left as text.
pub fn mentioned(prompt: &str, index: &[String]) -> Vec<Attachment> {
    let mut paths: Vec<String> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        // Sentence punctuation after a mention is not part of the path.
        let path = path.trim_end_matches([',', '.', ';', ':', '!', '?', ')']);
        if index.binary_search_by(|f| f.as_str().cmp(path)).is_ok()
            && !paths.iter().any(|p| p == path)
        {
            paths.push(path.to_string());
        }
    }
    paths.into_iter().map(|path| Attachment::File { path }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentioned_files_are_attached_once_and_nothing_else() {
        let index = vec!["README.md".to_string(), "src/main.rs".to_string()];
        let attached = mentioned(
            "compare @src/main.rs with @README.md, then @src/main.rs again; mail me@example.com @missing.rs",
            &index,
        );
        assert_eq!(
            attached,
            [
                Attachment::File { path: "src/main.rs".into() },
                Attachment::File { path: "README.md".into() }
            ]
        );
        assert!(mentioned("no mentions here", &index).is_empty());
    }
}
