//! The UI's state and what changes it: agent events from the front end,
//! keys and pastes from the user. Keys that ask for work return an
//! [`Action`] for the front end to carry out; the UI never runs anything.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use axon_protocol::{Message, Plan, PlanStatus, Preview, Role, SessionInfo, ToolCall, ToolOutput};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::card::{CardState, ToolCard};
use crate::complete::{COMMANDS, Completion};
use crate::form::{Form, Outcome};
use crate::input::Input;
use crate::theme::Theme;
use crate::transcript::{Entry, Level, Transcript};

/// How a request is handled: the session's own modes.
pub use axon_protocol::Mode;

mod confirm;
mod deny;
mod edit;
mod events;
mod images;
mod welcome;

pub use confirm::Confirm;
pub use images::PendingImage;

/// The user's answer to a tool's approval prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    /// This tool, for the rest of the session.
    Session,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanDecision {
    Approve,
    Edit,
    Reject,
}

/// Work the front end is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Submit {
        text: String,
        mode: Mode,
        /// The images attached to the input ([`App::attach_image`]).
        images: Vec<axon_protocol::Attachment>,
    },
    /// Ctrl+V: attach the system clipboard's image (the front end reads it
    /// and calls [`App::attach_image`], or says why it cannot).
    PasteImage,
    /// Stop the running turn (its partial answer stays).
    Cancel,
    Quit,
    Approve {
        call_id: String,
        answer: Answer,
    },
    Plan(PlanDecision),
    /// The user's answer to an MCP server's form (`content` with accept).
    Elicit {
        id: String,
        action: axon_protocol::ElicitAction,
        content: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// A slash command the front end carries out: name without `/`, and
    /// the rest of the line.
    Command {
        name: String,
        argument: String,
    },
    /// Refuse a call, telling the model `reason` (what to do instead).
    DenyWithReason {
        call_id: String,
        reason: String,
    },
    /// A command the user said yes to after seeing what it would do
    /// ([`App::ask_confirm`]).
    Confirmed {
        name: String,
        argument: String,
    },
}

/// An MCP server as last reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub state: axon_protocol::McpState,
    pub message: Option<String>,
}

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub provider: String,
    pub model: String,
    pub tokens: u64,
    pub window: u64,
    /// US dollars the session cost so far (a resumed session's earlier
    /// runs included), as the runtime last said; `None` when unknown.
    pub cost_usd: Option<f64>,
    pub session: String,
    pub servers: BTreeMap<String, ServerStatus>,
}

impl Status {
    /// The session's cost so far, as the last `session_started` or
    /// `turn_completed` said; `None` when a call's model had no known
    /// price, or nothing was spent yet.
    pub fn cost(&self) -> Option<f64> {
        self.cost_usd
    }
}

/// The plan panel.
#[derive(Debug, Clone)]
pub struct PlanPanel {
    pub plan: Plan,
    /// Proposed and waiting for approve / edit / reject.
    pub awaiting: bool,
}

/// How long a first Ctrl-C waits for the second.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Keys within this time of an approval prompt appearing do not answer it.
pub const ANSWER_GUARD: Duration = Duration::from_millis(300);

#[derive(Debug)]
pub struct App {
    pub theme: Theme,
    pub transcript: Transcript,
    pub input: Input,
    /// Images attached to the input, sent with the next prompt;
    /// Backspace on an empty input takes the last one off.
    pub images: Vec<PendingImage>,
    pub mode: Mode,
    pub status: Status,
    /// The session as it last described itself (`SessionStarted`, kept
    /// current by later events): its rules, skills and tools for the front
    /// end's `/rules` and `/skills`.
    pub info: Option<SessionInfo>,
    pub plan: Option<PlanPanel>,
    /// A turn is running (since when).
    pub busy: Option<Instant>,
    /// Calls waiting for an answer, oldest first.
    approvals: VecDeque<String>,
    /// When the first of them was put in front of the user.
    asked_at: Option<Instant>,
    /// MCP servers' forms waiting to be filled in, oldest first (shown
    /// one at a time).
    pub forms: VecDeque<Form>,
    /// Workspace files for `@` completion.
    pub files: Vec<String>,
    pub completion: Option<Completion>,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// Transcript lines at the last frame (to keep a scrolled view still).
    pub(crate) last_total: usize,
    /// The transcript's height at the last frame (for paging).
    pub(crate) page: usize,
    /// A hint under the input, e.g. "Ctrl-C again quits".
    pub hint: Option<String>,
    quit_armed: Option<Instant>,
    /// A command waiting for the user's yes.
    pub confirm: Option<Confirm>,
    /// A call being refused with a reason the user is typing.
    denying: Option<deny::Denying>,
    /// Where the current turn's entries start (to drop a broken attempt).
    turn_start: usize,
}

