//! What an [`Agent`](crate::Agent) is told to be: its [`AgentConfig`],
//! which `Agent::new` hands out to the part that uses each setting (the
//! model turn, the call runner, the loop), and how a history that no
//! longer fits is made to fit ([`ContextStrategy`]).

use std::time::Duration;

use axon_llm::retry::RetryPolicy;

use crate::approval::ApprovalPolicy;

#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub system_prompt: String,
    /// Model calls per run before it stops with a warning.
    pub max_iterations: u32,
    pub approval: ApprovalPolicy,
    /// Longest one tool call may run.
    pub tool_timeout: Duration,
    /// Fresh attempts at a turn whose stream broke off or stalled.
    pub turn_retries: u32,
    /// Backoff between those attempts.
    pub retry: RetryPolicy,
    pub max_output_tokens: Option<u32>,
    /// What happens when the history outgrows 80 % of the window.
    pub context_strategy: ContextStrategy,
    /// How many rules the system prompt carries; when any, tool results
    /// end with a short reminder of them.
    pub rule_count: usize,
    /// Tools after whose successful call the run ends (plan mode's
    /// `submit_plan`).
    pub stop_tools: Vec<String>,
    /// Each call that changes something carries a preview of what it is
    /// about to do in its `action` event (for front ends that show the
    /// diff of every edit, asked about or not).
    pub preview_actions: bool,
    /// Secrets in tool results are masked before the model sees them
    /// (`secrets = "redact"`, the default); `false` is `secrets = "off"`.
    pub mask_secrets: bool,
    /// No request goes to the model once the session has spent this.
    pub budget: Option<crate::cost::Budget>,
}

/// How a history that no longer fits is made to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextStrategy {
    /// Drop the oldest turns from what is sent.
    #[default]
    Trim,
    /// Have the model summarise the oldest turns, and send the summary
    /// instead; trim if that fails.
    Summarize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            system_prompt: String::new(),
            max_iterations: 25,
            approval: ApprovalPolicy::Auto,
            tool_timeout: Duration::from_secs(15 * 60),
            turn_retries: 3,
            retry: RetryPolicy::default(),
            max_output_tokens: None,
            context_strategy: ContextStrategy::Trim,
            rule_count: 0,
            stop_tools: Vec::new(),
            preview_actions: false,
            mask_secrets: true,
            budget: None,
        }
    }
}
