//! Events an agent emits while it works; front ends only render these.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::Plan;
use crate::tool::{ToolCall, ToolOutput};

/// Token counts reported by a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// One thing that happened during a run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A piece of the answer as it streams in.
    Token {
        text: String,
    },
    /// A piece of the model's reasoning.
    Thought {
        text: String,
    },
    /// A tool call is about to run.
    Action {
        call: ToolCall,
    },
    /// A tool call finished.
    Observation {
        call_id: String,
        name: String,
        output: ToolOutput,
    },
    /// A plan was proposed or revised.
    Plan {
        plan: Plan,
    },
    /// A plan step ended (completed, failed or skipped).
    StepComplete {
        step: u32,
        result: String,
    },
    /// The final answer of a run.
    Answer {
        text: String,
    },
    /// An MCP server changed state: `connecting`, `ready`, `error` (with
    /// the reason) or `closed`.
    McpStatus {
        server: String,
        state: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The reply being streamed broke off and the model is asked again:
    /// tokens and thoughts since the last model call are void.
    TurnRestarted {
        reason: String,
    },
    Warning {
        message: String,
    },
    Error {
        message: String,
    },
    Usage {
        usage: Usage,
    },
    /// Anything a later front end may want that has no type yet.
    Custom {
        name: String,
        data: Value,
    },
}
