//! The session folder: creating, appending to, listing, finding and removing
//! sessions.
//!
//! Durability: a new file's header is synced, and so is the folder entry
//! naming it, before [`SessionStore::create`] returns. Each record is then
//! handed to the operating system in one write as it is appended (a crash
//! or `kill -9` of axon loses none of them) and reaches the disk at the
//! next [`SessionWriter::sync`], which callers make at each turn's end (a
//! power loss can lose the records since then).
//!
//! Privacy: the data folder and its `sessions/` are 0700 and every session
//! file 0600 (an older file is made so when it is next appended to), so no
//! other local user reads what was said.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use axon_protocol::{Conversation, ConversationMetadata, Message, Usage, Utc};

use crate::load::{LoadError, load};
use crate::record::{HEADER_TYPE, Header, HeaderLine, Record, SESSION_VERSION};
use crate::redact::Redactor;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} {path}: {source}")]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("no session matches '{0}'; `axon sessions list --all` shows them")]
    NotFound(String),
    #[error("'{prefix}' matches several sessions ({}); give more of the id", .matches.join(", "))]
    Ambiguous { prefix: String, matches: Vec<String> },
    #[error("'{0}' is not a session id (letters, digits and '-' only)")]
    BadId(String),
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |source| StoreError::Io { action, path: path.to_path_buf(), source }
}

pub(crate) fn now_ms() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// The folder holding every session file.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// A session as `axon sessions list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub workspace: String,
    pub model: String,
    pub created_at: i64,
    /// When the file was last written (milliseconds since the epoch).
    pub updated_at: i64,
    /// Messages the conversation holds: those recorded, less those taken
    /// back since (`undone`).
    pub messages: usize,
    /// Messages a rewind (or a refused request) took back; the file keeps
    /// them.
    pub undone: usize,
    pub tokens: u64,
    pub path: PathBuf,
}

impl SessionStore {
    /// Sessions under `data_dir/sessions`.
    pub fn new(data_dir: &Path) -> Self {
        SessionStore { dir: data_dir.join("sessions") }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The data folder the sessions are kept in (where checkpoints are too).
    pub fn data_dir(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }

    /// Starts a new session file and writes its header.
    pub fn create(
        &self,
        title: &str,
        workspace: &Path,
        provider: &str,
        model: &str,
        redactor: Redactor,
    ) -> Result<SessionWriter, StoreError> {
        self.create_as(&new_session_id(), title, workspace, provider, model, redactor)
    }

    /// Starts a new session file under `id`, one [`new_session_id`] made
    /// earlier (a front end that names the session before anything is
    /// said in it, as an editor does).
    pub fn create_as(
        &self,
        id: &str,
        title: &str,
        workspace: &Path,
        provider: &str,
        model: &str,
        redactor: Redactor,
    ) -> Result<SessionWriter, StoreError> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(StoreError::BadId(id.to_string()));
        }
        // Sessions hold what the user and the tools said: the data folder
        // and its sessions are the user's alone, whatever the umask.
        private_dir(self.data_dir()).map_err(io("create", self.data_dir()))?;
        private_dir(&self.dir).map_err(io("create", &self.dir))?;
        let created_at = now_ms();
        let id = id.to_string();
        let header = Header {
            version: SESSION_VERSION,
            id: id.clone(),
            // Masked before it is cut short, so no half key survives the cut.
            title: title_from(&redactor.redact(title)),
            workspace: workspace.display().to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            created_at,
        };
        let path = self.dir.join(format!("{id}.jsonl"));
        let mut options = OpenOptions::new();
        options.create_new(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(io("create", &path))?;
        let mut writer = SessionWriter { file, path, redactor, id };
        let line = HeaderLine { kind: HEADER_TYPE.to_string(), header };
        writer.write_line(&serde_json::to_string(&line).unwrap_or_default())?;
        // A new file: its size and its name in the folder must reach the
        // disk too, or a power loss could leave no file to append to.
        writer.file.sync_all().map_err(io("sync", &writer.path))?;
        sync_folder(&self.dir)?;
        Ok(writer)
    }

