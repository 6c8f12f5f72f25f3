//! `read_file`: a file's lines, numbered from 1 as `N | text`.
//!
//! The file is streamed, so a huge file costs only the lines shown plus a
//! line count. Output stops at a line or byte budget with a note saying how to
//! read on; ranges past the end clamp silently; binary files are refused.

use std::fs::File;
use std::io::{BufRead, BufReader};

use axon_protocol::{ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
use crate::text::{clip_line, looks_binary};
use crate::workspace::Workspace;

/// Most lines shown by one call.
pub(crate) const MAX_LINES: u64 = 2000;
/// Most bytes of output from one call.
const MAX_OUTPUT_BYTES: usize = 128 * 1024;
/// Longer lines are cut (minified files would otherwise eat the budget).
const MAX_LINE_CHARS: usize = 2000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// First line to show, counting from 1. Defaults to 1.
    #[serde(default)]
    pub start_line: Option<u64>,
    /// Last line to show, inclusive. Defaults to the end of the file (at most 2000 lines are shown per call).
    #[serde(default)]
    pub end_line: Option<u64>,
}

pub struct ReadFile;

impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";

    fn description(&self) -> String {
        format!(
            "Read a text file from the workspace. Each line is shown as `N | text`, numbered from 1. \
             Use start_line/end_line to read part of a large file; at most {MAX_LINES} lines are \
             shown per call and the output says how to read further. Binary files are refused."
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: ReadFileArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| read_numbered(workspace, &args))
            .await
            .map(ToolOutput::text)
    }
}

fn read_numbered(workspace: &Workspace, args: &ReadFileArgs) -> Result<String, ToolError> {
    let path = workspace.resolve(&args.path)?;
    let rel = workspace.relative(&path);
    let meta = std::fs::metadata(&path).map_err(|e| ToolError::io("read", &rel, &e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "'{rel}' is a folder, not a file; use list_dir to see what it contains"
        )));
    }
    let file = File::open(&path).map_err(|e| ToolError::io("read", &rel, &e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::io("read", &rel, &e))?;
    if looks_binary(head) {
        return Err(ToolError::failed(format!(
            "Cannot read '{rel}': it looks like a binary file ({} bytes)",
            meta.len()
        )));
    }

    let start = args.start_line.unwrap_or(1).max(1);
    let end = args.end_line.unwrap_or(u64::MAX);
    let mut out = String::new();
    let mut line = Vec::new();
    let mut total = 0u64;
    let mut shown = 0u64;
    let mut last_shown = 0u64;
    let mut cut_short = false;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| ToolError::io("read", &rel, &e))?;
        if n == 0 {
            break;
        }
        total += 1;
        if total < start || total > end || cut_short {
            continue;
        }
        if shown >= MAX_LINES || out.len() >= MAX_OUTPUT_BYTES {
            cut_short = true;
            continue;
        }
        let text = String::from_utf8_lossy(trim_line_ending(&line));
        if shown > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{total} | {}", clip_line(&text, MAX_LINE_CHARS)));
        shown += 1;
        last_shown = total;
    }

    if total == 0 {
        return Ok(format!("('{rel}' is empty)"));
    }
    if shown == 0 {
        return Ok(format!(
            "(no lines from {start}: '{rel}' has {total} lines)"
        ));
    }
    if cut_short {
        out.push_str(&format!(
            "\n\n[Showing lines {start}-{last_shown} of {total}. To read on, call read_file with \
             start_line={}.]",
            last_shown + 1
        ));
    }
    Ok(out)
}

fn trim_line_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
