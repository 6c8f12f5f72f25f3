//! The Task Manager's vocabulary, as `docs/openapi.yaml` defines it, and the
//! uniform reply every nova-sync tool gives.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A step's status. Anything else is refused with the seed's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Running,
    Completed,
    Failed,
    Skipped,
}

impl StepStatus {
    pub const ALL: [StepStatus; 4] =
        [StepStatus::Running, StepStatus::Completed, StepStatus::Failed, StepStatus::Skipped];

    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Running => "running",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
        }
    }

    /// Parses a status exactly as written (`running`, …).
    pub fn parse(text: &str) -> Result<Self, String> {
        StepStatus::ALL.into_iter().find(|s| s.as_str() == text).ok_or_else(|| {
            format!("Invalid status '{text}'. Must be one of: running, completed, failed, skipped")
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    pub execution_id: String,
    pub session_id: Option<String>,
    pub worktree_path: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub step_id: String,
    pub execution_id: String,
    pub step_name: String,
    pub message: Option<String>,
    pub status: StepStatus,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecutionPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCreate {
    pub step_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StepStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StepStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The API's error body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub error_code: String,
}

/// What every client call and every tool answers: `{success: true,
/// message, data}` or `{success: false, error, error_code?, status_code?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply(pub Value);

impl Reply {
    pub fn ok(message: impl Into<String>, data: Value) -> Self {
        Reply(json!({"success": true, "message": message.into(), "data": data}))
    }

    pub fn err(error: impl Into<String>) -> Self {
        Reply(json!({"success": false, "error": error.into()}))
    }

    pub fn api_err(error: impl Into<String>, error_code: Option<String>, status_code: u16) -> Self {
        let mut body = json!({"success": false, "error": error.into(), "status_code": status_code});
        if let Some(code) = error_code {
            body["error_code"] = Value::from(code);
        }
        Reply(body)
    }

    pub fn is_success(&self) -> bool {
        self.0["success"] == true
    }
}

/// RFC 3339 UTC time with milliseconds, as the API writes times.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
