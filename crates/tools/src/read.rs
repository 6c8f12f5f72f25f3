//! `read_file`: a file's lines, numbered from 1 as `N | text`.
//!
//! The file is streamed, so a huge file costs only the lines shown plus a
//! line count. Output stops at a line or byte budget with a note saying how to
//! read on; ranges past the end clamp silently; a PDF gives its pages' text
//! (`pdf.rs`); a PNG, JPEG, GIF or WebP gives the image itself, scaled to
//! fit the model APIs (`images.rs`), beside one line describing it; other
//! binary files are refused.
//! With an editor's buffers attached, the editor's text of the file is shown
//! instead of the disk's, numbered the same way (the file is still opened
//! and judged through the jail first).

use std::fs::{File, Metadata};
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::fs::MetadataExt;

use axon_protocol::{ContentPart, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::buffers::{MAX_BUFFER_BYTES, editor_text};
use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::{Opened, Resolved};
use crate::text::looks_binary;
use crate::workspace::Workspace;

/// Most lines shown by one call.
pub(crate) const MAX_LINES: u64 = 2000;
/// Most bytes of output from one call.
const MAX_OUTPUT_BYTES: usize = 128 * 1024;
/// Longer lines are cut (minified files would otherwise eat the budget).
const MAX_LINE_CHARS: usize = 2000;
/// Bytes of one line kept while reading: enough for MAX_LINE_CHARS of any
/// UTF-8 text.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;

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
    /// For a PDF: the pages to read, a number or a range such as "2-5". Defaults to the first 10; at most 20 per call.
    #[serde(default)]
    pub pages: Option<String>,
}

pub struct ReadFile;

impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";

    fn description(&self) -> String {
        format!(
            "Read a text file from the workspace. Each line is shown as `N | text`, numbered from 1. \
             Use start_line/end_line to read part of a large file; at most {MAX_LINES} lines are \
             shown per call and the output says how to read further. A PDF gives the text of its \
             pages, each headed `--- page N ---` (`pages`: \"3\" or \"2-5\", at most {} per \
             call). A PNG, JPEG, GIF or WebP image is shown to you as the image itself \
             (scaled to at most {} px on the long edge). Other binary files are refused.",
            crate::pdf::MAX_PAGES,
            crate::images::MAX_LONG_EDGE
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: ReadFileArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| read_numbered(workspace, &args)).await
    }
}

fn read_numbered(workspace: &Workspace, args: &ReadFileArgs) -> Result<ToolOutput, ToolError> {
    let place = workspace.resolve(&args.path)?;
    let rel = workspace.relative(place.path());
    let (file, meta) = open_regular(&place, &rel)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| ToolError::io("read", &rel, &e))?;
    if crate::pdf::is_pdf(head) {
        return read_pdf(reader, &rel, &meta, args).map(ToolOutput::text);
    }
    if crate::images::sniff_image(head).is_some() {
        return read_image(reader, &rel, &meta);
    }
    if args.pages.is_some() {
        return Err(ToolError::failed(format!(
            "'{rel}' is not a PDF: `pages` is for PDFs; use start_line/end_line for text"
        )));
    }
    if looks_binary(head) {
        return Err(ToolError::failed(format!(
            "Cannot read '{rel}': it looks like a binary file ({} bytes)",
            meta.len()
        )));
    }
    // The editor's text, when it has one, is numbered exactly as the disk's.
    match editor_text(workspace, &place, &meta, head, MAX_BUFFER_BYTES) {
        Some(text) => number_lines(io::Cursor::new(text.as_bytes()), &rel, &meta, args),
        None => number_lines(reader, &rel, &meta, args),
    }
    .map(ToolOutput::text)
}

