//! `axon rewind`: a saved session back to just before one of its turns:
//! the files its turns changed (from the turn's checkpoint), its
//! conversation, or both; `--undo SNAPSHOT` puts the files back as a
//! rewind found them.

use std::path::PathBuf;

use axon_runtime::SessionStore;
use axon_runtime::config::Dirs;
use axon_runtime::rewind::{RewindScope, describe, describe_undo, rewind_saved, undo};
use clap::Args;

use crate::{exit, say};

#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The session (an id or a unique start of one); default: this
    /// workspace's latest.
    #[arg(long)]
    session: Option<String>,
    /// The turn to go back to just before; default: the latest turn (undo
    /// it).
    #[arg(long)]
    turn: Option<u32>,
    /// Restore the files only; the conversation goes on as it is.
    #[arg(long, conflicts_with = "conversation_only")]
    files_only: bool,
    /// Take back the conversation only; the files stay as they are.
    #[arg(long)]
    conversation_only: bool,
    /// List the session's turns instead (which changed files).
    #[arg(long)]
    list: bool,
    /// Undo a rewind: every file back as the snapshot its report named
    /// (`undo with axon rewind --undo ID`).
    #[arg(long, value_name = "SNAPSHOT", conflicts_with_all = ["list", "turn", "files_only", "conversation_only"])]
    undo: Option<String>,
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
}

pub fn run(args: RewindArgs) -> u8 {
    match execute(args) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: {e:#}");
            exit::FAILED
        }
    }
}

fn execute(args: RewindArgs) -> anyhow::Result<()> {
    let dirs = Dirs::from_env()?;
    let store = SessionStore::new(&dirs.data);
    let session = match &args.session {
        Some(id) => store.open(id)?,
        None => {
            let root = std::fs::canonicalize(&args.dir)?;
            store.latest(&root)?.ok_or_else(|| {
                anyhow::anyhow!("there is no session in {} to rewind", root.display())
            })?
        }
    };
    for warning in &session.warnings {
        eprintln!("axon: warning: {warning}");
    }
    if let Some(snapshot) = &args.undo {
        let restored = undo(store.data_dir(), &session, snapshot)?;
        for line in describe_undo(&session.header.id, &restored) {
            say(&line);
        }
        say(&format!("session {}", session.header.id));
        return Ok(());
    }
    if args.list {
        for turn in session.turns() {
            let files = if turn.changed_files { "changed files" } else { "no file changes" };
            let prompt = turn.prompt.lines().next().unwrap_or_default();
            say(&format!("{:>4}  {files:<15}  {prompt}", turn.turn));
        }
        return Ok(());
    }
    let turn = match args.turn {
        Some(turn) => turn,
        None => session.last_turn().unwrap_or(0),
    };
    let scope = if args.files_only {
        RewindScope::Files
    } else if args.conversation_only {
        RewindScope::Conversation
    } else {
        RewindScope::Both
    };
    let report = rewind_saved(&store, &session, turn, scope)?;
    for line in describe(&report) {
        say(&line);
    }
    say(&format!("session {}", session.header.id));
    Ok(())
}
