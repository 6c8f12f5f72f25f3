//! Which paths of a workspace a sandboxed command must not change, found
//! in the parent before each command.
//!
//! Guarantees: [`find`] walks the whole workspace (never following a
//! symbolic link, never descending into a protected folder) and returns
//! - every repository's git folder (`.git` folders, at any depth) and
//!   every `.git` file (a worktree's or submodule's gitdir pointer);
//! - every other entry of `Policy::protected` that exists (axon's and
//!   Claude Code's auto-run files: `.axon`, `.mcp.json`, ...).
//!
//! For the mount namespace it splits them ([`Protection::mounts`]) into
//! what is bound read-only (`config`, `config.worktree`, `commondir`,
//! `hooks`, `info` of each git folder, including the submodules' git
//! folders under `.git/modules`; each `.git` file; each other protected
//! entry) and the folders bound onto themselves ("pins") so that nothing
//! holding a protected entry can be renamed or removed and replaced by a
//! look-alike (the kernel refuses to move a mount point: `EBUSY`). A git
//! folder missing `hooks` or `info` gets an empty one (as `git init` makes),
//! since a read-only mount needs something to cover.
//!
//! Only what exists when the command starts is protected: a name that does
//! not exist yet (a new `.mcp.json`, a new repository) can be created.
//! Repositories are not looked for inside `node_modules` folders nor a
//! `target` folder tagged as a cache (`CACHEDIR.TAG`, as cargo tags it):
//! they hold many files (walking them before every command would cost
//! tens of milliseconds) and no repository the user works in. Both are
//! chosen by name, which a command cannot give a folder holding a
//! protected entry (that folder is pinned): a tag alone, which any
//! command can write, never makes a folder skipped. A folder the walk
//! cannot read (a command can `chmod 000` one) may hold anything, so it
//! is protected whole.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::policy::Policy;

/// A protected entry found in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// A repository's git folder.
    GitDir(PathBuf),
    /// A symbolic link named as protected: a mount would cover its target,
    /// not the link, so it is kept by Landlock (its folder gets no right
    /// to create or remove entries).
    Link(PathBuf),
    /// Any other protected file or folder (`.git` files included).
    Entry(PathBuf),
}

impl Found {
    pub(crate) fn path(&self) -> &Path {
        match self {
            Found::GitDir(path) | Found::Link(path) | Found::Entry(path) => path,
        }
    }
}

/// The parts of a git folder git runs code from or follows to another
/// git folder: read-only in the mount namespace.
const GIT_DIR_PARTS: [&str; 5] = ["config", "config.worktree", "commondir", "hooks", "info"];
/// Parts created empty when missing, so a command cannot add them.
const GIT_DIR_MADE: [&str; 2] = ["hooks", "info"];

/// The mounts of one command's namespace, in the order they must be made.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Mounts {
    /// Folders bound onto themselves, outermost first.
    pub(crate) pins: Vec<PathBuf>,
    /// Files and folders bound read-only.
    pub(crate) read_only: Vec<PathBuf>,
}

/// Everything protected in one workspace.
#[derive(Debug, Default)]
pub(crate) struct Protection {
    pub(crate) found: Vec<Found>,
}

/// Walks `policy.workspace` for its protected entries.
pub(crate) fn find(policy: &Policy) -> Result<Protection, SandboxError> {
    let root = &policy.workspace;
    let mut found = Vec::new();
    let mut named: BTreeSet<PathBuf> = BTreeSet::new();
    for name in &policy.protected {
        if name == ".git" {
            continue;
        }
        let path = root.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        // A protected entry below a symbolic link would be protected at
        // the link's target, which may be anywhere: only real paths count.
        if !no_link_between(root, &path) {
            continue;
        }
        named.insert(path.clone());
        found.push(if meta.file_type().is_symlink() {
            Found::Link(path)
        } else {
            Found::Entry(path)
        });
    }
    if policy.protected.iter().any(|name| name == ".git") {
        walk_for_git(root, &named, &mut found)?;
    }
    Ok(Protection { found })
}

/// Whether no component of `path` below `root` (the last one excepted)
/// is a symbolic link.
fn no_link_between(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else { return false };
    let mut current = root.to_path_buf();
    let count = relative.components().count();
    for (index, part) in relative.components().enumerate() {
        current.push(part);
        if index + 1 == count {
            break;
        }
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.is_dir() => {}
            _ => return false,
        }
    }
    true
}

