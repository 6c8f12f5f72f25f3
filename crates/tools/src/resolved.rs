//! A place inside the workspace and every operation the tools do on it.
//!
//! A [`Resolved`] is the only thing a tool can open. It holds the root's
//! directory handle and a path below it with no `..` and no leading `/`, and
//! each operation hands both to the kernel together (`openat2` with
//! `RESOLVE_BENEATH` through `cap_std`), so no name is looked up from the
//! ambient filesystem and a symlink swapped in after `resolve` cannot lead
//! out. Files are opened with `O_NOFOLLOW` (a symlink put in place of the
//! file is refused, not followed) and `O_NONBLOCK` (a FIFO put in place of
//! the file cannot block the thread); what was opened is then judged by
//! `fstat` of the open handle, never by a second lookup of the name.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

/// A path inside the workspace, ready to be operated on.
#[derive(Debug, Clone)]
pub struct Resolved {
    root: Arc<Dir>,
    /// Below the root; empty for the root itself.
    rel: PathBuf,
    /// The root's path joined with `rel`, for messages and for handing to
    /// other programs; never used to open anything here.
    full: PathBuf,
}

/// What a file open found.
#[derive(Debug)]
pub enum Opened {
    /// A regular file, its handle and the handle's metadata.
    File(File, Metadata),
    Dir,
    /// A FIFO, socket or device.
    Special,
}

impl Resolved {
    pub(crate) fn new(root: Arc<Dir>, root_path: &Path, rel: PathBuf) -> Self {
        let full = root_path.join(&rel);
        Resolved { root, rel, full }
    }

    /// The full path, for messages and for programs started in it.
    pub fn path(&self) -> &Path {
        &self.full
    }

    /// The path below the root (empty for the root).
    pub fn rel(&self) -> &Path {
        &self.rel
    }

    /// `rel` as the kernel should see it: `.` for the root.
    fn arg(&self) -> &Path {
        if self.rel.as_os_str().is_empty() { Path::new(".") } else { &self.rel }
    }

    /// The place `name` inside this folder. `name` must be one plain name,
    /// as read from the folder (never `.`, `..` or a path).
    pub(crate) fn child(&self, name: &std::ffi::OsStr) -> Resolved {
        let mut rel = self.rel.clone();
        rel.push(name);
        let full = self.full.join(name);
        Resolved { root: Arc::clone(&self.root), rel, full }
    }

    /// The folder this is in and its own name; `None` for the root.
    pub(crate) fn split(&self) -> Option<(Resolved, OsString)> {
        let name = match self.rel.components().next_back()? {
            Component::Normal(name) => name.to_os_string(),
            _ => return None,
        };
        let parent_rel = self.rel.parent().map(Path::to_path_buf).unwrap_or_default();
        let parent_full = self.full.parent().map(Path::to_path_buf).unwrap_or_default();
        Some((Resolved { root: Arc::clone(&self.root), rel: parent_rel, full: parent_full }, name))
    }

    /// Metadata, following links that stay inside the workspace.
    pub fn metadata(&self) -> io::Result<cap_std::fs::Metadata> {
        self.root.metadata(self.arg())
    }

    /// Metadata of the entry itself (a symlink is reported as one).
    pub fn symlink_metadata(&self) -> io::Result<cap_std::fs::Metadata> {
        self.root.symlink_metadata(self.arg())
    }

    /// Opens a file to read. The handle's own metadata says what it is, so a
    /// folder, FIFO or device is reported instead of read.
    pub fn open_read(&self) -> io::Result<Opened> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        let file = self.root.open_with(self.arg(), &options)?.into_std();
        let meta = file.metadata()?;
        Ok(if meta.is_file() {
            Opened::File(file, meta)
        } else if meta.is_dir() {
            Opened::Dir
        } else {
            Opened::Special
        })
    }

    /// Opens this folder as a handle, without following a symlink in its
    /// place.
    pub fn open_dir(&self) -> io::Result<Dir> {
        if self.rel.as_os_str().is_empty() {
            return self.root.try_clone();
        }
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY);
        Ok(Dir::from_std_file(self.root.open_with(self.arg(), &options)?.into_std()))
    }

    /// Removes this file by its name in its folder's handle (`unlinkat`):
    /// a symlink in its place is removed as a name, never followed, and a
    /// folder is refused.
    pub(crate) fn remove_file(&self) -> io::Result<()> {
        let Some((parent, name)) = self.split() else {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "the workspace root is a folder",
            ));
        };
        parent.open_dir()?.remove_file(&name)
    }

    /// Creates this folder and any missing parents.
    pub fn create_dir_all(&self) -> io::Result<()> {
        if self.rel.as_os_str().is_empty() {
            return Ok(());
        }
        self.root.create_dir_all(self.arg())
    }
}

/// Reads a text file that lives outside any workspace handle (an
/// instruction or skill file above the workspace), without following a
/// symlink in its place and without blocking on a FIFO: the checked name
/// and the file read are the same file. At most `max` bytes are read.
pub fn read_text_nofollow(path: &Path, max: u64) -> io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "it is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// Whether `e` is the jail refusing a path that led outside the workspace
/// (a symlink escaping, absolute, or swapped in while the call ran).
pub fn is_escape(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EXDEV)
        || (e.kind() == io::ErrorKind::PermissionDenied
            && e.to_string().contains("led outside of the filesystem"))
}
