//! A saved session as an ATIF trajectory (Agent Trajectory Interchange
//! Format), the record Harbor and other agent harnesses read.
//!
//! Writes [`ATIF_VERSION`], `ATIF-v1.8`, the newest schema Harbor 0.25
//! validates (`harbor.utils.trajectory_validator`, whose check the cli's
//! tests run on what axon writes). What a trajectory holds:
//! - each user message is a `user` step; each assistant reply an `agent`
//!   step with its text as `message`, its thinking as `reasoning_content`,
//!   its tool calls (`tool_call_id`, `function_name`, `arguments`) and the
//!   tools' results as its `observation`, each result matched to its call
//!   by id (`source_call_id`; a refused or failed call says so in the
//!   result's `extra`); system messages and compaction summaries are
//!   `system` steps; a result whose call is not in the file (its line was
//!   damaged) is a `system` step's observation without a `source_call_id`.
//! - step ids run 1, 2, 3…; timestamps are the messages' own, where the
//!   session recorded them, as ISO 8601 in UTC.
//! - usage: a session file records one `usage` record per model call, as
//!   the provider reported it, written before that call's reply. So an
//!   agent step's `metrics` are exactly its model call's tokens
//!   (`prompt_tokens` including cached ones, `completion_tokens`,
//!   `cached_tokens`; reasoning tokens in `extra`), summed over the calls
//!   when a retried call reported twice (`llm_call_count` says how many);
//!   a step without a usage record has no `metrics` (a provider that does
//!   not report usage). `final_metrics` totals every usage record of the
//!   session, including calls that have no step (a compaction's summary, a
//!   call that failed before replying), which its `extra` counts apart.
//! - messages a rewind took back stay in the trajectory (they happened and
//!   cost tokens), each step marked `extra.undone_by_rewind`.
//! - images and audio are not copied out: the message says one was there,
//!   and for an image names its sha256 and its file beside the session
//!   file (`<id>.images/<sha256>.<ext>`), so a reader can find it.
//!
//! A damaged session exports what loading could read: [`AtifExport`]
//! carries the loader's account of every line it skipped, for the caller
//! to show.

use std::collections::HashMap;

use axon_protocol::{ContentPart, Message, Role, ToolCall, Usage, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::record::Record;
use crate::store::Session;

/// The ATIF schema version written.
pub const ATIF_VERSION: &str = "ATIF-v1.8";

/// The root of an ATIF document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub schema_version: String,
    pub session_id: String,
    pub agent: AgentInfo,
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_metrics: Option<FinalMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// Which agent made the trajectory, and its default model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// Who a step came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    System,
    User,
    Agent,
}

/// One step: a message of the conversation, with what an agent step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub step_id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub source: StepSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<StepToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<StepMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_call_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// A tool call an agent step asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    /// Always an object; arguments that were not one are in `extra`.
    pub arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// What the environment answered a step's tool calls with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub results: Vec<ObservationResult>,
}

/// One tool result, naming the call it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// Tokens of the model call(s) behind one agent step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Every input token, cached ones included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The part of `prompt_tokens` served from the provider's cache.
    pub cached_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// Totals over the whole session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalMetrics {
    pub total_prompt_tokens: u64,
    pub total_completion_tokens: u64,
    pub total_cached_tokens: u64,
    pub total_steps: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// A trajectory with what loading the session had to skip.
#[derive(Debug, Clone, PartialEq)]
pub struct AtifExport {
    pub trajectory: Trajectory,
    /// One sentence per line of the session file that could not be read
    /// (naming the file and the line); empty for a sound file.
    pub skipped: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AtifError {
    #[error(
        "session {id} ({path}) has no readable message, and an ATIF trajectory needs at least \
         one step; `axon sessions show {id}` shows what the file holds"
    )]
    NoSteps { id: String, path: String },
}