/// Finds every `.git` below `root`, not descending into git folders,
/// symbolic links or the already protected entries.
fn walk_for_git(
    root: &Path,
    skip: &BTreeSet<PathBuf>,
    found: &mut Vec<Found>,
) -> Result<(), SandboxError> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // The workspace itself must be readable.
            Err(source) if dir == root => {
                return Err(SandboxError::Path { what: "workspace", path: dir, source });
            }
            // Gone since it was listed (a command running beside): nothing
            // to protect there.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // Unreadable: a command can make a folder so (`chmod 000`) and
            // make it readable again once the walk passed it by, so it is
            // kept read-only whole.
            Err(_) => {
                found.push(Found::Entry(dir));
                continue;
            }
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if skip.contains(&path) {
                continue;
            }
            if entry.file_name() == ".git" {
                if kind.is_dir() {
                    found.push(Found::GitDir(path));
                } else if kind.is_symlink() {
                    found.push(Found::Link(path));
                } else {
                    found.push(Found::Entry(path));
                }
            } else if kind.is_dir() && !skipped_for_speed(&entry.file_name(), &path) {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// Dependency and build folders, where no repository of the user's lives,
/// known by name (see the module comment).
fn skipped_for_speed(name: &std::ffi::OsStr, path: &Path) -> bool {
    name == "node_modules" || (name == "target" && path.join("CACHEDIR.TAG").is_file())
}

impl Protection {
    /// Every protected path, for the Landlock-only mode (which can only
    /// keep a whole git folder read-only).
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.found.iter().map(|found| found.path().to_path_buf()).collect()
    }

    /// The symbolic links among the protected entries.
    pub(crate) fn links(&self) -> Vec<PathBuf> {
        self.found
            .iter()
            .filter_map(|found| match found {
                Found::Link(path) => Some(path.clone()),
                _ => None,
            })
            .collect()
    }

    /// The mounts that protect these entries in a mount namespace rooted
    /// at `workspace`; creates a git folder's missing `hooks` and `info`.
    pub(crate) fn mounts(&self, workspace: &Path) -> Result<Mounts, SandboxError> {
        let mut read_only = BTreeSet::new();
        for found in &self.found {
            match found {
                Found::GitDir(dir) => git_dir_parts(dir, &mut read_only, 0)?,
                Found::Entry(path) => {
                    read_only.insert(path.clone());
                }
                Found::Link(_) => {}
            }
        }
        let mut pins = BTreeSet::new();
        for path in &read_only {
            let mut parent = path.parent();
            while let Some(dir) = parent {
                if dir == workspace || !dir.starts_with(workspace) {
                    break;
                }
                pins.insert(dir.to_path_buf());
                parent = dir.parent();
            }
        }
        // BTreeSet order puts a folder before everything below it, which
        // is the order the mounts must be stacked in.
        Ok(Mounts { pins: pins.into_iter().collect(), read_only: read_only.into_iter().collect() })
    }
}

/// A git folder's protected parts, and those of the submodules' git
/// folders under its `modules` (a submodule's `.git` file points there)
/// and of its linked worktrees' folders under `worktrees`.
fn git_dir_parts(
    dir: &Path,
    read_only: &mut BTreeSet<PathBuf>,
    depth: usize,
) -> Result<(), SandboxError> {
    // Submodules nest; a loop through links is impossible (no link is
    // followed), but a bound keeps a pathological tree finite.
    if depth > 16 {
        return Ok(());
    }
    let is_git_dir = dir.join("config").is_file() || dir.join("commondir").is_file();
    if is_git_dir {
        for part in GIT_DIR_MADE {
            let path = dir.join(part);
            if std::fs::symlink_metadata(&path).is_err() {
                std::fs::create_dir(&path).map_err(|source| SandboxError::Path {
                    what: "git folder part (created empty so it can be protected)",
                    path: path.clone(),
                    source,
                })?;
            }
        }
        for part in GIT_DIR_PARTS {
            let path = dir.join(part);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if !meta.file_type().is_symlink() => {
                    read_only.insert(path);
                }
                // A link inside a git folder: its target is what git
                // reads; covering it would cover the target.
                _ => {}
            }
        }
    }
    for nested in ["modules", "worktrees"] {
        for_each_folder_in(&dir.join(nested), |sub| nested_git_dirs(sub, read_only, depth + 1))?;
    }
    Ok(())
}

/// Calls `visit` on every folder directly inside `dir` (links are not
/// followed); an unreadable or missing `dir` has none.
fn for_each_folder_in(
    dir: &Path,
    mut visit: impl FnMut(&Path) -> Result<(), SandboxError>,
) -> Result<(), SandboxError> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            visit(&entry.path())?;
        }
    }
    Ok(())
}

