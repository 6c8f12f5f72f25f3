//! Checkpoints and rewind of a workspace's files.
//!
//! A [`Checkpoints`] keeps snapshots of one workspace in a shadow git
//! repository under axon's data folder,
//! `DATA/checkpoints/<folder name>-<16 hex of sha256(canonical path)>/`,
//! never in the user's own `.git`. Every snapshot is a parentless commit
//! named by a ref, `refs/axon/<session>/<unix ms>-<commit>`, so deleting a
//! session's refs ([`Checkpoints::prune_session`]) leaves its commits
//! unreachable and `git gc` collects them; what snapshots share (most files)
//! is stored once.
//!
//! git runs with the shadow repository as `GIT_DIR` and the workspace as
//! `GIT_WORK_TREE`, in an environment built from nothing (no system or
//! global config, no hooks, no signing, a fixed identity, no line-ending or
//! filter conversion, whatever the workspace's `.gitattributes` say), so a
//! restore is byte-for-byte and the user's git setup cannot break a
//! snapshot. A snapshot finds what changed with one `git status`: the
//! index's stat cache means only files whose size or times changed are read
//! again, and its untracked cache means only folders whose mtime moved are
//! listed again; HEAD, detached, names the last snapshot so that status's
//! own index-to-HEAD comparison costs nothing. A turn is five short git
//! processes (status, update-index, write-tree, commit-tree, update-ref;
//! update-index only when something changed), and costs a 10,000-file tree
//! little more than a small one: mostly one `lstat` per file.
//!
//! One lock file per workspace (`flock`, held for the length of one call)
//! serialises processes and threads; a new shadow repository is built aside
//! and renamed into place, so a half-made one is never seen.
//!
//! # What a snapshot holds, and what it does not
//!
//! A snapshot holds every file of the workspace that git would see as
//! untracked-or-tracked in a repository at its root: content, the
//! executable bit and symlinks. Changes made by shell commands are caught
//! like any other, as long as a snapshot was taken before the command ran.
//! NOT caught, and never touched by a restore:
//!
//! - files ignored by the workspace's `.gitignore` files or by the
//!   `.git/info/exclude` of a repository at the workspace's root, *unless*
//!   they are small and few: ignored files of at most 1 MiB each, 50 MiB in
//!   all ([`IgnoredBudget`], configurable), outside build and dependency
//!   folders ([`BUILD_FOLDERS`]), are held like any other (`ignored.rs`);
//!   what is left out is reported as [`SkipReason::BuildFolder`] or
//!   [`SkipReason::OverBudget`]. `.gitignore` files of a repository *above*
//!   the workspace are not read;
//! - files larger than [`MAX_FILE_BYTES`] (reported as
//!   [`SkipReason::TooLarge`] by every snapshot);
//! - nested git repositories (a folder with its own `.git`: reported as
//!   [`SkipReason::NestedRepository`]) and unreadable files
//!   ([`SkipReason::Unreadable`]);
//! - the user's `.git` and axon's own `.axon` folder at the workspace root;
//! - anything outside the workspace, and empty directories; permissions
//!   beyond the executable bit, owners and times;
//! - what git's stat cache cannot see: a rewrite that keeps a file's size,
//!   puts its old mtime back (`touch -r`, `cp -p`, an archive's times) and
//!   lands in the same second as its previous change (git compares ctime
//!   to the second). It is caught once the file changes again. A rewrite
//!   that lets the mtime move is always caught, however soon it comes.

mod error;
mod git;
mod ignored;
mod repo;
mod restore;
mod stage;

use std::path::{Path, PathBuf};

pub use error::CheckpointError;
pub use ignored::{BUILD_FOLDERS, IgnoredBudget, WALK_LIMIT};

/// Files larger than this (10 MiB) are left out of snapshots.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The checkpoints of one workspace. Cheap to keep; every call takes the
/// workspace's lock for its own length only.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    git: git::Git,
    lock_path: PathBuf,
    max_file_bytes: u64,
    ignored: IgnoredBudget,
}

/// A snapshot just taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The commit id: what [`Checkpoints::restore`] and
    /// [`Checkpoints::diff_stat`] take.
    pub id: String,
    /// Paths whose state entered the shadow index anew (changed, created,
    /// deleted, or newly left out) since the previous snapshot or restore.
    /// 0 when nothing changed.
    pub changed: usize,
    /// Files left out of this snapshot, and why.
    pub skipped: Vec<Skipped>,
}

