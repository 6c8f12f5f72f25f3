//! `axon_run`: the whole agent as one tool, for MCP hosts that want to hand
//! axon a task rather than drive its tools one by one (`axon mcp serve`).
//!
//! Each call opens a fresh session (no memory of earlier calls, nothing
//! saved) from the server's config, so it follows the same rules and skills
//! as every other front end. Nobody is there to ask: it runs without
//! asking (the host approved the call), or read-only when the server is,
//! and then the model is offered only the read-only tools. Progress goes
//! to the caller as the agent works; a call the host cancels cancels the
//! session.

use std::sync::Arc;

use anyhow::Result;
use axon_core::ApprovalPolicy;
use axon_llm::{Provider, ProviderKind, build_provider};
use axon_protocol::{AgentEvent, Op, StopReason, ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Overrides;
use crate::session_config::SessionConfig;
use crate::setup::open;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunToolArgs {
    /// The task, as you would give it to a capable engineer working in this workspace.
    pub prompt: String,
    /// Most model calls the run may make before it stops (default: the server's setting).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub max_iterations: Option<u32>,
}

pub struct RunTool {
    config: SessionConfig,
    provider: Arc<dyn Provider>,
}

impl RunTool {
    /// The tool for sessions like `config` (its provider is built, and its
    /// rules and skills loaded, once here; an error says why there is no
    /// provider). `Ask` becomes read-only.
    pub async fn new(mut config: SessionConfig) -> Result<RunTool> {
        let overrides =
            Overrides { provider: config.provider.clone(), model: config.model.clone() };
        let provider_config = config.config.provider(&overrides)?;
        // An API client is built without asking its server anything; a
        // local model is loaded now, once for every call.
        let provider = match provider_config.kind {
            ProviderKind::Local => {
                crate::local_model::connect(&provider_config, &config.config).await?
            }
            _ => build_provider(&provider_config)?,
        };
        let approval = match config.approval()? {
            ApprovalPolicy::Auto => ApprovalPolicy::Auto,
            ApprovalPolicy::Ask | ApprovalPolicy::ReadOnly => ApprovalPolicy::ReadOnly,
        };
        config.approval = Some(approval);
        config.connected = Some(Arc::clone(&provider));
        config.interactive = false;
        config.start_servers = false;
        config.record = false;
        config.replay_history = false;
        config.session = crate::SessionChoice::New;
        // Loaded once: a call must not clone skill repositories again.
        if config.guidance.is_none() {
            let root = config.workspace.root().to_path_buf();
            config.guidance =
                Some(Arc::new(crate::guidance::load(&config.config, &config.dirs, &root)));
        }
        Ok(RunTool { config, provider })
    }

    /// Rules that could not be read and skills that could not be loaded.
    pub fn problems(&self) -> Vec<String> {
        self.config.guidance.as_ref().map(|g| g.problems()).unwrap_or_default()
    }

    fn changes_things(&self) -> bool {
        self.config.approval == Some(ApprovalPolicy::Auto)
    }
}

impl TypedTool for RunTool {
    type Args = RunToolArgs;
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

    async fn run(&self, ctx: &ToolContext, args: RunToolArgs) -> Result<ToolOutput, ToolError> {
        if args.prompt.trim().is_empty() {
            return Err(ToolError::InvalidParams {
                tool: Self::NAME.to_string(),
                details: "field 'prompt': the task is empty".to_string(),
            });
        }
        let mut config = self.config.clone();
        if let Some(limit) = args.max_iterations {
            config.max_iterations = Some(limit.max(1));
        }
        let limit = config
            .max_iterations
            .or(config.config.file.max_iterations)
            .unwrap_or(crate::workspace_layer::DEFAULT_MAX_ITERATIONS);
        let (emitter, mut events) = crate::channel();
        let session = open(config, emitter)
            .await
            .map_err(|e| ToolError::failed(format!("the agent could not start: {e:#}")))?;
        session.submit(Op::UserTurn { text: args.prompt, attachments: Vec::new() });
        let (mut answer, mut last, mut failure) = (None, String::new(), None);
        let mut stop = StopReason::Error;
        // Dropping this future (the host cancelled) drops the session,
        // which cancels its turn.
        while let Some(event) = events.recv().await {
            if let Some(message) = progress_message(&event) {
                ctx.report_progress(message);
            }
            match event {
                AgentEvent::Token { text } => last.push_str(&text),
                AgentEvent::Action { .. } => last.clear(),
                AgentEvent::Answer { text } => answer = Some(text),
                AgentEvent::Error { message } => failure = Some(message),
                AgentEvent::TurnCompleted { stop_reason, .. } => {
                    stop = stop_reason;
                    break;
                }
                _ => {}
            }
        }
        session.shutdown().await;
        Ok(match stop {
            StopReason::EndTurn => ToolOutput::text(answer.unwrap_or(last)),
            StopReason::MaxIterations => ToolOutput::error(format!(
                "The agent stopped after {limit} model calls without finishing. Its last words:\n{last}\n\
                 Call again with a larger max_iterations or a narrower task."
            )),
            StopReason::Error => ToolOutput::error(format!(
                "The agent could not finish: {}",
                failure.unwrap_or_else(|| "it stopped without saying why".to_string())
            )),
            StopReason::Cancelled => ToolOutput::error("The run was cancelled."),
            StopReason::Refusal => ToolOutput::error(format!(
                "The agent's model declined the task. What it said:\n{}",
                answer.unwrap_or(last)
            )),
        })
    }
}

/// What a watching host is told about an event; streaming text is not news.
fn progress_message(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::Action { call, .. } => Some(format!("calling {}", call.name)),
        AgentEvent::Observation { name, output, .. } if output.is_error => {
            Some(format!("{name} failed"))
        }
        AgentEvent::StepComplete { step, result } => Some(format!("step {step}: {result}")),
        AgentEvent::TurnRestarted { reason } => Some(format!("retrying the model: {reason}")),
        AgentEvent::Warning { message } => Some(format!("warning: {message}")),
        _ => None,
    }
}
