//! How `axon run` shows a session's events: the answer streams to stdout
//! (at a terminal rendered as Markdown, block by block; on a pipe as the
//! model's plain text), one line per tool call and any warnings go to
//! stderr; or, with
//! `--json`, the public event stream (docs/events.md): a header line, then
//! one JSON event per line on stdout and nothing else there.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use axon_protocol::{AgentEvent, McpState, Preview, ToolCall};
use axon_tui::Theme;
use serde_json::Value;

use crate::markdown_out::Blocks;

pub struct Renderer {
    json: bool,
    /// stderr is a terminal: show reasoning, use colour.
    styled: bool,
    /// stdout is a terminal: a retried stream's partial text can be erased,
    /// and the answer is rendered as Markdown.
    stdout_terminal: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last thing written to stdout ended a line.
    stdout_at_line_start: bool,
    /// Calls announced but not finished, for the one-line summary.
    pending: HashMap<String, ToolCall>,
    in_thought: bool,
    /// The run is over: closing servers is routine, not news.
    finished: bool,
    /// A turn has begun: a server ready from now on joined late, which is
    /// news (its tools arrive mid-run).
    working: bool,
    /// The step ids of the plan last printed.
    plan_steps: Vec<u32>,
    /// The text written to stdout by the model call under way: what a
    /// retried stream has to take back.
    attempt: String,
    /// After a retry on a pipe, where printed text cannot be taken back:
    /// the broken attempt's text and the new attempt's text so far. The
    /// new text is held while it repeats the old, and only what goes
    /// beyond it is written.
    replay: Option<(String, String)>,
    /// At a terminal: the reply's Markdown, cut into whole blocks.
    blocks: Blocks,
    /// A block of this reply is on the screen (the next one is set off by
    /// a blank line).
    block_shown: bool,
}

impl Renderer {
    /// With `json`, the stream's header line is printed at once.
    pub fn new(json: bool) -> Self {
        let styled = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let renderer = Renderer {
            json,
            styled,
            stdout_terminal: std::io::stdout().is_terminal(),
            state: Mutex::new(State { stdout_at_line_start: true, ..State::default() }),
        };
        if json {
            renderer.event(AgentEvent::header(format!("axon {}", env!("CARGO_PKG_VERSION"))));
        }
        renderer
    }

