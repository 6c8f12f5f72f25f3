//! Drawing one frame: transcript, working line, plan panel, completion
//! popup, input and status line, from the bottom up so the input never
//! leaves the screen however small the terminal.

use axon_protocol::{PlanStatus, StepStatus};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::{App, Mode, PlanPanel};
use crate::wrap::{truncate, width as text_width, wrap};

/// The input shows at most this many rows (it scrolls past that).
const MAX_INPUT_ROWS: usize = 8;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let area = frame.area();
    let width = usize::from(area.width);
    let (rows, cursor) = app.input.layout(width.saturating_sub(2));
    let input_height = rows.len().clamp(1, MAX_INPUT_ROWS) + 1;
    let form = app.forms.front().map(|f| f.lines(width.saturating_sub(2), app.theme));
    // A form waiting for the user takes the plan panel's place.
    let plan_height = match &form {
        // The whole form if it fits, leaving the input and status lines.
        Some(lines) => (lines.len() + 2).min(usize::from(area.height).saturating_sub(5)).max(3),
        None => app.plan.as_ref().map_or(0, |p| (p.plan.steps.len() + 2).min(12)),
    };
    let working = usize::from(app.busy.is_some());
    let hint = usize::from(app.hint.is_some());
    let chips = usize::from(!app.images.is_empty());
    let [transcript, working_area, plan_area, chips_area, input_area, hint_area, status_area] =
        Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(to_u16(working)),
            Constraint::Length(to_u16(plan_height)),
            Constraint::Length(to_u16(chips)),
            Constraint::Length(to_u16(input_height)),
            Constraint::Length(to_u16(hint)),
            Constraint::Length(1),
        ])
        .areas(area);
    draw_transcript(frame, app, transcript);
    if working == 1 {
        draw_working(frame, app, working_area);
    }
    match (form, app.forms.front(), &app.plan) {
        (Some(lines), Some(form), _) => draw_form(frame, app, &form.server, lines, plan_area),
        (_, _, Some(panel)) => draw_plan(frame, app, panel, plan_area),
        _ => {}
    }
    if chips == 1 {
        draw_images(frame, app, chips_area);
    }
    draw_input(frame, app, input_area, &rows, cursor);
    if let Some(hint) = &app.hint {
        let line = Line::from(Span::styled(truncate(hint, width), app.theme.warning()));
        frame.render_widget(Paragraph::new(line), hint_area);
    }
    draw_status(frame, app, status_area);
    draw_completion(frame, app, input_area);
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn draw_transcript(frame: &mut Frame<'_>, app: &mut App, area: Rect) {
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    let total = app.transcript.line_count(width);
    // A view scrolled up stays on the same lines while more arrive below.
    if app.scroll > 0 && total > app.last_total {
        app.scroll += total - app.last_total;
    }
    app.scroll = app.scroll.min(total.saturating_sub(height));
    app.last_total = total;
    app.page = height;
    let lines = app.transcript.visible(width, height, app.scroll);
    frame.render_widget(Paragraph::new(lines), area);
    if app.scroll > 0 {
        let note = format!(" ↓ {} more lines (PageDown, Esc) ", app.scroll);
        let note = truncate(&note, width);
        let x = area.x + area.width.saturating_sub(to_u16(text_width(&note)));
        let spot = Rect {
            x,
            y: area.y + area.height.saturating_sub(1),
            width: to_u16(text_width(&note)),
            height: 1,
        };
        frame.render_widget(Paragraph::new(Span::styled(note, app.theme.selected())), spot);
    }
}

fn draw_working(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(since) = app.busy else { return };
    let spinner = SPINNER[(app.transcript.tick % 10) as usize];
    let waiting =
        if app.awaiting_approval().is_some() { " · waiting for your answer" } else { "" };
    let text = format!("{spinner} Working… {}s{waiting} · Esc stops", since.elapsed().as_secs());
    let line =
        Line::from(Span::styled(truncate(&text, usize::from(area.width)), app.theme.accent()));
    frame.render_widget(Paragraph::new(line), area);
}

