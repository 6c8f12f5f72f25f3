//! A run's rules and skills, gathered from the config and the workspace,
//! and `axon rules` / `axon skills` to see them.

use std::path::{Path, PathBuf};

use axon_core::LoadSkill;
use axon_core::prompt::{SkillPlacement, base_system_prompt, build_system_prompt};
use axon_core::rules::{self, Rule};
use axon_core::skills::{GitSkill, Skill, SkillFailure, SkillLoader};
use axon_tools::ToolRegistry;
use clap::Subcommand;

use crate::config::{Dirs, Effective};
use crate::{exit, say};

/// Characters of skill instructions injected whole (about 6k tokens).
pub const SKILL_BUDGET: usize = 24_000;

pub struct Guidance {
    pub rules: Vec<Rule>,
    pub skills: Vec<Skill>,
    pub failures: Vec<SkillFailure>,
    pub warnings: Vec<String>,
}

/// The skill folders searched, in order.
fn skill_roots(dirs: &Dirs, workspace: &Path) -> Vec<PathBuf> {
    let mut roots = vec![workspace.join(".axon/skills"), workspace.join(".agents/skills")];
    if let Some(config_dir) = dirs.config_file.parent() {
        roots.push(config_dir.join("skills"));
    }
    roots
}

fn git_skills(config: &Effective) -> Vec<GitSkill> {
    config
        .file
        .skills
        .iter()
        .filter(|s| s.enabled)
        .filter_map(|s| {
            let repo = s.repo.clone()?;
            Some(GitSkill { name: s.name.clone(), repo, path: s.path.clone() })
        })
        .collect()
}

pub fn load(config: &Effective, dirs: &Dirs, workspace: &Path) -> Guidance {
    let (rules, warnings) = rules::collect(&config.file.rules, workspace);
    let loader = SkillLoader::new(&dirs.cache);
    let (mut skills, failures) =
        loader.load_all(&skill_roots(dirs, workspace), &git_skills(config));
    let off: Vec<&str> =
        config.file.skills.iter().filter(|s| !s.enabled).map(|s| s.name.as_str()).collect();
    skills.retain(|s| !off.contains(&s.name.as_str()));
    Guidance { rules, skills, failures, warnings }
}

impl Guidance {
    /// The system prompt for `workspace`, registering `load_skill` in
    /// `registry` when some skills are only listed.
    pub fn system_prompt(&self, workspace: &Path, registry: &mut ToolRegistry) -> String {
        let base = base_system_prompt(&workspace.display().to_string());
        let (prompt, placements) =
            build_system_prompt(&base, &self.rules, &self.skills, SKILL_BUDGET);
        let listed: Vec<Skill> = self
            .skills
            .iter()
            .zip(&placements)
            .filter(|(_, p)| **p == SkillPlacement::Listed)
            .map(|(s, _)| s.clone())
            .collect();
        if !listed.is_empty() {
            registry.register(LoadSkill::new(listed));
        }
        prompt
    }

    pub fn report_problems(&self) {
        for warning in &self.warnings {
            eprintln!("axon: warning: {warning}");
        }
        for failure in &self.failures {
            eprintln!("axon: warning: skill '{}' skipped: {}", failure.name, failure.reason);
        }
    }
}

/// `axon rules [-C DIR]`: the numbered rules exactly as the model sees them.
pub fn rules_command(dir: &Path) -> u8 {
    let Some((config, dirs, root)) = setting(dir) else { return exit::USAGE };
    let (rules, warnings) = rules::collect(&config.file.rules, &root);
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
    say(&rules::numbered(&rules));
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
        let loader = SkillLoader::new(&dirs.cache);
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
    let guidance = load(&config, &dirs, &root);
    if guidance.skills.is_empty() && guidance.failures.is_empty() {
        eprintln!("axon: {NO_SKILLS}");
    }
    for line in guidance.skill_lines() {
        say(&line);
    }
    exit::OK
}

pub const NO_SKILLS: &str = "no skills: add folders with a SKILL.md under .axon/skills, or [[skills]] with a repo to the config";

impl Guidance {
    /// One line per skill: name, injected / listed / failed, source, what
    /// it is for.
    pub fn skill_lines(&self) -> Vec<String> {
        let (_, placements) = build_system_prompt("", &[], &self.skills, SKILL_BUDGET);
        let mut lines = Vec::new();
        for (skill, placement) in self.skills.iter().zip(placements) {
            let state = match placement {
                SkillPlacement::Injected => "injected",
                SkillPlacement::Listed => "listed",
            };
            lines.push(format!(
                "{:<24} {state:<9} {}  — {}",
                skill.name, skill.source, skill.description
            ));
        }
        for failure in &self.failures {
            lines.push(format!(
                "{:<24} {:<9} {}  — {}",
                failure.name, "failed", failure.source, failure.reason
            ));
        }
        lines
    }
}

fn setting(dir: &Path) -> Option<(Effective, Dirs, PathBuf)> {
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let loaded = Dirs::from_env().and_then(|dirs| Ok((Effective::load(&dirs, &root)?, dirs)));
    match loaded {
        Ok((config, dirs)) => Some((config, dirs, root)),
        Err(e) => {
            eprintln!("axon: {e:#}");
            None
        }
    }
}