impl App {
    pub fn new(theme: Theme) -> Self {
        App {
            theme,
            transcript: Transcript::new(theme),
            input: Input::new(),
            images: Vec::new(),
            mode: Mode::React,
            status: Status::default(),
            info: None,
            plan: None,
            busy: None,
            approvals: VecDeque::new(),
            asked_at: None,
            forms: VecDeque::new(),
            files: Vec::new(),
            completion: None,
            scroll: 0,
            last_total: 0,
            page: 10,
            hint: None,
            quit_armed: None,
            confirm: None,
            denying: None,
            turn_start: 0,
        }
    }

    pub fn is_busy(&self) -> bool {
        self.busy.is_some()
    }

    /// The front end started work on a request. A plan that was carried
    /// out to the end has had its turn on screen: its panel goes.
    pub fn turn_started(&mut self) {
        if self.plan.as_ref().is_some_and(|p| p.plan.status == PlanStatus::Completed) {
            self.plan = None;
        }
        self.busy = Some(Instant::now());
        self.turn_start = self.transcript.len();
    }

    /// The work ended; `note` says how if not with an answer.
    pub fn turn_finished(&mut self, note: Option<(Level, String)>) {
        self.busy = None;
        self.end_streaming();
        // Cards cut off by a cancellation stop spinning.
        self.transcript.stop_running(&ToolOutput::error("cancelled"));
        self.approvals.clear();
        // Their requests ended with the turn.
        self.forms.clear();
        if let Some((level, text)) = note {
            self.notice(level, text);
        }
    }

    pub fn notice(&mut self, level: Level, text: impl Into<String>) {
        self.end_streaming();
        self.transcript.push(Entry::Notice { level, text: text.into() });
    }

    /// A plan waits for the user's decision.
    pub fn propose_plan(&mut self, plan: Plan) {
        self.plan = Some(PlanPanel { plan, awaiting: true });
    }

    /// The plan changed (a step started or ended).
    pub fn update_plan(&mut self, plan: Plan) {
        let awaiting = self.plan.as_ref().is_some_and(|p| p.awaiting && p.plan.id == plan.id);
        self.plan = Some(PlanPanel { plan, awaiting });
    }

    /// `call` waits for the user's answer. Its card appears now (the
    /// agent announces a call only once it may run) and shows `preview`,
    /// what the call would do, until the user answers.
    pub fn ask_approval(
        &mut self,
        call: ToolCall,
        preview: Preview,
        rule: Option<axon_protocol::RuleSuggestion>,
    ) {
        let id = call.id.clone();
        if !self.has_card(&id) {
            self.end_streaming();
            let server = self.server_of(&call.name);
            self.transcript.push(Entry::Tool(ToolCard::new(call, server)));
        }
        if let Some(card) = self.transcript.card_mut(&id) {
            card.set_preview(preview);
            card.rule = rule.map(Box::new);
            // Asked again (a repeated event): one question, one answer.
            if std::mem::replace(&mut card.awaiting_approval, true) {
                return;
            }
            if self.approvals.is_empty() {
                self.asked_at = Some(Instant::now());
            }
            self.approvals.push_back(id);
        }
    }

    /// An MCP server asks the user to fill in a form; it is shown once
    /// those before it are answered.
    pub fn ask_form(
        &mut self,
        id: String,
        server: String,
        message: String,
        schema: serde_json::Value,
    ) {
        if self.forms.is_empty() {
            self.asked_at = Some(Instant::now());
        }
        self.forms.push_back(Form::new(id, server, message, &schema));
    }

    /// The current turn shows call `id`, still running or asking. Ids can
    /// repeat from one model call to the next (`block_1`, `call_0`); a
    /// finished card is never the one meant.
    fn has_card(&self, id: &str) -> bool {
        self.transcript.entries().skip(self.turn_start).any(|e| {
            matches!(e, Entry::Tool(card) if card.call.id == id
                && (card.is_running() || card.awaiting_approval))
        })
    }

    pub fn awaiting_approval(&self) -> Option<&str> {
        self.approvals.front().map(String::as_str)
    }

    /// Shows a continued session's conversation.
    pub fn load_history(&mut self, history: &[Message]) {
        self.transcript.clear();
        for message in history {
            match message.role {
                Role::System => {}
                Role::User => {
                    self.transcript.push(Entry::User(crate::transcript::user_text(message)))
                }
                Role::Assistant => {
                    let text = message.text();
                    if !text.trim().is_empty() {
                        self.transcript.push(Entry::Assistant { text, streaming: false });
                    }
                    for call in &message.tool_calls {
                        let server = self.server_of(&call.name);
                        self.transcript.push(Entry::Tool(ToolCard::new(call.clone(), server)));
                    }
                }
                Role::Tool => {
                    let Some(id) = &message.tool_call_id else { continue };
                    if let Some(card) = self.transcript.card_mut(id) {
                        card.state = CardState::Done(ToolOutput {
                            content: message.content.clone(),
                            is_error: message.is_error,
                        });
                    }
                }
            }
        }
        // Calls a crash left without results.
        self.transcript.stop_running(&ToolOutput::error("no result was recorded"));
        self.scroll = 0;
    }

