//! Which ignored files a snapshot keeps. A `.env.local`, a local config or a
//! notes file the user keeps out of git is exactly what a command can destroy
//! and git cannot give back, so snapshots hold ignored files too while they
//! are small and few: each at most [`IgnoredBudget::file_bytes`], all
//! together at most [`IgnoredBudget::total_bytes`].
//!
//! Guarantees:
//! - Build and dependency folders ([`BUILD_FOLDERS`] by name, and Python
//!   virtual environments by their `pyvenv.cfg`) are never walked or held:
//!   they are big, and made again by a tool.
//! - An ignored folder is walked only up to [`WALK_LIMIT`] entries and never
//!   into a nested repository; a folder that does not fit what is left of
//!   the budget is left out whole, so a snapshot never holds half of one.
//! - Ignored files already held come first, so a new file cannot push out
//!   one a restore may need; what no longer fits leaves the snapshots.
//! - axon's own folders (`.git`, `.axon`, a shadow repository inside the
//!   workspace) are never held, though the shadow repository's exclude
//!   rules list them beside the user's.

use std::io::ErrorKind;

use crate::git::{Git, path_of, split_z};
use crate::{CheckpointError, SkipReason, Skipped};

/// Ignored folders never held, by name at any depth: build output,
/// installed dependencies and caches, all made again by a tool.
pub const BUILD_FOLDERS: [&str; 22] = [
    "target",
    "node_modules",
    ".venv",
    "venv",
    "site-packages",
    "dist",
    "build",
    "out",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".tox",
    ".cache",
    ".npm",
    "npm-cache",
    ".pnpm-store",
];

/// Entries of one ignored folder looked at before it counts as too big.
pub const WALK_LIMIT: usize = 5000;

/// How much of what the user's ignore rules cover a snapshot keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IgnoredBudget {
    /// The largest ignored file held.
    pub file_bytes: u64,
    /// All ignored files held, together; 0 holds none.
    pub total_bytes: u64,
}

impl IgnoredBudget {
    /// Holds no ignored file: snapshots are what git would commit.
    pub const NONE: IgnoredBudget = IgnoredBudget { file_bytes: 0, total_bytes: 0 };
}

impl Default for IgnoredBudget {
    /// 1 MiB a file, 50 MiB in all.
    fn default() -> Self {
        IgnoredBudget { file_bytes: 1024 * 1024, total_bytes: 50 * 1024 * 1024 }
    }
}

/// What staging does with ignored paths.
#[derive(Default)]
pub(crate) struct Held {
    /// Ignored files not yet in the index that it takes.
    pub(crate) add: Vec<Vec<u8>>,
    /// Ignored files in the index that leave it.
    pub(crate) drop: Vec<Vec<u8>>,
    pub(crate) skipped: Vec<Skipped>,
}

/// Chooses the ignored files the snapshot holds. `never` are workspace-
/// relative prefixes axon keeps out (its own folders); `others` are the
/// untracked ignored paths `git status --ignored=matching` listed (a folder
/// with a trailing `/`).
pub(crate) fn choose(
    git: &Git,
    budget: IgnoredBudget,
    never: &[Vec<u8>],
    others: &[&[u8]],
) -> Result<Held, CheckpointError> {
    let mut held = Held::default();
    let mut left = budget.total_bytes;
    let mine = |path: &[u8]| never.iter().any(|n| is_under(path, n));
    // Held already (tracked, and ignored): kept while they fit.
    let tracked = git.run(["ls-files", "-z", "-c", "-i", "--exclude-standard"], None)?;
    if budget.total_bytes == 0 {
        // Switched off: ignored files leave the snapshots, unreported.
        held.drop = split_z(&tracked).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect();
        return Ok(held);
    }
    for path in split_z(&tracked).filter(|p| !p.is_empty()) {
        let size = match git.work_tree.join(path_of(path)).symlink_metadata() {
            Ok(meta) if meta.is_file() => meta.len(),
            // Gone or no longer a file: staging records that as a change.
            _ => 0,
        };
        if mine(path) || in_build_folder(path) || size > budget.file_bytes || size > left {
            held.drop.push(path.to_vec());
            if !mine(path) {
                held.skipped.push(Skipped { path: path_of(path), reason: reason(path, size) });
            }
        } else {
            left -= size;
        }
    }
    // Not held yet: ignored files, and ignored folders shown whole.
    for &entry in others.iter().filter(|p| !p.is_empty()) {
        if mine(entry) {
            continue;
        }
        match entry.strip_suffix(b"/") {
            Some(dir) => take_folder(git, dir, budget, &mut left, &mut held),
            None => {
                let size = match git.work_tree.join(path_of(entry)).symlink_metadata() {
                    Ok(meta) if meta.is_file() => meta.len(),
                    Ok(meta) if meta.file_type().is_symlink() => 0,
                    _ => continue,
                };
                if in_build_folder(entry) || size > budget.file_bytes || size > left {
                    held.skipped
                        .push(Skipped { path: path_of(entry), reason: reason(entry, size) });
                } else {
                    left -= size;
                    held.add.push(entry.to_vec());
                }
            }
        }
    }
    Ok(held)
}