    /// Opens an existing session to append to it. A last line a crash left
    /// without its newline is ended first, so the next record starts a line
    /// of its own instead of being glued to (and lost with) the torn one.
    pub fn append_to(
        &self,
        session: &Session,
        redactor: Redactor,
    ) -> Result<SessionWriter, StoreError> {
        let ends_cleanly = std::fs::read(&session.path)
            .map(|bytes| bytes.last().is_none_or(|&b| b == b'\n'))
            .map_err(io("read", &session.path))?;
        let mut file = OpenOptions::new()
            .append(true)
            .open(&session.path)
            .map_err(io("open", &session.path))?;
        // A file an older axon made world-readable is the user's alone from
        // now on.
        private_file(&file).map_err(io("protect", &session.path))?;
        if !ends_cleanly {
            file.write_all(b"\n").map_err(io("write", &session.path))?;
        }
        Ok(SessionWriter {
            file,
            path: session.path.clone(),
            redactor,
            id: session.header.id.clone(),
        })
    }

    /// Takes back the newest `messages` messages of a saved session (a
    /// `withdrawn` record, synced; the file keeps them).
    pub fn withdraw(&self, session: &Session, messages: usize) -> Result<(), StoreError> {
        let mut writer = self.append_to(session, Redactor::new(Vec::new()))?;
        writer.append(&Record::Withdrawn { messages, at: now_ms() })?;
        writer.sync()
    }

    /// Every session, newest first; those of `workspace` only when given.
    /// Files that cannot be read are left out of the list, not fatal.
    /// Titles are masked again: files written before titles were redacted
    /// may hold a key.
    pub fn list(&self, workspace: Option<&Path>) -> Result<Vec<SessionSummary>, StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(StoreError::Io { action: "read", path: self.dir.clone(), source: e });
            }
        };
        let wanted = workspace.map(|w| w.display().to_string());
        let redactor = Redactor::default();
        let mut sessions: Vec<SessionSummary> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|path| summarize(&path, &redactor).ok())
            .filter(|s| wanted.as_ref().is_none_or(|w| &s.workspace == w))
            .collect();
        sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.id.cmp(&a.id)));
        Ok(sessions)
    }

    /// The file of the session whose id is exactly `id`, if there is one.
    pub fn find_exact(&self, id: &str) -> Option<PathBuf> {
        let exact = self.dir.join(format!("{id}.jsonl"));
        (!id.is_empty() && !id.contains(['/', '\\']) && exact.is_file()).then_some(exact)
    }

    /// The session whose id is `id` or starts with it.
    pub fn find(&self, id: &str) -> Result<PathBuf, StoreError> {
        if let Some(exact) = self.find_exact(id) {
            return Ok(exact);
        }
        let mut matches: Vec<String> = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .filter_map(|name| name.strip_suffix(".jsonl").map(String::from))
                .filter(|name| !id.is_empty() && name.starts_with(id))
                .collect(),
            Err(_) => Vec::new(),
        };
        matches.sort();
        match matches.len() {
            0 => Err(StoreError::NotFound(id.to_string())),
            1 => Ok(self.dir.join(format!("{}.jsonl", matches[0]))),
            _ => Err(StoreError::Ambiguous { prefix: id.to_string(), matches }),
        }
    }

    /// Loads the session `id` (or unique prefix).
    pub fn open(&self, id: &str) -> Result<Session, StoreError> {
        Ok(load(&self.find(id)?)?)
    }

    /// The newest session of `workspace`.
    pub fn latest(&self, workspace: &Path) -> Result<Option<Session>, StoreError> {
        match self.list(Some(workspace))?.first() {
            Some(summary) => Ok(Some(load(&summary.path)?)),
            None => Ok(None),
        }
    }

    /// Removes the session `id` (or unique prefix): its file and its
    /// images.
    pub fn remove(&self, id: &str) -> Result<String, StoreError> {
        let path = self.find(id)?;
        std::fs::remove_file(&path).map_err(io("remove", &path))?;
        crate::images::remove_blobs(&path)
            .map_err(io("remove", &crate::images::blob_dir(&path)))?;
        Ok(path.file_stem().and_then(|s| s.to_str()).unwrap_or(id).to_string())
    }
}

/// A fresh session id: the time it was made and four random characters.
pub fn new_session_id() -> String {
    new_id(now_ms())
}

/// Ids sort by creation time and are unique without coordination:
/// `YYYYMMDD-HHMMSS-xxxx` (UTC) with a random suffix.
fn new_id(created_at: i64) -> String {
    let Utc { year, month, day, hour, minute, second } = Utc::from_ms(created_at);
    let suffix: String = (0..4).map(|_| fastrand::alphanumeric().to_ascii_lowercase()).collect();
    format!("{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}-{suffix}")
}

