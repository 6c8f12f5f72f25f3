//! The one way a file is written: a temporary file in the same folder,
//! written and fsynced, then renamed over the target. A crash at any moment
//! leaves either the old content or the new, never a mix.
//!
//! Everything happens relative to one handle of the target's folder: the
//! temporary file is created in it (`O_CREAT | O_EXCL`, a fresh random name),
//! the old content is read from it, and the rename is `renameat` within it,
//! so a folder swapped for a symlink while the write runs cannot send any of
//! the three elsewhere. Inside the workspace that handle is opened beneath
//! the root. On any failure the temporary file is removed.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use crate::resolved::Resolved;

/// Attempts at a free temporary name before giving up.
const TEMP_ATTEMPTS: usize = 16;

/// Replaces the content of the workspace file `target` with `data`
/// atomically. The parent folder must exist. An existing file keeps its
/// permissions; a new one gets 0644.
pub fn atomic_write(target: &Resolved, data: &[u8]) -> io::Result<()> {
    atomic_replace(target, |file, _old| file.write_all(data))
}

/// Replaces `target`'s content with whatever `fill` writes into the new
/// file, atomically. `fill` gets the old file, opened from the same folder
/// handle, when there is one (it is untouched until the rename), which lets
/// an append stream instead of loading the file.
pub fn atomic_replace(
    target: &Resolved,
    fill: impl FnOnce(&mut File, Option<File>) -> io::Result<()>,
) -> io::Result<()> {
    let Some((parent, name)) = target.split() else {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "the workspace root is a folder"));
    };
    let dir = parent.open_dir()?;
    replace_in(&dir, &name, 0o644, fill)
}

/// Atomically writes `data` to a file outside any workspace (axon's own
/// configuration files), through the same writer.
pub fn atomic_write_path(path: &Path, data: &[u8]) -> io::Result<()> {
    write_path(path, data, 0o644)
}

/// [`atomic_write_path`] for a file that is the user's alone: a new file
/// is 0600 from its creation (the temporary file is never readable by
/// others), an existing one keeps its mode. For axon's private data (a
/// session's images).
pub fn atomic_write_private(path: &Path, data: &[u8]) -> io::Result<()> {
    write_path(path, data, 0o600)
}

fn write_path(path: &Path, data: &[u8], new_mode: u32) -> io::Result<()> {
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' names no file", path.display()),
        ));
    };
    let dir = Dir::open_ambient_dir(parent, ambient_authority())?;
    replace_in(&dir, name, new_mode, |file, _old| file.write_all(data))
}

/// The writer itself: every name here is one plain name inside `dir`. A
/// new file gets `new_mode`; an existing one keeps its own.
fn replace_in(
    dir: &Dir,
    name: &OsStr,
    new_mode: u32,
    fill: impl FnOnce(&mut File, Option<File>) -> io::Result<()>,
) -> io::Result<()> {
    let old = open_old(dir, name)?;
    let permissions = match &old {
        Some(file) => file.metadata()?.permissions().mode(),
        None => new_mode,
    };
    let (tmp_name, tmp) = create_temp(dir, name)?;
    let written = (|| {
        let mut tmp = tmp;
        tmp.set_permissions(std::fs::Permissions::from_mode(permissions))?;
        fill(&mut tmp, old)?;
        tmp.sync_all()?;
        drop(tmp);
        dir.rename(&tmp_name, dir, name)
    })();
    if let Err(e) = written {
        // Best effort: the write already failed, and a leftover name is
        // what must not happen; a second failure changes nothing for it.
        let _ = dir.remove_file(&tmp_name);
        return Err(e);
    }
    // The rename is durable only once the folder entry is on disk.
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_DIRECTORY);
    dir.open_with(".", &options)?.sync_all()
}

/// The file being replaced, if it exists. A symlink in its place is not
/// followed (the rename replaces the link itself); a folder or a special
/// file is refused.
fn open_old(dir: &Dir, name: &OsStr) -> io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = match dir.open_with(name, &options) {
        Ok(file) => file.into_std(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // A symlink: replaced as a name, its target left alone.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "it is a folder"));
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file (a pipe, socket or device)",
        ));
    }
    Ok(Some(file))
}

/// A new, empty, private file with a random name next to `name`.
fn create_temp(dir: &Dir, name: &OsStr) -> io::Result<(OsString, File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW);
    // Keep a trace of the target in the name, bounded so it stays legal.
    let stem: String = name.to_string_lossy().chars().take(32).collect();
    let mut last = None;
    for _ in 0..TEMP_ATTEMPTS {
        let mut tmp_name = OsString::from(".axon-write-");
        tmp_name.push(&stem);
        tmp_name.push(format!(".{:016x}.tmp", fastrand::u64(..)));
        match dir.open_with(&tmp_name, &options) {
            Ok(file) => return Ok((tmp_name, file.into_std())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}
