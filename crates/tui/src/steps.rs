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

#[cfg(test)]
mod tests {
    use axon_protocol::{ToolCall, ToolOutput};
    use serde_json::json;

    use crate::card::{CardState, ToolCard};
    use crate::theme::Theme;

    fn text(card: &ToolCard, expanded: bool) -> Vec<String> {
        card.render(80, Theme::PLAIN, expanded, 0)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect()
    }

    #[test]
    fn a_running_subagent_shows_its_latest_steps_then_its_report() {
        let call = |id: &str, name: &str, args| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
        };
        let mut card = ToolCard::new(call("c1", "agent_alpha", json!({"task": "look"})), None);
        let steps = card.steps.get_or_insert_default();
        let read = call("s1", "read_file", json!({"path": "a.rs"}));
        steps.push(
            "alpha",
            &axon_protocol::AgentEvent::Action { call: read, refused: false, preview: None },
        );
        steps.push(
            "alpha",
            &axon_protocol::AgentEvent::Observation {
                call_id: "s1".into(),
                name: "read_file".into(),
                output: ToolOutput::text("x"),
            },
        );
        let glob = call("s1", "glob", json!({"pattern": "*.rs"}));
        steps.push(
            "alpha",
            &axon_protocol::AgentEvent::Subagent {
                call_id: "s2".into(),
                agent: "inner".into(),
                event: Box::new(axon_protocol::AgentEvent::Action {
                    call: glob,
                    refused: false,
                    preview: None,
                }),
            },
        );
        let running = text(&card, false);
        assert!(running[1].ends_with("✓ alpha: read_file a.rs"), "{running:?}");
        assert!(running[2].ends_with("· alpha › inner: glob *.rs"), "{running:?}");

        card.state = CardState::Done(ToolOutput::text("the report"));
        let done = text(&card, false);
        assert_eq!(done.len(), 2, "{done:?}");
        assert!(done[1].ends_with("the report"));
        let expanded = text(&card, true);
        assert_eq!(expanded.len(), 4, "{expanded:?}");
    }
}