/// Converts a loaded session to an ATIF trajectory; `agent_version` is the
/// axon version to name as the agent's.
pub fn to_atif(session: &Session, agent_version: &str) -> Result<AtifExport, AtifError> {
    let mut builder = Builder::new(session);
    let undone = session.undone_messages();
    let mut index = 0;
    for record in &session.records {
        match record {
            Record::Message { message, .. } => {
                let taken_back = undone.get(index).copied().unwrap_or(false);
                index += 1;
                builder.message(message, taken_back);
            }
            Record::Usage { usage } => builder.pending.push(*usage),
            Record::Model { provider, model, .. } => {
                builder.provider = provider.clone();
                builder.model = model.clone();
            }
            Record::Compaction { summary, .. } => builder.compaction(summary),
            Record::TurnFailed { .. } => builder.unattributed_usage(),
            _ => {}
        }
    }
    builder.unattributed_usage();
    let header = &session.header;
    if builder.steps.is_empty() {
        return Err(AtifError::NoSteps {
            id: header.id.clone(),
            path: session.path.display().to_string(),
        });
    }
    let total = session.usage();
    let mut final_extra = Map::new();
    final_extra.insert("total_reasoning_tokens".into(), total.reasoning_tokens.into());
    if builder.unattributed != Usage::default() {
        final_extra.insert("usage_without_step".into(), usage_json(&builder.unattributed));
    }
    let mut agent_extra = Map::new();
    agent_extra.insert("provider".into(), header.provider.clone().into());
    let mut extra = Map::new();
    extra.insert("title".into(), header.title.clone().into());
    extra.insert("workspace".into(), header.workspace.clone().into());
    if let Some(created) = iso8601(header.created_at) {
        extra.insert("created_at".into(), created.into());
    }
    let total_steps = builder.steps.len() as u64;
    let trajectory = Trajectory {
        schema_version: ATIF_VERSION.to_string(),
        session_id: header.id.clone(),
        agent: AgentInfo {
            name: "axon".into(),
            version: agent_version.to_string(),
            model_name: (!header.model.is_empty()).then(|| header.model.clone()),
            extra: Some(agent_extra),
        },
        steps: builder.steps,
        notes: (!session.warnings.is_empty()).then(|| {
            format!("Exported from a damaged session file: {}", session.warnings.join("; "))
        }),
        final_metrics: Some(FinalMetrics {
            total_prompt_tokens: total.input_tokens,
            total_completion_tokens: total.output_tokens,
            total_cached_tokens: total.cached_input_tokens,
            total_steps,
            extra: Some(final_extra),
        }),
        extra: Some(extra),
    };
    Ok(AtifExport { trajectory, skipped: session.warnings.clone() })
}

/// The trajectory as pretty JSON.
pub fn atif_json(trajectory: &Trajectory) -> String {
    serde_json::to_string_pretty(trajectory).unwrap_or_default()
}

struct Builder {
    steps: Vec<Step>,
    /// Tool call id to the index of the step that made the call.
    calls: HashMap<String, usize>,
    /// Usage records since the last reply: the next reply's model call(s).
    pending: Vec<Usage>,
    /// Usage of calls no step stands for.
    unattributed: Usage,
    provider: String,
    model: String,
}

impl Builder {
    fn new(session: &Session) -> Self {
        Builder {
            steps: Vec::new(),
            calls: HashMap::new(),
            pending: Vec::new(),
            unattributed: Usage::default(),
            provider: session.header.provider.clone(),
            model: session.header.model.clone(),
        }
    }

    fn push(&mut self, source: StepSource, message: String, at: Option<i64>) -> &mut Step {
        let step_id = u32::try_from(self.steps.len() + 1).unwrap_or(u32::MAX);
        self.steps.push(Step {
            step_id,
            timestamp: at.and_then(iso8601),
            source,
            model_name: None,
            message,
            reasoning_content: None,
            tool_calls: None,
            observation: None,
            metrics: None,
            llm_call_count: None,
            extra: None,
        });
        let last = self.steps.len() - 1;
        &mut self.steps[last]
    }

    fn message(&mut self, message: &Message, undone: bool) {
        let index = self.steps.len();
        match message.role {
            Role::User => {
                self.unattributed_usage();
                self.push(StepSource::User, content_text(&message.content), message.timestamp_ms);
            }
            Role::System => {
                self.push(StepSource::System, content_text(&message.content), message.timestamp_ms);
            }
            Role::Assistant => self.reply(message),
            Role::Tool => {
                // Usage not yet claimed by a reply was a call whose reply is
                // missing: results follow the reply of their calls.
                self.unattributed_usage();
                self.tool_result(message);
                return;
            }
        }
        if undone && let Some(step) = self.steps.get_mut(index) {
            step.extra.get_or_insert_with(Map::new).insert("undone_by_rewind".into(), true.into());
        }
    }

