//! Rewinding a saved session to just before one of its turns: the files
//! (from the checkpoint that turn or a later one took before changing
//! anything), the conversation (the turn's messages and all after are taken
//! back by a `withdrawn` record; the file keeps them), or both.
//!
//! Guarantees: files are restored only from the session's own checkpoints
//! of the session's own workspace, and only those the rewound turns
//! changed: each turn's files are snapshotted before and after it, and a
//! file no rewound turn changed, or that changed again after the last of
//! them ended (the user's later edit), is left as it is and named. (A
//! session whose turns lack the snapshot after them, recorded by an older
//! axon, is restored whole, and the report says so.) The restore first
//! snapshots the files as they are, so a rewind can itself be undone: the
//! report names the whole command, `axon rewind --session ID --undo
//! SNAPSHOT` ([`undo`]), which works from any folder. A conversation that
//! cannot be cut back (a compaction
//! summarised it) is refused with the reason, and with `Both` nothing is
//! changed then: files and conversation move together or not at all.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use axon_checkpoint::{Checkpoints, Restored};
use axon_store::Session;

pub use axon_protocol::RewindScope;

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindReport {
    /// The session rewound.
    pub session: String,
    pub turn: u32,
    /// The request that began the turn.
    pub prompt: String,
    /// The files restored; `None` when the files were left alone (not
    /// asked, or nothing changed since).
    pub files: Option<Restored>,
    /// Messages taken back; `None` when the conversation was left alone.
    pub withdrawn: Option<usize>,
    /// Said to the user (what was not done and why).
    pub notes: Vec<String>,
}

/// The shadow repository of `workspace`'s checkpoints.
pub fn checkpoints(data: &Path, workspace: &Path) -> Result<Checkpoints> {
    Checkpoints::open(data, workspace).map_err(|e| anyhow!("{e}"))
}

/// Rewinds `session` (saved in `data`) to just before `turn`;
/// `withdraw(n)` records that the newest `n` messages are taken back (the
/// caller appends it to the session's file and, in a live session, cuts
/// the agent's history).
pub fn rewind(
    data: &Path,
    session: &Session,
    turn: u32,
    scope: RewindScope,
    withdraw: impl FnOnce(usize) -> Result<()>,
) -> Result<RewindReport> {
    let plan = session.rewind_to(turn).map_err(|why| anyhow!("{why}"))?;
    let mut notes: Vec<String> = plan
        .missed
        .iter()
        .map(|(t, why)| {
            format!(
                "turn {t} changed files without a checkpoint ({why}); what it changed is not undone"
            )
        })
        .collect();
    let cut = match (scope, &plan.withdraw) {
        (RewindScope::Files, _) => None,
        (_, Ok(n)) => Some(*n),
        (RewindScope::Both, Err(why)) => bail!("{why}; nothing was changed"),
        (RewindScope::Conversation, Err(why)) => bail!("{why}"),
    };
    let files = match (scope, &plan.snapshot) {
        (RewindScope::Conversation, _) => None,
        (_, None) if plan.missed.is_empty() => {
            notes.push(format!(
                "no tool changed a file from turn {turn} on; the files are as they were"
            ));
            None
        }
        (_, None) => None,
        (_, Some(id)) => {
            let workspace = PathBuf::from(&session.header.workspace);
            let checkpoints = checkpoints(data, &workspace)?;
            let restored = match &plan.changes {
                Some(changes) => checkpoints.restore_changes(&session.header.id, id, changes),
                None => {
                    notes.push(
                        "this session's turns were recorded without a snapshot after them: every \
                         file was restored as it was before the turn, later edits included \
                         (undo with the command above)"
                            .to_string(),
                    );
                    checkpoints.restore(&session.header.id, id)
                }
            }
            .map_err(|e| anyhow!("cannot restore the files of turn {turn}: {e}"))?;
            Some(restored)
        }
    };
    if let Some(n) = cut {
        withdraw(n)?;
    }
    let session = session.header.id.clone();
    Ok(RewindReport { session, turn, prompt: plan.prompt, files, withdrawn: cut, notes })
}

