//! Restore and its preview. A restore first snapshots the present (so it
//! can be undone and so the shadow index matches the workspace exactly),
//! then compares that snapshot's tree with the target's: files only the
//! present has are removed with `git rm`, files the target has that differ
//! or are gone are written with `git checkout <target> -- <paths>`. Both are
//! git's own careful work-tree code (no writes through a symlinked parent,
//! modes and symlinks as recorded), and both only ever get paths the
//! snapshots hold, so ignored, too-large and nested-repository paths are
//! never touched. [`restore_changes`] does the same for only the paths some
//! turns changed (between the snapshots before and after each), keeping a
//! path changed again since the last of them ended.

use std::collections::HashSet;
use std::io::ErrorKind;
use std::path::PathBuf;

use crate::git::{Git, literal_pathspecs, path_of, split_z};
use crate::{
    Change, ChangeKind, CheckpointError, Checkpoints, Restored, SkipReason, Skipped, repo, stage,
};

pub(crate) fn restore(
    checkpoints: &Checkpoints,
    session: &str,
    id: &str,
) -> Result<Restored, CheckpointError> {
    let git = &checkpoints.git;
    let target = repo::resolve(git, id)?;
    let short = target.get(..12).unwrap_or(&target);
    let backup = checkpoints.snapshot_locked(session, &format!("before restoring {short}"))?;
    let out = git.run(
        ["diff-tree", "-r", "-z", "--no-renames", "--name-status", &backup.id, &target],
        None,
    )?;
    apply(checkpoints, backup.id, &target, name_status(&out), Vec::new())
}

pub(crate) fn restore_changes(
    checkpoints: &Checkpoints,
    session: &str,
    id: &str,
    turns: &[(String, String)],
) -> Result<Restored, CheckpointError> {
    let git = &checkpoints.git;
    let target = repo::resolve(git, id)?;
    let short = target.get(..12).unwrap_or(&target);
    let backup = checkpoints.snapshot_locked(session, &format!("before restoring {short}"))?;
    let names = |a: &str, b: &str| -> Result<HashSet<Vec<u8>>, CheckpointError> {
        let out = git.run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b], None)?;
        Ok(split_z(&out).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect())
    };
    let mut touched: HashSet<Vec<u8>> = HashSet::new();
    for (before, after) in turns {
        let (before, after) = (repo::resolve(git, before)?, repo::resolve(git, after)?);
        touched.extend(names(&before, &after)?);
    }
    let since = match turns.last() {
        Some((_, last)) => names(&backup.id, &repo::resolve(git, last)?)?,
        None => HashSet::new(),
    };
    let out = git.run(
        ["diff-tree", "-r", "-z", "--no-renames", "--name-status", &backup.id, &target],
        None,
    )?;
    let mut kept = Vec::new();
    let mut entries = Vec::new();
    for (status, path) in name_status(&out) {
        if !touched.contains(path) {
            continue;
        }
        if since.contains(path) {
            kept.push(Skipped { path: path_of(path), reason: SkipReason::ChangedSince });
        } else {
            entries.push((status, path));
        }
    }
    apply(checkpoints, backup.id, &target, entries, kept)
}