/// A path a snapshot or restore left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Relative to the workspace.
    pub path: PathBuf,
    pub reason: SkipReason,
}

/// Why a path was left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// A file of this many bytes, over [`MAX_FILE_BYTES`].
    TooLarge(u64),
    /// A folder holding its own git repository.
    NestedRepository,
    /// A file git could not open.
    Unreadable,
    /// On restore: the snapshot has a file here, but the path is now taken
    /// by something snapshots do not hold (an ignored or too-large file, a
    /// nested repository, a folder of ignored files), which is kept.
    Occupied,
    /// On a restore of what some turns changed: the path changed again
    /// after the last of them ended (the user's edit), and is kept.
    ChangedSince,
    /// An ignored build or dependency folder ([`BUILD_FOLDERS`]), or an
    /// ignored file in one: made again by a build, never held.
    BuildFolder,
    /// An ignored file of this many bytes, or an ignored folder whose
    /// files come to at least this many, past the [`IgnoredBudget`].
    OverBudget(u64),
    /// On restore: a file git ignores that the snapshot restored to does
    /// not hold (it was over the budget then, or the snapshot is older than
    /// snapshots of ignored files): kept, since its absence there does not
    /// say it did not exist.
    IgnoredNotHeld,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The snapshot taken just before restoring: restore it to undo.
    pub backup: String,
    /// Files rewritten or recreated with the snapshot's content and mode.
    pub written: Vec<PathBuf>,
    /// Files removed because the snapshot does not have them (folders they
    /// leave empty go too).
    pub removed: Vec<PathBuf>,
    /// Paths of the snapshot left as they are.
    pub skipped: Vec<Skipped>,
}

/// One file a restore would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Relative to the workspace.
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// Lines the restore would add and remove; `None` for a binary file.
    pub lines: Option<(u64, u64)>,
}

/// What a restore would do to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The file is gone and would come back.
    Create,
    /// The file would get the snapshot's content or mode.
    Rewrite,
    /// The file is not in the snapshot and would be removed.
    Remove,
}

/// One snapshot of a session, as [`Checkpoints::list`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub id: String,
    /// The label given to [`Checkpoints::snapshot`].
    pub label: String,
    /// When it was taken, in milliseconds since the Unix epoch.
    pub time_ms: u64,
}

impl Checkpoints {
    /// The checkpoints of `workspace`, kept under `data_dir/checkpoints/`.
    /// Creates the shadow repository on first use. Fails if git is missing
    /// or older than 2.25, or the workspace cannot be read.
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Checkpoints, CheckpointError> {
        repo::open(data_dir, workspace)
    }

    /// Holds ignored files within `budget` instead of the default (1 MiB a
    /// file, 50 MiB in all) in this handle; a zero total holds none.
    pub fn with_ignored_budget(mut self, budget: IgnoredBudget) -> Checkpoints {
        self.ignored = budget;
        self
    }

    /// Makes `budget` the workspace's: this handle and every later
    /// [`Checkpoints::open`] of the workspace (a rewind from the command
    /// line) use it, until another is kept.
    pub fn keep_ignored_budget(
        self,
        budget: IgnoredBudget,
    ) -> Result<Checkpoints, CheckpointError> {
        let _lock = self.lock()?;
        repo::store_budget(&self.git, budget)?;
        Ok(self.with_ignored_budget(budget))
    }

    /// The ignored-file budget this handle snapshots with.
    pub fn ignored_budget(&self) -> IgnoredBudget {
        self.ignored
    }

    /// Leaves out files larger than `bytes` instead of [`MAX_FILE_BYTES`].
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Checkpoints {
        self.max_file_bytes = bytes;
        self
    }

    /// The canonical workspace path the snapshots are of.
    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    /// The shadow repository (a git directory).
    pub fn shadow_dir(&self) -> &Path {
        &self.git.git_dir
    }

    /// Records the workspace's current files as a snapshot of `session`,
    /// labelled `label` (one line; a turn's prompt, say). A snapshot with
    /// no change since the last is still a snapshot, and costs one small
    /// commit.
    pub fn snapshot(&self, session: &str, label: &str) -> Result<Snapshot, CheckpointError> {
        check_session(session)?;
        let _lock = self.lock()?;
        self.snapshot_locked(session, label)
    }