/// A server's form: its lines in a box naming the server, keys below.
fn draw_form(
    frame: &mut Frame<'_>,
    app: &App,
    server: &str,
    lines: Vec<Line<'static>>,
    area: Rect,
) {
    let theme = app.theme;
    let inner = usize::from(area.width.saturating_sub(2));
    let title = truncate(&format!(" MCP server {server} asks "), inner);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.dim())
        .title(Span::styled(title, theme.bold()))
        .title_bottom(Span::styled(
            " [Tab] next field  [Enter] submit  [Esc] decline ",
            theme.prompt(),
        ));
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_plan(frame: &mut Frame<'_>, app: &App, panel: &PlanPanel, area: Rect) {
    let theme = app.theme;
    let status = match panel.plan.status {
        PlanStatus::Draft => "proposed",
        PlanStatus::Approved => "approved",
        PlanStatus::Executing => "running",
        PlanStatus::Completed => "completed",
        PlanStatus::Failed => "failed",
    };
    let inner = usize::from(area.width.saturating_sub(2));
    let title = truncate(
        &format!(" Plan ({status}): {} ", panel.plan.goal.lines().next().unwrap_or("")),
        inner,
    );
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.dim())
        .title(Span::styled(title, theme.bold()));
    if panel.awaiting {
        block =
            block.title_bottom(Span::styled(" [a] approve  [e] edit  [r] reject ", theme.prompt()));
    }
    let lines: Vec<Line<'static>> = panel
        .plan
        .steps
        .iter()
        .map(|step| {
            let (icon, style) = match step.status {
                StepStatus::Pending => ("○", Style::new()),
                StepStatus::Running => ("◐", theme.accent()),
                StepStatus::Completed => ("✓", theme.ok()),
                StepStatus::Failed => ("✗", theme.error()),
                StepStatus::Skipped => ("–", theme.dim()),
            };
            let text =
                truncate(&format!("{}. {}", step.id, step.description), inner.saturating_sub(2));
            Line::from(vec![Span::styled(format!("{icon} "), style), Span::styled(text, style)])
        })
        .collect();
    // Keep the running step in view when there are more steps than rows.
    let rows = usize::from(area.height.saturating_sub(2));
    let running =
        panel.plan.steps.iter().position(|s| s.status == StepStatus::Running).unwrap_or(0);
    let skip = (running + 1).saturating_sub(rows);
    frame.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()).block(block),
        area,
    );
}

