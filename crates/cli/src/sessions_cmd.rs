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
    /// Save another agent's session as an axon session that `--resume`
    /// continues with any provider: a Claude Code transcript or a Codex
    /// rollout, by PATH, or this workspace's found with --from.
    Import {
        /// A `.jsonl` transcript (Claude Code) or rollout (Codex).
        path: Option<PathBuf>,
        /// Look for this agent's sessions of the workspace.
        #[arg(long, value_enum)]
        from: Option<Agent>,
        /// The newest one found (with --from).
        #[arg(long, requires = "from")]
        latest: bool,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
}

/// Another agent whose sessions can be imported.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Agent {
    /// Claude Code (`~/.claude/projects/`).
    Claude,
    /// Codex CLI (`~/.codex/sessions/`).
    Codex,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Md,
    Json,
    /// ATIF (Agent Trajectory Interchange Format) JSON.
    Atif,
}

pub fn run(command: SessionsCommand) -> u8 {
    if let SessionsCommand::Import { path, from, latest, dir } = command {
        return import(path, from, latest, &dir);
    }
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
            eprintln!("axon: {}", session_cost(&session));
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
        SessionsCommand::Import { .. } => unreachable!("handled in run"),
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

/// `axon sessions import`: one file, or the workspace's newest (or only)
/// session of an agent; with several and no --latest, the list to choose from.
fn import(path: Option<PathBuf>, from: Option<Agent>, latest: bool, dir: &std::path::Path) -> u8 {
    use axon_runtime::import::{self, Source};
    let source = from.map(|agent| match agent {
        Agent::Claude => Source::Claude,
        Agent::Codex => Source::Codex,
    });
    let data = match Dirs::from_env() {
        Ok(dirs) => dirs.data,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let path = match (path, source) {
        (Some(path), _) => path,
        (None, None) => {
            eprintln!(
                "axon: name a session file, or --from claude|codex to look for this workspace's"
            );
            return exit::USAGE;
        }
        (None, Some(source)) => {
            let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            let found = match import::find(source, &root) {
                Ok(found) => found,
                Err(e) => {
                    eprintln!("axon: {e:#}");
                    return exit::FAILED;
                }
            };
            match found.as_slice() {
                [] => {
                    eprintln!(
                        "axon: no {} sessions of {} were found",
                        source.name(),
                        root.display()
                    );
                    return exit::FAILED;
                }
                [only] => only.path.clone(),
                [newest, ..] if latest => newest.path.clone(),
                several => {
                    eprintln!(
                        "axon: {} {} sessions of {}; import one by its path, or the newest with --latest:",
                        several.len(),
                        source.name(),
                        root.display()
                    );
                    for found in several {
                        eprintln!("  {}  {}", found.path.display(), found.title);
                    }
                    return exit::USAGE;
                }
            }
        }
    };
    match import::import(&data, &path, source) {
        Ok(report) => {
            for note in &report.notes {
                eprintln!("axon: note: {note}");
            }
            eprintln!(
                "axon: imported {} messages of a {} session ({}) as {}; continue it with `axon --resume {}` in {}",
                report.messages,
                report.source.name(),
                path.display(),
                report.id,
                report.id,
                report.workspace.display()
            );
            say(&report.id);
            exit::OK
        }
        Err(e) => {
            eprintln!("axon: {e:#}");
            exit::FAILED
        }
    }
}

/// The session's cost, at the user's prices and the built-in ones, or why
/// it is unknown.
fn session_cost(session: &SavedSession) -> String {
    let file = axon_runtime::config::Dirs::from_env()
        .and_then(|dirs| {
            let here = std::env::current_dir().unwrap_or_default();
            axon_runtime::config::Effective::load(&dirs, &here)
        })
        .map(|config| config.file)
        .unwrap_or_default();
    match axon_runtime::recorded_cost(session, &file) {
        Some(usd) => format!("cost ${usd:.4}"),
        None => "cost unknown (no recorded call, or a model without a known price: see \
                 `[prices]` in the README)"
            .to_string(),
    }
}
