//! The tools that start subagents: `agent_NAME {task}` for each definition,
//! and `task {description, prompt, tools?, subagent_type?}` for an ad-hoc
//! helper (Claude Code's `Task`).
//!
//! A subagent tool is read-only (so several run concurrently, see
//! `batch.rs`) exactly when every tool its subagent gets only reads, or its
//! definition makes it read-only; `task` judges each call by the tools it
//! names. Subagents get no subagent tools unless their definition says
//! `subagents: true`, and none at depth [`MAX_DEPTH`].

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axon_llm::Provider;
use axon_protocol::{ToolAnnotations, ToolSpec};
use axon_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use serde::Deserialize;
use serde_json::{Value, json};

use super::defs::{AgentDefinition, resolve_tools};
use super::run::{Child, MAX_DEPTH, Parent, no_parent, run_child};
use crate::approval::ApprovalPolicy;

/// Model calls a subagent may make unless its definition says otherwise.
pub const DEFAULT_MAX_ITERATIONS: u32 = 15;
/// Output tokens a subagent may spend unless its definition says otherwise.
pub const DEFAULT_TOKEN_BUDGET: u64 = 64_000;

/// A provider for another model of the session's provider, or why not.
pub type ConnectFuture = Pin<Box<dyn Future<Output = Result<Arc<dyn Provider>, String>> + Send>>;
/// Connects to a model by name (the runtime's, which knows the config).
pub type ConnectModel = Arc<dyn Fn(&str) -> ConnectFuture + Send + Sync>;

/// What every subagent of a session shares.
#[derive(Clone)]
pub struct SubagentSettings {
    pub max_iterations: u32,
    pub token_budget: u64,
    /// How a definition's `model` is reached; without, every subagent uses
    /// its parent's model.
    pub connect: Option<ConnectModel>,
    /// Offer the generic `task` helper too.
    pub task: bool,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        SubagentSettings {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            token_budget: DEFAULT_TOKEN_BUDGET,
            connect: None,
            task: true,
        }
    }
}

/// Claude Code's model aliases: they name no model of an API.
const MODEL_ALIASES: [&str; 3] = ["sonnet", "opus", "haiku"];

struct SubagentSet {
    settings: SubagentSettings,
    /// Every subagent tool's name (`task` and each `agent_NAME`).
    names: HashSet<String>,
    /// Each definition, by agent name, with whether it only reads.
    agents: Vec<(AgentDefinition, bool)>,
}

/// Registers `agent_NAME` for each definition, and `task`, into
/// `registry` (the parent's complete tool set, MCP tools included, so that
/// definitions can name them). Returns what was skipped or ignored.
pub fn register_subagents(
    definitions: Vec<AgentDefinition>,
    settings: SubagentSettings,
    registry: &mut ToolRegistry,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let available: Vec<String> = registry.names().map(String::from).collect();
    let available: Vec<&str> = available.iter().map(String::as_str).collect();
    let mut names: HashSet<String> = HashSet::from(["task".to_string()]);
    let mut agents = Vec::new();
    for mut definition in definitions {
        let tool = format!("agent_{}", definition.name);
        if registry.contains(&tool) || !names.insert(tool.clone()) {
            warnings.push(format!(
                "subagent {} ({}) skipped: a tool named {tool} already exists",
                definition.name,
                definition.source.display()
            ));
            continue;
        }
        if let Some(written) = &definition.tools {
            let (resolved, unknown) = resolve_tools(written, &available);
            warnings.extend(unknown.into_iter().map(|w| {
                format!("subagent {} ({}): {w}", definition.name, definition.source.display())
            }));
            definition.tools = Some(resolved);
        }
        if let Some(model) = &definition.model
            && MODEL_ALIASES.contains(&model.as_str())
        {
            warnings.push(format!(
                "subagent {}: model '{model}' is a Claude Code alias, not a model name; it uses \
                 the session's model",
                definition.name
            ));
            definition.model = None;
        }
        let read_only = definition.approval == Some(ApprovalPolicy::ReadOnly)
            || (!definition.subagents
                && match &definition.tools {
                    Some(tools) => tools.iter().all(|t| reads(registry, t)),
                    None => available.iter().all(|t| reads(registry, t)),
                });
        agents.push((definition, read_only));
    }
    let read_only_tools: HashSet<String> =
        registry.specs().filter(|s| s.annotations.read_only).map(|s| s.name.clone()).collect();
    let shared = Arc::new(SubagentSet { settings, names, agents });
    for index in 0..shared.agents.len() {
        let tool = AgentTool { shared: Arc::clone(&shared), index };
        if let Err(e) = registry.try_register(Arc::new(tool)) {
            warnings.push(format!("subagent {} skipped: {e}", shared.agents[index].0.name));
        }
    }
    if shared.settings.task && !registry.contains("task") {
        let available = available.iter().map(|s| s.to_string()).collect();
        let task = TaskTool { shared, available, read_only_tools };
        if let Err(e) = registry.try_register(Arc::new(task)) {
            warnings.push(format!("the task tool was not added: {e}"));
        }
    }
    warnings
}

