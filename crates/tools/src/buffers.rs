//! Reading and writing files through an editor ("buffers"), still inside
//! the workspace jail.
//!
//! When an editor attaches its [`Buffers`] to the [`Workspace`]
//! ([`Workspace::with_buffers`]), the file tools (`read_file`, `edit_file`,
//! `write_file`, `read_note`, `create_note` and their previews) read the
//! editor's text of a file, unsaved changes included, and write through the
//! editor, so an edit lands in its undo history. Without buffers nothing
//! here changes what a tool does.
//!
//! What is guaranteed:
//!
//! - The jail comes first. Every path handed to the editor is one
//!   [`Workspace::resolve`] accepted (absolute, canonical, inside the root),
//!   and the tool has already made every check it makes without buffers
//!   through the root's directory handle: a read has opened the file
//!   beneath the root as a regular file, a write has checked the target and
//!   created its folders beneath the root. The model can name no path
//!   outside the workspace; only the content comes from or goes to the
//!   editor.
//! - A read falls back, silently, to the text read from the disk handle
//!   when the editor gives none: the disk is authoritative. A file the disk
//!   says is binary, or larger than the caller's limit (at most
//!   [`MAX_BUFFER_BYTES`]), is never asked of the editor.
//! - Right before each call to the editor, every folder on the way from the
//!   root to the file is checked to be a plain folder (looked at through
//!   the handle, not followed), and the file's own name to be no symlink;
//!   for a read, that the name is still the very file the jail opened
//!   (device and inode). After a read the check is repeated, and if it no
//!   longer holds the editor's text is dropped for the disk handle's.
//! - A file with several hard links is written on the disk with
//!   [`atomic_write`], as without buffers (the name becomes a file of its
//!   own), never through the editor: an editor that saves in place would
//!   change the content every other name shares, outside the workspace too.
//!
//! What is not guaranteed: the editor opens the file by its path, through
//! the ambient filesystem, not through the jail's handle. A symlink swapped
//! into that path (or above the root) after the last check could redirect
//! the editor's own read or write. The window exists only while buffers are
//! attached, and spans from that check to the moment the editor opens the
//! file: the trip of the request to the editor and its handling of it,
//! usually milliseconds, as long as the editor takes. A redirected read is
//! kept only if the swap is also undone before the check after it; a
//! redirected write cannot be undone. Only something changing the
//! workspace's folders while the call runs (a process started earlier, the
//! user, another program) can use the window; the model cannot name such a
//! path.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use cap_std::fs::MetadataExt as _;

use crate::atomic::atomic_write;
use crate::error::ToolError;
use crate::resolved::Resolved;
use crate::text::{BINARY_SNIFF_BYTES, looks_binary};
use crate::workspace::Workspace;
use crate::write::{not_regular, write_error};

/// An editor's view of the workspace's files: what it holds for a file (an
/// unsaved buffer included), and writing through it.
///
/// Implementations are called on blocking threads (the tools'
/// [`ToolContext::blocking`](crate::ToolContext::blocking), and
/// [`ToolRegistry::preview`](crate::ToolRegistry::preview), which callers
/// run on one) and may block waiting for the editor.
pub trait Buffers: Send + Sync {
    /// The editor's text of `path` (absolute, inside the workspace). `Err`
    /// when the editor could not give it (the tools then read the disk).
    fn read(&self, path: &Path) -> Result<String, String>;

    /// Makes `text` the content of `path` through the editor.
    /// `Err(message)` fails the tool call with that message.
    fn write(&self, path: &Path, text: &str) -> Result<(), String>;

    /// Whether writes go through the editor at all; `false` for an editor
    /// that only reads (its files are then written on the disk, as with
    /// no editor).
    fn writes(&self) -> bool {
        true
    }
}

/// Largest file, by its size on disk, a tool asks the editor for: a larger
/// one is read from the disk, streamed or bounded, since its whole text
/// would have to cross to the editor and back.
pub(crate) const MAX_BUFFER_BYTES: u64 = 64 * 1024 * 1024;

/// The editor's text of `place`, which the tool has opened through the jail
/// as a regular file (`meta` from that handle, `head` its first bytes), or
/// `None` when the tool should read the disk handle: no buffers attached,
/// the file on disk is binary or larger than `max`, its path no longer
/// names the opened file, or the editor gave no text. This is the one place
/// that decides whose text a tool reads.
pub(crate) fn editor_text(
    workspace: &Workspace,
    place: &Resolved,
    meta: &Metadata,
    head: &[u8],
    max: u64,
) -> Option<String> {
    let buffers = workspace.buffers()?;
    if meta.len() > max || looks_binary(head) {
        return None;
    }
    // The editor opens by name: it is asked only while the name is the file
    // the jail opened, and its answer kept only if it still is.
    if !names_file(place, meta) {
        return None;
    }
    let text = buffers.read(place.path()).ok()?;
    names_file(place, meta).then_some(text)
}