/// A title from the first prompt: its first line, at most 60 characters.
fn title_from(prompt: &str) -> String {
    let line = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    if title.is_empty() { "(untitled)".to_string() } else { title }
}

/// A list entry without parsing every message: the header, the line count
/// and the usage lines.
fn summarize(path: &Path, redactor: &Redactor) -> Result<SessionSummary, StoreError> {
    let file = File::open(path).map_err(io("open", path))?;
    let updated_at = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0);
    let mut lines = BufReader::new(file).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let header: HeaderLine = serde_json::from_str(&first)
        .map_err(|e| LoadError::BadHeader { path: path.to_path_buf(), reason: e.to_string() })?;
    let (mut messages, mut undone, mut tokens) = (0usize, 0usize, 0);
    for line in lines.map_while(Result::ok) {
        if line.starts_with(r#"{"type":"message""#) {
            messages += 1;
        } else if line.starts_with(r#"{"type":"withdrawn""#)
            && let Ok(Record::Withdrawn { messages: taken, .. }) = serde_json::from_str(&line)
        {
            undone += taken;
        } else if line.starts_with(r#"{"type":"usage""#)
            && let Ok(Record::Usage { usage }) = serde_json::from_str(&line)
        {
            tokens += usage.total();
        }
    }
    let h = header.header;
    Ok(SessionSummary {
        id: h.id,
        title: redactor.redact(&h.title),
        workspace: h.workspace,
        model: h.model,
        created_at: h.created_at,
        updated_at,
        messages: messages.saturating_sub(undone),
        undone: undone.min(messages),
        tokens,
        path: path.to_path_buf(),
    })
}

/// Appends records to one session file: each is with the operating system
/// when [`SessionWriter::append`] returns, and on the disk once
/// [`SessionWriter::sync`] has been called after it.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    redactor: Redactor,
    id: String,
}

impl SessionWriter {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `record` (redacted) as one line. When this returns the line
    /// is in the operating system's hands, so it survives axon crashing or
    /// being killed; it is not yet on the disk (see [`SessionWriter::sync`]).
    pub fn append(&mut self, record: &Record) -> Result<(), StoreError> {
        let mut value = serde_json::to_value(record).unwrap_or_default();
        // Images go to the session's image folder first: the line keeps
        // their hash, and the redactor has no base64 to search.
        crate::images::externalize(&mut value, &self.path);
        self.redactor.redact_value(&mut value);
        self.write_line(&value.to_string())
    }

    /// Puts every record appended so far on the disk (`fdatasync`), so a
    /// power loss or an operating-system crash cannot take them. One call
    /// per turn keeps the cost of a disk flush off every record.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(io("sync", &self.path))
    }

    fn write_line(&mut self, line: &str) -> Result<(), StoreError> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        // One write per line: a crash tears at most this line. `File` keeps
        // no buffer of its own, so once `write_all` returns the line is in
        // the kernel's page cache, where the death of this process cannot
        // reach it; `flush` is there for the day a buffer is put in front.
        self.file.write_all(&bytes).map_err(io("write", &self.path))?;
        self.file.flush().map_err(io("write", &self.path))
    }
}

/// Makes the entries of `dir` (a file just created in it) durable. Only
/// Unix lets a folder be opened and synced; elsewhere the file system
/// keeps its own metadata journal and there is nothing to call.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> Result<(), StoreError> {
    File::open(dir).and_then(|folder| folder.sync_all()).map_err(io("sync", dir))
}

#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// A loaded session.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub path: PathBuf,
    pub header: Header,
    pub records: Vec<Record>,
    /// What loading had to skip or repair, one sentence each.
    pub warnings: Vec<String>,
}