fn reads(registry: &ToolRegistry, tool: &str) -> bool {
    registry.spec(tool).is_some_and(|s| s.annotations.read_only)
}

/// `agent_NAME`: the subagent one definition describes.
struct AgentTool {
    shared: Arc<SubagentSet>,
    index: usize,
}

#[derive(Deserialize)]
struct AgentArgs {
    task: String,
}

impl Tool for AgentTool {
    fn spec(&self) -> ToolSpec {
        let (definition, read_only) = &self.shared.agents[self.index];
        ToolSpec {
            name: format!("agent_{}", definition.name),
            description: format!(
                "Subagent '{}': {} It works on its own (its own conversation and tools) and \
                 returns only its final report. Give it the whole task: it sees nothing of \
                 this conversation. Several subagent calls in one reply run at the same time.",
                definition.name,
                definition.description.trim_end()
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "task": {
                        "type": "string",
                        "description": "What the subagent should do and report back, with every detail it needs."
                    }
                },
                "required": ["task"],
                "additionalProperties": false
            }),
            annotations: if *read_only {
                ToolAnnotations::READ_ONLY
            } else {
                ToolAnnotations { read_only: false, destructive: false, idempotent: false }
            },
        }
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let (definition, _) = &self.shared.agents[self.index];
            let args = AgentArgs::deserialize(&args).map_err(|e| ToolError::InvalidParams {
                tool: format!("agent_{}", definition.name),
                details: e.to_string(),
            })?;
            let parent = ctx
                .caller::<Parent>()
                .ok_or_else(|| no_parent(&format!("agent_{}", definition.name)))?;
            Ok(start(ctx, parent, &self.shared, definition, args.task, Vec::new()).await)
        })
    }
}

/// Runs `definition` on `task` for the parent's call `ctx`.
async fn start(
    ctx: &ToolContext,
    parent: &Parent,
    shared: &SubagentSet,
    definition: &AgentDefinition,
    task: String,
    mut notes: Vec<String>,
) -> axon_protocol::ToolOutput {
    if parent.depth > MAX_DEPTH {
        return axon_protocol::ToolOutput::error(format!(
            "subagents nest at most {MAX_DEPTH} deep; do this task yourself"
        ));
    }
    let nested = definition.subagents && parent.depth < MAX_DEPTH;
    let names: Vec<&str> = parent
        .registry
        .names()
        .filter(|name| {
            if shared.names.contains(*name) {
                return nested;
            }
            definition.tools.as_ref().is_none_or(|tools| tools.iter().any(|t| t == name))
        })
        .collect();
    let registry = parent.registry.subset(names);
    let provider = provider_for(parent, shared, definition, &mut notes).await;
    let approval = definition.approval.map_or(parent.approval, |own| parent.approval.stricter(own));
    let root = ctx.workspace.root().display().to_string();
    let child = Child {
        agent: definition.name.clone(),
        system_prompt: system_prompt(&definition.prompt, &definition.name, &root),
        registry,
        approval,
        provider,
        max_iterations: definition.max_iterations.unwrap_or(shared.settings.max_iterations),
        token_budget: definition.token_budget.unwrap_or(shared.settings.token_budget),
        task,
        notes,
    };
    run_child(ctx, parent, child).await
}

/// The definition's model when it names another one and it can be had;
/// else the parent's, with a note saying why.
async fn provider_for(
    parent: &Parent,
    shared: &SubagentSet,
    definition: &AgentDefinition,
    notes: &mut Vec<String>,
) -> Arc<dyn Provider> {
    let Some(model) = &definition.model else { return Arc::clone(&parent.provider) };
    if *model == parent.provider.info().model {
        return Arc::clone(&parent.provider);
    }
    let Some(connect) = &shared.settings.connect else {
        notes.push(format!("model {model} cannot be reached from here; using the session's"));
        return Arc::clone(&parent.provider);
    };
    match connect(model).await {
        Ok(provider) => provider,
        Err(e) => {
            notes.push(format!("model {model} is not available ({e}); using the session's"));
            Arc::clone(&parent.provider)
        }
    }
}

/// A subagent's system prompt: its own instructions, then what it is.
fn system_prompt(instructions: &str, agent: &str, root: &str) -> String {
    format!(
        "{instructions}\n\n---\nYou are the subagent \"{agent}\", working for another agent on \
         one task it gave you, in the workspace at {root}. Nobody can answer questions from you: \
         decide sensibly and finish the task with the tools you have. Your final answer is all \
         the other agent will see of your work (not your tool results): make it a complete, \
         self-contained report of what you found or did, with the file paths and details it \
         needs."
    )
}

