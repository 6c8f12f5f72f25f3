//! Events a session emits while it works; front ends only render these.
//!
//! This is the public, versioned event stream (`axon run --json`, and what
//! every front end receives): [`SCHEMA_VERSION`] names its version, the
//! first line of a stream is [`AgentEvent::Header`], and
//! `docs/events.schema.json` is generated from these types. A change that
//! renames or removes a field or a type raises the version; adding one
//! does not.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::Message;
use crate::op::{ApprovalMode, Mode};
use crate::plan::Plan;
use crate::preview::Preview;
use crate::tool::{ToolCall, ToolOutput};

/// The version of the event stream's format.
pub const SCHEMA_VERSION: u32 = 1;

/// Token counts reported by a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

    /// Adds another report's counts to these.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// An MCP server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    Connecting,
    Ready,
    /// It could not start, or failed; the event's `message` says why.
    Error,
    /// It was shut down or went away.
    Closed,
    /// It refuses axon without a valid OAuth token; the event's `message`
    /// gives the command that signs in (`axon mcp login NAME`).
    NeedsLogin,
}

impl McpState {
    /// The name used in the event stream.
    pub fn as_str(self) -> &'static str {
        match self {
            McpState::Connecting => "connecting",
            McpState::Ready => "ready",
            McpState::Error => "error",
            McpState::Closed => "closed",
            McpState::NeedsLogin => "needs_login",
        }
    }
}

