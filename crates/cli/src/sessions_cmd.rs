//! `axon sessions list | show | export | rm`: the saved sessions.

use std::path::PathBuf;

use axon_runtime::trajectory;
use axon_runtime::trajectory::SavedSession;
use axon_runtime::{SessionStore, StoreError, to_json, to_markdown};
use clap::{Subcommand, ValueEnum};

use crate::config::Dirs;
use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// The sessions of this workspace, newest first.
    List {
        /// Every workspace's sessions.
        #[arg(long)]
        all: bool,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// One session as readable text.
    Show { id: String },
    /// One session as Markdown (default), the JSON conversation, or an
    /// ATIF trajectory (the format Harbor and other agent harnesses read).
    Export {
        id: String,
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
    },
    /// Delete a session.
    Rm { id: String },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Md,
    Json,
    /// ATIF (Agent Trajectory Interchange Format) JSON.
    Atif,
}

pub fn run(command: SessionsCommand) -> u8 {
    let store = match Dirs::from_env() {
        Ok(dirs) => SessionStore::new(&dirs.data),
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    match execute(&store, command) {
        Ok(code) => code,
        Err(e @ (StoreError::NotFound(_) | StoreError::Ambiguous { .. })) => {
            eprintln!("axon: {e}");
            exit::USAGE
        }
        Err(e) => {
            eprintln!("axon: {e}");
            exit::FAILED
        }
    }
}

fn execute(store: &SessionStore, command: SessionsCommand) -> Result<u8, StoreError> {
    match command {
        SessionsCommand::List { all, dir } => {
            let root = std::fs::canonicalize(&dir).unwrap_or(dir);
            let sessions = store.list(if all { None } else { Some(&root) })?;
            if sessions.is_empty() {
                eprintln!(
                    "axon: no sessions{} yet",
                    if all { String::new() } else { format!(" in {}", root.display()) }
                );
                return Ok(exit::OK);
            }
            for s in sessions {
                let place = if all { format!("  {}", s.workspace) } else { String::new() };
                let undone = match s.undone {
                    0 => String::new(),
                    n => format!("  ({n} undone by a rewind)"),
                };
                say(&format!(
                    "{}  {}  {:>4} msgs  {:>8} tokens  {}{undone}{place}",
                    s.id,
                    when(s.updated_at),
                    s.messages,
                    s.tokens,
                    s.title
                ));
            }
        }
        SessionsCommand::Show { id } => {
            let session = store.open(&id)?;
            for warning in &session.warnings {
                eprintln!("axon: warning: {warning}");
            }
            say(to_markdown(&session).trim_end());
        }
        SessionsCommand::Export { id, format } => {
            let session = store.open(&id)?;
            let text = match format {
                // It names the lines it left out itself.
                Format::Atif => return Ok(export_atif(&session)),
                Format::Md => to_markdown(&session).trim_end().to_string(),
                Format::Json => to_json(&session),
            };
            for warning in &session.warnings {
                eprintln!("axon: warning: {warning}");
            }
            say(&text);
        }
        SessionsCommand::Rm { id } => {
            // Its checkpoints go with it.
            let (removed, problem) = axon_runtime::rewind::remove_session(store, &id)?;
            eprintln!("axon: removed session {removed}");
            if let Some(problem) = problem {
                eprintln!("axon: warning: {problem}");
            }
        }
    }
    Ok(exit::OK)
}

/// `axon sessions export ID --format atif`: the trajectory on stdout, each
/// line of the session file that could not be read named on stderr.
fn export_atif(session: &SavedSession) -> u8 {
    match trajectory::from_session(session) {
        Ok(export) => {
            for skipped in &export.skipped {
                eprintln!("axon: warning: left out of the trajectory: {skipped}");
            }
            say(trajectory::atif_json(&export.trajectory).trim_end());
            exit::OK
        }
        Err(e) => {
            eprintln!("axon: {e}");
            exit::FAILED
        }
    }
}

/// `2026-11-22 14:05` (UTC) for a time in milliseconds since the epoch.
fn when(ms: i64) -> String {
    let axon_runtime::Utc { year, month, day, hour, minute, .. } = axon_runtime::Utc::from_ms(ms);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}")
}