    /// An MCP tool's server and own name, from its `mcp_{server}_` prefix.
    fn server_of(&self, name: &str) -> Option<(String, String)> {
        self.status
            .servers
            .keys()
            .filter_map(|server| {
                let tool = name.strip_prefix(&format!("mcp_{server}_"))?;
                Some((server.clone(), tool.to_string()))
            })
            .max_by_key(|(server, _)| server.len())
    }

    fn end_streaming(&mut self) {
        if let Some(Entry::Assistant { streaming, .. } | Entry::Reasoning { streaming, .. }) =
            self.transcript.last_mut_if(|e| {
                matches!(
                    e,
                    Entry::Assistant { streaming: true, .. }
                        | Entry::Reasoning { streaming: true, .. }
                )
            })
        {
            *streaming = false;
        }
    }

    /// Adds streamed text to the reply (or reasoning) coming in, or starts
    /// one. A reply does not start with blank text.
    fn stream(&mut self, piece: String, reasoning: bool) {
        match self.transcript.last_mut_if(|e| match e {
            Entry::Assistant { streaming: true, .. } => !reasoning,
            Entry::Reasoning { streaming: true, .. } => reasoning,
            _ => false,
        }) {
            Some(Entry::Assistant { text, .. } | Entry::Reasoning { text, .. }) => {
                text.push_str(&piece);
            }
            _ => {
                self.end_streaming();
                if reasoning {
                    self.transcript.push(Entry::Reasoning { text: piece, streaming: true });
                } else if !piece.trim().is_empty() {
                    self.transcript.push(Entry::Assistant { text: piece, streaming: true });
                }
            }
        }
    }

    /// Pasted text goes into the input as it is (or into the form shown).
    pub fn on_paste(&mut self, text: &str) {
        // A form on screen takes what is pasted.
        if let Some(form) = self.forms.front_mut() {
            form.paste(text);
            return;
        }
        self.input.insert(text);
        self.refresh_completion();
    }

    /// Advances spinners; the front end calls this on a timer while busy.
    pub fn tick(&mut self) {
        self.transcript.tick = self.transcript.tick.wrapping_add(1);
        if self.quit_armed.is_some_and(|at| at.elapsed() > QUIT_WINDOW) {
            self.quit_armed = None;
            self.hint = None;
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        // Keys that only change the view work even while a question waits:
        // the user may need the whole diff (Ctrl-O) to answer it.
        if self.view_key(key, ctrl) {
            return None;
        }
        // A question on screen takes every key until it is answered, and
        // keys typed in the moment it appears (meant for the input) do not
        // answer it.
        if let Some(form) = self.forms.front_mut() {
            if self.asked_at.is_some_and(|at| at.elapsed() < ANSWER_GUARD) {
                return None;
            }
            let Outcome::Done(action, content) = form.on_key(key) else { return None };
            let id = form.id.clone();
            self.forms.pop_front();
            self.asked_at =
                (!self.forms.is_empty() || !self.approvals.is_empty()).then(Instant::now);
            return Some(Action::Elicit { id, action, content });
        }
        if let Some(answered) = self.denying_key(key, ctrl) {
            return answered;
        }
        if let Some(call_id) = self.approvals.front().cloned() {
            if self.asked_at.is_some_and(|at| at.elapsed() < ANSWER_GUARD) {
                return None;
            }
            if let KeyCode::Char('t' | 'T') = key.code {
                self.start_denying(call_id);
                return None;
            }
            let answer = match key.code {
                KeyCode::Char('y' | 'Y') => Answer::Once,
                KeyCode::Char('a' | 'A') => Answer::Session,
                KeyCode::Char('n' | 'N') | KeyCode::Esc => Answer::Deny,
                _ => return None,
            };
            self.approvals.pop_front();
            self.asked_at = (!self.approvals.is_empty()).then(Instant::now);
            if let Some(card) = self.transcript.card_mut(&call_id) {
                card.awaiting_approval = false;
            }
            return Some(Action::Approve { call_id, answer });
        }
        if let Some(answered) = self.confirm_key(key) {
            return answered;
        }
        if self.plan.as_ref().is_some_and(|p| p.awaiting) {
            if self.is_busy() {
                // The turn that proposed it is still closing.
                return (key.code == KeyCode::Esc).then_some(Action::Cancel);
            }
            let decision = match key.code {
                KeyCode::Char('a' | 'A' | 'y' | 'Y') => PlanDecision::Approve,
                KeyCode::Char('e' | 'E') => PlanDecision::Edit,
                KeyCode::Char('r' | 'R' | 'n' | 'N') | KeyCode::Esc => PlanDecision::Reject,
                _ => return None,
            };
            if let Some(panel) = &mut self.plan {
                panel.awaiting = decision == PlanDecision::Edit;
            }
            return Some(Action::Plan(decision));
        }
        let action = self.edit(key, ctrl);
        if !matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::Enter | KeyCode::Esc
        ) {
            self.refresh_completion();
        }
        action
    }

