//! `write_file`: create, overwrite or append to a file, creating parent
//! folders. Both modes go through [`atomic_replace`], so an interrupted write
//! leaves the old content or the new one.
//!
//! With an editor's buffers attached, the new content goes through the
//! editor instead (an append adds to the editor's text of the file), after
//! the same checks and with the parent folders created the same way.
//!
//! Its preview makes the same checks the write makes before writing (the
//! target, then the parent folders, looked at without creating them) and
//! diffs the file as it is against the file as it would be.

use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::atomic::atomic_replace;
use crate::buffers::{MAX_BUFFER_BYTES, Text, read_whole, write_whole};
use crate::error::ToolError;
use crate::placeholder::refuse_placeholder;
use crate::preview::{diff_preview, invalid, note_preview};
use crate::read::hard_link_note;
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::{Opened, Resolved};
use crate::text::looks_binary;
use crate::workspace::Workspace;

/// Bytes of an existing file a write's preview reads to diff against; a
/// larger file's preview says what would happen in words.
const MAX_PREVIEW_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Replace the file's content (the default).
    #[default]
    Overwrite,
    /// Add the content at the end of the file.
    Append,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    /// Path of the file, relative to the workspace root. Missing parent folders are created.
    pub path: String,
    /// The text to write.
    pub content: String,
    /// `overwrite` (default) replaces the file; `append` adds to its end.
    #[serde(default)]
    pub mode: WriteMode,
}

pub struct WriteFile;

impl TypedTool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";

    fn description(&self) -> String {
        "Write a text file in the workspace, creating it and any missing parent folders. \
         mode=overwrite (default) replaces the whole file; mode=append adds to its end. \
         Prefer edit_file for changing part of an existing file."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: WriteFileArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| {
            write_text(workspace, &args.path, &args.content, args.mode)
        })
        .await
        .map(ToolOutput::text)
    }

    fn preview(&self, ctx: &ToolContext, args: &WriteFileArgs) -> Option<Preview> {
        let preview = preview_write(&ctx.workspace, &args.path, &args.content, args.mode);
        Some(preview.unwrap_or_else(|e| invalid(&e)))
    }
}

/// Where a write goes, and whether a file is there now.
struct Target {
    place: Resolved,
    rel: String,
    existed: bool,
}

/// The checks a write makes before touching anything: the path, and what
/// is at it now.
fn target(workspace: &Workspace, user_path: &str) -> Result<Target, ToolError> {
    let place = workspace.resolve(user_path)?;
    let rel = workspace.relative(place.path());
    let existed = match place.metadata() {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::failed(format!("'{rel}' is a folder; give a file path")));
        }
        // Writing into a FIFO or device would block or go who knows where.
        Ok(meta) if !meta.is_file() => {
            return Err(not_regular(&rel));
        }
        Ok(_) => true,
        // A file where a folder should be is reported by create_parents.
        Err(e) if is_absent(&e) => false,
        Err(e) => return Err(ToolError::io("write", &rel, &e)),
    };
    Ok(Target { place, rel, existed })
}

/// Nothing at the path: the name, or a folder on the way to it, is missing
/// (or is a file).
fn is_absent(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

pub(crate) fn not_regular(rel: &str) -> ToolError {
    ToolError::failed(format!(
        "'{rel}' is not a regular file (a pipe, socket or device); only files can be written"
    ))
}

/// Writes `data` to the workspace path `user_path`; shared with the vault's
/// `create_note`. Returns a one-line summary.
pub(crate) fn write_text(
    workspace: &Workspace,
    user_path: &str,
    data: &str,
    mode: WriteMode,
) -> Result<String, ToolError> {
    refuse_placeholder(data, "content")?;
    let Target { place, rel, existed } = target(workspace, user_path)?;
    create_parents(workspace, &place)?;
    if workspace.buffers().is_some_and(|b| b.writes())
        && let Some(summary) = write_through_editor(workspace, &place, &rel, existed, data, mode)?
    {
        return Ok(summary);
    }
    let data = data.as_bytes();
    let appending = mode == WriteMode::Append;
    let mut appended = false;
    let mut links = 1;
    let mut written = Tally::default();
    atomic_replace(&place, |file, old| {
        if let Some(mut old) = old.filter(|_| appending) {
            // Stream the old content across rather than load it.
            appended = true;
            links = old.metadata()?.nlink();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = old.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                written.add(&buf[..n]);
                file.write_all(&buf[..n])?;
            }
        }
        written.add(data);
        file.write_all(data)
    })
    .map_err(|e| write_error(&rel, &e))?;
    Ok(summary(&rel, data.len(), appended, existed, links, &written))
}

