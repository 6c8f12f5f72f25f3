//! Operations a front end sends a session: the only way in.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::Plan;

/// How a prompt is handled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Reason and act: the agent works on it at once.
    #[default]
    React,
    /// Propose a plan first (read-only tools), run it once approved.
    Plan,
}

/// Which tool calls that change files or run commands may run (those that
/// only read always do).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Each one waits for the user's `approve`.
    #[default]
    Ask,
    /// They run.
    Auto,
    /// They are refused (and not offered to the model).
    ReadOnly,
}

/// Something sent along with a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Attachment {
    /// A file of the workspace, read and quoted into the prompt.
    File { path: String },
    /// Text the front end already has (an editor's buffer, a selection).
    Text {
        /// What it is, e.g. the file it came from.
        name: String,
        text: String,
    },
    /// Base64-encoded image data.
    Image { media_type: String, data: String },
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Once,
    /// Run this call, and save the request's suggested `rule` in the
    /// workspace's trust file so that calls it covers run without asking
    /// (in this session and later ones). Without a suggested rule, the same
    /// as `once`.
    Always,
    /// Do not run it; `reason` is told to the model.
    Deny {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Do not run it, and refuse this tool without asking for the rest of
    /// the session, whatever the approval mode; `reason` is told to the model.
    Never {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// How the user answered an MCP server's form (`elicitation/create`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ElicitAction {
    /// Submitted, with the form's content.
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One request to a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The user's prompt, handled in the session's mode.
    UserTurn {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
    },
    /// Answers the approval request for `call_id`.
    Approve {
        call_id: String,
        decision: ApprovalDecision,
    },
    /// Answers the form `elicitation` `id` asked for; `content` (the
    /// fields, by name) goes with `accept`.
    Elicit {
        id: String,
        action: ElicitAction,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// Stops the turn running now; what was said so far is kept.
    Cancel,
    SetMode {
        mode: Mode,
    },
    /// Another approval mode from the next tool call on. Switching to
    /// `ask` in a session no one answers refuses such calls instead.
    SetApproval {
        approval: ApprovalMode,
    },
    /// Runs the plan waiting for approval.
    ApprovePlan,
    /// Replaces the plan waiting for approval; it waits again.
    EditPlan {
        plan: Plan,
    },
    /// Sets the waiting plan aside (it stays saved in the session).
    RejectPlan,
    /// Summarises the oldest part of the conversation.
    Compact,
    /// Another model of the same provider from the next turn on.
    SwitchModel {
        model: String,
    },
    /// Lists the session's background commands (`background_commands`).
    ListBackground,
    /// A new conversation: nothing said before is sent again.
    NewConversation,
    /// Continues a saved session of this workspace (`None`: the latest).
    Resume {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Goes back to just before turn `turn` of the saved session (`None`:
    /// the latest turn, undoing it): its files from the checkpoint taken
    /// before that turn changed them, its conversation, or both.
    Rewind {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        #[serde(default)]
        scope: RewindScope,
    },
    /// Ends the session: MCP servers are closed, the event stream ends.
    Shutdown,
}

/// What a rewind goes back on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// Files and conversation.
    #[default]
    Both,
    /// The files only; the conversation goes on.
    Files,
    /// The conversation only; the files stay.
    Conversation,
}