impl Session {
    /// Every message recorded, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.records.iter().filter_map(|r| match r {
            Record::Message { message, .. } => Some(message),
            _ => None,
        })
    }

    /// The history to resume with: the recorded messages with every
    /// compaction applied (its summary leads the first kept user message).
    pub fn history(&self) -> Vec<Message> {
        self.history_with_tokens().0
    }

    /// [`Session::history`] with each message's recorded token count, where
    /// one was recorded and still applies (a message a summary was put into
    /// has none).
    pub fn history_with_tokens(&self) -> (Vec<Message>, Vec<Option<u64>>) {
        let mut history: Vec<Message> = Vec::new();
        let mut tokens: Vec<Option<u64>> = Vec::new();
        for record in &self.records {
            match record {
                Record::Message { message, tokens: count } => {
                    history.push(message.clone());
                    tokens.push(*count);
                }
                Record::Withdrawn { messages, .. } => {
                    let keep = history.len().saturating_sub(*messages);
                    history.truncate(keep);
                    tokens.truncate(keep);
                }
                Record::Compaction { summary, carried, kept, .. } => {
                    let replaced = history.len().saturating_sub(*kept);
                    history.drain(..replaced);
                    tokens.drain(..replaced);
                    // apply_summary drops the non-user messages before the first
                    // user message, which then leads with the summary: recount it.
                    let leading = history
                        .iter()
                        .position(|m| m.role == axon_protocol::Role::User)
                        .unwrap_or(history.len());
                    axon_protocol::compaction::apply_summary(
                        &mut history,
                        summary,
                        carried.as_deref(),
                    );
                    tokens.drain(..leading.min(tokens.len()));
                    match tokens.first_mut() {
                        Some(first) => *first = None,
                        None => tokens.push(None),
                    }
                }
                _ => {}
            }
        }
        (history, tokens)
    }

    /// The session's current plan (plan mode), if it has one.
    pub fn plan(&self) -> Option<&axon_protocol::Plan> {
        self.records.iter().rev().find_map(|r| match r {
            Record::Plan { plan } => Some(plan),
            _ => None,
        })
    }

    /// The model the session last ran with.
    pub fn model(&self) -> (&str, &str) {
        let mut current = (self.header.provider.as_str(), self.header.model.as_str());
        for record in &self.records {
            if let Record::Model { provider, model, .. } = record {
                current = (provider, model);
            }
        }
        current
    }

    /// Each recorded model call's usage, with the model the session ran
    /// with when it was made (a fallback's switch is recorded before its
    /// calls).
    pub fn calls(&self) -> Vec<(&str, Usage)> {
        let mut model = self.header.model.as_str();
        let mut calls = Vec::new();
        for record in &self.records {
            match record {
                Record::Model { model: next, .. } => model = next,
                Record::Usage { usage } => calls.push((model, *usage)),
                _ => {}
            }
        }
        calls
    }

    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for record in &self.records {
            if let Record::Usage { usage } = record {
                total.input_tokens += usage.input_tokens;
                total.output_tokens += usage.output_tokens;
                total.cached_input_tokens += usage.cached_input_tokens;
                total.reasoning_tokens += usage.reasoning_tokens;
            }
        }
        total
    }

    /// The session as the protocol's `Conversation` (seed 002).
    pub fn conversation(&self) -> Conversation {
        let messages: Vec<Message> = self.messages().cloned().collect();
        let mut tools_used: Vec<String> = Vec::new();
        for message in &messages {
            for call in &message.tool_calls {
                if !tools_used.contains(&call.name) {
                    tools_used.push(call.name.clone());
                }
            }
        }
        let updated_at =
            messages.iter().filter_map(|m| m.timestamp_ms).max().unwrap_or(self.header.created_at);
        let mut extra = serde_json::Map::new();
        extra.insert("workspace".into(), self.header.workspace.clone().into());
        extra.insert("provider".into(), self.model().0.into());
        // Messages a rewind took back, by index into `messages`.
        let undone: Vec<usize> = (self.undone_messages().into_iter().enumerate())
            .filter_map(|(i, undone)| undone.then_some(i))
            .collect();
        if !undone.is_empty() {
            extra.insert("undone_messages".into(), undone.into());
        }
        Conversation {
            version: axon_protocol::CONVERSATION_VERSION,
            id: self.header.id.clone(),
            title: self.header.title.clone(),
            messages,
            metadata: ConversationMetadata {
                model: self.model().1.to_string(),
                total_tokens: self.usage().total(),
                tools_used,
                extra,
            },
            created_at: self.header.created_at,
            updated_at,
        }
    }
}

/// Creates `dir` (and its parents) and makes it the owner's alone (0700).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Makes the open `file` the owner's alone (0600).
fn private_file(file: &File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time_and_dates_are_right() {
        let id = new_id(1_795_392_000_000 + 3_723_000);
        assert!(id.starts_with("20261123-010203-") && id.len() == 20, "{id}");
        assert!(new_id(1_000_000_000_000) < new_id(2_000_000_000_000));
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(title_from("\n  fix the bug\nin main"), "fix the bug");
        assert_eq!(title_from(""), "(untitled)");
        assert_eq!(title_from(&"x".repeat(70)).chars().count(), 61);
    }
}