/// The write with an editor's buffers attached: the whole new text (for an
/// append, the old text as the tools read it, the editor's, followed by
/// `data`) goes through [`write_whole`]. `None` when an append's old
/// content cannot be held as text (binary, not UTF-8, or larger than
/// [`MAX_BUFFER_BYTES`] on disk): it is then streamed on the disk, as
/// without buffers.
fn write_through_editor(
    workspace: &Workspace,
    place: &Resolved,
    rel: &str,
    existed: bool,
    data: &str,
    mode: WriteMode,
) -> Result<Option<String>, ToolError> {
    let old = if mode == WriteMode::Append && existed {
        match place.open_read() {
            Ok(Opened::File(file, meta)) => Some((file, meta)),
            Ok(Opened::Dir) => {
                return Err(ToolError::failed(format!("'{rel}' is a folder; give a file path")));
            }
            Ok(Opened::Special) => return Err(not_regular(rel)),
            // Gone since it was checked: the append creates it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(write_error(rel, &e)),
        }
    } else {
        None
    };
    let (appended, links, text) = match old {
        Some((file, meta)) => {
            let Text { bytes, .. } = read_whole(workspace, place, file, &meta, MAX_BUFFER_BYTES)
                .map_err(|e| ToolError::io("read", rel, &e))?;
            if bytes.len() as u64 > MAX_BUFFER_BYTES || looks_binary(&bytes) {
                return Ok(None);
            }
            let Ok(mut text) = String::from_utf8(bytes) else {
                return Ok(None);
            };
            text.push_str(data);
            (true, meta.nlink(), text)
        }
        None => (false, 1, data.to_string()),
    };
    write_whole(workspace, place, rel, &text)?;
    let mut written = Tally::default();
    written.add(text.as_bytes());
    Ok(Some(summary(rel, data.len(), appended, existed, links, &written)))
}

/// The one-line summary of a write: `added` bytes given, `written` the
/// whole new content, `links` the old file's hard links.
fn summary(
    rel: &str,
    added: usize,
    appended: bool,
    existed: bool,
    links: u64,
    written: &Tally,
) -> String {
    let note = if links > 1 {
        format!(
            " [note: it had {links} hard links; its content may also have been reachable from \
             outside the workspace, and '{rel}' is now a file of its own]"
        )
    } else {
        String::new()
    };
    let size = format!("{} bytes, {} lines", written.bytes, written.lines());
    match (appended, existed) {
        (true, _) => format!("Appended {added} bytes to '{rel}' (now {size}){note}"),
        (false, true) => format!("Overwrote '{rel}' ({size})"),
        (false, false) => format!("Created '{rel}' ({size})"),
    }
}

/// Size and line count of what was written, counted as it streams by.
#[derive(Default)]
struct Tally {
    bytes: u64,
    newlines: u64,
    last: Option<u8>,
}

impl Tally {
    fn add(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
    }

    /// Lines as an editor counts them: a last line without `\n` counts.
    fn lines(&self) -> u64 {
        self.newlines + u64::from(self.last.is_some_and(|b| b != b'\n'))
    }
}

pub(crate) fn create_parents(workspace: &Workspace, place: &Resolved) -> Result<(), ToolError> {
    let Some((parent, _)) = place.split() else {
        return Ok(());
    };
    parent.create_dir_all().map_err(|e| folder_error(workspace, &parent, &e))
}

/// Why the folder `parent` could not be created, as create_parents says it.
fn folder_error(workspace: &Workspace, parent: &Resolved, e: &io::Error) -> ToolError {
    let rel = workspace.relative(parent.path());
    match e.kind() {
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => ToolError::failed(format!(
            "Failed to write file: cannot create folder '{rel}': a file is in the way"
        )),
        _ if crate::resolved::is_escape(e) => ToolError::io("create folder", &rel, e),
        _ => ToolError::failed(format!("Failed to write file: cannot create folder '{rel}': {e}")),
    }
}

