//! The user's standing rules: `rules = [...]` from the config, and the
//! repository's AGENTS.md files (CLAUDE.md where a folder has no AGENTS.md)
//! from the repository root down to the working folder, root first so the
//! closest file is read last.

use std::path::{Path, PathBuf};

/// Most bytes of instruction files read in all.
pub const INSTRUCTIONS_CAP: usize = 32 * 1024;

/// One rule and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub text: String,
    /// `config`, or the instruction file's path.
    pub source: String,
}

/// Bytes read of one instruction file; the 32 KiB cap applies after.
const MAX_INSTRUCTION_FILE_BYTES: u64 = 1024 * 1024;

/// The config's rules, then each instruction file as one rule.
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

/// A file that is not a symlink: an instruction file must not lead out of
/// the repository (a link to `/proc/self/environ` would put the user's
/// environment into the prompt).
pub(crate) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// The numbered block the system prompt carries: `Rule 1: …`, `Rule 2: …`.
pub fn numbered(rules: &[Rule]) -> String {
    let mut out = String::new();
    for (n, rule) in rules.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        if rule.source == "config" {
            out.push_str(&format!("Rule {}: {}", n + 1, rule.text));
        } else {
            out.push_str(&format!("Rule {}: (from {})\n{}", n + 1, rule.source, rule.text));
        }
    }
    out
}

/// What follows tool results when there are rules: a nudge, not a repeat.
pub fn reminder(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => "(Reminder: follow Rule 1 in the system prompt.)".to_string(),
        n => format!("(Reminder: follow Rules 1–{n} in the system prompt.)"),
    }
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
