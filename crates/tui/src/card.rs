//! One tool call in the transcript: what runs, its state, and a few lines
//! of what it returned (all of them when expanded; edits as a diff). While
//! it waits for approval it shows what it would do (its [`Preview`]: a
//! diff, a command and where it runs, an MCP call's arguments) above the
//! question, so the user decides on what will happen, not on a name.

use axon_protocol::{Preview, RuleSuggestion, ToolCall, ToolOutput};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::card_body::{output_lines, plan_lines};
use crate::steps::Steps;
use crate::theme::Theme;
use crate::wrap::{truncate, wrap};

/// Output lines a collapsed card shows.
const COLLAPSED_LINES: usize = 4;
/// Output lines an expanded card shows; a tool's whole output can be huge.
const EXPANDED_LINES: usize = 400;
/// Preview lines a collapsed card asking for approval shows: more than a
/// finished card's, since the user decides on them (a hunk's header and
/// its context lines alone would fill [`COLLAPSED_LINES`]).
const PREVIEW_LINES: usize = 12;
/// Characters of one MCP argument an expanded card shows (one argument
/// can be a whole file).
const ARGUMENT_CHARS: usize = 2_000;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, PartialEq)]
pub enum CardState {
    Running,
    Done(ToolOutput),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    pub call: ToolCall,
    /// For an MCP tool: its server and the tool's own name (boxed: a
    /// transcript entry is as large as its largest kind).
    pub server: Option<Box<(String, String)>>,
    pub state: CardState,
    /// The user is being asked whether it may run.
    pub awaiting_approval: bool,
    /// What the call would do, as computed when approval was asked
    /// (boxed: most cards have none, and every transcript entry is as
    /// large as its largest kind).
    pub preview: Option<Box<Preview>>,
    /// What answering "always" would save, when asked.
    pub rule: Option<Box<RuleSuggestion>>,
    /// What the subagent this call started has done (none for other
    /// tools; boxed as `preview` is).
    pub steps: Option<Box<Steps>>,
    /// The latest progress a running call reported, as shown.
    pub progress: Option<String>,
}

impl ToolCard {
    pub fn new(call: ToolCall, server: Option<(String, String)>) -> Self {
        ToolCard {
            call,
            server: server.map(Box::new),
            state: CardState::Running,
            awaiting_approval: false,
            preview: None,
            rule: None,
            steps: None,
            progress: None,
        }
    }

    /// Keeps the latest progress of the running call: its message, and how
    /// far it is as a percentage (or a count when the total is unknown).
    pub fn set_progress(&mut self, message: Option<&str>, progress: f64, total: Option<f64>) {
        let text = axon_protocol::progress_text(message, progress, total);
        self.progress = (!text.is_empty()).then_some(text);
    }

    /// Keeps what the call would do. An MCP preview names the server and
    /// tool for certain (a server's name may itself contain `_`, which
    /// the `mcp_{server}_{tool}` name cannot tell apart).
    pub fn set_preview(&mut self, preview: Preview) {
        if let Preview::Mcp { server, tool, .. } = &preview {
            self.server = Some(Box::new((server.clone(), tool.clone())));
        }
        self.preview = Some(Box::new(preview));
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
        let name = self.server.as_deref().map_or(self.call.name.as_str(), |(_, tool)| tool);
        let mut header = vec![
            Span::styled(format!("{icon} "), icon_style),
            Span::styled(name.to_string(), theme.bold()),
        ];
        let mut tail = Vec::new();
        if let Some(Preview::Diff { created: true, .. }) = self.preview.as_deref() {
            tail.push(Span::styled("  (new file)", theme.dim()));
        }
        if let Some((server, _)) = self.server.as_deref() {
            tail.push(Span::styled(format!("  [mcp: {server}]"), theme.accent()));
        }
        let used: usize = header.iter().chain(&tail).map(Span::width).sum();
        let room = width.saturating_sub(used + 1);
        // A question's body lists the command or arguments in full.
        let listed = self.awaiting_approval
            && matches!(
                self.preview.as_deref(),
                Some(Preview::Command { .. } | Preview::Mcp { .. })
            );
        let args = if listed { String::new() } else { key_arguments(&self.call.arguments) };
        if !args.is_empty() && room > 3 {
            header.push(Span::raw(" "));
            header.push(Span::styled(truncate(&args, room), Style::new()));
        }
        header.extend(tail);
        let mut lines = vec![Line::from(header)];
        let gutter = || vec![Span::styled("  ⎿ ", theme.dim())];
        if self.awaiting_approval {
            let body = self.preview_lines(width, theme, expanded);
            let limit = if expanded { EXPANDED_LINES } else { PREVIEW_LINES };
            let first = body.is_empty();
            push_body(&mut lines, body, limit, expanded, width, theme);
            let question = match &self.rule {
                Some(rule) => {
                    format!(
                        "Allow {name}?  [y] once  [a] always: {}  [n] deny  [t] deny, telling it \
                         what to do instead",
                        rule.always_text()
                    )
                }
                None => format!(
                    "Allow {name}?  [y] once  [n] deny  [t] deny, telling it what to do instead"
                ),
            };
            let head = if first { gutter() } else { vec![Span::raw("    ")] };
            lines.extend(wrap(
                &[Span::styled(question, theme.prompt())],
                width,
                &head,
                &[Span::raw("    ")],
            ));
            return lines;
        }
        let CardState::Done(output) = &self.state else {
            if let Some(progress) = &self.progress {
                lines.push(Line::from(vec![
                    gutter()[0].clone(),
                    Span::styled(truncate(progress, width.saturating_sub(4)), theme.dim()),
                ]));
            }
            // A running subagent shows its latest steps.
            if let Some(steps) = &self.steps {
                let limit = if expanded { EXPANDED_LINES } else { COLLAPSED_LINES };
                push_body(&mut lines, steps.lines(theme, limit), limit, expanded, width, theme);
            }
            return lines;
        };
        let body = match (output.is_error, self.call.name.as_str()) {
            (true, _) => Vec::new(),
            (false, "submit_plan") => plan_lines(&self.call.arguments, theme),
            (false, _) => self.kept_diff(theme),
        };
        let mut body = if body.is_empty() { output_lines(output, theme) } else { body };
        if let (true, Some(steps)) = (expanded, &self.steps) {
            // Expanded, a subagent's card shows its steps above its report.
            let mut steps = steps.lines(theme, EXPANDED_LINES / 2);
            steps.append(&mut body);
            body = steps;
        }
        if body.is_empty() {
            lines.push(Line::from(vec![
                gutter()[0].clone(),
                Span::styled("(no output)", theme.dim()),
            ]));
            return lines;
        }
        let limit =
            if expanded || self.call.name == "todo" { EXPANDED_LINES } else { COLLAPSED_LINES };
        push_body(&mut lines, body, limit, expanded, width, theme);
        lines
    }

