//! `write_file`: create, overwrite or append to a file, creating parent
//! folders. Both modes go through [`atomic_write`], so an interrupted write
//! leaves the old content or the new one.

use std::fs;
use std::io;
use std::path::Path;

use axon_protocol::{ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::atomic::atomic_write;
use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
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
    let path = workspace.resolve(user_path)?;
    let rel = workspace.relative(&path);
    if path.is_dir() {
        return Err(ToolError::failed(format!(
            "'{rel}' is a folder; give a file path"
        )));
    }
    create_parents(workspace, &path)?;
    let existing = match fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolError::io("read", &rel, &e)),
    };
    let existed = existing.is_some();
    let appended = mode == WriteMode::Append && existing.is_some();
    let content = match existing {
        Some(mut old) if appended => {
            old.extend_from_slice(data);
            old
        }
        _ => data.to_vec(),
    };
    atomic_write(&path, &content).map_err(|e| write_error(&rel, &e))?;
    let lines = content.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    let size = format!("{} bytes, {lines} lines", content.len());
    Ok(match (appended, existed) {
        (true, _) => format!("Appended {} bytes to '{rel}' (now {size})", data.len()),
        (false, true) => format!("Overwrote '{rel}' ({size})"),
        (false, false) => format!("Created '{rel}' ({size})"),
    })
}

fn create_parents(workspace: &Workspace, path: &Path) -> Result<(), ToolError> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    if parent.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(parent).map_err(|e| {
        let rel = workspace.relative(parent);
        match e.kind() {
            io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => ToolError::failed(
                format!("Failed to write file: cannot create folder '{rel}': a file is in the way"),
            ),
            _ => ToolError::failed(format!(
                "Failed to write file: cannot create folder '{rel}': {e}"
            )),
        }
    })
}

pub(crate) fn write_error(rel: &str, e: &io::Error) -> ToolError {
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            ToolError::PermissionDenied(format!("cannot write '{rel}'"))
        }
        _ => ToolError::failed(format!("Failed to write file '{rel}': {e}")),
    }
}
