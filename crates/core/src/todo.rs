//! `todo`: the model's visible checklist for multi-step work in normal
//! mode. Each call sends the whole list (so the list can never drift from
//! what the model believes); at most one item is in progress.

use axon_protocol::{ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What to do, in a few words.
    pub content: String,
    pub status: TodoStatus,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoArgs {
    /// The whole checklist, in order. It replaces the previous one.
    pub items: Vec<TodoItem>,
}

pub struct Todo;

impl TypedTool for Todo {
    type Args = TodoArgs;
    const NAME: &'static str = "todo";

    fn description(&self) -> String {
        "Keep a checklist for work of three or more steps, visible to the user. Send the whole \
         list each time, with each item pending, in_progress or completed; mark an item \
         in_progress before starting it (at most one at a time) and completed as soon as it is \
         done."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations { read_only: true, destructive: false, idempotent: true }
    }

    async fn run(&self, _ctx: &ToolContext, args: TodoArgs) -> Result<ToolOutput, ToolError> {
        let invalid =
            |details: String| ToolError::InvalidParams { tool: Self::NAME.into(), details };
        if let Some(n) = args.items.iter().position(|i| i.content.trim().is_empty()) {
            return Err(invalid(format!("field 'items.{n}.content' is empty")));
        }
        let running = args.items.iter().filter(|i| i.status == TodoStatus::InProgress).count();
        if running > 1 {
            return Err(invalid(format!(
                "{running} items are in_progress; keep exactly one in progress at a time"
            )));
        }
        Ok(ToolOutput::text(render(&args.items)))
    }
}

/// The checklist as the user sees it, one item a line.
pub fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "(the checklist is empty)".to_string();
    }
    let done = items.iter().filter(|i| i.status == TodoStatus::Completed).count();
    let mut out = format!("Checklist ({done}/{} done):", items.len());
    for item in items {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("\n{mark} {}", item.content.trim()));
    }
    out
}
