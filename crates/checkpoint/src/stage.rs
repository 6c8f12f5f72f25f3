//! Staging: brings the shadow index to the workspace's current state, so
//! that `write-tree` gives exactly the snapshot's tree. git's own change
//! detection (`status`: the index's stat cache, with git's handling of
//! files changed in the same tick as the index was written, and the
//! untracked cache, which skips reading folders whose mtime did not move)
//! finds what changed, so an unchanged file is never read; only the
//! changed paths are handed to `update-index`. Afterwards the index holds
//! every non-ignored file of at most the size limit, the ignored files
//! `ignored.rs` chooses, and nothing else.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::ErrorKind;

use crate::git::{Git, PACK_FROM_FILES, nul_list, path_of, split_z};
use crate::ignored::{self, IgnoredBudget};
use crate::{CheckpointError, SkipReason, Skipped};

pub(crate) struct Staged {
    pub(crate) changed: usize,
    pub(crate) skipped: Vec<Skipped>,
}

pub(crate) fn stage(
    git: &Git,
    max_file_bytes: u64,
    budget: IgnoredBudget,
) -> Result<Staged, CheckpointError> {
    // Tracked files whose work-tree state differs from the index (changed,
    // deleted, type changed) and untracked, not ignored files, each one by
    // one (`-uall`); sorted so a path comes before what is below it, which
    // `update-index --replace` needs when a file became a folder or back.
    // Each record is `XY path`: Y is the work tree against the index, `??`
    // untracked. X (the index against HEAD, the last snapshot) says nothing
    // about the work tree and is not looked at. status may write the index
    // back: refreshed stat data and the untracked cache for the next turn.
    let listed = git.run_updating_index([
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=all",
        // Untracked ignored files and folders too, as `!! path` (a folder
        // an ignore pattern names is shown, not walked): `ignored.rs`
        // chooses among them, at no extra walk of the tree.
        "--ignored=matching",
        "--no-renames",
    ])?;
    let ignored_others: Vec<&[u8]> = split_z(&listed)
        .filter_map(|record| match record {
            [b'!', b'!', b' ', path @ ..] => Some(path),
            _ => None,
        })
        .collect();
    let candidates: BTreeSet<(&[u8], bool)> = split_z(&listed)
        .filter_map(|record| match record {
            [b'!', b'!', b' ', _path @ ..] => None,
            [b'?', b'?', b' ', path @ ..] => Some((path, false)),
            [_, y, b' ', path @ ..] if *y != b' ' => Some((path, true)),
            _ => None,
        })
        .collect();
    let mut update: Vec<&[u8]> = Vec::new();
    // Left-out paths still in the index; untracked ones need nothing.
    let mut remove: Vec<&[u8]> = Vec::new();
    let mut skipped = Vec::new();
    let mut leave_out = |path, tracked, reason| {
        skipped.push(Skipped { path: path_of(path), reason });
        if tracked {
            remove.push(path);
        }
    };
    for &(path, tracked) in &candidates {
        // `ls-files -o` shows a folder with its own repository as `dir/`.
        if let Some(dir) = path.strip_suffix(b"/") {
            leave_out(dir, tracked, SkipReason::NestedRepository);
            continue;
        }
        let full = git.work_tree.join(path_of(path));
        match full.symlink_metadata() {
            Ok(meta) if meta.is_file() && meta.len() > max_file_bytes => {
                leave_out(path, tracked, SkipReason::TooLarge(meta.len()));
            }
            // update-index would stop the whole snapshot at a file it
            // cannot open; leave such a file out instead.
            Ok(meta) if meta.is_file() && File::open(&full).is_err() => {
                leave_out(path, tracked, SkipReason::Unreadable);
            }
            Ok(_) => update.push(path),
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                update.push(path)
            }
            Err(_) => leave_out(path, tracked, SkipReason::Unreadable),
        }
    }
    // Ignored files: the small ones are held like any other (added here
    // once; status sees their changes from then on), the rest leave.
    let held = ignored::choose(git, budget, &ignored::never_held(git), &ignored_others)?;
    skipped.extend(held.skipped);
    update.extend(held.add.iter().map(Vec::as_slice));
    remove.extend(held.drop.iter().map(Vec::as_slice));
    if !update.is_empty() {
        // Many new files (the first snapshot): their blobs go to one pack
        // (git streams a blob over core.bigFileThreshold into the pack of
        // the command's object transaction) instead of a loose object each.
        // Only this command sees the setting: for diff, a blob over it
        // would count as binary.
        let pack = git.one_pack && update.len() >= PACK_FROM_FILES;
        let threshold: &[&str] = if pack { &["-c", "core.bigFileThreshold=1"] } else { &[] };
        git.run(
            threshold.iter().copied().chain([
                "update-index",
                "-z",
                "--add",
                "--remove",
                "--replace",
                "--stdin",
            ]),
            Some(nul_list(update.iter().copied())),
        )?;
    }
    if !remove.is_empty() {
        // Removing a path that is not in the index is a no-op.
        git.run(["update-index", "-z", "--force-remove", "--stdin"], Some(nul_list(remove)))?;
    }
    Ok(Staged { changed: update.len() + held.drop.len(), skipped })
}
