//! A session's rules and skills: gathered from the config and the
//! workspace, budgeted into the system prompt once, here, for every front
//! end. Skills beyond the budget are listed by name and fetched with
//! `load_skill`.
//!
//! Skills are read from the workspace's `.axon/skills`, `.agents/skills`
//! and `.claude/skills` (Claude Code's layout: a folder per skill with a
//! `SKILL.md`), then the user's `<config>/skills` and `~/.claude/skills`;
//! when two folders hold a skill of the same name, the first one found in
//! that order is the one used.

use std::path::{Path, PathBuf};

use axon_core::LoadSkill;
use axon_core::prompt::{SkillPlacement, base_system_prompt, build_system_prompt};
use axon_core::rules::{self, Rule};
use axon_core::skills::Skill;
use axon_protocol::{SkillInfo, SkillState};
use axon_tools::ToolRegistry;

use crate::config::{Dirs, Effective};
use crate::skill_files::{GitSkill, SkillFailure, SkillLoader};

// For `axon rules` and `axon skills update`.
pub use crate::skill_files::SkillLoader as GitSkillLoader;
pub use axon_core::rules::numbered as numbered_rules;

/// Characters of skill instructions injected whole (about 6k tokens).
pub const SKILL_BUDGET: usize = 24_000;

/// What to say when there are no skills.
pub const NO_SKILLS: &str = "no skills: add folders with a SKILL.md under .axon/skills (or .claude/skills), or [[skills]] with a repo to the config";

pub struct Guidance {
    pub rules: Vec<Rule>,
    pub skills: Vec<Skill>,
    pub failures: Vec<SkillFailure>,
    /// Rules that could not be read.
    pub warnings: Vec<String>,
}

/// The skill folders searched, in order: the workspace's, then the
/// user's (`home`: the user's home folder, for Claude Code's
/// `~/.claude/skills`).
fn skill_roots(dirs: &Dirs, workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = vec![
        workspace.join(".axon/skills"),
        workspace.join(".agents/skills"),
        workspace.join(".claude/skills"),
    ];
    if let Some(config_dir) = dirs.config_file.parent() {
        roots.push(config_dir.join("skills"));
    }
    if let Some(home) = home.filter(|home| home.is_absolute()) {
        roots.push(home.join(".claude/skills"));
    }
    roots
}

/// Every skill under `roots` and in `repos`; the same name twice (a
/// `.claude/skills` linked to `.axon/skills`): the first found is used.
fn gather(
    loader: &SkillLoader,
    roots: &[PathBuf],
    repos: &[GitSkill],
) -> (Vec<Skill>, Vec<SkillFailure>) {
    let (mut skills, failures) = loader.load_all(roots, repos);
    let mut seen = std::collections::HashSet::new();
    skills.retain(|s| seen.insert(s.name.clone()));
    (skills, failures)
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
    crate::guidance_files::collect(&config.file.rules, workspace)
}

pub fn load(config: &Effective, dirs: &Dirs, workspace: &Path) -> Guidance {
    let (rules, warnings) = rules(config, workspace);
    let loader = SkillLoader::for_config(config, dirs);
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let roots = skill_roots(dirs, workspace, home.as_deref());
    let (mut skills, failures) = gather(&loader, &roots, &git_skills(config));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(root: &Path, folder: &str, text: &str) {
        let dir = root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
    }

    /// Claude Code's skills (`.claude/skills` in the project and in the
    /// home folder, a folder per skill, YAML front matter) are read like
    /// axon's own; a name found twice is taken from the first folder.
    #[test]
    fn claude_code_skills_are_read_from_the_project_and_the_home_folder() {
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let axon_home = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            config_file: axon_home.path().join("config.toml"),
            data: axon_home.path().join("data"),
            cache: axon_home.path().join("cache"),
        };
        skill(
            &workspace.path().join(".claude/skills"),
            "pdf",
            "---\nname: pdf-forms\ndescription: >-\n  Fill in PDF forms\n  with pdftk.\nallowed-tools: Bash, Read\n---\n# PDF forms\n\nRun `pdftk`.\n",
        );
        skill(
            &home.path().join(".claude/skills"),
            "commits",
            "---\nname: commits\ndescription: Write commit messages\n---\nUse the imperative.\n",
        );
        skill(
            &workspace.path().join(".axon/skills"),
            "commits",
            "---\nname: commits\ndescription: The project's own way\n---\nSay why.\n",
        );

        let roots = skill_roots(&dirs, workspace.path(), Some(home.path()));
        let (skills, failures) = gather(&SkillLoader::new(&dirs.cache), &roots, &[]);
        assert!(failures.is_empty(), "{failures:?}");
        let found: Vec<(&str, &str)> =
            skills.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
        assert_eq!(
            found,
            [("commits", "The project's own way"), ("pdf-forms", "Fill in PDF forms with pdftk.")]
        );
        assert!(skills[1].source.ends_with(".claude/skills/pdf"), "{}", skills[1].source);
        assert_eq!(skills[1].content, "# PDF forms\n\nRun `pdftk`.");
    }
}