    /// Makes the workspace's files what they were in snapshot `id`: files
    /// changed since are rewritten, deleted ones recreated, new ones
    /// removed, except what snapshots never hold (see the crate's doc).
    /// The current state is snapshotted first, into `session`, and
    /// [`Restored::backup`] names it.
    pub fn restore(&self, session: &str, id: &str) -> Result<Restored, CheckpointError> {
        check_session(session)?;
        let _lock = self.lock()?;
        restore::restore(self, session, id)
    }

    /// Puts back, as snapshot `target` has them, only the paths some turns
    /// changed: each of `turns` is (the snapshot before it, the snapshot
    /// after it). A path that changed again after the last turn ended (the
    /// user's later edit) is left as it is ([`SkipReason::ChangedSince`]),
    /// and so is every path no turn changed. The present is snapshotted
    /// first, as by [`Checkpoints::restore`], and [`Restored::backup`] names it.
    pub fn restore_changes(
        &self,
        session: &str,
        target: &str,
        turns: &[(String, String)],
    ) -> Result<Restored, CheckpointError> {
        check_session(session)?;
        let _lock = self.lock()?;
        restore::restore_changes(self, session, target, turns)
    }

    /// The paths some turns changed, each of `turns` being (the snapshot
    /// before it, the snapshot after it), sorted: what
    /// [`Checkpoints::restore_changes`] with those turns may put back.
    pub fn changed_paths(
        &self,
        turns: &[(String, String)],
    ) -> Result<Vec<PathBuf>, CheckpointError> {
        let _lock = self.lock()?;
        restore::changed_paths(self, turns)
    }

    /// The files snapshot `before` holds that snapshot `after` has deleted
    /// or rewritten, sorted: what a restore of `before` would put back.
    pub fn lost_between(&self, before: &str, after: &str) -> Result<Vec<PathBuf>, CheckpointError> {
        let _lock = self.lock()?;
        restore::lost_between(self, before, after)
    }

    /// What [`Checkpoints::restore`] of `id` would change now, by path.
    pub fn diff_stat(&self, id: &str) -> Result<Vec<Change>, CheckpointError> {
        let _lock = self.lock()?;
        restore::diff_stat(self, id)
    }

    /// The snapshots of `session`, oldest first.
    pub fn list(&self, session: &str) -> Result<Vec<SnapshotInfo>, CheckpointError> {
        check_session(session)?;
        repo::list(&self.git, session)
    }

    /// The sessions that have snapshots of this workspace.
    pub fn sessions(&self) -> Result<Vec<String>, CheckpointError> {
        repo::sessions(&self.git)
    }

    /// Forgets every snapshot of `session` and frees what no other snapshot
    /// shares. Returns how many snapshots were forgotten.
    pub fn prune_session(&self, session: &str) -> Result<usize, CheckpointError> {
        check_session(session)?;
        let _lock = self.lock()?;
        repo::prune_session(&self.git, session)
    }

    /// Takes the workspace's lock. Holding it, no other git can be at work
    /// in the shadow repository (every one runs under it and dies with its
    /// axon), so git's own lock files left by a killed one are stale and
    /// go: otherwise every later snapshot would fail on them.
    fn lock(&self) -> Result<std::fs::File, CheckpointError> {
        let lock = repo::lock(&self.lock_path)?;
        for stale in ["index.lock", "HEAD.lock", "packed-refs.lock", "config.lock"] {
            let path = self.git.git_dir.join(stale);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CheckpointError::io("remove a stale lock", &path, e)),
            }
        }
        Ok(lock)
    }

    fn snapshot_locked(&self, session: &str, label: &str) -> Result<Snapshot, CheckpointError> {
        let staged = stage::stage(&self.git, self.max_file_bytes, self.ignored)?;
        let id = repo::commit(&self.git, session, label)?;
        Ok(Snapshot { id, changed: staged.changed, skipped: staged.skipped })
    }
}

/// A session id becomes one ref component: keep it to a safe alphabet.
fn check_session(session: &str) -> Result<(), CheckpointError> {
    let ok = !session.is_empty()
        && session.len() <= 200
        && !session.starts_with('.')
        && !session.ends_with(".lock")
        && !session.contains("..")
        && session.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok { Ok(()) } else { Err(CheckpointError::BadSession { session: session.to_string() }) }
}