/// What [`rewind`] to just before `turn` would do, as lines to show before
/// asking the user (nothing is changed): the turn, the files the rewound
/// turns changed (those a rewind may put back), the messages taken back,
/// and what cannot be undone. An error says why there is nothing to do.
pub fn preview(
    data: &Path,
    session: &Session,
    turn: u32,
    scope: RewindScope,
) -> Result<Vec<String>> {
    let plan = session.rewind_to(turn).map_err(|why| anyhow!("{why}"))?;
    let mut lines = vec![format!("Rewind to before turn {turn}: {}", first_line(&plan.prompt))];
    if scope != RewindScope::Conversation {
        lines.push(match (&plan.snapshot, &plan.changes) {
            (None, _) => format!("files: no tool changed a file from turn {turn} on; none change"),
            (Some(_), Some(changes)) => {
                let workspace = PathBuf::from(&session.header.workspace);
                let paths = checkpoints(data, &workspace)?
                    .changed_paths(changes)
                    .map_err(|e| anyhow!("cannot read the checkpoints of turn {turn}: {e}"))?;
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                match names.len() {
                    0 => "files: the turns changed none in the end; none change".to_string(),
                    n => format!(
                        "files: {n} put back as they were before turn {turn} (unless you changed \
                         them since): {}",
                        names.join(", ")
                    ),
                }
            }
            (Some(_), None) => format!(
                "files: every file put back as it was before turn {turn}, later edits included \
                 (this session's turns have no snapshot after them)"
            ),
        });
    }
    if scope != RewindScope::Files {
        lines.push(match &plan.withdraw {
            Ok(n) => format!(
                "conversation: {n} messages taken back, turn {turn} to the latest (the session \
                 file keeps them)"
            ),
            Err(why) if scope == RewindScope::Both => format!("cannot rewind: {why}"),
            Err(why) => format!("conversation: cannot be taken back: {why}"),
        });
    }
    lines.extend(plan.missed.iter().map(|(t, why)| {
        format!("turn {t} changed files without a checkpoint ({why}); that is not undone")
    }));
    Ok(lines)
}

/// Undoes a rewind: every file back as snapshot `snapshot` (a rewind's
/// backup, named in its report) holds it. This restore is itself snapshotted
/// first, so it can be undone the same way.
pub fn undo(data: &Path, session: &Session, snapshot: &str) -> Result<Restored> {
    let workspace = PathBuf::from(&session.header.workspace);
    checkpoints(data, &workspace)?
        .restore(&session.header.id, snapshot)
        .map_err(|e| anyhow!("cannot restore snapshot {snapshot}: {e}"))
}

/// The command that puts the files back as `backup` holds them: whole,
/// so it can be pasted in any folder.
pub fn undo_command(session: &str, backup: &str) -> String {
    format!("axon rewind --session {session} --undo {}", short(backup))
}

/// What an undo of a rewind of `session` did, as lines.
pub fn describe_undo(session: &str, restored: &Restored) -> Vec<String> {
    let mut lines = vec![format!(
        "files: {} restored, {} removed (undo this with `{}`)",
        restored.written.len(),
        restored.removed.len(),
        undo_command(session, &restored.backup)
    )];
    lines.extend(skipped_lines(restored));
    lines
}

fn skipped_lines(restored: &Restored) -> Vec<String> {
    restored
        .skipped
        .iter()
        .map(|skipped| match skipped.reason {
            axon_checkpoint::SkipReason::ChangedSince => format!(
                "  left as it is: {} (changed after the turn ended: your edit)",
                skipped.path.display()
            ),
            reason => format!("  left as it is: {} ({reason:?})", skipped.path.display()),
        })
        .collect()
}

