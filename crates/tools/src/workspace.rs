//! The workspace boundary. [`Workspace::resolve`] is the only function that
//! turns a path a model or user gave into something a tool can open: a
//! [`Resolved`], which carries the workspace's directory handle and a path
//! below it, and offers every file operation the tools need.
//!
//! Two layers keep the jail:
//!
//! - `resolve` judges the path for the reader: it folds `.` and `..`
//!   lexically, then canonicalises the longest existing prefix, so a symlink
//!   that leads outside, a loop or a dangling link is refused with a message
//!   that says which. What it keeps is the canonical path below the root.
//! - Every operation then happens relative to the root's directory handle
//!   (`cap_std::fs::Dir`: `openat2(RESOLVE_BENEATH)` on Linux, an `O_NOFOLLOW`
//!   walk where the kernel lacks it), so a folder swapped for a symlink
//!   between `resolve` and the operation is refused by the kernel, not
//!   followed. The check is a courtesy; the handle is the guarantee.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::buffers::Buffers;
use crate::error::PathError;
pub use crate::resolved::Resolved;

/// Longest file name most filesystems accept, in bytes.
const MAX_COMPONENT_BYTES: usize = 255;
/// Linux's PATH_MAX.
const MAX_PATH_BYTES: usize = 4096;

/// A folder the tools are confined to.
#[derive(Clone)]
pub struct Workspace {
    root: PathBuf,
    /// The root, opened once: every file operation starts from this handle.
    dir: Arc<Dir>,
    /// The editor's view of the files, when one is attached.
    buffers: Option<Arc<dyn Buffers>>,
    /// Files whose content the user's rules keep from the model.
    read_denied: Option<ReadDenied>,
}

/// Whether the user's rules deny reading the file at this path (relative
/// to the root, `/`-separated): tools that read many files at once
/// (`search`) leave it out, as `read_file` would be refused it.
pub type ReadDenied = Arc<dyn Fn(&str) -> bool + Send + Sync>;

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("dir", &self.dir)
            .field("buffers", &if self.buffers.is_some() { "attached" } else { "none" })
            .finish()
    }
}