    fn ctrl_c(&mut self) -> Option<Action> {
        if self.quit_armed.is_some_and(|at| at.elapsed() <= QUIT_WINDOW) {
            return Some(Action::Quit);
        }
        self.quit_armed = Some(Instant::now());
        self.hint = Some("Press Ctrl-C again to quit".to_string());
        self.completion = None;
        if self.is_busy() {
            return Some(Action::Cancel);
        }
        self.input.clear();
        None
    }

    fn refresh_completion(&mut self) {
        self.completion = Completion::find(&self.input, &self.files);
    }

    fn submit(&mut self) -> Option<Action> {
        if self.input.text().trim().is_empty() {
            return None;
        }
        if let Some(line) = self.input.text().trim().strip_prefix('/') {
            let (name, argument) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let (name, argument) = (name.to_string(), argument.trim().to_string());
            if !COMMANDS.iter().any(|(n, _, _)| n[1..] == name) {
                self.hint = Some(format!("Unknown command /{name}; /help lists them"));
                return None;
            }
            self.input.take();
            return self.command(name, argument);
        }
        if self.is_busy() {
            self.hint =
                Some("Still working: wait for the answer or press Esc to stop it".to_string());
            return None;
        }
        let text = self.input.take();
        self.hint = None;
        self.scroll = 0;
        self.transcript.push(Entry::User(text.clone()));
        let images = self.take_images();
        Some(Action::Submit { text, mode: self.mode, images })
    }

    /// Commands the UI answers itself; the rest go to the front end.
    fn command(&mut self, name: String, argument: String) -> Option<Action> {
        match name.as_str() {
            "help" => {
                self.notice(Level::Info, help());
                None
            }
            "quit" => Some(Action::Quit),
            "mcp" => {
                self.notice(Level::Info, self.servers_text());
                None
            }
            "plan" if argument.is_empty() => {
                self.mode = match self.mode {
                    Mode::React => Mode::Plan,
                    Mode::Plan => Mode::React,
                };
                None
            }
            "plan" => {
                if self.is_busy() {
                    self.hint = Some(
                        "Still working: wait for the answer or press Esc to stop it".to_string(),
                    );
                    return None;
                }
                self.transcript.push(Entry::User(argument.clone()));
                let images = self.take_images();
                Some(Action::Submit { text: argument, mode: Mode::Plan, images })
            }
            // Answered at once by the session, even mid-turn.
            "ps" => Some(Action::Command { name, argument }),
            _ if self.is_busy() => {
                self.hint = Some(format!(
                    "The turn is still running: press Enter again after it ends to run /{name} (Esc stops the turn)"
                ));
                self.input.set(format!("/{name} {argument}").trim_end());
                None
            }
            _ => Some(Action::Command { name, argument }),
        }
    }

    fn servers_text(&self) -> String {
        if self.status.servers.is_empty() {
            return "No MCP servers are configured (add them under [mcp_servers] in axon.toml)."
                .to_string();
        }
        let mut text = String::from("MCP servers:");
        for (name, status) in &self.status.servers {
            text.push_str(&format!("\n  {name}: {}", status.state));
            if let Some(message) = &status.message {
                text.push_str(&format!(" — {message}"));
            }
        }
        text
    }
}

fn help() -> String {
    let mut text = String::from(
        "Keys: Enter sends · Alt-Enter, Ctrl-J or \\ then Enter adds a line · Up/Down history · \
         Tab completes (/commands, @files) · Esc stops the running turn · Ctrl-C twice quits · \
         Shift-Tab switches ReAct/Plan · PageUp/PageDown scroll · Ctrl-O expands tool output · \
         Ctrl-T shows reasoning · Ctrl-V attaches the clipboard's image (a pasted image path \
         attaches that image; Backspace on an empty input takes the last off)\nCommands:",
    );
    for (name, arg, what) in COMMANDS {
        let usage = if arg.is_empty() { name.to_string() } else { format!("{name} {arg}") };
        text.push_str(&format!("\n  {usage:<16} {what}"));
    }
    text
}