    /// What the call would do, as lines (none when only its arguments are
    /// known: the header already shows them).
    fn preview_lines(&self, width: usize, theme: Theme, expanded: bool) -> Vec<Vec<Span<'static>>> {
        match self.preview.as_deref() {
            None | Some(Preview::Arguments { .. }) => Vec::new(),
            Some(Preview::Diff { diff, created, .. }) => {
                let lines = unified_diff(diff, *created, theme);
                if lines.is_empty() {
                    vec![vec![Span::styled("(no change)", theme.dim())]]
                } else {
                    lines
                }
            }
            Some(Preview::Command { command, workdir, sandbox }) => {
                let mut lines: Vec<Vec<Span<'static>>> = command
                    .lines()
                    .enumerate()
                    .map(|(n, line)| {
                        let mark = if n == 0 { "$ " } else { "  " };
                        vec![
                            Span::styled(mark, theme.dim()),
                            Span::styled(line.replace('\t', "    "), theme.bold()),
                        ]
                    })
                    .collect();
                let confined = match sandbox {
                    Some(sandbox) => format!("sandboxed: {sandbox}"),
                    None => "not sandboxed: runs with your full rights".to_string(),
                };
                lines.push(vec![Span::styled(format!("in {workdir} · {confined}"), theme.dim())]);
                lines
            }
            Some(Preview::Mcp { arguments, .. }) => {
                // Collapsed, an argument keeps to its row; expanded, it wraps.
                let room = if expanded { ARGUMENT_CHARS } else { width.saturating_sub(4) };
                argument_lines(arguments, room)
                    .into_iter()
                    .map(|line| vec![Span::raw(line)])
                    .collect()
            }
            Some(preview @ Preview::Sampling { .. }) => preview
                .sampling_text()
                .unwrap_or_default()
                .lines()
                .map(|line| vec![Span::raw(line.to_string())])
                .collect(),
            // Marked, not only coloured, so it reads as a warning without colour.
            Some(Preview::Invalid { message }) => message
                .lines()
                .enumerate()
                .map(|(n, line)| {
                    let mark = if n == 0 { "⚠ " } else { "  " };
                    let text = format!("{mark}{}", line.replace('\t', "    "));
                    vec![Span::styled(text, theme.warning())]
                })
                .collect(),
        }
    }

    /// The change a finished edit made as `-`/`+` lines, `old_str`
    /// against `new_str`: only what changed, which a collapsed card has
    /// room for (a previewed diff starts with its hunk's context).
    /// What an edit changed, once it ran: the diff its approval showed
    /// (lines whole, with the file's indentation and context) when it was
    /// asked, else its replaced and new text.
    fn kept_diff(&self, theme: Theme) -> Vec<Vec<Span<'static>>> {
        let edited = self.diff(theme);
        match self.preview.as_deref() {
            // The changed lines with one line of context each side, so a
            // collapsed card shows the change, not the hunk's context.
            Some(Preview::Diff { diff, .. }) if !edited.is_empty() => {
                unified_diff(&near_changes(diff), true, theme)
            }
            _ => edited,
        }
    }

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
            .map(|change| diff_line(change.tag(), change.value(), theme))
            .collect()
    }
}

