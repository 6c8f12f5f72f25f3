//! Subagent definitions: Markdown files with YAML front matter, in the
//! format Claude Code (`.claude/agents/`) and Gemini CLI
//! (`.gemini/agents/`) share.
//!
//! ```text
//! ---
//! name: code-reviewer
//! description: Reviews a change for bugs. Use after editing code.
//! tools: Read, Grep, Glob        # or a YAML list; absent: the parent's tools
//! model: inherit                 # or a model of the session's provider
//! approval: read-only            # optional: ask | auto | read-only
//! ---
//! You are a careful reviewer...  (the body: the subagent's system prompt)
//! ```
//!
//! Pure: a file's text arrives as data, and [`parse_definition`] makes it
//! an [`AgentDefinition`] (the runtime finds and reads the files:
//! `axon_runtime::agent_files`). Tool names are kept as written here;
//! [`resolve_tools`] maps them onto a registry.

use std::path::PathBuf;

use crate::approval::ApprovalPolicy;

/// Longest agent name kept: `agent_` + name stays within the 64 characters
/// tool names may have.
pub const MAX_AGENT_NAME: usize = 58;
/// Longest description kept.
const MAX_DESCRIPTION: usize = 2048;

/// One subagent as a file defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// `[A-Za-z0-9_-]`, at most [`MAX_AGENT_NAME`]; the tool is `agent_NAME`.
    pub name: String,
    /// When to use it, for the model choosing.
    pub description: String,
    /// Tool names as written (Claude's, Gemini's or axon's); `None`: the
    /// parent's tools.
    pub tools: Option<Vec<String>>,
    /// `None` (or `inherit`): the session's model.
    pub model: Option<String>,
    /// Stricter than the session's, when set (never looser).
    pub approval: Option<ApprovalPolicy>,
    /// It may start subagents of its own (one level more, at most).
    pub subagents: bool,
    /// Model calls it may make; `None`: the default.
    pub max_iterations: Option<u32>,
    /// Output tokens it may spend; `None`: the default.
    pub token_budget: Option<u64>,
    /// Its system prompt (the file's body).
    pub prompt: String,
    /// The file it came from.
    pub source: PathBuf,
}

/// One definition file's text; `fallback_name` (the file's stem) names it
/// when the front matter does not. Also returns what was ignored.
pub fn parse_definition(
    text: &str,
    fallback_name: &str,
) -> Result<(AgentDefinition, Vec<String>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let rest = text.strip_prefix("---\n").ok_or("it has no front matter (--- at the top)")?;
    let end = if rest.starts_with("---") { Some(0) } else { rest.find("\n---").map(|i| i + 1) };
    let end = end.ok_or("its front matter has no closing ---")?;
    let fields = front_matter(&rest[..end]);
    let body = rest[end + 3..].trim_start_matches('-').trim();
    let mut warnings = Vec::new();
    let mut definition = AgentDefinition {
        name: String::new(),
        description: String::new(),
        tools: None,
        model: None,
        approval: None,
        subagents: false,
        max_iterations: None,
        token_budget: None,
        prompt: body.to_string(),
        source: PathBuf::new(),
    };
    let mut name = None;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("name", Value::Text(v)) => name = Some(v),
            ("description", Value::Text(v)) => definition.description = v,
            ("tools", Value::Text(v)) => {
                definition.tools = Some(
                    v.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(String::from)
                        .collect(),
                );
            }
            ("tools", Value::List(items)) => definition.tools = Some(items),
            ("model", Value::Text(v)) => {
                definition.model = Some(v).filter(|m| !m.is_empty() && m != "inherit");
            }
            ("approval", Value::Text(v)) => match v.as_str() {
                "ask" => definition.approval = Some(ApprovalPolicy::Ask),
                "auto" => definition.approval = Some(ApprovalPolicy::Auto),
                "read-only" | "read_only" | "readonly" => {
                    definition.approval = Some(ApprovalPolicy::ReadOnly);
                }
                other => {
                    warnings.push(format!("approval '{other}' ignored; use ask, auto or read-only"))
                }
            },
            ("subagents", Value::Text(v)) => match v.as_str() {
                "true" | "yes" => definition.subagents = true,
                "false" | "no" => definition.subagents = false,
                other => warnings.push(format!("subagents '{other}' ignored; use true or false")),
            },
            ("max_iterations" | "max_turns" | "maxTurns", Value::Text(v)) => {
                match v.parse::<u32>() {
                    Ok(n) if n > 0 => definition.max_iterations = Some(n),
                    _ => warnings.push(format!("{key} '{v}' ignored; give a positive number")),
                }
            }
            ("token_budget", Value::Text(v)) => match v.parse::<u64>() {
                Ok(n) if n > 0 => definition.token_budget = Some(n),
                _ => warnings.push(format!("token_budget '{v}' ignored; give a positive number")),
            },
            (
                key @ ("name" | "description" | "model" | "approval" | "subagents"),
                Value::List(_),
            ) => {
                warnings.push(format!("{key} should be one value, not a list; ignored"));
            }
            // Other agents' fields (color, kind, temperature...) mean
            // nothing here.
            _ => {}
        }
    }
    let name = name.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| fallback_name.to_string());
    definition.name = tool_safe(name.trim())?;
    if definition.description.is_empty() {
        definition.description = body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
    }
    if definition.description.chars().count() > MAX_DESCRIPTION {
        definition.description = definition.description.chars().take(MAX_DESCRIPTION).collect();
        warnings.push(format!("its description was cut to {MAX_DESCRIPTION} characters"));
    }
    if definition.prompt.is_empty() {
        return Err("it has no instructions (the text after the front matter)".to_string());
    }
    Ok((definition, warnings))
}