    pub fn event(&self, event: AgentEvent) {
        if self.json {
            match serde_json::to_string(&event) {
                Ok(line) => crate::say(&line),
                Err(e) => eprintln!("axon: cannot encode an event: {e}"),
            }
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(event, AgentEvent::Thought { .. }) && state.in_thought {
            state.in_thought = false;
            eprintln!("{}", self.dim(""));
        }
        match event {
            AgentEvent::Token { text } => self.token(&mut state, &text),
            AgentEvent::Thought { text } if self.styled => {
                state.in_thought = true;
                eprint!("{}", self.dim(&text));
            }
            AgentEvent::Action { call, .. } => {
                self.end_model_call(&mut state);
                self.end_stdout_line(&mut state);
                state.pending.insert(call.id.clone(), call);
            }
            AgentEvent::Observation { call_id, name, output } => {
                let call = state.pending.remove(&call_id);
                let args = call.map(|c| short_arguments(&c.arguments)).unwrap_or_default();
                let first_line = output.text_content().lines().next().unwrap_or("").to_string();
                // An error's first line says why (the sandbox rule that
                // refused a command): longer than a success's.
                let keep = if output.is_error { 320 } else { 100 };
                let summary: String = first_line.chars().take(keep).collect();
                let (mark, summary) =
                    if output.is_error { ("✗", summary) } else { ("✓", summary) };
                if name == "todo" && !output.is_error {
                    // The checklist is for the user: shown whole.
                    eprintln!("{}", output.text_content());
                } else {
                    eprintln!("{} {name} {args} — {summary}", self.colour(mark, output.is_error));
                }
            }
            AgentEvent::Answer { .. } => {
                self.end_model_call(&mut state);
                self.end_stdout_line(&mut state);
            }
            AgentEvent::Usage { .. } => self.end_model_call(&mut state),
            AgentEvent::PlanProposed { plan } => {
                self.end_stdout_line(&mut state);
                state.plan_steps = plan.steps.iter().map(|s| s.id).collect();
                eprint!("{}", axon_runtime::plan_text::describe(&plan));
            }
            // A revision that goes on at once: its new steps are shown.
            AgentEvent::PlanChanged { plan }
                if plan.steps.iter().map(|s| s.id).ne(state.plan_steps.iter().copied()) =>
            {
                self.end_stdout_line(&mut state);
                state.plan_steps = plan.steps.iter().map(|s| s.id).collect();
                eprint!("{}", axon_runtime::plan_text::describe(&plan));
            }
            AgentEvent::StepStarted { step, description } => {
                self.end_stdout_line(&mut state);
                eprintln!("axon: step {step} — {description}");
            }
            AgentEvent::StepComplete { step, result } => {
                self.end_stdout_line(&mut state);
                let first: String = result.lines().next().unwrap_or("").chars().take(100).collect();
                eprintln!("axon: step {step} ended — {first}");
            }
            AgentEvent::McpStatus { server, state: status, message } if !state.finished => {
                match (status, message) {
                    (McpState::Error, Some(message)) => {
                        eprintln!("axon: warning: MCP server {server} failed to start: {message}");
                    }
                    (McpState::NeedsLogin, Some(message)) => {
                        eprintln!("axon: warning: {message}");
                    }
                    (McpState::Closed, _) => {
                        eprintln!("axon: warning: MCP server {server} disconnected");
                    }
                    (McpState::Ready, Some(message)) if state.working => {
                        self.end_stdout_line(&mut state);
                        eprintln!("axon: MCP server {server}: ready ({message})");
                    }
                    _ => {}
                }
            }
            AgentEvent::ApprovalRequested { preview, .. } => {
                self.end_stdout_line(&mut state);
                if let Preview::Diff { diff, .. } = &preview {
                    eprint!("{}", self.diff(diff));
                }
            }
            AgentEvent::TurnRestarted { reason } => {
                // The broken reply's text is not part of the answer: at a
                // terminal it is erased; on a pipe the new attempt's text
                // is written only where it goes beyond it.
                let attempt = std::mem::take(&mut state.attempt);
                state.blocks.clear();
                state.block_shown = false;
                if self.stdout_terminal {
                    self.erase(&mut state, &attempt);
                } else if !attempt.is_empty() {
                    state.replay = Some((attempt, String::new()));
                }
                eprintln!("axon: warning: {reason}");
            }
            AgentEvent::Info { message } => {
                self.end_stdout_line(&mut state);
                eprintln!("axon: {message}");
            }
            AgentEvent::Warning { message } => {
                self.end_stdout_line(&mut state);
                eprintln!("axon: warning: {message}");
            }
            AgentEvent::Error { message } => {
                self.end_stdout_line(&mut state);
                eprintln!("axon: error: {message}");
            }
            AgentEvent::Subagent { agent, event, .. } => {
                self.subagent_step(&mut state, agent, *event);
            }
            // Only a known cost: an unpriced model's turn says nothing. A
            // session that spent before this turn (a resumed one) says its
            // total too.
            AgentEvent::TurnCompleted {
                usage,
                cost_usd: Some(cost),
                session_usage,
                session_cost_usd,
                ..
            } => {
                self.end_stdout_line(&mut state);
                let tokens = format!("{} in, {} out", usage.input_tokens, usage.output_tokens);
                let mut line = format!("axon: cost ${cost:.4} ({tokens} tokens)");
                if let Some(total) = session_cost_usd.filter(|_| session_usage != usage) {
                    let tokens = format!(
                        "{} in, {} out",
                        session_usage.input_tokens, session_usage.output_tokens
                    );
                    line.push_str(&format!("; session ${total:.4} ({tokens} tokens)"));
                }
                eprintln!("{}", self.dim(&line));
            }
            _ => {}
        }
    }

    /// One step of a subagent, indented under the call that started it:
    /// its tool calls as they end and its warnings (its report is that
    /// call's result).
    fn subagent_step(&self, state: &mut State, mut path: String, mut event: AgentEvent) {
        while let AgentEvent::Subagent { agent, event: inner, .. } = event {
            path = format!("{path} › {agent}");
            event = *inner;
        }
        match event {
            AgentEvent::Action { call, .. } => {
                state.pending.insert(format!("{path}/{}", call.id), call);
            }
            AgentEvent::Observation { call_id, name, output } => {
                let call = state.pending.remove(&format!("{path}/{call_id}"));
                let args = call.map(|c| short_arguments(&c.arguments)).unwrap_or_default();
                let mark = if output.is_error { "✗" } else { "✓" };
                self.end_stdout_line(state);
                eprintln!("  {path}: {} {name} {args}", self.colour(mark, output.is_error));
            }
            AgentEvent::Warning { message } | AgentEvent::Error { message } => {
                self.end_stdout_line(state);
                eprintln!("  {path}: warning: {message}");
            }
            _ => {}
        }
    }

    /// Ends the answer's line however the run ended (an answer does it
    /// itself; a cancelled or failed run may stop mid-line).
    pub fn finish(&self) {
        if !self.json {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            self.flush_blocks(&mut state);
            self.end_stdout_line(&mut state);
            state.finished = true;
        }
    }

    /// Streamed answer text; after a retry on a pipe, only what the new
    /// attempt adds to what is already there.
    fn token(&self, state: &mut State, text: &str) {
        let shown = match state.replay.take() {
            None => text.to_string(),
            Some((printed, mut again)) => {
                again.push_str(text);
                if printed.starts_with(&again) {
                    // Still repeating what is on stdout already.
                    state.replay = Some((printed, again));
                    return;
                }
                if let Some(rest) = again.strip_prefix(printed.as_str()) {
                    state.attempt = printed.clone();
                    rest.to_string()
                } else {
                    // The new attempt says something else; what was
                    // printed cannot be taken back from a pipe, so the
                    // new text starts on a line of its own.
                    self.end_stdout_line(state);
                    again
                }
            }
        };
        if self.stdout_terminal {
            for block in state.blocks.push(&shown) {
                self.write_block(state, &block);
            }
        } else {
            self.write_stdout(state, &shown);
        }
    }

    /// One whole block of the reply, rendered as Markdown to the terminal's
    /// width.
    fn write_block(&self, state: &mut State, block: &str) {
        let columns = crossterm::terminal::size().map(|(c, _)| usize::from(c.max(1))).unwrap_or(80);
        let mut text = axon_tui::ansi::markdown(block, columns, Theme::from_env());
        if state.block_shown {
            text.insert(0, '\n');
        }
        state.block_shown = true;
        self.write_stdout(state, &text);
    }

    /// The reply ended: its last block is rendered.
    fn flush_blocks(&self, state: &mut State) {
        if let Some(block) = state.blocks.finish() {
            self.write_block(state, &block);
        }
        state.block_shown = false;
    }

    fn write_stdout(&self, state: &mut State, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
            // The reader went away (`| head`); nothing more to show.
            crate::leave(crate::exit::OK);
        }
        state.attempt.push_str(text);
        if let Some(last) = text.chars().last() {
            state.stdout_at_line_start = last == '\n';
        }
    }

