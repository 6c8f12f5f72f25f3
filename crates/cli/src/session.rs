//! Connecting a run to its session file: a new one, or the one being
//! continued, recorded through the agent's `Journal`.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Result, bail};
use axon_core::Journal;
use axon_protocol::{Message, Usage};
use axon_store::{Record, Redactor, Session, SessionStore, SessionWriter};

/// Which session a run belongs to.
pub enum Choice<'a> {
    New,
    /// `--continue`: the latest session of this workspace.
    Latest,
    /// `--resume ID` or `--compact ID`.
    Id(&'a str),
}

/// Records into one session file. A write that fails is reported once and
/// the run goes on: losing the record must not lose the work.
pub struct SessionJournal {
    writer: Mutex<SessionWriter>,
    failed: Mutex<bool>,
}

impl SessionJournal {
    pub fn new(writer: SessionWriter) -> Self {
        SessionJournal { writer: Mutex::new(writer), failed: Mutex::new(false) }
    }

    fn append(&self, record: &Record) {
        let result = self.writer.lock().unwrap_or_else(PoisonError::into_inner).append(record);
        if let Err(e) = result {
            let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
            if !*failed {
                *failed = true;
                eprintln!("axon: warning: the session is no longer being saved: {e}");
            }
        }
    }
}

impl SessionJournal {
    pub fn id(&self) -> String {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner).id().to_string()
    }

    /// Saves the plan as it stands now.
    pub fn plan(&self, plan: &axon_protocol::Plan) {
        self.append(&Record::Plan { plan: plan.clone() });
    }
}

impl Journal for SessionJournal {
    fn message(&self, message: &Message, tokens: u64) {
        self.append(&Record::Message { message: message.clone(), tokens: Some(tokens) });
    }

    fn usage(&self, usage: &Usage) {
        self.append(&Record::Usage { usage: *usage });
    }

    fn compacted(&self, summary: &str, kept: usize) {
        let at = now_ms();
        self.append(&Record::Compaction { summary: summary.to_string(), kept, at });
    }

    fn turn_failed(&self, reason: &str) {
        self.append(&Record::TurnFailed { reason: reason.to_string(), at: now_ms() });
    }
}

fn now_ms() -> i64 {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// The history a continued session resumes with, and its recorded token
/// counts.
pub type Resumed = (Vec<Message>, Vec<Option<u64>>);

/// A run's session: where it records, and what it continues from.
pub struct Opened {
    pub journal: Arc<SessionJournal>,
    pub resumed: Option<Resumed>,
    /// The session's current plan (plan mode).
    pub plan: Option<axon_protocol::Plan>,
}

/// Opens or starts the session for a run.
pub fn open(
    store: &SessionStore,
    choice: Choice<'_>,
    workspace: &Path,
    title: &str,
    (provider, model): (&str, &str),
    redactor: Redactor,
) -> Result<Opened> {
    let session: Option<Session> = match choice {
        Choice::New => None,
        Choice::Latest => match store.latest(workspace)? {
            Some(session) => Some(session),
            None => bail!(
                "there is no session to continue in {}; start one with `axon run \"TASK\"`",
                workspace.display()
            ),
        },
        Choice::Id(id) => Some(store.open(id)?),
    };
    let Some(session) = session else {
        let writer = store.create(title, workspace, provider, model, redactor)?;
        return Ok(Opened {
            journal: Arc::new(SessionJournal::new(writer)),
            resumed: None,
            plan: None,
        });
    };
    for warning in &session.warnings {
        eprintln!("axon: warning: {warning}");
    }
    let writer = store.append_to(&session, redactor)?;
    let journal = Arc::new(SessionJournal::new(writer));
    // A session whose model is gone goes on with the current one.
    if session.model() != (provider, model) {
        journal.append(&Record::Model {
            provider: provider.into(),
            model: model.into(),
            at: now_ms(),
        });
    }
    Ok(Opened {
        journal,
        resumed: Some(session.history_with_tokens()),
        plan: session.plan().cloned(),
    })
}

/// Everything secret this run knows the value of.
pub fn secrets(
    api_key: Option<&str>,
    servers: &[axon_mcp::config::ServerConfig],
    api_key_env: &str,
) -> Redactor {
    let mut values: Vec<String> = api_key.map(String::from).into_iter().collect();
    let known = ["AXON_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY"];
    for var in known.into_iter().chain(["OPENROUTER_API_KEY", api_key_env]) {
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
        }
    }
    Redactor::new(values)
}