/// The images attached to the input, one chip each, and how to take one
/// off.
fn draw_images(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let theme = app.theme;
    let mut spans = Vec::new();
    for image in &app.images {
        spans.push(Span::styled(format!("[image {}]", image.name), theme.accent()));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled("Backspace removes the last", theme.dim()));
    let width = usize::from(area.width);
    let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
    let line = if text.chars().count() > width {
        Line::from(Span::styled(truncate(&text, width), theme.accent()))
    } else {
        Line::from(spans)
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_input(
    frame: &mut Frame<'_>,
    app: &App,
    area: Rect,
    rows: &[String],
    cursor: (usize, usize),
) {
    let theme = app.theme;
    let mode = match app.mode {
        Mode::React => " ReAct ",
        Mode::Plan => " Plan ",
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.dim())
        .title(Span::styled(
            mode,
            if app.mode == Mode::Plan { theme.warning() } else { theme.accent() },
        ))
        .title(Span::styled(" Shift-Tab switches ", theme.dim()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let visible = usize::from(inner.height);
    let first = (cursor.0 + 1).saturating_sub(visible);
    let lines: Vec<Line<'static>> = if app.input.is_empty() {
        vec![Line::from(vec![
            Span::styled("› ", theme.user()),
            Span::styled(
                truncate(
                    "Ask axon anything · / for commands · @ for files",
                    usize::from(inner.width).saturating_sub(2),
                ),
                theme.dim(),
            ),
        ])]
    } else {
        rows.iter()
            .enumerate()
            .skip(first)
            .take(visible)
            .map(|(n, row)| {
                let prefix =
                    if n == 0 { Span::styled("› ", theme.user()) } else { Span::raw("  ") };
                Line::from(vec![prefix, Span::raw(row.clone())])
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), inner);
    if visible > 0
        && app.awaiting_approval().is_none()
        && !app.plan.as_ref().is_some_and(|p| p.awaiting)
    {
        let x = inner.x + to_u16(cursor.1 + 2).min(inner.width.saturating_sub(1));
        let y = inner.y + to_u16(cursor.0.saturating_sub(first));
        frame.set_cursor_position(Position { x, y });
    }
}

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let width = usize::from(area.width);
    // The full line, else a compact one, else the compact one's first parts.
    let full = status_parts(app, false);
    let mut parts =
        if text_width(&full.join(" · ")) <= width { full } else { status_parts(app, true) };
    while parts.len() > 1 && text_width(&parts.join(" · ")) > width {
        parts.pop();
    }
    let text = truncate(&parts.join(" · "), width);
    frame.render_widget(Paragraph::new(Line::from(Span::styled(text, app.theme.dim()))), area);
}

/// Provider and model, tokens, MCP servers, session; shorter when `compact`.
fn status_parts(app: &App, compact: bool) -> Vec<String> {
    let status = &app.status;
    let mut parts = Vec::new();
    parts.push(if compact {
        status.model.clone()
    } else {
        format!("{}/{}", status.provider, status.model)
    });
    let share = (status.tokens * 100)
        .checked_div(status.window)
        .map_or_else(String::new, |percent| format!(" ({percent}%)"));
    parts.push(if compact {
        format!("{}/{}", tokens(status.tokens), tokens(status.window))
    } else {
        format!("{}/{} tokens{share}", tokens(status.tokens), tokens(status.window))
    });
    if let Some(cost) = status.cost() {
        parts.push(format!("${cost:.4}"));
    }
    if let Some(sandbox) = app.info.as_ref().and_then(|info| info.sandbox.as_ref()) {
        parts.push(sandbox_label(sandbox, compact));
    }
    if !status.servers.is_empty() {
        let ready =
            status.servers.values().filter(|s| s.state == axon_protocol::McpState::Ready).count();
        let failed = status
            .servers
            .values()
            .filter(|s| {
                matches!(
                    s.state,
                    axon_protocol::McpState::Error
                        | axon_protocol::McpState::Closed
                        | axon_protocol::McpState::NeedsLogin
                )
            })
            .count();
        parts.push(match (compact, failed) {
            (true, 0) => format!("mcp {ready}✓"),
            (true, _) => format!("mcp {ready}✓ {failed}✗"),
            (false, 0) => format!("mcp {ready} ready"),
            (false, _) => format!("mcp {ready} ready, {failed} failed"),
        });
    }
    if !status.session.is_empty() {
        parts.push(if compact {
            status.session.clone()
        } else {
            format!("session {}", status.session)
        });
    }
    parts
}

/// Where commands run: the sandbox's mode and network, or that there is
/// none (and, when one was wanted but cannot be enforced, that commands ask).
pub(crate) fn sandbox_label(sandbox: &axon_protocol::SandboxInfo, compact: bool) -> String {
    use axon_protocol::SandboxMode;
    let mode = match (sandbox.mode, compact) {
        (SandboxMode::Off, _) => return "sandbox off".to_string(),
        (_, true) if !sandbox.enforced => return "sandbox ✗".to_string(),
        (_, false) if !sandbox.enforced => return "no sandbox here: commands ask".to_string(),
        (SandboxMode::ReadOnly, _) => "read-only",
        (SandboxMode::WorkspaceWrite, true) => "ws-write",
        (SandboxMode::WorkspaceWrite, false) => "workspace-write",
    };
    match (sandbox.network, compact) {
        (true, _) => format!("sandbox {mode}"),
        (false, true) => format!("sandbox {mode} no-net"),
        (false, false) => format!("sandbox {mode}, network off"),
    }
}

/// `12.3k`, `128k`, `950`.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn draw_completion(frame: &mut Frame<'_>, app: &App, input: Rect) {
    let Some(completion) = &app.completion else { return };
    let theme = app.theme;
    let longest = completion.items.iter().map(|(r, _)| text_width(r)).max().unwrap_or(0);
    let lines: Vec<Line<'static>> = completion
        .items
        .iter()
        .enumerate()
        .map(|(n, (replacement, help))| {
            let style = if n == completion.selected { theme.selected() } else { Style::new() };
            let pad = " ".repeat(longest - text_width(replacement) + 2);
            Line::from(vec![
                Span::styled(format!("{replacement}{pad}"), style),
                Span::styled(help.clone(), theme.dim()),
            ])
        })
        .collect();
    let title = " Tab/Enter accepts ";
    let wanted = lines.iter().map(Line::width).max().unwrap_or(0).max(text_width(title)) + 2;
    let width = to_u16(wanted).min(input.width);
    let height = to_u16(lines.len() + 2).min(input.y);
    if height < 3 {
        return;
    }
    let area = Rect { x: input.x, y: input.y - height, width, height };
    // A list taller than the room scrolls to keep the selected row shown.
    let rows = usize::from(height - 2);
    let first = completion.selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line<'static>> = lines
        .into_iter()
        .skip(first)
        .take(rows)
        .flat_map(|l| {
            wrap(&l.spans, usize::from(width.saturating_sub(2)), &[], &[]).into_iter().take(1)
        })
        .collect();
    frame.render_widget(Clear, area);
    let block = Block::default().borders(Borders::ALL).border_style(theme.dim()).title(title);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
