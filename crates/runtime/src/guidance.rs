//! A session's rules and skills: gathered from the config and the
//! workspace, budgeted into the system prompt once, here, for every front
//! end. Skills beyond the budget are listed by name and fetched with
//! `load_skill`.

use std::path::{Path, PathBuf};

use axon_core::LoadSkill;
use axon_core::prompt::{SkillPlacement, base_system_prompt, build_system_prompt};
use axon_core::rules::{self, Rule};
use axon_core::skills::{GitSkill, Skill, SkillFailure, SkillLoader};
use axon_protocol::{SkillInfo, SkillState};
use axon_tools::ToolRegistry;

use crate::config::{Dirs, Effective};

/// Characters of skill instructions injected whole (about 6k tokens).
pub const SKILL_BUDGET: usize = 24_000;

/// What to say when there are no skills.
pub const NO_SKILLS: &str = "no skills: add folders with a SKILL.md under .axon/skills, or [[skills]] with a repo to the config";

pub struct Guidance {
    pub rules: Vec<Rule>,
    pub skills: Vec<Skill>,
    pub failures: Vec<SkillFailure>,
    /// Rules that could not be read.
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

/// The skills the config fetches from git repositories.
pub fn git_skills(config: &Effective) -> Vec<GitSkill> {
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

/// The rules only, as the model sees them numbered, and what could not be read.
pub fn rules(config: &Effective, workspace: &Path) -> (Vec<Rule>, Vec<String>) {
    rules::collect(&config.file.rules, workspace)
}

pub fn load(config: &Effective, dirs: &Dirs, workspace: &Path) -> Guidance {
    let (rules, warnings) = rules(config, workspace);
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

    /// Rules that could not be read and skills that could not be loaded.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.warnings.clone();
        for failure in &self.failures {
            problems.push(format!("skill '{}' skipped: {}", failure.name, failure.reason));
        }
        problems
    }

    /// Every skill, where it is placed, and every one that failed.
    pub fn skill_infos(&self) -> Vec<SkillInfo> {
        let (_, placements) = build_system_prompt("", &[], &self.skills, SKILL_BUDGET);
        let mut infos: Vec<SkillInfo> = self
            .skills
            .iter()
            .zip(placements)
            .map(|(skill, placement)| SkillInfo {
                name: skill.name.clone(),
                state: match placement {
                    SkillPlacement::Injected => SkillState::Injected,
                    SkillPlacement::Listed => SkillState::Listed,
                },
                source: skill.source.to_string(),
                description: skill.description.clone(),
            })
            .collect();
        infos.extend(self.failures.iter().map(|failure| SkillInfo {
            name: failure.name.clone(),
            state: SkillState::Failed,
            source: failure.source.to_string(),
            description: failure.reason.clone(),
        }));
        infos
    }

    /// The rules numbered, one entry each, as the model sees them (joined
    /// with newlines they are `axon_core::rules::numbered`).
    pub fn numbered_rules(&self) -> Vec<String> {
        self.rules
            .iter()
            .enumerate()
            .map(|(n, rule)| {
                let one = rules::numbered(std::slice::from_ref(rule));
                one.replacen("Rule 1:", &format!("Rule {}:", n + 1), 1)
            })
            .collect()
    }
}

/// One line per skill: name, injected / listed / failed, source, what it is for.
pub fn skill_line(skill: &SkillInfo) -> String {
    let state = match skill.state {
        SkillState::Injected => "injected",
        SkillState::Listed => "listed",
        SkillState::Failed => "failed",
    };
    format!("{:<24} {state:<9} {}  — {}", skill.name, skill.source, skill.description)
}
