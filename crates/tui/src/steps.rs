//! What a subagent started by a tool call has done, shown in that call's
//! card: one line per tool call it made (running, done or failed) and per
//! warning, nested subagents' steps prefixed with their names. Its tokens
//! and thoughts are not shown: its report is the card's result.

use axon_protocol::AgentEvent;
use ratatui::text::Span;

use crate::card::key_arguments;
use crate::theme::Theme;

/// Steps kept per card; older ones are counted, not kept.
const MAX_STEPS: usize = 200;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Steps {
    steps: Vec<Step>,
    /// Steps dropped to stay within [`MAX_STEPS`].
    dropped: usize,
}

#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// The subagent's call id, for its observation to find it.
    call_id: Option<String>,
    text: String,
    state: StepState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepState {
    Running,
    Done,
    Failed,
    Note,
}

impl Steps {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// One event of the subagent `agent`; `path` names the subagents
    /// above it (`outer › inner`) for nested ones.
    pub fn push(&mut self, path: &str, event: &AgentEvent) {
        match event {
            AgentEvent::Subagent { agent, event, .. } => {
                self.push(&format!("{path} › {agent}"), event);
            }
            AgentEvent::Action { call, refused, .. } => {
                let args = key_arguments(&call.arguments);
                let text = format!("{path}: {} {args}", call.name).trim_end().to_string();
                let state = if *refused { StepState::Failed } else { StepState::Running };
                self.add(Step { call_id: Some(format!("{path}/{}", call.id)), text, state });
            }
            AgentEvent::Observation { call_id, output, .. } => {
                let id = format!("{path}/{call_id}");
                if let Some(step) =
                    self.steps.iter_mut().rev().find(|s| s.call_id.as_deref() == Some(&id))
                {
                    step.state = if output.is_error { StepState::Failed } else { StepState::Done };
                }
            }
            AgentEvent::Info { message }
            | AgentEvent::Warning { message }
            | AgentEvent::Error { message } => {
                let text = format!("{path}: {message}");
                self.add(Step { call_id: None, text, state: StepState::Note });
            }
            _ => {}
        }
    }

    fn add(&mut self, step: Step) {
        if self.steps.len() == MAX_STEPS {
            self.steps.remove(0);
            self.dropped += 1;
        }
        self.steps.push(step);
    }

    /// The last `limit` steps as lines, after a count of those left out.
    pub fn lines(&self, theme: Theme, limit: usize) -> Vec<Vec<Span<'static>>> {
        let shown = self.steps.len().min(limit);
        let hidden = self.dropped + self.steps.len() - shown;
        let mut lines = Vec::new();
        if hidden > 0 {
            lines.push(vec![Span::styled(format!("… {hidden} earlier steps"), theme.dim())]);
        }
        for step in &self.steps[self.steps.len() - shown..] {
            let (mark, style) = match step.state {
                StepState::Running => ("· ", theme.accent()),
                StepState::Done => ("✓ ", theme.ok()),
                StepState::Failed => ("✗ ", theme.error()),
                StepState::Note => ("  ", theme.dim()),
            };
            lines.push(vec![
                Span::styled(mark, style),
                Span::styled(step.text.replace('\t', "    "), theme.dim()),
            ]);
        }
        lines
    }
}
