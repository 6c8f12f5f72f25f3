//! The UI's slash commands: those that change the session become its
//! operations; those that only show something (sessions, rules, skills,
//! saved permissions) or write the transcript out are answered here.
//! `/rewind N` asks first, showing what it would restore and take back
//! (the runtime's preview), and becomes its operation only on the user's
//! yes.

use std::path::PathBuf;

use axon_protocol::{Op, RewindScope};
use axon_runtime::Workspace;
use axon_runtime::config::{Dirs, Effective};
use axon_runtime::guidance::{NO_SKILLS, skill_line};
use axon_runtime::saved_rules;
use axon_runtime::{SessionStore, to_markdown};
use axon_tui::{App, Confirm, Level};

/// What the chat needs to answer commands itself.
pub struct Local {
    pub workspace: Workspace,
    /// Where sessions are kept.
    pub data: PathBuf,
    /// How an unfocused terminal is told something waits (`notify`).
    pub notify: axon_runtime::config::NotifyMethod,
}

impl Local {
    /// Carries out `/name argument`: the operation to send, if any.
    pub fn command(&self, app: &mut App, name: &str, argument: &str) -> Option<Op> {
        let argument = argument.trim();
        let note = match name {
            "clear" => return Some(Op::NewConversation),
            "compact" => return Some(Op::Compact),
            "resume" => {
                let id = (!argument.is_empty()).then(|| argument.to_string());
                return Some(Op::Resume { id });
            }
            "model" => return Some(Op::SwitchModel { model: argument.to_string() }),
            "ps" => return Some(Op::ListBackground),
            "rewind" => match rewind_op(argument) {
                Ok(Some(Op::Rewind { turn: Some(turn), scope })) => {
                    match self.rewind_preview(&app.status.session, turn, scope) {
                        Ok(lines) => {
                            let confirm = Confirm {
                                name: name.to_string(),
                                argument: argument.to_string(),
                                declined: "Not rewound: nothing was changed.".to_string(),
                            };
                            app.ask_confirm(
                                format!("{}\nRewind? (y/n)", lines.join("\n")),
                                confirm,
                            );
                            return None;
                        }
                        Err(message) => (Level::Warning, message),
                    }
                }
                Ok(Some(op)) => return Some(op),
                Ok(None) => self.turns(&app.status.session),
                Err(message) => (Level::Warning, message),
            },
            "sessions" => self.sessions(app),
            "export" => self.export(&app.status.session, argument),
            "skills" => {
                let skills = app.info.as_ref().map(|i| i.skills.clone()).unwrap_or_default();
                if skills.is_empty() {
                    (Level::Info, format!("{}{}", NO_SKILLS[..1].to_uppercase(), &NO_SKILLS[1..]))
                } else {
                    let lines: Vec<String> = skills.iter().map(skill_line).collect();
                    (Level::Info, format!("Skills:\n{}", lines.join("\n")))
                }
            }
            "rules" => {
                let rules = app.info.as_ref().map(|i| i.rules.clone()).unwrap_or_default();
                if rules.is_empty() {
                    (Level::Info, "No rules: add `rules = [\"…\"]` to the config or an AGENTS.md to the repository.".to_string())
                } else {
                    (Level::Info, rules.join("\n"))
                }
            }
            "permissions" => self.permissions(),
            other => (Level::Warning, format!("/{other} is not something axon can do here")),
        };
        app.notice(note.0, note.1);
        None
    }

    /// The rules in effect, the saved ones numbered for `axon permissions rm`.
    fn permissions(&self) -> (Level, String) {
        let root = self.workspace.root();
        let listed = Dirs::from_env()
            .and_then(|dirs| Effective::load(&dirs, root))
            .and_then(|config| saved_rules::list(&config, root));
        match listed {
            Ok(list) => (Level::Info, list.render()),
            Err(e) => (Level::Error, format!("Cannot list the permission rules: {e:#}")),
        }
    }

    /// Carries out a command the user said yes to: the operation to send.
    pub fn confirmed(&self, app: &mut App, name: &str, argument: &str) -> Option<Op> {
        match (name, rewind_op(argument.trim())) {
            ("rewind", Ok(Some(op))) => Some(op),
            (_, Err(message)) => {
                app.notice(Level::Warning, message);
                None
            }
            _ => None,
        }
    }