/// One line of a diff: `- ` removed (red), `+ ` added (green), context dim.
fn diff_line(tag: ChangeTag, text: &str, theme: Theme) -> Vec<Span<'static>> {
    let (sign, style) = match tag {
        ChangeTag::Delete => ("- ", theme.removed()),
        ChangeTag::Insert => ("+ ", theme.added()),
        ChangeTag::Equal => ("  ", theme.dim()),
    };
    let text = text.trim_end_matches(['\n', '\r']).replace('\t', "    ");
    vec![Span::styled(format!("{sign}{text}"), style)]
}

/// `diff` with only its changed lines and the context line right before
/// and after each run of them (hunk headers kept, file header dropped).
fn near_changes(diff: &str) -> String {
    let lines: Vec<&str> = diff.lines().skip_while(|l| !l.starts_with("@@")).collect();
    let changed = |i: usize| lines.get(i).is_some_and(|l| l.starts_with(['+', '-']));
    let kept: Vec<&str> = (0..lines.len())
        .filter(|&i| {
            lines[i].starts_with("@@") || changed(i) || (i > 0 && changed(i - 1)) || changed(i + 1)
        })
        .map(|i| lines[i])
        .collect();
    kept.join("\n")
}

/// A unified diff's hunks styled as [`diff_line`]s; the `---`/`+++` file
/// header is left out (the card's header names the file), `@@` lines and
/// notes such as `\ No newline at end of file` are dim. A new file's one
/// `@@ -0,0 +1,N @@` says nothing the card does not, so it goes too.
fn unified_diff(diff: &str, created: bool, theme: Theme) -> Vec<Vec<Span<'static>>> {
    let mut lines = Vec::new();
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("@@") {
            in_hunk = true;
            if !created {
                lines.push(vec![Span::styled(line.to_string(), theme.dim())]);
            }
            continue;
        }
        if !in_hunk {
            // Before the first hunk: `--- a/PATH`, `+++ b/PATH` and the like.
            continue;
        }
        let line = match line.chars().next() {
            Some('-') => diff_line(ChangeTag::Delete, &line[1..], theme),
            Some('+') => diff_line(ChangeTag::Insert, &line[1..], theme),
            Some(' ') => diff_line(ChangeTag::Equal, &line[1..], theme),
            None => diff_line(ChangeTag::Equal, "", theme),
            Some(_) => vec![Span::styled(line.replace('\t', "    "), theme.dim())],
        };
        lines.push(line);
    }
    lines
}

/// Body lines under a card's header, at most `limit` of them, then how
/// many were left out.
fn push_body(
    lines: &mut Vec<Line<'static>>,
    body: Vec<Vec<Span<'static>>>,
    limit: usize,
    expanded: bool,
    width: usize,
    theme: Theme,
) {
    let gutter = [Span::styled("  ⎿ ", theme.dim())];
    let indent = [Span::raw("    ")];
    let hidden = body.len().saturating_sub(limit);
    for (n, spans) in body.into_iter().take(limit).enumerate() {
        let first: &[Span<'static>] = if n == 0 { &gutter } else { &indent };
        lines.extend(wrap(&spans, width, first, &indent));
    }
    if hidden > 0 {
        let more = if expanded {
            format!("… {hidden} more lines not shown")
        } else {
            format!("… {hidden} more lines (Ctrl-O expands)")
        };
        lines.push(Line::from(vec![Span::raw("    "), Span::styled(more, theme.dim())]));
    }
}

/// An MCP call's arguments, compactly: `key: value` a line (values as
/// one-line JSON), each at most `room` columns.
fn argument_lines(arguments: &Value, room: usize) -> Vec<String> {
    match arguments {
        Value::Object(map) if map.is_empty() => vec!["(no arguments)".to_string()],
        Value::Object(map) => {
            map.iter().map(|(key, value)| truncate(&format!("{key}: {value}"), room)).collect()
        }
        other => vec![truncate(&other.to_string(), room)],
    }
}

/// What identifies a call at a glance: the command, path or pattern, else
/// `key=value` pairs, on one line.
pub fn key_arguments(arguments: &Value) -> String {
    let Value::Object(map) = arguments else { return String::new() };
    // A plan is listed in the card's body, not as JSON here.
    if let Some(Value::Array(steps)) = map.get("steps")
        && map.len() == 1
    {
        return format!("{} step{}", steps.len(), if steps.len() == 1 { "" } else { "s" });
    }
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
