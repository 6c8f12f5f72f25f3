//! The one way a tool writes a file: a temporary file in the same folder,
//! written and fsynced, then renamed over the target. A crash at any moment
//! leaves either the old content or the new, never a mix.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Replaces `path`'s content with `data` atomically. The parent folder must
/// exist. An existing file keeps its permissions; a new one gets 0644.
pub fn atomic_write(path: &Path, data: &[u8]) -> io::Result<()> {
    atomic_replace(path, |file| file.write_all(data))
}

/// Replaces `path`'s content with whatever `fill` writes into the new file,
/// atomically: `fill` may read the old content from `path` (it is untouched
/// until the rename), which lets an append stream instead of loading the file.
pub fn atomic_replace(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut tmp =
        tempfile::Builder::new().prefix(".axon-write-").suffix(".tmp").tempfile_in(dir)?;
    match fs::metadata(path) {
        Ok(meta) => tmp.as_file().set_permissions(meta.permissions())?,
        Err(_) => set_new_file_permissions(tmp.as_file())?,
    }
    fill(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable only once the folder entry is on disk.
    File::open(dir)?.sync_all()
}

/// Temporary files are created 0600; a new file should look like any other.
#[cfg(unix)]
fn set_new_file_permissions(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_new_file_permissions(_file: &File) -> io::Result<()> {
    Ok(())
}