    /// What rewinding the saved session `id` to before `turn` would do.
    fn rewind_preview(
        &self,
        id: &str,
        turn: u32,
        scope: RewindScope,
    ) -> Result<Vec<String>, String> {
        if id.is_empty() {
            return Err("Nothing to rewind: the session has no turns yet.".to_string());
        }
        let session = SessionStore::new(&self.data)
            .open(id)
            .map_err(|e| format!("Cannot read the session: {e}"))?;
        axon_runtime::rewind::preview(&self.data, &session, turn, scope)
            .map_err(|e| format!("Cannot rewind: {e:#}"))
    }

    /// This workspace's sessions as a picker: the one chosen is resumed.
    fn sessions(&self, app: &mut App) -> (Level, String) {
        let store = SessionStore::new(&self.data);
        match store.list(Some(self.workspace.root())) {
            Ok(list) if list.is_empty() => {
                (Level::Info, "No sessions in this workspace yet.".to_string())
            }
            Ok(list) => {
                let items = list
                    .iter()
                    .filter(|s| s.id != app.status.session)
                    .take(20)
                    .map(|s| (s.id.clone(), format!("{:>4} msgs  {}", s.messages, s.title)))
                    .collect();
                if app.pick("/resume ", items) {
                    (
                        Level::Info,
                        "Pick a session to resume: ↑/↓, Enter resumes it, Esc closes the list."
                            .to_string(),
                    )
                } else {
                    (Level::Info, "No other sessions in this workspace yet.".to_string())
                }
            }
            Err(e) => (Level::Error, format!("Cannot list sessions: {e}")),
        }
    }

    /// The saved session's turns, for picking one to rewind to.
    fn turns(&self, id: &str) -> (Level, String) {
        if id.is_empty() {
            return (Level::Info, "Nothing to rewind: the session has no turns yet.".to_string());
        }
        let session = match SessionStore::new(&self.data).open(id) {
            Ok(session) => session,
            Err(e) => return (Level::Error, format!("Cannot read the session: {e}")),
        };
        let turns = session.turns();
        if turns.is_empty() {
            return (Level::Info, "Nothing to rewind: the session has no turns yet.".to_string());
        }
        let mut text = String::from(
            "Turns (/rewind N goes back to before turn N: files and conversation; add `files` or \
             `conversation` for one of them):",
        );
        let shown: Vec<_> = turns.iter().rev().take(20).collect();
        let width = shown.iter().map(|t| t.turn.to_string().len()).max().unwrap_or(1);
        for turn in shown {
            let files = if turn.changed_files { "changed files" } else { "no file changes" };
            let prompt: String =
                turn.prompt.lines().next().unwrap_or_default().chars().take(60).collect();
            text.push_str(&format!("\n  {:>width$}  {files:<15}  {prompt}", turn.turn));
        }
        (Level::Info, text)
    }

    /// The session as Markdown, into a file of the workspace.
    fn export(&self, id: &str, file: &str) -> (Level, String) {
        if id.is_empty() {
            return (
                Level::Warning,
                "Nothing to export: the session has no messages yet.".to_string(),
            );
        }
        let session = match SessionStore::new(&self.data).open(id) {
            Ok(session) => session,
            Err(e) => return (Level::Error, format!("Cannot read the session: {e}")),
        };
        let name = if file.is_empty() { format!("axon-session-{id}.md") } else { file.to_string() };
        let place = match self.workspace.resolve(&name) {
            Ok(place) => place,
            Err(e) => return (Level::Error, format!("Cannot write {name}: {e}")),
        };
        let path = place.path().display();
        match axon_runtime::atomic_write(&place, to_markdown(&session).as_bytes()) {
            Ok(()) => (Level::Info, format!("Exported the session to {path}")),
            Err(e) => (Level::Error, format!("Cannot write {path}: {e}")),
        }
    }
}

/// `/rewind N [files|conversation|both]` as an operation; `None` for a bare
/// `/rewind` (list the turns).
fn rewind_op(argument: &str) -> Result<Option<Op>, String> {
    let mut words = argument.split_whitespace();
    let Some(turn) = words.next() else { return Ok(None) };
    let (turn, scope) = axon_runtime::rewind::parse_turn_and_scope(turn, words.next())?;
    Ok(Some(Op::Rewind { turn: Some(turn), scope }))
}
