//! `axon sessions import`: another agent's session saved as an axon session
//! that `--resume` continues with any provider. Finds Claude Code's
//! transcripts of a workspace (`$CLAUDE_CONFIG_DIR` or `~/.claude`,
//! `projects/<the folder's path with every other character a dash>/`) and
//! Codex's rollouts (`$CODEX_HOME` or `~/.codex`, `sessions/YYYY/MM/DD/`,
//! those whose `session_meta` names the workspace), newest first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use axon_store::foreign::Imported;
pub use axon_store::foreign::Source;
use axon_store::{Record, Redactor, SessionStore};

/// A session of another agent found on disk.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub modified: SystemTime,
    /// Its first request, for the user to tell them apart.
    pub title: String,
}

/// What an import made.
#[derive(Debug)]
pub struct ImportReport {
    /// The new axon session.
    pub id: String,
    pub source: Source,
    pub messages: usize,
    pub workspace: PathBuf,
    /// What could not be mapped or was left out.
    pub notes: Vec<String>,
}

/// `source`'s sessions of `workspace`, newest first.
pub fn find(source: Source, workspace: &Path) -> Result<Vec<Found>> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let from = |var: &str, dir: &str| {
        std::env::var_os(var).map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(dir)))
    };
    let files = match source {
        Source::Claude => {
            let Some(root) = from("CLAUDE_CONFIG_DIR", ".claude") else {
                bail!("HOME is not set, so Claude Code's folder is unknown: set CLAUDE_CONFIG_DIR")
            };
            let encoded: String = workspace
                .display()
                .to_string()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            jsonl_files(&root.join("projects").join(encoded), 1)
        }
        Source::Codex => {
            let Some(root) = from("CODEX_HOME", ".codex") else {
                bail!("HOME is not set, so Codex's folder is unknown: set CODEX_HOME")
            };
            // sessions/YYYY/MM/DD/rollout-*.jsonl, of every workspace
            jsonl_files(&root.join("sessions"), 4)
        }
    };
    // Each file is read once: Codex's are told apart by the folder their
    // `session_meta` names (in its first records), and a match is read
    // whole for its title.
    let mut found = Vec::new();
    for (path, modified) in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if source == Source::Codex
            && Imported::read(source, first_lines(&text)).workspace.as_deref() != Some(workspace)
        {
            continue;
        }
        let title = Imported::read(source, &text).title();
        found.push(Found { path, modified, title });
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.modified));
    Ok(found)
}

/// Reads `path` (from `source`, or as its content says) and saves it as a
/// new session in `data`.
pub fn import(data: &Path, path: &Path, source: Option<Source>) -> Result<ImportReport> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the session file {}", path.display()))?;
    let Some(source) = source.or_else(|| Source::detect(&text)) else {
        bail!(
            "{} is neither a Claude Code transcript nor a Codex rollout (no `sessionId` or \
             `session_meta` in its first records); name one with --from",
            path.display()
        );
    };
    let imported = Imported::read(source, &text);
    if imported.messages.is_empty() {
        bail!("{} holds no conversation to import", path.display());
    }
    let workspace = imported
        .workspace
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let store = SessionStore::new(data);
    let model = imported.model.clone().unwrap_or_else(|| "unknown".to_string());
    let mut writer = store
        .create(&imported.title(), &workspace, source.name(), &model, Redactor::default())
        .context("cannot save the imported session")?;
    for message in &imported.messages {
        writer
            .append(&Record::message(message.clone()))
            .context("cannot save the imported session")?;
    }
    let id = writer.id().to_string();
    Ok(ImportReport {
        id,
        source,
        messages: imported.messages.len(),
        workspace,
        notes: imported.notes,
    })
}

/// The `.jsonl` files up to `depth` folders below `dir`, with their times.
fn jsonl_files(dir: &Path, depth: usize) -> Vec<(PathBuf, SystemTime)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() && depth > 1 {
            out.extend(jsonl_files(&path, depth - 1));
        } else if meta.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            out.push((path, meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
        }
    }
    out
}

/// The first few records, enough for a rollout's `session_meta`.
fn first_lines(text: &str) -> &str {
    let end = text.match_indices('\n').nth(4).map_or(text.len(), |(at, _)| at);
    &text[..end]
}