    /// A model call's stream ended whole: its text stays.
    fn end_model_call(&self, state: &mut State) {
        self.flush_blocks(state);
        if let Some((printed, again)) = state.replay.take() {
            // The retry said less than the broken attempt printed (the
            // rest stays on the pipe); the line is ended all the same.
            if again.len() < printed.len() {
                self.end_stdout_line(state);
            }
        }
        state.attempt.clear();
    }

    /// Takes `text`, the last thing written to the terminal's stdout, off
    /// the screen: the cursor goes back to where it began and everything
    /// below is cleared.
    fn erase(&self, state: &mut State, text: &str) {
        if text.is_empty() {
            return;
        }
        let columns = crossterm::terminal::size().map(|(c, _)| usize::from(c.max(1))).unwrap_or(80);
        let rows: usize =
            text.split('\n').map(|line| visible_width(line).div_ceil(columns).max(1)).sum();
        let up = rows.saturating_sub(1);
        let mut out = std::io::stdout().lock();
        let escape = if up > 0 { format!("\r\x1b[{up}A\x1b[J") } else { "\r\x1b[J".to_string() };
        if out.write_all(escape.as_bytes()).and_then(|()| out.flush()).is_err() {
            crate::leave(crate::exit::OK);
        }
        state.stdout_at_line_start = true;
    }

    fn end_stdout_line(&self, state: &mut State) {
        if !state.stdout_at_line_start {
            crate::say("");
            state.stdout_at_line_start = true;
        }
    }

    /// A unified diff, removed lines red and added ones green when styled.
    fn diff(&self, diff: &str) -> String {
        let mut out = String::new();
        for line in diff.lines() {
            let shown = match line.chars().next() {
                Some('+') if !line.starts_with("+++") && self.styled => {
                    format!("\x1b[32m{line}\x1b[0m")
                }
                Some('-') if !line.starts_with("---") && self.styled => {
                    format!("\x1b[31m{line}\x1b[0m")
                }
                _ => line.to_string(),
            };
            out.push_str(&shown);
            out.push('\n');
        }
        out
    }

    fn dim(&self, text: &str) -> String {
        if self.styled { format!("\x1b[2m{text}\x1b[0m") } else { text.to_string() }
    }

    fn colour(&self, text: &str, error: bool) -> String {
        match (self.styled, error) {
            (false, _) => text.to_string(),
            (true, false) => format!("\x1b[32m{text}\x1b[0m"),
            (true, true) => format!("\x1b[31m{text}\x1b[0m"),
        }
    }
}

/// The characters of `line` a terminal shows: its escape sequences
/// (`ESC[…m`) take no room.
fn visible_width(line: &str) -> usize {
    let mut width = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: `[`, parameters, then one final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            width += 1;
        }
    }
    width
}

/// `path=hello.md content=…` in at most about 60 characters.
fn short_arguments(arguments: &Value) -> String {
    let Value::Object(map) = arguments else { return String::new() };
    let mut parts = Vec::new();
    for (key, value) in map {
        let shown = match value {
            Value::String(s) => s.lines().next().unwrap_or("").to_string(),
            other => other.to_string(),
        };
        let shown: String = shown.chars().take(40).collect();
        parts.push(format!("{key}={shown}"));
    }
    let joined = parts.join(" ");
    if joined.chars().count() > 60 {
        format!("{}…", joined.chars().take(60).collect::<String>())
    } else {
        joined
    }
}