/// What create_parents would say, found by looking only: each missing
/// folder up to the first that exists, which must be a folder.
pub(crate) fn check_parents(workspace: &Workspace, place: &Resolved) -> Result<(), ToolError> {
    let Some((parent, _)) = place.split() else {
        return Ok(());
    };
    let mut ancestor = parent.clone();
    loop {
        match ancestor.metadata() {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                let in_the_way = io::Error::from(io::ErrorKind::AlreadyExists);
                return Err(folder_error(workspace, &parent, &in_the_way));
            }
            Err(e) if is_absent(&e) => match ancestor.split() {
                Some((up, _)) => ancestor = up,
                // The root itself is always there.
                None => return Ok(()),
            },
            Err(e) => return Err(folder_error(workspace, &parent, &e)),
        }
    }
}

/// The preview of writing `data` to `user_path` in `mode`, or the refusal
/// the write would give. Reads the old file through the workspace handle,
/// at most [`MAX_PREVIEW_SOURCE_BYTES`] of it; writes nothing and creates
/// no folder.
pub(crate) fn preview_write(
    workspace: &Workspace,
    user_path: &str,
    data: &str,
    mode: WriteMode,
) -> Result<Preview, ToolError> {
    refuse_placeholder(data, "content")?;
    let Target { place, rel, existed } = target(workspace, user_path)?;
    check_parents(workspace, &place)?;
    let new_size = describe_size(data.as_bytes());
    if !existed {
        if looks_binary(data.as_bytes()) {
            let note = format!("[Binary content ({new_size}) would be written; no lines shown.]");
            return Ok(note_preview(&rel, true, vec![note]));
        }
        return Ok(diff_preview(&rel, "", data, true, Vec::new()));
    }
    let (file, meta) = match place.open_read().map_err(|e| write_error(&rel, &e))? {
        Opened::File(file, meta) => (file, meta),
        Opened::Dir => {
            return Err(ToolError::failed(format!("'{rel}' is a folder; give a file path")));
        }
        Opened::Special => return Err(not_regular(&rel)),
    };
    let mut notes = Vec::new();
    let links = hard_link_note(&rel, &meta);
    if !links.is_empty() {
        notes.push(links);
        notes.push(
            "[The write would make it a file of its own: the other links would keep the old \
             content.]"
                .to_string(),
        );
    }
    // The old content as the write would take it: the editor's, when it
    // has the file.
    let Text { bytes: old, .. } =
        read_whole(workspace, &place, file, &meta, MAX_PREVIEW_SOURCE_BYTES)
            .map_err(|e| ToolError::io("read", &rel, &e))?;
    let what = match mode {
        WriteMode::Overwrite => format!("its content would be replaced by {new_size}"),
        WriteMode::Append => format!("{new_size} would be added to its end"),
    };
    if old.len() as u64 > MAX_PREVIEW_SOURCE_BYTES {
        notes.push(format!(
            "['{rel}' is {} bytes, too large to show as a diff; {what}.]",
            meta.len().max(old.len() as u64)
        ));
        return Ok(note_preview(&rel, false, notes));
    }
    if looks_binary(&old) {
        notes.push(format!(
            "['{rel}' is binary ({} bytes); no lines shown: {what}.]",
            meta.len().max(old.len() as u64)
        ));
        return Ok(note_preview(&rel, false, notes));
    }
    if looks_binary(data.as_bytes()) {
        notes.push(format!("[The new content is binary; no lines shown: {what}.]"));
        return Ok(note_preview(&rel, false, notes));
    }
    let before = String::from_utf8_lossy(&old);
    if matches!(before, std::borrow::Cow::Owned(_)) {
        notes.push(format!("['{rel}' is not UTF-8 text: invalid bytes are shown as \u{FFFD}.]"));
    }
    let after = match mode {
        WriteMode::Overwrite => std::borrow::Cow::Borrowed(data),
        WriteMode::Append => std::borrow::Cow::Owned(format!("{before}{data}")),
    };
    Ok(diff_preview(&rel, &before, &after, false, notes))
}

/// `bytes` as "N bytes, L lines", as the write reports sizes.
fn describe_size(bytes: &[u8]) -> String {
    let mut tally = Tally::default();
    tally.add(bytes);
    format!("{} bytes, {} lines", tally.bytes, tally.lines())
}

pub(crate) fn write_error(rel: &str, e: &io::Error) -> ToolError {
    if crate::resolved::is_escape(e) || e.raw_os_error() == Some(libc::ELOOP) {
        return ToolError::io("write", rel, e);
    }
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            ToolError::PermissionDenied(format!("cannot write '{rel}'"))
        }
        _ => ToolError::failed(format!("Failed to write file '{rel}': {e}")),
    }
}