/// An image file as an image part after one line saying what it is (see
/// `images.rs`), read through the file already opened in the jail.
fn read_image(
    mut reader: impl io::Read,
    rel: &str,
    meta: &Metadata,
) -> Result<ToolOutput, ToolError> {
    if meta.len() > crate::images::MAX_IMAGE_FILE_BYTES {
        return Err(crate::images::too_large(rel, meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Bounded even if the file grows between the metadata and the read.
    (&mut reader)
        .take(crate::images::MAX_IMAGE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", rel, &e))?;
    let image = crate::images::prepare_image(&bytes, rel)?;
    let mut line = hard_link_note(rel, meta);
    line.push_str(&image.summary(rel));
    Ok(ToolOutput {
        content: vec![
            ContentPart::text(line),
            ContentPart::Image { media_type: image.media_type, data: image.data },
        ],
        is_error: false,
    })
}

/// A PDF's pages as text (see `pdf.rs`), read through the file already
/// opened in the jail.
fn read_pdf(
    mut reader: impl io::Read,
    rel: &str,
    meta: &Metadata,
    args: &ReadFileArgs,
) -> Result<String, ToolError> {
    if meta.len() > crate::pdf::MAX_PDF_BYTES {
        return Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF is {} MB, over the {} MB read_file parses; try \
             `pdftotext -f N -l M` through shell for a page range",
            meta.len() / (1024 * 1024),
            crate::pdf::MAX_PDF_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut reader)
        .take(crate::pdf::MAX_PDF_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", rel, &e))?;
    let mut out = hard_link_note(rel, meta);
    out.push_str(&crate::pdf::read_pages(&bytes, rel, args.pages.as_deref(), MAX_OUTPUT_BYTES)?);
    Ok(out)
}

/// The lines of `reader` (the content of `rel`) that `args` asks for, each
/// as `N | text`, within the line and byte budgets.
fn number_lines(
    mut reader: impl BufRead,
    rel: &str,
    meta: &Metadata,
    args: &ReadFileArgs,
) -> Result<String, ToolError> {
    let start = args.start_line.unwrap_or(1).max(1);
    let end = args.end_line.unwrap_or(u64::MAX);
    let mut out = hard_link_note(rel, meta);
    let mut line = Vec::new();
    let mut total = 0u64;
    let mut shown = 0u64;
    let mut last_shown = 0u64;
    let mut cut_short = false;
    loop {
        let wanted = total + 1 >= start && total < end && !cut_short;
        let cap = if wanted { MAX_LINE_BYTES } else { 0 };
        let Some(length) = read_line_capped(&mut reader, &mut line, cap)
            .map_err(|e| ToolError::io("read", rel, &e))?
        else {
            break;
        };
        total += 1;
        if !wanted {
            continue;
        }
        if shown >= MAX_LINES || out.len() >= MAX_OUTPUT_BYTES {
            cut_short = true;
            continue;
        }
        let bytes = line.strip_suffix(b"\r").unwrap_or(&line);
        let text = String::from_utf8_lossy(bytes);
        let cut = length > line.len() as u64 || text.chars().nth(MAX_LINE_CHARS).is_some();
        let text = if cut {
            let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
            format!("{kept}… [line cut; {length} bytes in all]")
        } else {
            text.into_owned()
        };
        if shown > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{total} | {text}"));
        shown += 1;
        last_shown = total;
    }

    if total == 0 {
        return Ok(format!("{out}('{rel}' is empty)"));
    }
    if shown == 0 {
        return Ok(format!("{out}(no lines from {start}: '{rel}' has {total} lines)"));
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

/// Opens `place` to read if it is a regular file. It is opened first and
/// judged by its handle, so nothing can be swapped in between: a folder,
/// FIFO or device is refused without reading (the open does not block on a
/// FIFO), and a symlink put in its place is not followed.
pub(crate) fn open_regular(place: &Resolved, rel: &str) -> Result<(File, Metadata), ToolError> {
    match place.open_read().map_err(|e| ToolError::io("read", rel, &e))? {
        Opened::File(file, meta) => Ok((file, meta)),
        Opened::Dir => Err(ToolError::failed(format!(
            "'{rel}' is a folder, not a file; use list_dir to see what it contains"
        ))),
        Opened::Special => Err(ToolError::failed(format!(
            "'{rel}' is not a regular file (a pipe, socket or device); only files can be used"
        ))),
    }
}

/// Checks that `place` is a folder: a missing one is `FolderNotFound`, a
/// file is refused as what the caller calls it (`a file`, `a note`) with
/// what it suggests instead.
pub(crate) fn require_folder(
    place: &Resolved,
    rel: &str,
    file_is: &str,
    if_file: &str,
) -> Result<(), ToolError> {
    match place.metadata() {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(ToolError::failed(format!("'{rel}' is {file_is}, not a folder; {if_file}"))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(ToolError::FolderNotFound(rel.to_string()))
        }
        Err(e) => Err(ToolError::io("open folder", rel, &e)),
    }
}

/// A file with several hard links may share its content with a name outside
/// the workspace (git never makes hard links, so in a checkout this means
/// someone did): the reader is told before the content.
pub(crate) fn hard_link_note(rel: &str, meta: &Metadata) -> String {
    if meta.nlink() > 1 {
        format!(
            "[Note: '{rel}' has {} hard links; the same content may be reachable from outside \
             the workspace.]\n",
            meta.nlink()
        )
    } else {
        String::new()
    }
}

/// Reads one line, keeping at most `cap` of its bytes in `line`; returns
/// the line's whole length without its `\n`, or `None` at the end of the
/// file. Memory stays bounded however long the line is.
fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<u64>> {
    line.clear();
    let mut length = 0u64;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(length));
        }
        any = true;
        let (chunk, ends_line) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = cap.saturating_sub(line.len()).min(chunk.len());
        line.extend_from_slice(&chunk[..room]);
        length += chunk.len() as u64;
        let consumed = chunk.len() + usize::from(ends_line);
        reader.consume(consumed);
        if ends_line {
            return Ok(Some(length));
        }
    }
}