/// A name as tool names allow it (`[A-Za-z0-9_-]`), or why it cannot be.
fn tool_safe(name: &str) -> Result<String, String> {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if cleaned.is_empty() {
        return Err("it has no name".to_string());
    }
    if cleaned.len() > MAX_AGENT_NAME {
        return Err(format!("its name is longer than {MAX_AGENT_NAME} characters"));
    }
    Ok(cleaned)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Text(String),
    List(Vec<String>),
}

/// The YAML subset agent files use: `key: value` (quoted or not), flow
/// lists `[a, b]`, block lists (`- a` lines), and `|` / `>` block text.
fn front_matter(yaml: &str) -> Vec<(String, Value)> {
    let mut fields: Vec<(String, Value)> = Vec::new();
    let lines: Vec<&str> = yaml.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.trim().is_empty()
            || line.trim_start().starts_with('#')
            || line.starts_with([' ', '\t'])
        {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let key = key.trim().to_string();
        let value = strip_comment(value.trim());
        // The indented lines that belong to this key.
        let mut block = Vec::new();
        while i < lines.len() && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty()) {
            block.push(lines[i]);
            i += 1;
        }
        let value = if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Value::List(inner.split(',').map(unquote).filter(|t| !t.is_empty()).collect())
        } else if matches!(value, "|" | "|-" | "|+" | ">" | ">-" | ">+") {
            let kept: Vec<&str> = block.iter().map(|l| l.trim()).collect();
            let joiner = if value.starts_with('|') { "\n" } else { " " };
            Value::Text(kept.join(joiner).trim().to_string())
        } else if value.is_empty() && block.iter().any(|l| l.trim_start().starts_with('-')) {
            Value::List(
                block
                    .iter()
                    .filter_map(|l| l.trim_start().strip_prefix('-'))
                    .map(|item| unquote(strip_comment(item)))
                    .filter(|t| !t.is_empty())
                    .collect(),
            )
        } else {
            // A plain value folded over several lines.
            let mut text = unquote(value);
            for more in block.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
                text.push(' ');
                text.push_str(more);
            }
            Value::Text(text)
        };
        fields.push((key, value));
    }
    fields
}

/// `value` without a trailing ` # comment` (outside quotes).
fn strip_comment(value: &str) -> &str {
    if value.starts_with(['"', '\'']) {
        return value;
    }
    match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value,
    }
}

fn unquote(value: &str) -> String {
    let value = value.trim();
    let inner = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')));
    match inner {
        Some(inner) if value.starts_with('"') => {
            inner.replace("\\n", "\n").replace("\\\"", "\"").replace("\\\\", "\\")
        }
        Some(inner) => inner.replace("''", "'"),
        None => value.to_string(),
    }
}

/// axon's name for a tool named as Claude Code or Gemini CLI name theirs
/// (axon's own names map to themselves); `None` for a name it has no tool
/// for. MCP names (`mcp__server__tool`) are handled by [`resolve_tools`].
pub fn axon_tool_name(name: &str) -> Option<&'static str> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "bash" | "shell" | "run_shell_command" => "shell",
        "read" | "read_file" | "read_many_files" | "notebookread" => "read_file",
        "write" | "write_file" => "write_file",
        "edit" | "edit_file" | "replace" => "edit_file",
        "multiedit" | "multi_edit" => "multi_edit",
        "apply_patch" | "applypatch" => "apply_patch",
        "bashoutput" | "shell_output" => "shell_output",
        "killshell" | "killbash" | "shell_kill" => "shell_kill",
        "glob" => "glob",
        "grep" | "search" | "search_file_content" | "grep_search" => "search",
        "ls" | "list_dir" | "list_directory" => "list_dir",
        "todowrite" | "todo" | "write_todos" => "todo",
        "webfetch" | "web_fetch" => "web_fetch",
        "websearch" | "web_search" | "google_web_search" => "web_search",
        "load_skill" | "skill" => "load_skill",
        "read_note" => "read_note",
        "create_note" => "create_note",
        "list_folder" => "list_folder",
        _ => return None,
    })
}

