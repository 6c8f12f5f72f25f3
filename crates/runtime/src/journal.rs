//! A session's file: a new one, or the one being continued, recorded
//! through the agent's `Journal`. Records are written (and in the OS) at
//! once, and synced to disk at the end of every turn; a failed write is
//! reported once as a warning and the work goes on.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Result, bail};
use axon_core::Journal;
use axon_protocol::{AgentEvent, Message, Plan, Usage};
use axon_store::{Record, Redactor, Session, SessionStore, SessionWriter};

use crate::events::Emitter;

/// Which session a conversation belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionChoice {
    /// A new session, saved once something is said.
    #[default]
    New,
    /// A new session, saved under this id (from
    /// `axon_store::new_session_id`) once something is said: a front end
    /// that must name the session before that (an editor).
    NewAs(String),
    /// The latest session of this workspace.
    Latest,
    /// Session ID (or a unique start of it).
    Id(String),
}

/// Records into one session file.
pub struct SessionJournal {
    writer: Mutex<SessionWriter>,
    failed: Mutex<bool>,
    events: Emitter,
    /// Turns the file has begun, across resumes.
    turns: AtomicU32,
}

impl SessionJournal {
    fn new(writer: SessionWriter, events: Emitter, turns: u32) -> Self {
        SessionJournal {
            writer: Mutex::new(writer),
            failed: Mutex::new(false),
            events,
            turns: AtomicU32::new(turns),
        }
    }

    /// Records that the session's next turn begins; its number, counted
    /// over the whole file (what `axon rewind --turn` takes).
    pub fn begin_turn(&self) -> u32 {
        let turn = self.turns.fetch_add(1, Ordering::AcqRel) + 1;
        self.append(&Record::Turn { turn, at: now_ms() });
        turn
    }

    /// Records that `turn` may change files with no checkpoint before it.
    pub fn checkpoint_missed(&self, turn: u32, reason: &str) {
        let at = now_ms();
        self.append(&Record::CheckpointMissed { turn, reason: reason.to_string(), at });
    }

    /// Records the checkpoint taken before `turn` first changed a file.
    pub fn checkpoint(&self, turn: u32, snapshot: &str, skipped: Vec<String>) {
        let at = now_ms();
        self.append(&Record::Checkpoint { turn, snapshot: snapshot.to_string(), skipped, at });
    }

    /// Records the files as turn `turn` (which took a checkpoint) left them,
    /// and how many paths differ from that checkpoint.
    pub fn turn_changed(&self, turn: u32, snapshot: &str, changed: usize) {
        let at = now_ms();
        let snapshot = snapshot.to_string();
        self.append(&Record::TurnChanged { turn, snapshot, changed: Some(changed), at });
    }

    fn append(&self, record: &Record) {
        let result = self.writer.lock().unwrap_or_else(PoisonError::into_inner).append(record);
        if let Err(e) = result {
            self.failed(&e.to_string());
        }
    }

    fn failed(&self, error: &str) {
        let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        if !*failed {
            *failed = true;
            self.events.emit(AgentEvent::Warning {
                message: format!("the session is no longer being saved: {error}"),
            });
        }
    }

    /// The session's file.
    pub fn path(&self) -> std::path::PathBuf {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner).path().to_path_buf()
    }

    pub fn id(&self) -> String {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner).id().to_string()
    }

    /// Saves the plan as it stands now.
    pub fn plan(&self, plan: &Plan) {
        self.append(&Record::Plan { plan: plan.clone() });
    }

    /// Makes what was written durable (at the end of a turn).
    pub fn sync(&self) {
        let result = self.writer.lock().unwrap_or_else(PoisonError::into_inner).sync();
        if let Err(e) = result {
            self.failed(&e.to_string());
        }
    }
}

impl Journal for SessionJournal {
    fn message(&self, message: &Message, tokens: u64) {
        self.append(&Record::Message { message: message.clone(), tokens: Some(tokens) });
    }

    fn usage(&self, usage: &Usage) {
        self.append(&Record::Usage { usage: *usage });
    }

    fn model_changed(&self, provider: &str, model: &str) {
        let at = now_ms();
        self.append(&Record::Model { provider: provider.into(), model: model.into(), at });
    }

    fn compacted(&self, summary: &str, carried: Option<&str>, kept: usize) {
        let at = now_ms();
        let carried = carried.map(str::to_string);
        self.append(&Record::Compaction { summary: summary.to_string(), carried, kept, at });
    }

    fn turn_failed(&self, reason: &str) {
        self.append(&Record::TurnFailed { reason: reason.to_string(), at: now_ms() });
    }

    fn withdrawn(&self, messages: usize) {
        self.append(&Record::Withdrawn { messages, at: now_ms() });
    }
}

