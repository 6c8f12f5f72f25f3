//! `write_file`: create, overwrite or append to a file, creating parent
//! folders. Both modes go through [`atomic_write`], so an interrupted write
//! leaves the old content or the new one.

use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;

use axon_protocol::{ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::atomic::atomic_replace;
use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::Resolved;
use crate::workspace::Workspace;

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
            write_text(workspace, &args.path, args.content.as_bytes(), args.mode)
        })
        .await
        .map(ToolOutput::text)
    }
}

/// Writes `data` to the workspace path `user_path`; shared with the vault's
/// `create_note`. Returns a one-line summary.
pub(crate) fn write_text(
    workspace: &Workspace,
    user_path: &str,
    data: &[u8],
    mode: WriteMode,
) -> Result<String, ToolError> {
    let place = workspace.resolve(user_path)?;
    let rel = workspace.relative(place.path());
    let existed = match place.metadata() {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::failed(format!("'{rel}' is a folder; give a file path")));
        }
        // Writing into a FIFO or device would block or go who knows where.
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::failed(format!(
                "'{rel}' is not a regular file (a pipe, socket or device); only files can be written"
            )));
        }
        Ok(_) => true,
        // A file where a folder should be is reported by create_parents.
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            false
        }
        Err(e) => return Err(ToolError::io("write", &rel, &e)),
    };
    create_parents(workspace, &place)?;
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
    let note = if links > 1 {
        format!(
            " [note: it had {links} hard links; its content may also have been reachable from \
             outside the workspace, and '{rel}' is now a file of its own]"
        )
    } else {
        String::new()
    };
    let size = format!("{} bytes, {} lines", written.bytes, written.lines());
    Ok(match (appended, existed) {
        (true, _) => format!("Appended {} bytes to '{rel}' (now {size}){note}", data.len()),
        (false, true) => format!("Overwrote '{rel}' ({size})"),
        (false, false) => format!("Created '{rel}' ({size})"),
    })
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

fn create_parents(workspace: &Workspace, place: &Resolved) -> Result<(), ToolError> {
    let Some((parent, _)) = place.split() else {
        return Ok(());
    };
    parent.create_dir_all().map_err(|e| {
        let rel = workspace.relative(parent.path());
        match e.kind() {
            io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => ToolError::failed(
                format!("Failed to write file: cannot create folder '{rel}': a file is in the way"),
            ),
            _ if crate::resolved::is_escape(&e) => ToolError::io("create folder", &rel, &e),
            _ => ToolError::failed(format!(
                "Failed to write file: cannot create folder '{rel}': {e}"
            )),
        }
    })
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
