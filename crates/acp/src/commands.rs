//! Slash commands an editor offers in its prompt box
//! (`available_commands_update`), and what a prompt starting with one does.
//!
//! Commands that only show something (`/rules`, `/skills`, `/mcp`, `/ps`)
//! answer from the session's description (`/ps`: its background commands)
//! without a model call; `/compact` and
//! `/plan` are the runtime's operations; a skill's name asks the model to
//! follow that skill.

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use axon_protocol::{McpState, SessionInfo, SkillState};

/// What a prompt asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    Compact,
    /// The session's background commands, shown as the answer.
    Background,
    /// Plan mode from now on; with text, plan that.
    Plan(String),
    /// Text shown as the answer.
    Show(String),
    /// The model follows a skill.
    Skill {
        name: String,
        task: String,
    },
}

/// The commands a session offers.
pub fn available(info: Option<&SessionInfo>) -> SessionUpdate {
    let mut commands = vec![
        AvailableCommand::new("compact", "Summarise the oldest part of the conversation"),
        AvailableCommand::new("plan", "Plan mode: propose a plan before changing anything").input(
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                "what to plan (optional)",
            )),
        ),
        AvailableCommand::new("rules", "The rules the model follows, numbered"),
        AvailableCommand::new("skills", "The skills the model knows"),
        AvailableCommand::new("mcp", "MCP servers and their state"),
        AvailableCommand::new("ps", "Background commands and their state"),
    ];
    for skill in info.map(|i| i.skills.as_slice()).unwrap_or_default() {
        if skill.state == SkillState::Failed || is_builtin(&skill.name) {
            continue;
        }
        commands.push(
            AvailableCommand::new(skill.name.clone(), format!("Skill: {}", skill.description))
                .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                    "what to do with it",
                ))),
        );
    }
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

fn is_builtin(name: &str) -> bool {
    matches!(name, "compact" | "plan" | "rules" | "skills" | "mcp" | "ps")
}

/// The command `text` starts with, if it is one this session knows.
pub fn parse(text: &str, info: Option<&SessionInfo>) -> Option<Command> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, argument) = match rest.split_once(char::is_whitespace) {
        Some((name, argument)) => (name, argument.trim()),
        None => (rest.trim_end(), ""),
    };
    Some(match name {
        "compact" => Command::Compact,
        "plan" => Command::Plan(argument.to_string()),
        "rules" => Command::Show(rules(info)),
        "skills" => Command::Show(skills(info)),
        "mcp" => Command::Show(servers(info)),
        "ps" => Command::Background,
        name => {
            let known =
                info?.skills.iter().any(|s| s.name == name && s.state != SkillState::Failed);
            if !known {
                return None;
            }
            Command::Skill { name: name.to_string(), task: argument.to_string() }
        }
    })
}

/// The prompt that asks the model to follow a skill.
pub fn skill_prompt(name: &str, task: &str) -> String {
    let task = if task.is_empty() { "the task at hand" } else { task };
    format!(
        "Follow the skill `{name}` (load it with load_skill if its instructions are not above) for: {task}"
    )
}

fn rules(info: Option<&SessionInfo>) -> String {
    match info {
        Some(info) if !info.rules.is_empty() => info.rules.join("\n"),
        _ => "No rules: add them to AGENTS.md or `.axon/rules/` in the workspace.".to_string(),
    }
}

fn skills(info: Option<&SessionInfo>) -> String {
    let skills = info.map(|i| i.skills.as_slice()).unwrap_or_default();
    if skills.is_empty() {
        return "No skills: add them under `.axon/skills/` in the workspace.".to_string();
    }
    skills
        .iter()
        .map(|s| {
            let state = match s.state {
                SkillState::Injected => "in the prompt",
                SkillState::Listed => "listed",
                SkillState::Failed => "failed",
            };
            format!("- **{}** ({state}, {}): {}", s.name, s.source, s.description)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn servers(info: Option<&SessionInfo>) -> String {
    let servers = info.map(|i| i.mcp_servers.as_slice()).unwrap_or_default();
    if servers.is_empty() {
        return "No MCP servers. Add them in the editor's settings or in axon's config \
                (`[mcp_servers.NAME]`)."
            .to_string();
    }
    servers
        .iter()
        .map(|s| match (&s.state, &s.message) {
            (McpState::Error, Some(message)) => format!("- {}: error: {message}", s.name),
            (McpState::NeedsLogin, Some(message)) => format!("- {}: {message}", s.name),
            (state, Some(message)) => format!("- {}: {state} ({message})", s.name),
            (state, None) => format!("- {}: {state}", s.name),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::{ApprovalMode, Mode, SkillInfo};

    fn info() -> SessionInfo {
        SessionInfo {
            session_id: None,
            workspace: "/w".into(),
            provider: "openai".into(),
            model: "m".into(),
            context_window: 1000,
            mode: Mode::React,
            approval: ApprovalMode::Ask,
            tools: vec![],
            mcp_servers: vec![],
            rules: vec!["1. Be brief.".into()],
            skills: vec![SkillInfo {
                name: "release".into(),
                state: SkillState::Listed,
                source: ".axon/skills/release.md".into(),
                description: "Cut a release".into(),
            }],
            context_tokens: 0,
            sandbox: None,
            usage: Default::default(),
            cost_usd: None,
        }
    }

    #[test]
    fn prompts_starting_with_a_command_are_commands() {
        let info = info();
        assert_eq!(parse("/compact", Some(&info)), Some(Command::Compact));
        assert_eq!(
            parse("/plan add a flag", Some(&info)),
            Some(Command::Plan("add a flag".into()))
        );
        assert_eq!(parse("/rules", Some(&info)), Some(Command::Show("1. Be brief.".into())));
        assert_eq!(parse("/ps", Some(&info)), Some(Command::Background));
        assert_eq!(
            parse("/release v2", Some(&info)),
            Some(Command::Skill { name: "release".into(), task: "v2".into() })
        );
        assert_eq!(parse("/etc/passwd is odd", Some(&info)), None);
        assert_eq!(parse("fix /compact", Some(&info)), None);
    }

    #[test]
    fn skills_are_offered_as_commands() {
        let SessionUpdate::AvailableCommandsUpdate(update) = available(Some(&info())) else {
            unreachable!()
        };
        let names: Vec<&str> = update.available_commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["compact", "plan", "rules", "skills", "mcp", "ps", "release"]);
    }
}
