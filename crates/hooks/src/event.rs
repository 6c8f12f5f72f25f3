//! The events hooks run at, and the JSON object a hook reads on stdin.
//!
//! Field names are Claude Code's (`session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `tool_response`, `prompt`,
//! `stop_hook_active`, `last_assistant_message`, `trigger`, `source`,
//! `message`, `notification_type`, `reason`), so a hook written for Claude
//! Code, Codex CLI or Gemini CLI reads axon's input unchanged. An input
//! carries its event's data and nothing else: the event is taken from the
//! data, so the two cannot disagree.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A point of a session where hooks run. The serde names are Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// A session started or was resumed.
    SessionStart,
    /// The user sent a prompt, before the model sees it.
    UserPromptSubmit,
    /// A tool call, before it runs (and before approval is sought).
    PreToolUse,
    /// A tool call that ran, with its result.
    PostToolUse,
    /// The model answered without calling a tool.
    Stop,
    /// The history is about to be compacted.
    PreCompact,
    /// A subagent answered its task.
    SubagentStop,
    /// The session waits on the user: a call to approve, a form to fill,
    /// or a prompt (after a minute of quiet).
    Notification,
    /// The session ends (closed, or cleared for a new conversation).
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order a session meets them.
    pub const ALL: [HookEvent; 9] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::Notification,
        HookEvent::SessionEnd,
    ];

    /// The event's name in configuration and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::Notification => "Notification",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event called `name` (case-sensitive, as in Claude Code).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether a hook's `matcher` applies to this event: the tool name for
    /// tool events, the `source` for SessionStart, the `trigger` for
    /// PreCompact, the `notification_type` for Notification and the
    /// `reason` for SessionEnd (as in Claude Code). Other events run every
    /// hook.
    pub fn uses_matcher(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::SessionStart
                | HookEvent::PreCompact
                | HookEvent::Notification
                | HookEvent::SessionEnd
        )
    }

    /// Whether a hook can stop what this event is about (exit code 2, or
    /// `"decision": "block"`): the others only observe.
    pub fn can_block(self) -> bool {
        !matches!(
            self,
            HookEvent::SessionStart
                | HookEvent::PreCompact
                | HookEvent::Notification
                | HookEvent::SessionEnd
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a session started (`source` on SessionStart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSource {
    /// A new session.
    Startup,
    /// A saved session resumed.
    Resume,
    /// The history was cleared.
    Clear,
    /// The history was just compacted.
    Compact,
}

impl SessionSource {
    pub fn name(self) -> &'static str {
        match self {
            SessionSource::Startup => "startup",
            SessionSource::Resume => "resume",
            SessionSource::Clear => "clear",
            SessionSource::Compact => "compact",
        }
    }
}

/// What asked for a compaction (`trigger` on PreCompact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactTrigger {
    /// The user asked for it.
    Manual,
    /// The context was full.
    Auto,
}

impl CompactTrigger {
    pub fn name(self) -> &'static str {
        match self {
            CompactTrigger::Manual => "manual",
            CompactTrigger::Auto => "auto",
        }
    }
}

/// What a Notification is about (`notification_type`, Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationKind {
    /// A tool call waits for the user's approval.
    PermissionPrompt,
    /// The session has waited a minute for the next prompt.
    IdlePrompt,
    /// An MCP server's form waits to be filled.
    ElicitationDialog,
}

impl NotificationKind {
    pub fn name(self) -> &'static str {
        match self {
            NotificationKind::PermissionPrompt => "permission_prompt",
            NotificationKind::IdlePrompt => "idle_prompt",
            NotificationKind::ElicitationDialog => "elicitation_dialog",
        }
    }
}

/// Why a session ended (`reason` on SessionEnd, Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The conversation was cleared for a new one.
    Clear,
    /// The user left the terminal UI (`/quit`, Ctrl-C twice, Ctrl-D).
    PromptInputExit,
    /// The session was closed otherwise (an editor closed it, `axon run`
    /// finished, another session was resumed in its place).
    Other,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Clear => "clear",
            EndReason::PromptInputExit => "prompt_input_exit",
            EndReason::Other => "other",
        }
    }
}

/// One event's own data.
#[derive(Debug, Clone, PartialEq)]
pub enum EventData {
    SessionStart {
        source: SessionSource,
    },
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse {
        /// axon's name for the tool (`shell`, `mcp_server_tool`).
        tool_name: String,
        /// The call's arguments.
        tool_input: Value,
    },
    PostToolUse {
        tool_name: String,
        tool_input: Value,
        /// The call's result.
        tool_response: Value,
    },
    Stop {
        /// A Stop hook already blocked a stop in this request: a hook
        /// should let the model end this time to avoid a loop.
        stop_hook_active: bool,
        /// The answer the model is stopping with.
        last_assistant_message: Option<String>,
    },
    SubagentStop {
        stop_hook_active: bool,
        /// Which subagent (`agent_type` in Claude Code).
        agent_type: Option<String>,
        /// The subagent's answer.
        last_assistant_message: Option<String>,
    },
    PreCompact {
        trigger: CompactTrigger,
        /// What the user asked the summary to keep (`/compact TEXT`).
        custom_instructions: Option<String>,
    },
    Notification {
        notification_type: NotificationKind,
        /// What the user is told (`axon needs your permission to use shell`).
        message: String,
    },
    SessionEnd {
        reason: EndReason,
    },
}

