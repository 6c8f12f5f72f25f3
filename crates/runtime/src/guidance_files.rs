//! The repository's instruction files, read from disk for core's rules:
//! AGENTS.md (CLAUDE.md where a folder has no AGENTS.md) in each folder
//! from the repository root down to the working folder, root first so the
//! closest file is read last, after the config's `rules = [...]`.
//!
//! What it guarantees: an instruction file is a regular file, never
//! followed through a symlink (a link to `/proc/self/environ` would put the
//! user's environment into the prompt), neither when it is found nor when
//! it is read; at most 1 MiB is read of one file and 32 KiB kept of them
//! all, a cut said in a warning; a file that cannot be read is a warning,
//! never a failure. Core gets the result as data (`axon_core::rules::Rule`).

use std::path::{Path, PathBuf};

use axon_core::rules::Rule;

/// Most bytes of instruction files kept in all.
pub const INSTRUCTIONS_CAP: usize = 32 * 1024;

/// Bytes read of one instruction file; the 32 KiB cap applies after.
const MAX_INSTRUCTION_FILE_BYTES: u64 = 1024 * 1024;

/// The config's rules, then each instruction file above and in
/// `workspace` as one rule; and the warnings (files unreadable or cut).
pub fn collect(configured: &[String], workspace: &Path) -> (Vec<Rule>, Vec<String>) {
    let mut rules: Vec<Rule> = configured
        .iter()
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .map(|text| Rule { text: text.to_string(), source: "config".to_string() })
        .collect();
    let mut warnings = Vec::new();
    let mut budget = INSTRUCTIONS_CAP;
    for file in instruction_files(workspace) {
        // Opened without following a link: the check in instruction_files
        // and this read cannot be told apart by a file swapped in between.
        let text = match axon_tools::read_text_nofollow(&file, MAX_INSTRUCTION_FILE_BYTES) {
            Ok(text) => text,
            Err(e) => {
                warnings.push(format!("cannot read {}: {e}", file.display()));
                continue;
            }
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if budget == 0 {
            warnings.push(format!(
                "{} was left out: instruction files are capped at {} KiB in all",
                file.display(),
                INSTRUCTIONS_CAP / 1024
            ));
            continue;
        }
        let mut cut = text.len().min(budget);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut kept = text[..cut].to_string();
        if cut < text.len() {
            kept.push_str("\n[… cut: instruction files are capped at 32 KiB in all]");
            warnings.push(format!("{} was cut to fit the 32 KiB cap", file.display()));
        }
        budget -= cut;
        rules.push(Rule { text: kept, source: file.display().to_string() });
    }
    (rules, warnings)
}

/// AGENTS.md (or CLAUDE.md) in each folder from the repository root (the
/// nearest folder above `workspace` holding `.git`, else `workspace`
/// itself) down to `workspace`.
pub fn instruction_files(workspace: &Path) -> Vec<PathBuf> {
    let root = workspace.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(workspace);
    let mut folders: Vec<&Path> =
        workspace.ancestors().take_while(|dir| dir.starts_with(root)).collect();
    folders.reverse();
    folders
        .into_iter()
        .filter_map(|dir| {
            ["AGENTS.md", "CLAUDE.md"]
                .iter()
                .map(|name| dir.join(name))
                .find(|p| is_regular_file(p))
        })
        .collect()
}

/// A file that is not a symlink: a guidance file (instructions, skills,
/// subagent definitions) must not lead out of the folder it is found in.
pub(crate) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_from_the_repository_root_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        std::fs::write(root.join("a/CLAUDE.md"), "a rules").unwrap();
        std::fs::write(root.join("a/b/AGENTS.md"), "b rules").unwrap();
        let files = instruction_files(&root.join("a/b"));
        assert_eq!(
            files,
            [root.join("AGENTS.md"), root.join("a/CLAUDE.md"), root.join("a/b/AGENTS.md")]
        );
        let (rules, warnings) = collect(&["be brief".into()], &root.join("a/b"));
        assert!(warnings.is_empty());
        let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["be brief", "root rules", "a rules", "b rules"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_instruction_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "API_KEY=sk-live").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("AGENTS.md"))
            .unwrap();
        assert!(instruction_files(dir.path()).is_empty());
    }

    #[test]
    fn instruction_files_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "é".repeat(INSTRUCTIONS_CAP)).unwrap();
        let (rules, warnings) = collect(&[], dir.path());
        assert!(rules[0].text.len() <= INSTRUCTIONS_CAP + 80);
        assert!(warnings[0].contains("cut"), "{warnings:?}");
    }
}