/// The registry names `written` stands for among `available` (the parent's
/// tools), and a warning for each name that stands for none. Claude's
/// `mcp__server__tool` is axon's `mcp_server_tool`; `mcp__server` (or
/// `mcp__server__*`) is every tool of that server.
pub fn resolve_tools(written: &[String], available: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    let add = |name: &str, names: &mut Vec<String>| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    };
    for tool in written {
        let tool = tool.trim();
        if let Some(mcp) = tool.strip_prefix("mcp__") {
            let (server, name) = match mcp.split_once("__") {
                Some((server, name)) if name != "*" => (server, Some(name)),
                Some((server, _)) => (server, None),
                None => (mcp, None),
            };
            let prefix = format!("mcp_{}_", sanitize(server));
            let matched: Vec<&str> = match name {
                Some(name) => {
                    let full = format!("{prefix}{}", sanitize(name));
                    available.iter().copied().filter(|a| *a == full).collect()
                }
                None => available.iter().copied().filter(|a| a.starts_with(&prefix)).collect(),
            };
            if matched.is_empty() {
                warnings
                    .push(format!("tool '{tool}' is not available (is its MCP server running?)"));
            }
            for name in matched {
                add(name, &mut names);
            }
            continue;
        }
        let mapped =
            axon_tool_name(tool).or_else(|| available.iter().copied().find(|a| *a == tool));
        match mapped {
            Some(name) if available.contains(&name) => add(name, &mut names),
            Some(name) => warnings.push(format!("tool '{tool}' ({name}) is not available here")),
            None => warnings.push(format!("tool '{tool}' is unknown to axon; ignored")),
        }
    }
    (names, warnings)
}

/// As axon's MCP names sanitise a server's or tool's name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_and_gemini_front_matter_both_read() {
        let claude = "---\nname: code-reviewer\ndescription: Reviews code. Use after edits.\n\
                      tools: Read, Grep, Glob, Bash, mcp__github__get_issue, WebFetch\n\
                      model: inherit\ncolor: red\n---\nYou review.\n";
        let (agent, warnings) = parse_definition(claude, "file").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(agent.name, "code-reviewer");
        assert_eq!(agent.description, "Reviews code. Use after edits.");
        assert_eq!(agent.model, None);
        assert_eq!(agent.prompt, "You review.");
        let written = agent.tools.unwrap();
        let available = ["read_file", "search", "glob", "shell", "mcp_github_get_issue"];
        let (tools, unknown) = resolve_tools(&written, &available);
        assert_eq!(tools, ["read_file", "search", "glob", "shell", "mcp_github_get_issue"]);
        assert_eq!(unknown, ["tool 'WebFetch' (web_fetch) is not available here"]);
        let (tools, unknown) = resolve_tools(&written, &["web_fetch"]);
        assert_eq!(tools, ["web_fetch"]);
        assert_eq!(unknown.len(), 5, "{unknown:?}");
        let (_, unknown) = resolve_tools(&["NotebookEdit".to_string()], &available);
        assert_eq!(unknown, ["tool 'NotebookEdit' is unknown to axon; ignored"]);

        let gemini = "---\r\nname: finder\r\ndescription: |\r\n  Finds things.\r\n  Fast.\r\n\
                      tools:\r\n  - read_file\r\n  - search_file_content # grep\r\n\
                      model: gemini-2.5-flash\r\napproval: read-only\r\nmax_turns: 4\r\n---\r\n\
                      Find.";
        let (agent, warnings) = parse_definition(gemini, "file").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(agent.description, "Finds things.\nFast.");
        assert_eq!(
            agent.tools.as_deref(),
            Some(&["read_file".into(), "search_file_content".into()][..])
        );
        assert_eq!(agent.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(agent.approval, Some(ApprovalPolicy::ReadOnly));
        assert_eq!(agent.max_iterations, Some(4));
        let (tools, _) = resolve_tools(agent.tools.as_deref().unwrap(), &["read_file", "search"]);
        assert_eq!(tools, ["read_file", "search"]);
    }

    #[test]
    fn bad_files_say_why_and_names_stay_tool_safe() {
        assert!(parse_definition("no front matter", "x").unwrap_err().contains("front matter"));
        assert!(parse_definition("---\nname: a\n", "x").unwrap_err().contains("closing"));
        assert!(parse_definition("---\nname: a\n---\n", "x").unwrap_err().contains("instructions"));
        let (agent, warnings) =
            parse_definition("---\ndescription: d\napproval: yolo\n---\nGo.", "my agent").unwrap();
        assert_eq!(agent.name, "my_agent");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let long = format!("---\nname: {}\n---\nGo.", "n".repeat(MAX_AGENT_NAME + 1));
        assert!(parse_definition(&long, "x").is_err());
        let (tools, unknown) = resolve_tools(
            &["mcp__files".to_string()],
            &["mcp_files_read", "mcp_files_write", "glob"],
        );
        assert_eq!(tools, ["mcp_files_read", "mcp_files_write"]);
        assert!(unknown.is_empty());
    }
}