impl EventData {
    pub fn event(&self) -> HookEvent {
        match self {
            EventData::SessionStart { .. } => HookEvent::SessionStart,
            EventData::UserPromptSubmit { .. } => HookEvent::UserPromptSubmit,
            EventData::PreToolUse { .. } => HookEvent::PreToolUse,
            EventData::PostToolUse { .. } => HookEvent::PostToolUse,
            EventData::Stop { .. } => HookEvent::Stop,
            EventData::SubagentStop { .. } => HookEvent::SubagentStop,
            EventData::PreCompact { .. } => HookEvent::PreCompact,
            EventData::Notification { .. } => HookEvent::Notification,
            EventData::SessionEnd { .. } => HookEvent::SessionEnd,
        }
    }

    /// What a hook's matcher is tested against, when the event has one.
    pub fn match_target(&self) -> Option<&str> {
        match self {
            EventData::PreToolUse { tool_name, .. } | EventData::PostToolUse { tool_name, .. } => {
                Some(tool_name)
            }
            EventData::SessionStart { source } => Some(source.name()),
            EventData::PreCompact { trigger, .. } => Some(trigger.name()),
            EventData::Notification { notification_type, .. } => Some(notification_type.name()),
            EventData::SessionEnd { reason } => Some(reason.name()),
            _ => None,
        }
    }
}

/// Everything a hook is told about one event.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    pub session_id: String,
    /// The session's saved history, when there is one.
    pub transcript_path: Option<PathBuf>,
    /// The workspace: the hook's working folder, and `CLAUDE_PROJECT_DIR`
    /// and `AXON_WORKSPACE` in its environment.
    pub cwd: PathBuf,
    /// The session's approval mode in Claude's words (`default`, `plan`,
    /// `acceptEdits`, `bypassPermissions`), when the caller knows it.
    pub permission_mode: Option<String>,
    pub data: EventData,
}

impl HookInput {
    pub fn event(&self) -> HookEvent {
        self.data.event()
    }

    /// The JSON object written to a hook's stdin. With `claude_names`, tool
    /// events name the tool as Claude Code does and add Claude's argument
    /// names (see [`crate::names`]), for hooks from Claude's settings.
    pub fn to_json(&self, claude_names: bool) -> Value {
        let mut object = Map::new();
        object.insert("session_id".into(), Value::String(self.session_id.clone()));
        object.insert(
            "transcript_path".into(),
            match &self.transcript_path {
                Some(path) => Value::String(path.display().to_string()),
                None => Value::Null,
            },
        );
        object.insert("cwd".into(), Value::String(self.cwd.display().to_string()));
        object.insert("hook_event_name".into(), Value::String(self.event().name().into()));
        if let Some(mode) = &self.permission_mode {
            object.insert("permission_mode".into(), Value::String(mode.clone()));
        }
        let tool = |object: &mut Map<String, Value>, name: &str, input: &Value| {
            let (name, input) = if claude_names {
                (
                    crate::names::claude_name(name).unwrap_or(name).to_string(),
                    crate::names::claude_input(name, input, &self.cwd),
                )
            } else {
                (name.to_string(), input.clone())
            };
            object.insert("tool_name".into(), Value::String(name));
            object.insert("tool_input".into(), input);
        };
        match &self.data {
            EventData::SessionStart { source } => {
                object.insert("source".into(), Value::String(source.name().into()));
            }
            EventData::UserPromptSubmit { prompt } => {
                object.insert("prompt".into(), Value::String(prompt.clone()));
            }
            EventData::PreToolUse { tool_name, tool_input } => {
                tool(&mut object, tool_name, tool_input);
            }
            EventData::PostToolUse { tool_name, tool_input, tool_response } => {
                tool(&mut object, tool_name, tool_input);
                object.insert("tool_response".into(), tool_response.clone());
            }
            EventData::Stop { stop_hook_active, last_assistant_message } => {
                object.insert("stop_hook_active".into(), Value::Bool(*stop_hook_active));
                if let Some(message) = last_assistant_message {
                    object.insert("last_assistant_message".into(), Value::String(message.clone()));
                }
            }
            EventData::SubagentStop { stop_hook_active, agent_type, last_assistant_message } => {
                object.insert("stop_hook_active".into(), Value::Bool(*stop_hook_active));
                if let Some(agent) = agent_type {
                    object.insert("agent_type".into(), Value::String(agent.clone()));
                }
                if let Some(message) = last_assistant_message {
                    object.insert("last_assistant_message".into(), Value::String(message.clone()));
                }
            }
            EventData::PreCompact { trigger, custom_instructions } => {
                object.insert("trigger".into(), Value::String(trigger.name().into()));
                object.insert(
                    "custom_instructions".into(),
                    Value::String(custom_instructions.clone().unwrap_or_default()),
                );
            }
            EventData::Notification { notification_type, message } => {
                object.insert("message".into(), Value::String(message.clone()));
                object.insert("title".into(), Value::String("axon".into()));
                object.insert(
                    "notification_type".into(),
                    Value::String(notification_type.name().into()),
                );
            }
            EventData::SessionEnd { reason } => {
                object.insert("reason".into(), Value::String(reason.name().into()));
            }
        }
        Value::Object(object)
    }
}