    fn reply(&mut self, message: &Message) {
        let usage = std::mem::take(&mut self.pending);
        let model = self.model.clone();
        let provider = self.provider.clone();
        let index = self.steps.len();
        let step =
            self.push(StepSource::Agent, content_text(&message.content), message.timestamp_ms);
        step.model_name = Some(model);
        let reasoning: Vec<&str> = message
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Thinking { text, .. } if !text.trim().is_empty() => {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect();
        if !reasoning.is_empty() {
            step.reasoning_content = Some(reasoning.join("\n\n"));
        }
        if !message.tool_calls.is_empty() {
            step.tool_calls = Some(message.tool_calls.iter().map(tool_call).collect());
        }
        if !usage.is_empty() {
            let mut sum = Usage::default();
            usage.iter().for_each(|u| sum.add(u));
            let mut extra = Map::new();
            extra.insert("reasoning_tokens".into(), sum.reasoning_tokens.into());
            step.metrics = Some(StepMetrics {
                prompt_tokens: sum.input_tokens,
                completion_tokens: sum.output_tokens,
                cached_tokens: sum.cached_input_tokens,
                extra: Some(extra),
            });
            step.llm_call_count = u32::try_from(usage.len()).ok();
        }
        step.extra.get_or_insert_with(Map::new).insert("provider".into(), provider.into());
        for call in &message.tool_calls {
            self.calls.insert(call.id.clone(), index);
        }
    }

    fn tool_result(&mut self, message: &Message) {
        let id = message.tool_call_id.clone().unwrap_or_default();
        let mut extra = Map::new();
        if message.is_error {
            extra.insert("is_error".into(), true.into());
        }
        if message.refused {
            extra.insert("refused".into(), true.into());
        }
        let content = Some(content_text(&message.content));
        let found = self.calls.get(&id).copied().and_then(|i| self.steps.get_mut(i));
        let (step, result) = match found {
            Some(step) => (
                step,
                ObservationResult {
                    source_call_id: Some(id),
                    content,
                    extra: (!extra.is_empty()).then_some(extra),
                },
            ),
            None => {
                // The call is not in the file (its line was unreadable): the
                // result stands alone, naming the id it answered.
                extra.insert("tool_call_id".into(), id.into());
                let note = "A tool result whose call is missing from the session file".to_string();
                let step = self.push(StepSource::System, note, message.timestamp_ms);
                (step, ObservationResult { source_call_id: None, content, extra: Some(extra) })
            }
        };
        step.observation
            .get_or_insert_with(|| Observation { results: Vec::new() })
            .results
            .push(result);
    }

    fn compaction(&mut self, summary: &str) {
        let usage = std::mem::take(&mut self.pending);
        let mut sum = Usage::default();
        usage.iter().for_each(|u| sum.add(u));
        self.unattributed.add(&sum);
        let text = format!(
            "The conversation so far was compacted; the model went on from this summary:\n\n{summary}"
        );
        let step = self.push(StepSource::System, text, None);
        let mut extra = Map::new();
        extra.insert("compaction".into(), true.into());
        if !usage.is_empty() {
            extra.insert("usage".into(), usage_json(&sum));
        }
        step.extra = Some(extra);
    }

    /// Usage records no reply followed (a failed call): counted in the
    /// totals only.
    fn unattributed_usage(&mut self) {
        for usage in std::mem::take(&mut self.pending) {
            self.unattributed.add(&usage);
        }
    }
}

fn tool_call(call: &ToolCall) -> StepToolCall {
    let (arguments, extra) = match &call.arguments {
        Value::Object(map) => (map.clone(), None),
        other => {
            let mut extra = Map::new();
            extra.insert("raw_arguments".into(), other.clone());
            (Map::new(), Some(extra))
        }
    };
    StepToolCall {
        tool_call_id: call.id.clone(),
        function_name: call.name.clone(),
        arguments,
        extra,
    }
}

/// A message's text; images and audio leave a note in their place.
fn content_text(content: &[ContentPart]) -> String {
    let mut out = String::new();
    for part in content {
        match part {
            ContentPart::Text { text } => out.push_str(text),
            ContentPart::Image { media_type, data } => match crate::images::sha256_of(data) {
                Some(sha256) => out.push_str(&format!(
                    "[{media_type} image, not exported: sha256 {sha256}, kept beside the \
                     session file as <id>.images/{sha256}.{}]",
                    crate::images::extension(media_type)
                )),
                None => out.push_str(&format!("[{media_type} content, not exported]")),
            },
            ContentPart::Audio { media_type, .. } => {
                out.push_str(&format!("[{media_type} content, not exported]"));
            }
            ContentPart::Thinking { .. } => {}
        }
    }
    out
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_input_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    })
}

/// `2026-11-27T22:12:04.123Z`; `None` outside the years ISO 8601's basic
/// form (and Python's `fromisoformat`) can hold.
fn iso8601(ms: i64) -> Option<String> {
    let Utc { year, month, day, hour, minute, second } = Utc::from_ms(ms);
    if !(1..=9999).contains(&year) {
        return None;
    }
    let millis = ms.rem_euclid(1000);
    Some(format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(iso8601(1_795_817_524_123).as_deref(), Some("2026-11-27T22:12:04.123Z"));
        assert_eq!(iso8601(i64::MAX / 2), None);
    }

    #[test]
    fn arguments_that_are_not_an_object_go_to_extra() {
        let call = ToolCall { id: "c".into(), name: "f".into(), arguments: json!("raw") };
        let converted = tool_call(&call);
        assert!(converted.arguments.is_empty());
        assert_eq!(
            converted.extra.and_then(|e| e.get("raw_arguments").cloned()),
            Some(json!("raw"))
        );
    }
}