/// [`rewind`] of a saved session no live session holds: its messages are
/// taken back in its file.
pub fn rewind_saved(
    store: &axon_store::SessionStore,
    session: &Session,
    turn: u32,
    scope: RewindScope,
) -> Result<RewindReport> {
    rewind(
        store.data_dir(),
        session,
        turn,
        scope,
        |messages| Ok(store.withdraw(session, messages)?),
    )
}

/// A report as lines for a terminal or a transcript.
pub fn describe(report: &RewindReport) -> Vec<String> {
    let mut lines =
        vec![format!("rewound to before turn {}: {}", report.turn, first_line(&report.prompt))];
    if let Some(files) = &report.files {
        lines.push(format!(
            "files: {} restored, {} removed (undo with `{}`)",
            files.written.len(),
            files.removed.len(),
            undo_command(&report.session, &files.backup)
        ));
        lines.extend(skipped_lines(files));
    }
    if let Some(n) = report.withdrawn {
        lines.push(format!("conversation: {n} messages taken back (the session file keeps them)"));
    }
    lines.extend(report.notes.iter().cloned());
    lines
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let cut: String = line.chars().take(72).collect();
    if cut.len() < line.len() { format!("{cut}…") } else { cut }
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// Removes a saved session and the checkpoints it took (its snapshots are
/// pruned from the workspace's shadow repository); answers its id. A
/// checkpoint store that cannot be pruned leaves the session removed and
/// says so in the second value.
pub fn remove_session(
    store: &axon_store::SessionStore,
    id: &str,
) -> Result<(String, Option<String>), axon_store::StoreError> {
    let data = store.data_dir();
    let session = match store.open(id) {
        Ok(session) => session,
        // A file too damaged to load is still removed; there is nothing
        // to prune by.
        Err(axon_store::StoreError::Load(e)) => {
            let removed = store.remove(id)?;
            return Ok((removed, Some(format!("its checkpoints were not pruned: {e}"))));
        }
        Err(e) => return Err(e),
    };
    let removed = store.remove(&session.header.id)?;
    if session.snapshots().is_empty() {
        return Ok((removed, None));
    }
    let workspace = PathBuf::from(&session.header.workspace);
    let pruned = checkpoints(data, &workspace)
        .and_then(|c| c.prune_session(&removed).map_err(|e| anyhow!("{e}")));
    Ok((removed, pruned.err().map(|e| format!("its checkpoints could not be pruned: {e:#}"))))
}

/// A `/rewind N [files|conversation|both]` argument as every front end
/// reads it: the turn and the scope (`both` when none is named), or what
/// was wrong and what is accepted.
pub fn parse_turn_and_scope(turn: &str, scope: Option<&str>) -> Result<(u32, RewindScope), String> {
    let turn: u32 =
        turn.trim().parse().map_err(|_| format!("/rewind takes a turn number, not `{turn}`"))?;
    let scope = match scope.map(str::trim) {
        None | Some("" | "both") => RewindScope::Both,
        Some("files") => RewindScope::Files,
        Some("conversation") => RewindScope::Conversation,
        Some(other) => {
            return Err(format!(
                "/rewind {turn} takes `files`, `conversation` or `both`, not `{other}`"
            ));
        }
    };
    Ok((turn, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_and_scope_are_read_alike_by_every_front_end() {
        assert_eq!(parse_turn_and_scope("3", None), Ok((3, RewindScope::Both)));
        assert_eq!(parse_turn_and_scope("3", Some("files")), Ok((3, RewindScope::Files)));
        assert_eq!(
            parse_turn_and_scope("3", Some("conversation")),
            Ok((3, RewindScope::Conversation))
        );
        assert_eq!(parse_turn_and_scope("3", Some("")), Ok((3, RewindScope::Both)));
        let bad = parse_turn_and_scope("x", None).unwrap_err();
        assert!(bad.contains("turn number, not `x`"), "{bad}");
        let bad = parse_turn_and_scope("2", Some("all")).unwrap_err();
        assert!(bad.contains("`files`, `conversation` or `both`, not `all`"), "{bad}");
    }
}
