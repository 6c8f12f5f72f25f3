//! `load_skill`: the instructions of a skill that did not fit the prompt.

use axon_protocol::{ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::skills::Skill;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LoadSkillArgs {
    /// The skill's name, as listed in the system prompt.
    pub name: String,
}

/// Serves the listed skills' instructions.
pub struct LoadSkill {
    skills: Vec<Skill>,
}

impl LoadSkill {
    pub fn new(skills: Vec<Skill>) -> Self {
        LoadSkill { skills }
    }
}

impl TypedTool for LoadSkill {
    type Args = LoadSkillArgs;
    const NAME: &'static str = "load_skill";

    fn description(&self) -> String {
        "Load the full instructions of a skill listed under \"More skills\" in the system prompt."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, _ctx: &ToolContext, args: LoadSkillArgs) -> Result<ToolOutput, ToolError> {
        let wanted = args.name.trim();
        match self.skills.iter().find(|s| s.name.eq_ignore_ascii_case(wanted)) {
            Some(skill) => {
                Ok(ToolOutput::text(format!("# Skill: {}\n\n{}", skill.name, skill.content)))
            }
            None => {
                let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                Err(ToolError::failed(format!(
                    "No skill named '{wanted}'. Skills you can load: {}",
                    names.join(", ")
                )))
            }
        }
    }
}