/// Takes every file of the ignored folder `dir`, or none of it.
fn take_folder(git: &Git, dir: &[u8], budget: IgnoredBudget, left: &mut u64, held: &mut Held) {
    let skip = |held: &mut Held, reason| held.skipped.push(Skipped { path: path_of(dir), reason });
    // A Python virtual environment, whatever its name (`.venv-tools`).
    let is_venv = |folder: &[u8]| git.work_tree.join(path_of(folder)).join("pyvenv.cfg").is_file();
    if in_build_folder(dir) || is_venv(dir) {
        return skip(held, SkipReason::BuildFolder);
    }
    let mut files: Vec<(Vec<u8>, u64)> = Vec::new();
    // Files over the per-file limit are left out of a folder otherwise
    // held, and the folder named once for them (the largest's size).
    let mut largest_left_out: u64 = 0;
    let mut pending = vec![dir.to_vec()];
    let mut seen = 0usize;
    let mut total = 0u64;
    while let Some(folder) = pending.pop() {
        let full = git.work_tree.join(path_of(&folder));
        if full.join(".git").symlink_metadata().is_ok() {
            return skip(held, SkipReason::NestedRepository);
        }
        let entries = match std::fs::read_dir(&full) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(_) => return skip(held, SkipReason::Unreadable),
        };
        for entry in entries {
            seen += 1;
            let Ok(entry) = entry else { return skip(held, SkipReason::Unreadable) };
            let name = entry.file_name();
            let mut path = folder.clone();
            path.push(b'/');
            path.extend_from_slice(name.as_encoded_bytes());
            let Ok(kind) = entry.file_type() else { return skip(held, SkipReason::Unreadable) };
            if kind.is_dir() {
                if BUILD_FOLDERS.iter().any(|b| name.as_encoded_bytes() == b.as_bytes())
                    || is_venv(&path)
                {
                    continue;
                }
                pending.push(path);
            } else if kind.is_file() || kind.is_symlink() {
                // git could not add a file it cannot open, and would stop
                // the whole snapshot: the folder is left out instead.
                if kind.is_file() && std::fs::File::open(entry.path()).is_err() {
                    return skip(held, SkipReason::Unreadable);
                }
                let size = if kind.is_file() {
                    entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX)
                } else {
                    0
                };
                if size > budget.file_bytes {
                    // One big file does not cost its folder the rest.
                    largest_left_out = largest_left_out.max(size);
                    continue;
                }
                total = total.saturating_add(size);
                files.push((path, size));
            }
            // Sockets, FIFOs and devices: nothing a snapshot can hold.
            if seen > WALK_LIMIT || total > *left {
                return skip(held, SkipReason::OverBudget(total));
            }
        }
    }
    *left -= total;
    held.add.extend(files.into_iter().map(|(path, _)| path));
    if largest_left_out > 0 {
        skip(held, SkipReason::OverBudget(largest_left_out));
    }
}

/// Why an ignored file of `size` bytes at `path` is not held.
fn reason(path: &[u8], size: u64) -> SkipReason {
    if in_build_folder(path) { SkipReason::BuildFolder } else { SkipReason::OverBudget(size) }
}

/// Whether `path` is in (or is) a build or dependency folder.
fn in_build_folder(path: &[u8]) -> bool {
    path.split(|&b| b == b'/').any(|part| BUILD_FOLDERS.iter().any(|b| part == b.as_bytes()))
}

/// Whether `path` is `prefix` or below it.
fn is_under(path: &[u8], prefix: &[u8]) -> bool {
    path == prefix || (path.starts_with(prefix) && path.get(prefix.len()) == Some(&b'/'))
}

/// axon's own folders in the workspace, as workspace-relative prefixes.
pub(crate) fn never_held(git: &Git) -> Vec<Vec<u8>> {
    let mut never = vec![b".git".to_vec(), b".axon".to_vec()];
    let shadow = git.git_dir.parent().unwrap_or(&git.git_dir);
    if let Ok(inside) = shadow.strip_prefix(&git.work_tree)
        && !inside.as_os_str().is_empty()
    {
        never.push(inside.as_os_str().as_encoded_bytes().to_vec());
    }
    never
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_folders_are_known_at_any_depth_and_only_by_whole_name() {
        assert!(in_build_folder(b"target"));
        assert!(in_build_folder(b"web/node_modules/x.js"));
        assert!(!in_build_folder(b"targets/notes.md"));
        assert!(is_under(b".axon/state", b".axon") && !is_under(b".axonrc", b".axon"));
    }
}