/// `task`: an ad-hoc helper, or a defined subagent by `subagent_type`.
struct TaskTool {
    shared: Arc<SubagentSet>,
    /// The parent's tools when registered, to read `tools` against.
    available: Vec<String>,
    read_only_tools: HashSet<String>,
}

#[derive(Deserialize)]
struct TaskArgs {
    description: String,
    prompt: String,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    subagent_type: Option<String>,
}

/// The instructions of an ad-hoc helper.
const HELPER_PROMPT: &str = "You are a helper agent. Do the task you are given thoroughly and \
     efficiently: search and read before concluding, and prefer precise facts (paths, names, \
     line numbers) to impressions.";

impl TaskTool {
    fn definition(&self, name: &str) -> Option<&(AgentDefinition, bool)> {
        let name = name.trim();
        let name = name.strip_prefix("agent_").unwrap_or(name);
        self.shared.agents.iter().find(|(d, _)| d.name.eq_ignore_ascii_case(name))
    }

    /// The helper's tools as axon names (the read-only ones when none are
    /// named), and warnings for names it has no tool for.
    fn tools(&self, written: Option<&[String]>) -> (Vec<String>, Vec<String>) {
        let available: Vec<&str> = self
            .available
            .iter()
            .map(String::as_str)
            .filter(|n| !self.shared.names.contains(*n))
            .collect();
        match written {
            Some(written) => resolve_tools(written, &available),
            None => (
                available
                    .into_iter()
                    .filter(|n| self.read_only_tools.contains(*n))
                    .map(String::from)
                    .collect(),
                Vec::new(),
            ),
        }
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        let agents: Vec<String> = self
            .shared
            .agents
            .iter()
            .map(|(d, _)| format!("{}: {}", d.name, d.description.trim()))
            .collect();
        let listed = if agents.is_empty() {
            String::new()
        } else {
            format!(" Defined subagents (subagent_type): {}.", agents.join("; "))
        };
        ToolSpec {
            name: "task".to_string(),
            description: format!(
                "Start a helper agent for a self-contained task (a search across many files, a \
                 question that needs reading a lot): it works with its own conversation and \
                 tools and returns only its final report, so your context stays small. It sees \
                 nothing of this conversation: give it the whole task. Several task calls in one \
                 reply run at the same time when their helpers only read.{listed}"
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "description": "A short (3-5 words) name for the task, shown to the user."
                    },
                    "prompt": {
                        "type": "string",
                        "description": "The whole task: what to do and what to report back."
                    },
                    "tools": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Tools the helper may use (e.g. [\"read_file\", \"search\", \"edit_file\"]); without, only the tools that read. Tools that change things make the call wait its turn and follow the approval rules."
                    },
                    "subagent_type": {
                        "type": "string",
                        "description": "Run this defined subagent instead of an ad-hoc helper."
                    }
                },
                "required": ["description", "prompt"],
                "additionalProperties": false
            }),
            annotations: ToolAnnotations::READ_ONLY,
        }
    }

    fn read_only_call(&self, args: &Value) -> Option<bool> {
        let args = TaskArgs::deserialize(args).ok()?;
        if let Some(kind) = &args.subagent_type {
            return Some(self.definition(kind).is_some_and(|(_, read_only)| *read_only));
        }
        let (tools, _) = self.tools(args.tools.as_deref());
        Some(tools.iter().all(|t| self.read_only_tools.contains(t)))
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = TaskArgs::deserialize(&args).map_err(|e| ToolError::InvalidParams {
                tool: "task".to_string(),
                details: e.to_string(),
            })?;
            let parent = ctx.caller::<Parent>().ok_or_else(|| no_parent("task"))?;
            if let Some(kind) = &args.subagent_type {
                let Some((definition, _)) = self.definition(kind) else {
                    let known: Vec<&str> =
                        self.shared.agents.iter().map(|(d, _)| d.name.as_str()).collect();
                    return Err(ToolError::failed(format!(
                        "no subagent named '{kind}'; defined: {}",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    )));
                };
                return Ok(
                    start(ctx, parent, &self.shared, definition, args.prompt, Vec::new()).await
                );
            }
            let (tools, unknown) = self.tools(args.tools.as_deref());
            let definition = AgentDefinition {
                name: helper_name(&args.description),
                description: args.description.clone(),
                tools: Some(tools),
                model: None,
                approval: None,
                subagents: false,
                max_iterations: None,
                token_budget: None,
                prompt: HELPER_PROMPT.to_string(),
                source: Default::default(),
            };
            Ok(start(ctx, parent, &self.shared, &definition, args.prompt, unknown).await)
        })
    }
}

/// An ad-hoc helper's name in events: its description, kept short.
fn helper_name(description: &str) -> String {
    let name: String = description.trim().chars().take(60).collect();
    if name.is_empty() { "task".to_string() } else { name }
}