/// A file's content as a tool that holds it whole reads it.
pub(crate) struct Text {
    /// The editor's text, or at most `max + 1` bytes of the disk's (one more
    /// than the caller accepts, so it can tell a file that is too large).
    pub(crate) bytes: Vec<u8>,
    /// Whether it is the editor's text.
    pub(crate) from_editor: bool,
}

/// Reads the regular file `place`, opened through the jail as `file`, whole:
/// the editor's text when [`editor_text`] gives it, else the disk's, at most
/// `max + 1` bytes. The caller judges the size, binary content and encoding
/// of what it gets, as without buffers.
pub(crate) fn read_whole(
    workspace: &Workspace,
    place: &Resolved,
    mut file: File,
    meta: &Metadata,
    max: u64,
) -> io::Result<Text> {
    let limit = max.saturating_add(1);
    let mut bytes = Vec::new();
    // The first bytes say whether the disk holds text at all.
    (&mut file).take((BINARY_SNIFF_BYTES as u64).min(limit)).read_to_end(&mut bytes)?;
    if let Some(text) = editor_text(workspace, place, meta, &bytes, max) {
        return Ok(Text { bytes: text.into_bytes(), from_editor: true });
    }
    bytes.reserve((meta.len().min(limit) as usize).saturating_sub(bytes.len()));
    file.take(limit - bytes.len() as u64).read_to_end(&mut bytes)?;
    Ok(Text { bytes, from_editor: false })
}

/// Makes `text` the content of the file `place` (`rel` in messages), which
/// the caller resolved and checked and whose folder exists: through the
/// editor when buffers are attached, else with [`atomic_write`], the one
/// disk writer. This is the one place a tool writes a file's whole text.
pub(crate) fn write_whole(
    workspace: &Workspace,
    place: &Resolved,
    rel: &str,
    text: &str,
) -> Result<(), ToolError> {
    let on_disk = || atomic_write(place, text.as_bytes()).map_err(|e| write_error(rel, &e));
    let Some(buffers) = workspace.buffers().filter(|b| b.writes()) else {
        return on_disk();
    };
    if !editor_may_write(workspace, place, rel)? {
        return on_disk();
    }
    buffers.write(place.path(), text).map_err(|message| {
        ToolError::failed(format!("The editor could not write '{rel}': {message}"))
    })
}

/// Whether the write of `place` may go to the editor, checked right before
/// it: every folder on the way is a plain folder and the name is no
/// symlink, folder or special file (each refused with a message); `false`
/// for a hard-linked file, which is written on the disk instead.
fn editor_may_write(workspace: &Workspace, place: &Resolved, rel: &str) -> Result<bool, ToolError> {
    if let Some(folder) = changed_folder(place) {
        return Err(ToolError::failed(format!(
            "Cannot write '{rel}': the folder '{}' is no longer a plain folder (a symlink was \
             put in its place, or it was removed, while the call ran); nothing was written",
            workspace.relative(folder.path())
        )));
    }
    match place.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(ToolError::io("write", rel, &io::Error::from_raw_os_error(libc::ELOOP)))
        }
        Ok(meta) if meta.is_dir() => {
            Err(ToolError::failed(format!("'{rel}' is a folder; give a file path")))
        }
        Ok(meta) if !meta.is_file() => Err(not_regular(rel)),
        Ok(meta) => Ok(meta.nlink() == 1),
        // A new file: its folder was just checked.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(write_error(rel, &e)),
    }
}

/// Whether the path of `place` names, now, the regular file the jail opened
/// (`meta` from its handle), with no symlink on the way.
fn names_file(place: &Resolved, meta: &Metadata) -> bool {
    changed_folder(place).is_none()
        && place
            .symlink_metadata()
            .is_ok_and(|now| now.is_file() && now.dev() == meta.dev() && now.ino() == meta.ino())
}

/// The first folder between the root and `place` that is not a plain folder
/// now (a symlink, something else, or gone), or `None` when all are. Each
/// is looked at through the root's handle without following it.
fn changed_folder(place: &Resolved) -> Option<Resolved> {
    let mut next = place.split();
    while let Some((folder, _)) = next {
        if folder.rel().as_os_str().is_empty() {
            return None;
        }
        if !folder.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
            return Some(folder);
        }
        next = folder.split();
    }
    None
}
