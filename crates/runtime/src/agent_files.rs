//! Subagent definition files, read from disk for core's subagents: the
//! Markdown files (`*.md`) in the workspace's `.axon/agents`,
//! `.claude/agents` and `.gemini/agents`, then the user's `<config>/agents`,
//! parsed by `axon_core::subagents::parse_definition` and handed to core as
//! `AgentDefinition`s.
//!
//! What it guarantees: loading never fails as a whole (a file that cannot
//! be read or parsed is a problem naming it, and is skipped); only regular
//! files are read, never through a symlink, at most 256 KiB each; files are
//! read in name order, and the first folder in the search order that
//! defines a name wins it. A folder that does not exist is simply empty.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use axon_core::subagents::{AgentDefinition, parse_definition};

use crate::guidance_files::is_regular_file;

/// Bytes read of one definition file.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Every definition under `roots`, earlier roots winning a name, and the
/// problems met (files skipped, fields ignored), each naming its file.
pub fn load_definitions(roots: &[PathBuf]) -> (Vec<AgentDefinition>, Vec<String>) {
    let mut found: Vec<AgentDefinition> = Vec::new();
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(root) else { continue };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")))
            .filter(|p| is_regular_file(p))
            .collect();
        files.sort();
        for file in files {
            let fallback = file.file_stem().and_then(|n| n.to_str()).unwrap_or("agent").to_string();
            let parsed = axon_tools::read_text_nofollow(&file, MAX_FILE_BYTES)
                .map_err(|e| e.to_string())
                .and_then(|text| parse_definition(&text, &fallback));
            match parsed {
                Ok((mut definition, warnings)) => {
                    problems
                        .extend(warnings.into_iter().map(|w| format!("{}: {w}", file.display())));
                    definition.source = file.clone();
                    // The first folder in the search order wins the name.
                    if seen.insert(definition.name.clone()) {
                        found.push(definition);
                    }
                }
                Err(e) => problems.push(format!("subagent {} skipped: {e}", file.display())),
            }
        }
    }
    (found, problems)
}

/// The folders searched for definitions, highest precedence first.
pub fn definition_roots(workspace: &Path, config_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = vec![
        workspace.join(".axon/agents"),
        workspace.join(".claude/agents"),
        workspace.join(".gemini/agents"),
    ];
    if let Some(dir) = config_dir {
        roots.push(dir.join("agents"));
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_folder_wins_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let roots = definition_roots(dir.path(), Some(&dir.path().join("user")));
        for (root, body) in roots.iter().zip(["axon", "claude", "gemini", "user"]) {
            std::fs::create_dir_all(root).unwrap();
            std::fs::write(root.join("helper.md"), format!("---\nname: helper\n---\n{body}"))
                .unwrap();
        }
        std::fs::write(roots[3].join("broken.md"), "nothing").unwrap();
        let (found, problems) = load_definitions(&roots);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].prompt, "axon");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("broken.md"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_definition_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("agent.md"), "---\nname: leak\n---\nsecret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("agent.md"), dir.path().join("leak.md"))
            .unwrap();
        let (found, problems) = load_definitions(&[dir.path().to_path_buf()]);
        assert!(found.is_empty() && problems.is_empty(), "{found:?} {problems:?}");
    }
}
