//! `axon rules` and `axon skills`: what the runtime would put in the system
//! prompt, shown; and the skills' git clones updated.

use std::path::{Path, PathBuf};

use axon_runtime::guidance::GitSkillLoader;
use axon_runtime::guidance::numbered_rules;
use axon_runtime::guidance::{self, NO_SKILLS, git_skills, skill_line};
use clap::Subcommand;

use axon_runtime::Project;

use crate::config::{Dirs, Effective};
use crate::{exit, say};

/// `axon rules [-C DIR]`: the numbered rules exactly as the model sees them.
pub fn rules_command(dir: &Path) -> u8 {
    let Some((config, dirs, root)) = setting(dir) else { return exit::USAGE };
    let (rules, warnings) = guidance::rules(&config, &root);
    for warning in &warnings {
        eprintln!("axon: warning: {warning}");
    }
    if rules.is_empty() {
        eprintln!(
            "axon: no rules: add `rules = [\"…\"]` to {} or an AGENTS.md to the repository",
            dirs.config_file.display()
        );
        return exit::OK;
    }
    say(&numbered_rules(&rules));
    exit::OK
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Every skill, its source, and whether it is injected, listed or failed.
    List {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Clone the configured skill repositories again.
    Update {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
}

pub fn skills_command(command: SkillsCommand) -> u8 {
    let dir = match &command {
        SkillsCommand::List { dir } | SkillsCommand::Update { dir } => dir.clone(),
    };
    let Some((config, dirs, root)) = setting(&dir) else { return exit::USAGE };
    if let SkillsCommand::Update { .. } = command {
        let loader = GitSkillLoader::for_config(&config, &dirs);
        let mut code = exit::OK;
        for spec in git_skills(&config) {
            match loader.update(&spec) {
                Ok(_) => eprintln!("axon: updated skill '{}' from {}", spec.name, spec.repo),
                Err(e) => {
                    eprintln!("axon: skill '{}' not updated: {e}", spec.name);
                    code = exit::FAILED;
                }
            }
        }
        return code;
    }
    let skills = guidance::load(&config, &dirs, &root).skill_infos();
    if skills.is_empty() {
        eprintln!("axon: {NO_SKILLS}");
    }
    for skill in &skills {
        say(&skill_line(skill));
    }
    exit::OK
}

/// The workspace at `dir` as a project: its config, axon's folders, its root.
fn setting(dir: &Path) -> Option<(Effective, Dirs, PathBuf)> {
    match Project::load(dir) {
        Ok(project) => {
            let root = project.root().to_path_buf();
            Some((project.config, project.dirs, root))
        }
        Err(e) => {
            eprintln!("axon: {e:#}");
            None
        }
    }
}