/// Makes the work tree's `entries` (diff-tree statuses from the present to
/// `target`) as `target` has them.
fn apply(
    checkpoints: &Checkpoints,
    backup: String,
    target: &str,
    entries: Vec<(u8, &[u8])>,
    mut skipped: Vec<Skipped>,
) -> Result<Restored, CheckpointError> {
    let git = &checkpoints.git;
    let mut gone: Vec<&[u8]> = Vec::new();
    // (path, whether the present has it: a rewrite rather than a return)
    let mut back: Vec<(&[u8], bool)> = Vec::new();
    for (status, path) in entries {
        match status {
            b'D' => gone.push(path),
            b'A' => back.push((path, false)),
            _ => back.push((path, true)),
        }
    }
    // An ignored file the target lacks may only have been left out of it
    // (over the budget then, or an older snapshot): never removed.
    if !gone.is_empty() {
        let out = git.run(
            ["check-ignore", "--no-index", "-z", "--stdin"],
            Some(crate::git::nul_list(gone.iter().copied())),
        );
        // check-ignore exits 1 when no path is ignored; any other failure
        // stops the restore before anything is removed.
        let ignored: std::collections::HashSet<Vec<u8>> = match out {
            Ok(out) => split_z(&out).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect(),
            Err(CheckpointError::GitFailed { code: Some(1), .. }) => Default::default(),
            Err(e) => return Err(e),
        };
        gone.retain(|path| {
            let keep = ignored.contains(*path);
            if keep {
                skipped.push(Skipped { path: path_of(path), reason: SkipReason::IgnoredNotHeld });
            }
            !keep
        });
    }
    // Removals first: a folder that replaced one of the target's files has
    // to go before the file can come back.
    if !gone.is_empty() {
        git.run(
            ["rm", "-q", "-f", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
            Some(literal_pathspecs(gone.iter().copied())),
        )?;
    }
    let mut write: Vec<&[u8]> = Vec::new();
    for (path, present) in back {
        match occupant(git, checkpoints.max_file_bytes, path).filter(|_| !present) {
            Some(reason) => skipped.push(Skipped { path: path_of(path), reason }),
            None => write.push(path),
        }
    }
    if !write.is_empty() {
        git.run(
            ["checkout", target, "--pathspec-from-file=-", "--pathspec-file-nul"],
            Some(literal_pathspecs(write.iter().copied())),
        )?;
    }
    Ok(Restored {
        backup,
        written: write.into_iter().map(path_of).collect(),
        removed: gone.into_iter().map(path_of).collect(),
        skipped,
    })
}

pub(crate) fn changed_paths(
    checkpoints: &Checkpoints,
    turns: &[(String, String)],
) -> Result<Vec<PathBuf>, CheckpointError> {
    let git = &checkpoints.git;
    let mut paths = std::collections::BTreeSet::new();
    for (before, after) in turns {
        let (before, after) = (repo::resolve(git, before)?, repo::resolve(git, after)?);
        let out = git
            .run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", &before, &after], None)?;
        paths.extend(split_z(&out).filter(|p| !p.is_empty()).map(path_of));
    }
    Ok(paths.into_iter().collect())
}

pub(crate) fn lost_between(
    checkpoints: &Checkpoints,
    before: &str,
    after: &str,
) -> Result<Vec<PathBuf>, CheckpointError> {
    let git = &checkpoints.git;
    let (before, after) = (repo::resolve(git, before)?, repo::resolve(git, after)?);
    let out =
        git.run(["diff-tree", "-r", "-z", "--no-renames", "--name-status", &before, &after], None)?;
    Ok(name_status(&out)
        .into_iter()
        .filter(|(status, _)| matches!(status, b'D' | b'M' | b'T'))
        .map(|(_, path)| path_of(path))
        .collect())
}

pub(crate) fn diff_stat(
    checkpoints: &Checkpoints,
    id: &str,
) -> Result<Vec<Change>, CheckpointError> {
    let git = &checkpoints.git;
    let target = repo::resolve(git, id)?;
    stage::stage(git, checkpoints.max_file_bytes, checkpoints.ignored)?;
    let out = git.run(["write-tree"], None)?;
    let now = String::from_utf8_lossy(&out).trim().to_string();
    let kinds =
        git.run(["diff-tree", "-r", "-z", "--no-renames", "--name-status", &now, &target], None)?;
    let counts =
        git.run(["diff-tree", "-r", "-z", "--no-renames", "--numstat", &now, &target], None)?;
    let mut lines = std::collections::HashMap::new();
    for record in split_z(&counts) {
        let mut fields = record.splitn(3, |&b| b == b'\t');
        if let (Some(added), Some(removed), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        {
            let number = |field: &[u8]| std::str::from_utf8(field).ok()?.parse::<u64>().ok();
            lines.insert(path.to_vec(), number(added).zip(number(removed)));
        }
    }
    let mut changes = Vec::new();
    for (status, path) in name_status(&kinds) {
        let kind = match status {
            b'D' => ChangeKind::Remove,
            b'A' => ChangeKind::Create,
            _ => ChangeKind::Rewrite,
        };
        // A restore would leave an occupied path alone: not a change.
        if kind == ChangeKind::Create && occupant(git, checkpoints.max_file_bytes, path).is_some() {
            continue;
        }
        let lines = lines.get(path).copied().flatten();
        changes.push(Change { path: path_of(path), kind, lines });
    }
    Ok(changes)
}

/// `--name-status -z` records: a status letter, then a path.
fn name_status(out: &[u8]) -> Vec<(u8, &[u8])> {
    let mut records = split_z(out);
    let mut pairs = Vec::new();
    while let (Some(status), Some(path)) = (records.next(), records.next()) {
        if let Some(&letter) = status.first() {
            pairs.push((letter, path));
        }
    }
    pairs
}

/// Why a path the target has, and the present snapshot has not, cannot be
/// written: something snapshots do not hold is there now. `None` when the
/// path is free.
fn occupant(git: &Git, max_file_bytes: u64, path: &[u8]) -> Option<SkipReason> {
    let full: PathBuf = git.work_tree.join(path_of(path));
    match full.symlink_metadata() {
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Ok(meta) if meta.is_file() && meta.len() > max_file_bytes => {
            Some(SkipReason::TooLarge(meta.len()))
        }
        Ok(meta) if meta.is_dir() && full.join(".git").exists() => {
            Some(SkipReason::NestedRepository)
        }
        _ => Some(SkipReason::Occupied),
    }
}