impl Workspace {
    /// Opens the folder `root` (which must exist) as a workspace.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref();
        let canonical = fs::canonicalize(root).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open workspace folder '{}': {e}", root.display()),
            )
        })?;
        if !canonical.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace '{}' is not a folder", root.display()),
            ));
        }
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open workspace folder '{}': {e}", root.display()),
            )
        })?;
        Ok(Workspace { root: canonical, dir: Arc::new(dir), buffers: None, read_denied: None })
    }

    /// This workspace with an editor's `buffers` attached: the file tools
    /// then read the editor's text of a file and write through the editor,
    /// every path still judged by the jail first. Replaces buffers attached
    /// before.
    pub fn with_buffers(mut self, buffers: Arc<dyn Buffers>) -> Workspace {
        self.buffers = Some(buffers);
        self
    }

    /// Tools that read many files leave out those `denied` names (the
    /// session's deny rules for reading). Replaces one set before.
    pub fn with_read_denied(mut self, denied: ReadDenied) -> Workspace {
        self.read_denied = Some(denied);
        self
    }

    /// Whether the user's rules deny reading `relative` (see [`ReadDenied`]).
    pub fn read_denied(&self, relative: &str) -> bool {
        self.read_denied.as_ref().is_some_and(|denied| denied(relative))
    }

    /// The editor's buffers, when attached.
    pub(crate) fn buffers(&self) -> Option<&dyn Buffers> {
        self.buffers.as_deref()
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `user_path` (relative to the root, or absolute inside it) to a
    /// place inside the workspace, or says why it cannot be used. The path
    /// need not exist. An empty path or `.` is the root.
    pub fn resolve(&self, user_path: &str) -> Result<Resolved, PathError> {
        let full = self.check(user_path)?;
        let rel = full.strip_prefix(&self.root).map(Path::to_path_buf).unwrap_or_default();
        Ok(Resolved::new(Arc::clone(&self.dir), &self.root, rel))
    }

    /// The checks of [`Workspace::resolve`], giving the full path.
    fn check(&self, user_path: &str) -> Result<PathBuf, PathError> {
        check_syntax(user_path)?;
        let requested = Path::new(user_path);
        let lexical = if requested.is_absolute() {
            normalize_lexically(requested)
        } else {
            normalize_lexically(&self.root.join(requested))
        };
        if !lexical.starts_with(&self.root) && !requested.is_absolute() {
            return Err(self.outside(user_path));
        }
        // Absolute paths may name the root through another spelling (a
        // symlinked parent), so they are judged after canonicalisation.
        let resolved = self.resolve_physically(user_path, &lexical)?;
        if resolved.starts_with(&self.root) { Ok(resolved) } else { Err(self.outside(user_path)) }
    }

    /// `path` relative to the root, with `/` separators, for messages and
    /// tool output; `.` for the root itself. Paths outside the root are
    /// shown whole.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => {
                let parts: Vec<_> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect();
                parts.join("/")
            }
            Err(_) => path.display().to_string(),
        }
    }

    fn outside(&self, user_path: &str) -> PathError {
        PathError::OutsideWorkspace {
            path: user_path.to_string(),
            root: self.root.display().to_string(),
        }
    }

    /// Canonicalises the longest existing prefix of `lexical` and appends the
    /// rest, refusing loops and dangling links.
    fn resolve_physically(&self, user_path: &str, lexical: &Path) -> Result<PathBuf, PathError> {
        let mut existing = lexical.to_path_buf();
        let mut missing: Vec<OsString> = Vec::new();
        loop {
            match fs::symlink_metadata(&existing) {
                Ok(_) => break,
                Err(e) if is_absent(&e) => match existing.file_name() {
                    Some(name) => {
                        missing.push(name.to_os_string());
                        existing.pop();
                    }
                    None => break,
                },
                Err(e) if is_symlink_loop(&e) => {
                    return Err(PathError::SymlinkLoop { path: user_path.to_string() });
                }
                Err(e) => {
                    return Err(PathError::Io {
                        path: user_path.to_string(),
                        reason: e.to_string(),
                    });
                }
            }
        }
        let mut resolved = fs::canonicalize(&existing).map_err(|e| {
            if is_symlink_loop(&e) {
                PathError::SymlinkLoop { path: user_path.to_string() }
            } else if e.kind() == io::ErrorKind::NotFound {
                PathError::DanglingSymlink { path: user_path.to_string() }
            } else {
                PathError::Io { path: user_path.to_string(), reason: e.to_string() }
            }
        })?;
        for name in missing.into_iter().rev() {
            resolved.push(name);
        }
        Ok(resolved)
    }
}

fn check_syntax(user_path: &str) -> Result<(), PathError> {
    let invalid = |reason: &str| PathError::Invalid {
        path: user_path.escape_debug().to_string(),
        reason: reason.to_string(),
    };
    if user_path.contains('\0') {
        return Err(invalid("it contains a NUL byte"));
    }
    if user_path.len() > MAX_PATH_BYTES {
        return Err(invalid(&format!("it is longer than {MAX_PATH_BYTES} bytes")));
    }
    if user_path.split('/').any(|part| part.len() > MAX_COMPONENT_BYTES) {
        return Err(invalid(&format!("a name in it is longer than {MAX_COMPONENT_BYTES} bytes")));
    }
    Ok(())
}

/// Folds `.` and `..` without looking at the disk. `..` at the root stays at
/// the root, as the kernel does.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

fn is_absent(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

fn is_symlink_loop(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalisation_folds_dots() {
        assert_eq!(normalize_lexically(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize_lexically(Path::new("/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn relative_uses_slashes_and_dot_for_root() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        assert_eq!(ws.relative(ws.root()), ".");
        assert_eq!(ws.relative(&ws.root().join("a").join("b.txt")), "a/b.txt");
    }
}