impl std::fmt::Display for McpState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One MCP server as a session reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerInfo {
    pub name: String,
    pub state: McpState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One background command of a session (`shell {background: true}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BackgroundCommand {
    /// The id `shell_output` and `shell_kill` take.
    pub id: String,
    pub command: String,
    /// Seconds since it started.
    pub seconds: u64,
    /// How it ended (`exit status 0`, `killed by signal 9`…); absent while
    /// it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Bytes it printed that no `shell_output` has read yet.
    pub unread: u64,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered (or a plan was proposed, or a plan ran to its end).
    EndTurn,
    /// The iteration limit ended it before an answer.
    MaxIterations,
    Cancelled,
    /// The model declined: a refusal, or its provider's content filter
    /// stopped the reply; or a hook refused the request before the model
    /// saw it.
    Refusal,
    /// A provider error, or a plan step that failed and could not be revised.
    Error,
}

/// Where a skill's instructions are in the system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkillState {
    /// Its whole text is in the system prompt.
    Injected,
    /// Only its name and description are; `load_skill` fetches the rest.
    Listed,
    /// It could not be loaded; `description` says why.
    Failed,
}

/// One skill a session knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillInfo {
    pub name: String,
    pub state: SkillState,
    pub source: String,
    pub description: String,
}

/// How the OS sandbox confines `shell` commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anything; write only the private temp folder.
    ReadOnly,
    /// Also write inside the workspace (not its `.git` or `.axon`).
    WorkspaceWrite,
    /// No sandbox: commands run with the user's rights.
    Off,
}

/// The sandbox a session's commands run in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxInfo {
    pub mode: SandboxMode,
    /// Whether commands may open network sockets (Unix sockets always).
    pub network: bool,
    /// Whether this machine enforces `mode`. When it cannot, every command
    /// is asked about instead of running unconfined unasked.
    pub enforced: bool,
    /// For people: what enforces it, or why it cannot be enforced.
    pub detail: String,
}

/// The standing rule an "always" answer to an approval would save (in the
/// workspace's trust file, outside the repository).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleSuggestion {
    /// The rules, as written in a config's `allow` list (`shell(cargo test:*)`).
    pub rules: Vec<String>,
    /// For people: "allow `cargo test` commands in this workspace".
    pub description: String,
}

/// What answering "always" does beyond this call, as every front end words
/// it where "always" is offered: the rule is saved, not kept for this
/// session only.
pub const ALWAYS_SAVES: &str =
    "saved for this workspace's later sessions too; `axon permissions rm` revokes it";

impl RuleSuggestion {
    /// The "always" choice for people: the rule and that it is saved
    /// ("allow `cargo test` commands in this workspace (saved for …)").
    pub fn always_text(&self) -> String {
        format!("{} ({ALWAYS_SAVES})", self.description)
    }
}

/// What a session is: sent when it opens, and again when the conversation
/// is replaced (a new one, or another resumed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    /// The saved session's id; `None` until something is said in a new one.
    pub session_id: Option<String>,
    pub workspace: String,
    pub provider: String,
    pub model: String,
    pub context_window: u64,
    pub mode: Mode,
    /// Which calls that change things run.
    #[serde(default)]
    pub approval: ApprovalMode,
    /// The tools the model is offered, MCP tools included.
    pub tools: Vec<String>,
    pub mcp_servers: Vec<McpServerInfo>,
    /// The numbered rules, exactly as the model sees them.
    pub rules: Vec<String>,
    pub skills: Vec<SkillInfo>,
    /// Estimated tokens the next request sends.
    pub context_tokens: u64,
    /// The sandbox `shell` commands run in; absent without a `shell` tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxInfo>,
    /// Tokens the session's model calls used so far: a resumed session's
    /// earlier runs included (zero for a new one).
    #[serde(default)]
    pub usage: Usage,
    /// What those calls cost so far, in US dollars; absent when a call's
    /// model has no known price (or there was none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Importance of an informational message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One thing that happened, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The first line of a stream: its format's version and who wrote it.
    Header {
        schema: u32,
        producer: String,
    },
    /// The session is open (or its conversation was replaced).
    SessionStarted {
        #[serde(flatten)]
        session: SessionInfo,
    },
    /// The conversation now shown is this one (a resumed or cleared
    /// session); front ends that show history redraw from it.
    History {
        messages: Vec<Message>,
    },
    /// The models the session's provider offers, as its server lists them
    /// (the answer to a `switch_model` without a model): front ends offer
    /// them to pick from. `current` is the model in use.
    Models {
        provider: String,
        current: String,
        models: Vec<String>,
    },
    /// The session's background commands, oldest first (the answer to
    /// `list_background`).
    BackgroundCommands {
        commands: Vec<BackgroundCommand>,
    },
    /// The session's conversation is now saved under this id.
    SessionSaved {
        session_id: String,
    },
    /// Work on an operation began (a prompt, a plan proposal or run, a
    /// compaction).
    TurnStarted {
        turn: u32,
    },
    /// The prompt the turn just started answers, as the user sent it
    /// (`attachments` names what went with it: file paths, text names,
    /// image types). A front end that did not send it itself (a second
    /// browser tab) shows the user's message from this.
    Prompt {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<String>,
    },
    /// The session's mode or approval mode changed: a front end switched
    /// it (`set_mode`, `set_approval`). Every other front end shows it.
    ModeChanged {
        mode: Mode,
        approval: ApprovalMode,
    },
    /// That work ended.
    TurnCompleted {
        turn: u32,
        stop_reason: StopReason,
        /// Tokens the turn's model calls used together.
        usage: Usage,
        /// Estimated tokens the next request sends.
        context_tokens: u64,
        /// What the turn's model calls cost, in US dollars, each priced by
        /// the model that answered it; absent when a call's model has no
        /// known price (or the turn made none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The session's tokens so far, this turn and a resumed session's
        /// earlier runs included: what front ends show as its total.
        #[serde(default)]
        session_usage: Usage,
        /// The session's cost so far, the same way; absent when a call's
        /// model has no known price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_cost_usd: Option<f64>,
    },
    /// A piece of the answer as it streams in.
    Token {
        text: String,
    },
    /// A piece of the model's reasoning.
    Thought {
        text: String,
    },
    /// A tool call waits for the user's decision (`approve` operation).
    /// `preview` is what it would do, computed without doing it; `rule`
    /// is what answering `always` would save (without one, `always` allows
    /// just this call).
    ApprovalRequested {
        call: ToolCall,
        preview: Preview,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<RuleSuggestion>,
    },
    /// A tool call is about to run; or, when `refused`, it will not run
    /// (the approval policy or the user refused it) and its `observation`
    /// says why.
    Action {
        call: ToolCall,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        refused: bool,
        /// What a call that changes something is about to do (the diff
        /// of a write or edit, the command), when the session was opened
        /// with previews on (`SessionConfig::preview_actions`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<Preview>,
    },
    /// How a running tool call is getting on (an MCP server's progress
    /// notification): `progress` only grows, out of `total` when known.
    ToolProgress {
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
    },
    /// A tool call finished.
    Observation {
        call_id: String,
        name: String,
        output: ToolOutput,
    },
    /// An MCP server asks the user to fill in a form (`elicit` operation
    /// with the same `id`). `schema` is the JSON Schema of the object it
    /// wants: flat, one property per field (string, number, integer,
    /// boolean, or a string `enum`), `required` naming those that must be
    /// given.
    Elicitation {
        id: String,
        server: String,
        message: String,
        schema: Value,
    },
    /// A plan waits for approval (new, edited, or revised after a failed
    /// step).
    PlanProposed {
        plan: Plan,
    },
    /// The plan being carried out changed (a step's status).
    PlanChanged {
        plan: Plan,
    },
    /// A plan step begins.
    StepStarted {
        step: u32,
        description: String,
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
    /// An MCP server changed state.
    McpStatus {
        server: String,
        state: McpState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The model now answering.
    ModelChanged {
        provider: String,
        model: String,
        context_window: u64,
    },
    /// The reply being streamed broke off and the model is asked again:
    /// tokens and thoughts since the last model call are void.
    TurnRestarted {
        reason: String,
    },
    /// Something the user should know that is not a problem.
    Info {
        message: String,
    },
    Warning {
        message: String,
    },
    Error {
        message: String,
    },
    /// One model call's token counts, and the model that answered it (a
    /// fallback provider's may differ from the session's); what the call
    /// cost follows from them and the prices.
    Usage {
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Something a subagent did: `event` is one of its own events, sent
    /// while the parent's call `call_id` (the tool call that started it,
    /// named `agent`) runs. It may itself be a `subagent` event (a
    /// subagent's subagent). A subagent's `usage` is not wrapped: it comes
    /// as a plain `usage` event, so that adding up `usage` counts it once.
    Subagent {
        call_id: String,
        agent: String,
        event: Box<AgentEvent>,
    },
    /// Anything a later front end may want that has no type yet.
    Custom {
        name: String,
        data: Value,
    },
}

/// A `tool_progress` as people read it: the message, then how far as a
/// percentage (or the count when the total is unknown): `indexing · 40%`,
/// `indexing · 7`, `progress 7`. Empty when it says nothing.
pub fn progress_text(message: Option<&str>, progress: f64, total: Option<f64>) -> String {
    let amount = match total {
        Some(total) if total > 0.0 => {
            format!("{:.0}%", (progress / total * 100.0).clamp(0.0, 100.0))
        }
        _ if progress > 0.0 => format!("{progress}"),
        _ => String::new(),
    };
    match (message.map(str::trim).filter(|m| !m.is_empty()), amount.is_empty()) {
        (Some(message), true) => message.to_string(),
        (Some(message), false) => format!("{message} · {amount}"),
        (None, _) if total.is_none() && !amount.is_empty() => format!("progress {amount}"),
        (None, _) => amount,
    }
}

/// A `background_commands` list as people read it (`/ps`): one line per
/// command, running ones first, with how to read or stop them.
pub fn background_text(commands: &[BackgroundCommand]) -> String {
    if commands.is_empty() {
        return "No background commands: the agent starts them with `shell` and \
                `background: true`."
            .to_string();
    }
    let mut lines = vec!["Background commands:".to_string()];
    let (running, ended): (Vec<_>, Vec<_>) = commands.iter().partition(|c| c.ended.is_none());
    for command in running.iter().chain(&ended) {
        let state = match &command.ended {
            None => format!("running {}", duration_text(command.seconds)),
            Some(how) => format!("ended: {how} after {}", duration_text(command.seconds)),
        };
        let unread = match command.unread {
            0 => String::new(),
            bytes => format!(", {bytes} bytes unread"),
        };
        lines.push(format!("  {}  {}  ({state}{unread})", command.id, command.command));
    }
    if !running.is_empty() {
        lines.push(
            "The agent reads them with shell_output and stops them with shell_kill; \
                    they end with the session."
                .to_string(),
        );
    }
    lines.join("\n")
}

fn duration_text(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

impl AgentEvent {
    /// The stream's first line.
    pub fn header(producer: impl Into<String>) -> Self {
        AgentEvent::Header { schema: SCHEMA_VERSION, producer: producer.into() }
    }

    /// A message at `level`.
    pub fn notice(level: Level, message: impl Into<String>) -> Self {
        let message = message.into();
        match level {
            Level::Info => AgentEvent::Info { message },
            Level::Warning => AgentEvent::Warning { message },
            Level::Error => AgentEvent::Error { message },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(id: &str, seconds: u64, ended: Option<&str>, unread: u64) -> BackgroundCommand {
        BackgroundCommand {
            id: id.into(),
            command: format!("cmd-{id}"),
            seconds,
            ended: ended.map(str::to_string),
            unread,
        }
    }

    #[test]
    fn the_background_list_puts_running_commands_first_and_says_how_to_use_them() {
        let text = background_text(&[
            command("bg1", 41, Some("exit status 0"), 0),
            command("bg2", 3725, None, 2048),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  bg2  cmd-bg2  (running 1 h 2 min, 2048 bytes unread)");
        assert_eq!(lines[2], "  bg1  cmd-bg1  (ended: exit status 0 after 41 s)");
        assert!(lines[3].contains("shell_kill"), "{text}");
        let ended_only = background_text(&[command("bg1", 75, Some("killed"), 0)]);
        assert!(ended_only.contains("after 1 min 15 s") && !ended_only.contains("shell_kill"));
        assert!(background_text(&[]).starts_with("No background commands"));
    }
}
