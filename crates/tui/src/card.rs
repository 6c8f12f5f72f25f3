//! One tool call in the transcript: what runs, its state, and a few lines
//! of what it returned (all of them when expanded; edits as a diff).

use axon_protocol::{ToolCall, ToolOutput};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::theme::Theme;
use crate::wrap::{truncate, wrap};

/// Output lines a collapsed card shows.
const COLLAPSED_LINES: usize = 4;
/// Output lines an expanded card shows; a tool's whole output can be huge.
const EXPANDED_LINES: usize = 400;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, PartialEq)]
pub enum CardState {
    Running,
    Done(ToolOutput),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    pub call: ToolCall,
    /// For an MCP tool: its server and the tool's own name.
    pub server: Option<(String, String)>,
    pub state: CardState,
    /// The user is being asked whether it may run.
    pub awaiting_approval: bool,
}

impl ToolCard {
    pub fn new(call: ToolCall, server: Option<(String, String)>) -> Self {
        ToolCard { call, server, state: CardState::Running, awaiting_approval: false }
    }

    pub fn is_running(&self) -> bool {
        self.state == CardState::Running
    }

    pub fn render(
        &self,
        width: usize,
        theme: Theme,
        expanded: bool,
        tick: u64,
    ) -> Vec<Line<'static>> {
        let (icon, icon_style) = match &self.state {
            _ if self.awaiting_approval => ("?", theme.warning().add_modifier(Modifier::BOLD)),
            CardState::Running => (SPINNER[(tick % 10) as usize], theme.accent()),
            CardState::Done(output) if output.is_error => ("✗", theme.error()),
            CardState::Done(_) => ("✓", theme.ok()),
        };
        let name = self.server.as_ref().map_or(self.call.name.as_str(), |(_, tool)| tool);
        let mut header = vec![
            Span::styled(format!("{icon} "), icon_style),
            Span::styled(name.to_string(), theme.bold()),
        ];
        let mut tail = Vec::new();
        if let Some((server, _)) = &self.server {
            tail.push(Span::styled(format!("  [mcp: {server}]"), theme.accent()));
        }
        let used: usize = header.iter().chain(&tail).map(Span::width).sum();
        let room = width.saturating_sub(used + 1);
        let args = key_arguments(&self.call.arguments);
        if !args.is_empty() && room > 3 {
            header.push(Span::raw(" "));
            header.push(Span::styled(truncate(&args, room), Style::new()));
        }
        header.extend(tail);
        let mut lines = vec![Line::from(header)];
        let gutter = || vec![Span::styled("  ⎿ ", theme.dim())];
        let indent = || vec![Span::raw("    ")];
        if self.awaiting_approval {
            let question = format!("Allow {name}?  [y] once  [a] always this session  [n] deny");
            lines.extend(wrap(
                &[Span::styled(question, theme.prompt())],
                width,
                &gutter(),
                &indent(),
            ));
            return lines;
        }
        let CardState::Done(output) = &self.state else { return lines };
        let body = if output.is_error { Vec::new() } else { self.diff(theme) };
        let body = if body.is_empty() { output_lines(output, theme) } else { body };
        if body.is_empty() {
            lines.push(Line::from(vec![
                gutter()[0].clone(),
                Span::styled("(no output)", theme.dim()),
            ]));
            return lines;
        }
        let limit =
            if expanded || self.call.name == "todo" { EXPANDED_LINES } else { COLLAPSED_LINES };
        let hidden = body.len().saturating_sub(limit);
        for (n, spans) in body.into_iter().take(limit).enumerate() {
            let first = if n == 0 { gutter() } else { indent() };
            lines.extend(wrap(&spans, width, &first, &indent()));
        }
        if hidden > 0 {
            let more = if expanded {
                format!("… {hidden} more lines not shown")
            } else {
                format!("… {hidden} more lines (Ctrl-O expands)")
            };
            lines.push(Line::from(vec![Span::raw("    "), Span::styled(more, theme.dim())]));
        }
        lines
    }

    /// An edit as `-`/`+` lines.
    fn diff(&self, theme: Theme) -> Vec<Vec<Span<'static>>> {
        let args = &self.call.arguments;
        let (Some(old), Some(new)) = (
            args.get("old_str").and_then(Value::as_str),
            args.get("new_str").and_then(Value::as_str),
        ) else {
            return Vec::new();
        };
        TextDiff::from_lines(old, new)
            .iter_all_changes()
            .map(|change| {
                let (sign, style) = match change.tag() {
                    ChangeTag::Delete => ("- ", theme.removed()),
                    ChangeTag::Insert => ("+ ", theme.added()),
                    ChangeTag::Equal => ("  ", theme.dim()),
                };
                let text = change.value().trim_end_matches(['\n', '\r']).replace('\t', "    ");
                vec![Span::styled(format!("{sign}{text}"), style)]
            })
            .collect()
    }
}

fn output_lines(output: &ToolOutput, theme: Theme) -> Vec<Vec<Span<'static>>> {
    let style = if output.is_error { theme.error() } else { Style::new() };
    let text = output.text_content();
    let mut lines: Vec<Vec<Span<'static>>> =
        text.lines().map(|l| vec![Span::styled(l.replace('\t', "    "), style)]).collect();
    while lines.last().is_some_and(|l| l.iter().all(|s| s.content.trim().is_empty())) {
        lines.pop();
    }
    let media = output.content.iter().filter(|p| p.as_text().is_none()).count();
    if media > 0 {
        lines.push(vec![Span::styled(format!("[{media} non-text part(s)]"), theme.dim())]);
    }
    lines
}

/// What identifies a call at a glance: the command, path or pattern, else
/// `key=value` pairs, on one line.
pub fn key_arguments(arguments: &Value) -> String {
    let Value::Object(map) = arguments else { return String::new() };
    let one_line = |v: &Value| match v {
        Value::String(s) => s.lines().next().unwrap_or("").to_string(),
        other => other.to_string(),
    };
    for key in ["command", "path", "pattern", "query", "url", "file", "name"] {
        if let Some(value) = map.get(key) {
            let mut shown = one_line(value);
            if key == "pattern"
                && let Some(path) = map.get("path")
            {
                shown = format!("{shown} in {}", one_line(path));
            }
            return shown;
        }
    }
    map.iter().map(|(k, v)| format!("{k}={}", one_line(v))).collect::<Vec<_>>().join(" ")
}
