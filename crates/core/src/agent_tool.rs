//! `axon_run`: the whole agent as one tool, for MCP hosts that want to hand
//! axon a task rather than drive its tools one by one (`axon mcp serve`).
//!
//! Each call is a fresh run with no memory of earlier calls. The inner agent
//! gets the tools the server serves and nothing more, so a host can reach
//! nothing through `axon_run` that it could not call directly; for the same
//! reason it runs without asking (the host approved the call), or read-only
//! when the server is. Progress goes to the caller as the agent works: each
//! tool it calls and each step it completes.

use std::sync::Arc;

use axon_llm::Provider;
use axon_protocol::{AgentEvent, ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, ToolRegistry, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentConfig, RunOutcome};
use crate::approval::ApprovalPolicy;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AgentToolArgs {
    /// The task, as you would give it to a capable engineer working in this workspace.
    pub prompt: String,
    /// Most model calls the run may make before it stops (default: the server's setting).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub max_iterations: Option<u32>,
}

pub struct AgentTool {
    provider: Arc<dyn Provider>,
    registry: Arc<ToolRegistry>,
    config: AgentConfig,
}

impl AgentTool {
    /// `registry` is what the agent may use; `config.approval` must be
    /// `Auto` or `ReadOnly` (nobody is there to ask).
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        mut config: AgentConfig,
    ) -> Self {
        if config.approval == ApprovalPolicy::Ask {
            config.approval = ApprovalPolicy::ReadOnly;
        }
        AgentTool { provider, registry, config }
    }

    fn changes_things(&self) -> bool {
        self.config.approval == ApprovalPolicy::Auto
            && self.registry.specs().any(|spec| !spec.annotations.read_only)
    }
}

impl TypedTool for AgentTool {
    type Args = AgentToolArgs;
    const NAME: &'static str = "axon_run";

    fn description(&self) -> String {
        let info = self.provider.info();
        let access = if self.changes_things() {
            "It can read, edit and run commands in the workspace."
        } else {
            "It can only read the workspace."
        };
        format!(
            "Give a task to the axon agent ({} via {}) and get its final answer. It plans, calls \
             tools and works until it is done. {access} Each call starts fresh.",
            info.model, info.name
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        if self.changes_things() {
            ToolAnnotations::DESTRUCTIVE
        } else {
            ToolAnnotations { read_only: true, destructive: false, idempotent: false }
        }
    }

    async fn run(&self, ctx: &ToolContext, args: AgentToolArgs) -> Result<ToolOutput, ToolError> {
        if args.prompt.trim().is_empty() {
            return Err(ToolError::InvalidParams {
                tool: Self::NAME.to_string(),
                details: "field 'prompt': the task is empty".to_string(),
            });
        }
        let mut config = self.config.clone();
        if let Some(limit) = args.max_iterations {
            config.max_iterations = limit.max(1);
        }
        let limit = config.max_iterations;
        let mut agent =
            Agent::new(Arc::clone(&self.provider), Arc::clone(&self.registry), ctx.clone(), config);
        let emit = |event: AgentEvent| {
            if let Some(message) = progress_message(&event) {
                ctx.report_progress(message);
            }
        };
        // Cancellation reaches the run by its future being dropped.
        let outcome = agent.run(&args.prompt, &emit, &CancellationToken::new()).await;
        Ok(match outcome {
            RunOutcome::Answered(answer) => ToolOutput::text(answer),
            RunOutcome::IterationLimit(last) => ToolOutput::error(format!(
                "The agent stopped after {limit} model calls without finishing. Its last words:\n{last}\n\
                 Call again with a larger max_iterations or a narrower task."
            )),
            RunOutcome::Failed(message) => {
                ToolOutput::error(format!("The agent could not finish: {message}"))
            }
            RunOutcome::Cancelled(_) => ToolOutput::error("The run was cancelled."),
        })
    }
}

/// What a watching host is told about an event; streaming text is not news.
fn progress_message(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::Action { call } => Some(format!("calling {}", call.name)),
        AgentEvent::Observation { name, output, .. } if output.is_error => {
            Some(format!("{name} failed"))
        }
        AgentEvent::StepComplete { step, result } => Some(format!("step {step}: {result}")),
        AgentEvent::TurnRestarted { reason } => Some(format!("retrying the model: {reason}")),
        AgentEvent::Warning { message } => Some(format!("warning: {message}")),
        _ => None,
    }
}