fn now_ms() -> i64 {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// A session opened to be continued or started.
pub struct Opened {
    pub journal: Arc<SessionJournal>,
    /// The history it continues, with its recorded token counts.
    pub resumed: Option<(Vec<Message>, Vec<Option<u64>>)>,
    /// The session's current plan.
    pub plan: Option<Plan>,
    /// The model calls it recorded before, each with the model that made
    /// it: what the session spent so far (empty for a new one).
    pub calls: Vec<(String, Usage)>,
}

/// Where sessions are kept and what they must not contain.
pub struct Sessions {
    pub store: SessionStore,
    /// New conversations are saved (off: nothing is written).
    pub record: bool,
    pub redactor: Redactor,
    pub workspace: std::path::PathBuf,
    pub events: Emitter,
    /// The id the next new session is saved under (a front end that named
    /// it up front); else a fresh one.
    pub next_id: Option<String>,
    /// The config's own providers (`[providers.NAME]`), beside the presets:
    /// those a resume may point back to.
    pub providers: Vec<String>,
}

impl Sessions {
    /// A provider `--provider NAME` would find: a preset, the local model
    /// or the config's own.
    fn known_provider(&self, name: &str) -> bool {
        name == crate::config::LOCAL_PROVIDER
            || axon_llm::preset(name).is_some()
            || self.providers.iter().any(|p| p == name)
    }

    /// A new session titled `title`; `None` when the session is not
    /// recorded.
    pub fn create(
        &mut self,
        title: &str,
        (provider, model): (&str, &str),
    ) -> Result<Option<Opened>> {
        if !self.record {
            return Ok(None);
        }
        let id = self.next_id.take().unwrap_or_else(axon_store::new_session_id);
        let redactor = self.redactor.clone();
        let writer =
            self.store.create_as(&id, title, &self.workspace, provider, model, redactor)?;
        Ok(Some(Opened {
            journal: Arc::new(SessionJournal::new(writer, self.events.clone(), 0)),
            resumed: None,
            plan: None,
            calls: Vec::new(),
        }))
    }

    /// An existing session to go on with; `None` for [`SessionChoice::New`].
    pub fn continue_(
        &self,
        choice: &SessionChoice,
        (provider, model): (&str, &str),
    ) -> Result<Option<Opened>> {
        let session: Session = match choice {
            SessionChoice::New | SessionChoice::NewAs(_) => return Ok(None),
            SessionChoice::Latest => match self.store.latest(&self.workspace)? {
                Some(session) => session,
                None => bail!(
                    "there is no session to continue in {}; start one with `axon run \"TASK\"`",
                    self.workspace.display()
                ),
            },
            SessionChoice::Id(id) => self.store.open(id)?,
        };
        for warning in &session.warnings {
            self.events.emit(AgentEvent::Warning { message: warning.clone() });
        }
        let recorded = std::path::Path::new(&session.header.workspace);
        if recorded != self.workspace {
            self.events.emit(AgentEvent::Warning {
                message: format!(
                    "session {} was recorded in {}; its tools now work in {}",
                    session.header.id,
                    recorded.display(),
                    self.workspace.display()
                ),
            });
        }
        let writer = self.store.append_to(&session, self.redactor.clone())?;
        let journal =
            Arc::new(SessionJournal::new(writer, self.events.clone(), session.turn_count()));
        // A session goes on with the model this session was opened with
        // (the config's, or the front end's choice), as Codex and Claude
        // Code resume; the user is told when the session last talked to
        // another, and how to go back to it.
        let (last_provider, last_model) = session.model();
        if (last_provider, last_model) != (provider, model) {
            // Advice only where it works: another model of this provider,
            // or a provider the config knows (not an imported session's
            // `claude-code`).
            let back = if last_provider == provider {
                format!(" (`/model {last_model}` goes back to it)")
            } else if self.known_provider(last_provider) {
                format!(" (`--provider {last_provider} --model {last_model}` goes back to it)")
            } else {
                String::new()
            };
            self.events.emit(AgentEvent::Info {
                message: format!(
                    "session {} last talked to {last_provider}/{last_model}; it goes on with \
                     {provider}/{model}, the model this session was opened with{back}",
                    session.header.id
                ),
            });
            journal.append(&Record::Model {
                provider: provider.into(),
                model: model.into(),
                at: now_ms(),
            });
        }
        Ok(Some(Opened {
            journal,
            resumed: Some(session.history_with_tokens()),
            plan: session.plan().cloned(),
            calls: session.calls().into_iter().map(|(m, usage)| (m.to_string(), usage)).collect(),
        }))
    }
}

/// Everything secret this session knows the value of: the provider's key,
/// every provider key variable in the environment, the variables in
/// `other_key_vars` (the web search API's key), the credentials of MCP
/// servers, and `known` (secrets read already: the telemetry collector's
/// header values).
pub fn secrets(
    api_key: Option<&str>,
    servers: &[axon_mcp::config::ServerConfig],
    api_key_env: &str,
    other_key_vars: &[String],
    known: &[String],
) -> Redactor {
    let mut values: Vec<String> = api_key.map(String::from).into_iter().collect();
    values.extend(known.iter().cloned());
    let others = other_key_vars.iter().map(String::as_str);
    for var in axon_llm::key_variables().into_iter().chain([api_key_env]).chain(others) {
        if let Ok(value) = std::env::var(var) {
            values.push(value);
        }
    }
    for server in servers {
        if let axon_mcp::config::Transport::Http { headers, bearer_token_env, .. } =
            &server.transport
        {
            // Only headers that carry credentials: masking every value would
            // also hide ordinary words like `application/json`.
            values.extend(
                headers
                    .iter()
                    .filter(|(name, _)| {
                        let name = name.to_ascii_lowercase();
                        ["auth", "key", "token", "secret", "cookie"]
                            .iter()
                            .any(|k| name.contains(k))
                    })
                    .map(|(_, value)| value.clone()),
            );
            if let Some(value) = bearer_token_env.as_ref().and_then(|var| std::env::var(var).ok()) {
                values.push(value);
            }
            values.extend(axon_mcp::auth::stored_secrets(server));
        }
    }
    Redactor::new(values)
}
