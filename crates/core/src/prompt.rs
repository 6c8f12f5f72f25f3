//! The system prompt: the fixed part, the numbered rules, and the skills.
//!
//! Rules and skills live here, not in the conversation, so trimming and
//! compaction never lose them.

use crate::rules::{Rule, numbered};
use crate::skills::Skill;

/// What every run starts from; rules, skills and the text protocol's tool
/// descriptions are appended to it.
pub fn base_system_prompt(workspace: &str) -> String {
    format!(
        "You are axon, an agent that completes tasks in the folder {workspace} using the tools \
         you are given. Work step by step: look before you change, make the smallest change \
         that does the job, and check your work. Paths are relative to that folder. When a tool \
         fails, read its message and adjust rather than repeating the same call. When the task \
         is done, answer with a short summary of what you did."
    )
}

/// How a skill reached the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillPlacement {
    /// Its instructions are in the prompt.
    Injected,
    /// Only its name and description are; `load_skill` fetches the rest.
    Listed,
}

/// The full system prompt, and where each skill went: skills are injected
/// whole, in order, while they fit `skill_budget` (in characters, about four
/// per token); the rest are listed for `load_skill`.
pub fn build_system_prompt(
    base: &str,
    rules: &[Rule],
    skills: &[Skill],
    skill_budget: usize,
) -> (String, Vec<SkillPlacement>) {
    let mut prompt = base.to_string();
    if !rules.is_empty() {
        prompt.push_str("\n\n# Rules\n\nThe user's standing rules. Follow every one of them:\n\n");
        prompt.push_str(&numbered(rules));
    }
    let mut placements = Vec::with_capacity(skills.len());
    let mut used = 0;
    let mut injected = String::new();
    let mut listed = String::new();
    for skill in skills {
        if used + skill.content.len() <= skill_budget {
            used += skill.content.len();
            injected.push_str(&format!("\n\n## Skill: {}\n\n{}", skill.name, skill.content));
            placements.push(SkillPlacement::Injected);
        } else {
            listed.push_str(&format!("\n- {}: {}", skill.name, skill.description));
            placements.push(SkillPlacement::Listed);
        }
    }
    if !injected.is_empty() {
        prompt.push_str("\n\n# Skills\n\nKnow-how to use when a task calls for it.");
        prompt.push_str(&injected);
    }
    if !listed.is_empty() {
        prompt.push_str(
            "\n\n# More skills\n\nLoad one with the load_skill tool when a task calls for it:",
        );
        prompt.push_str(&listed);
    }
    (prompt, placements)
}