/// Under `.git/modules` a submodule's git folder may sit below folders
/// named after its path (`modules/vendor/lib`): a folder with a `HEAD` is
/// a git folder, any other is searched.
fn nested_git_dirs(
    dir: &Path,
    read_only: &mut BTreeSet<PathBuf>,
    depth: usize,
) -> Result<(), SandboxError> {
    if depth > 16 {
        return Ok(());
    }
    if dir.join("HEAD").is_file() {
        return git_dir_parts(dir, read_only, depth);
    }
    for_each_folder_in(dir, |sub| nested_git_dirs(sub, read_only, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Mode;

    #[test]
    fn nested_repositories_and_submodules_are_found() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for dir in [".git/hooks", ".git/modules/vendor/lib", "vendor/lib", "sub/.git", ".claude"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".git/modules/vendor/lib/HEAD"), "").unwrap();
        std::fs::write(root.join(".git/modules/vendor/lib/config"), "").unwrap();
        std::fs::write(root.join("vendor/lib/.git"), "gitdir: ../../.git/modules/vendor/lib\n")
            .unwrap();
        std::fs::write(root.join("sub/.git/config"), "").unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        let temp = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, &root, temp.path());
        let protection = find(&policy).unwrap();
        let mounts = protection.mounts(&root).unwrap();
        let rel = |paths: &[PathBuf]| -> Vec<String> {
            paths.iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect()
        };
        assert_eq!(
            rel(&mounts.read_only),
            [
                ".claude/settings.json",
                ".git/config",
                ".git/hooks",
                ".git/info",
                ".git/modules/vendor/lib/config",
                ".git/modules/vendor/lib/hooks",
                ".git/modules/vendor/lib/info",
                "sub/.git/config",
                "sub/.git/hooks",
                "sub/.git/info",
                "vendor/lib/.git",
            ]
        );
        assert_eq!(
            rel(&mounts.pins),
            [
                ".claude",
                ".git",
                ".git/modules",
                ".git/modules/vendor",
                ".git/modules/vendor/lib",
                "sub",
                "sub/.git",
                "vendor",
                "vendor/lib",
            ]
        );
    }

    /// Runs `f` on a thread without the capabilities that let root read
    /// any folder (credentials are per thread in Linux), so a folder's
    /// mode counts for it as it does for a user.
    #[allow(unsafe_code)]
    fn as_a_user_would<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy, Default)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        std::thread::spawn(move || {
            let mut header = Header { version: 0x2008_0522, pid: 0 };
            let mut data = [Data::default(); 2];
            // SAFETY: both point to the layouts capget/capset take (v3).
            unsafe {
                assert_eq!(libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()), 0);
                // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
                data[0].effective &= !0b110;
                assert_eq!(libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()), 0);
            }
            f()
        })
        .join()
        .unwrap()
    }

    #[test]
    fn an_unreadable_folder_is_protected_whole() {
        // A command can `chmod 000 vendor`, then in its next call make it
        // readable again and repoint `vendor/lib/.git`: the walk that could
        // not look inside must protect all of it.
        use std::os::unix::fs::PermissionsExt;
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("vendor/lib")).unwrap();
        std::fs::write(root.join("vendor/lib/.git"), "gitdir: ../../.git/modules/lib\n").unwrap();
        std::fs::set_permissions(root.join("vendor"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let temp = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, &root, temp.path());
        let found = as_a_user_would(move || find(&policy).map(|p| p.paths()));
        std::fs::set_permissions(root.join("vendor"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert_eq!(found.unwrap(), [root.join("vendor")]);
    }

    #[test]
    fn a_cache_tag_skips_only_a_folder_named_target() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for dir in ["vendor/lib", "target/x"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join(".git"), "gitdir: elsewhere\n").unwrap();
        }
        for dir in ["vendor", "target"] {
            std::fs::write(
                root.join(dir).join("CACHEDIR.TAG"),
                "Signature: 8a477f597d28d172789f06886806bc55",
            )
            .unwrap();
        }
        let temp = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, &root, temp.path());
        assert_eq!(find(&policy).unwrap().paths(), [root.join("vendor/lib/.git")]);
    }

    #[test]
    fn dependency_and_cache_folders_are_not_walked() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for dir in ["node_modules/dep/.git", "target/debug/x/.git", "src/lib/.git"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(
            root.join("target/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        let temp = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, &root, temp.path());
        let found = find(&policy).unwrap().paths();
        assert_eq!(found, [root.join("src/lib/.git")]);
    }
}
