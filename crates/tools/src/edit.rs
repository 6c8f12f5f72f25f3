//! `edit_file`: replace an exact snippet of a file.
//!
//! The snippet must match exactly once (unless `replace_all`), because an
//! edit the model cannot point at precisely is an edit in the wrong place.
//! Misses are answered with what the model needs to retry: the closest lines
//! on zero matches, the line numbers on several. CRLF files stay CRLF even
//! when the model writes `\n`. The result is a small unified diff.
//!
//! The tool and its preview share everything up to the write (`plan`), the
//! replacement being one pure function of the old text and the arguments,
//! so a preview shows exactly the content the edit would write, or the
//! refusal the edit would give. With an editor's buffers attached, both
//! start from the editor's text of the file and the edit is written
//! through the editor.

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use similar::TextDiffConfig;

use crate::buffers::{Text, read_whole, write_whole};
use crate::error::ToolError;
use crate::placeholder::refuse_placeholder;
use crate::preview::{diff_preview, invalid, unified_diff};
use crate::read::{hard_link_note, open_regular};
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::Resolved;
use crate::text::{clip_line, looks_binary};
use crate::workspace::Workspace;

/// Lines of diff shown before it is cut.
const MAX_DIFF_LINES: usize = 80;
/// Files longer than this get no "closest lines" search.
const MAX_LINES_FOR_SUGGESTIONS: usize = 20_000;
/// Characters of old_str's first line compared when looking for near misses.
const MAX_SUGGESTION_CHARS: usize = 300;
/// Work allowed for finding near misses, in character pairs compared (the
/// cost of a character diff is at most their product). A count, not a
/// clock: the same file gets the same suggestions on a busy machine.
const SUGGESTION_WORK: usize = 40_000_000;
/// Line numbers listed when old_str matches several times; the rest are
/// counted, so the message stays small whatever the file.
const MAX_LISTED_MATCHES: usize = 20;
/// edit_file holds the file in memory twice; larger files are refused.
pub(crate) const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true.
    pub old_str: String,
    /// The text to put in its place.
    pub new_str: String,
    /// Replace every occurrence instead of requiring a unique match. Defaults to false.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile;

impl TypedTool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";

    fn description(&self) -> String {
        "Replace an exact piece of text in a file. old_str must match the file exactly \
         (whitespace included) and occur exactly once; include a few surrounding lines to make \
         it unique, or set replace_all=true to change every occurrence. Returns a diff of the \
         change. Read the file first so old_str is copied, not guessed."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: EditFileArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| edit(workspace, &args))
            .await
            .map(ToolOutput::text)
    }

    fn preview(&self, ctx: &ToolContext, args: &EditFileArgs) -> Option<Preview> {
        Some(preview_edit(&ctx.workspace, args))
    }
}

fn edit(workspace: &Workspace, args: &EditFileArgs) -> Result<String, ToolError> {
    write_planned(workspace, plan(workspace, &args.path, &[Replacement::of(args)])?)
}

/// One exact replacement: `edit_file`'s arguments, and each of
/// `multi_edit`'s edits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Replacement {
    /// The exact text to replace, including whitespace and indentation. It must occur exactly once (in the text as the edits before this one left it) unless replace_all is true.
    pub old_str: String,
    /// The text to put in its place.
    pub new_str: String,
    /// Replace every occurrence instead of requiring a unique match. Defaults to false.
    #[serde(default)]
    pub replace_all: bool,
}

impl Replacement {
    fn of(args: &EditFileArgs) -> Replacement {
        Replacement {
            old_str: args.old_str.clone(),
            new_str: args.new_str.clone(),
            replace_all: args.replace_all,
        }
    }
}

/// Writes what [`plan`] worked out, and says what changed.
pub(crate) fn write_planned(workspace: &Workspace, planned: Planned) -> Result<String, ToolError> {
    let Planned { place, rel, original, updated, replaced, link_note } = planned;
    write_whole(workspace, &place, &rel, &updated)?;

    let noun = if replaced == 1 { "replacement" } else { "replacements" };
    let note = if link_note.is_empty() {
        link_note
    } else {
        format!("{link_note}[It is now a file of its own: the other links keep the old content.]\n")
    };
    Ok(format!(
        "{note}Edited '{rel}' ({replaced} {noun})\n{}",
        short_diff(&rel, &original, &updated)
    ))
}

/// The preview of an edit: the diff the edit would make, or the tool's own
/// refusal.
pub(crate) fn preview_edit(workspace: &Workspace, args: &EditFileArgs) -> Preview {
    preview_planned(plan(workspace, &args.path, &[Replacement::of(args)]))
}

/// The preview of a planned edit: its diff, or its refusal.
pub(crate) fn preview_planned(planned: Result<Planned, ToolError>) -> Preview {
    match planned {
        Ok(planned) => {
            let mut notes = Vec::new();
            if !planned.link_note.is_empty() {
                notes.push(planned.link_note.clone());
                notes.push(
                    "[The edit would make it a file of its own: the other links would keep the \
                     old content.]"
                        .to_string(),
                );
            }
            diff_preview(&planned.rel, &planned.original, &planned.updated, false, notes)
        }
        Err(e) => invalid(&e),
    }
}

/// An edit worked out in memory, not yet written.
pub(crate) struct Planned {
    place: Resolved,
    rel: String,
    original: String,
    updated: String,
    /// Occurrences replaced.
    replaced: usize,
    /// The hard-link warning, or empty.
    link_note: String,
}

/// Everything edit_file and multi_edit do before writing: the checks, the
/// read (through the workspace handle, bounded; the editor's text when
/// buffers are attached) and the replacements, each applied to the text
/// the ones before it left, all or none. The tools and their previews all
/// go through here, so they refuse the same calls with the same words and
/// agree on the new content.
pub(crate) fn plan(
    workspace: &Workspace,
    path: &str,
    edits: &[Replacement],
) -> Result<Planned, ToolError> {
    if edits.is_empty() {
        return Err(ToolError::failed("no edits given; nothing would change"));
    }
    let numbered = |index: usize, message: String| {
        if edits.len() == 1 {
            message
        } else {
            format!("edit {} of {}: {message}", index + 1, edits.len())
        }
    };
    for (index, edit) in edits.iter().enumerate() {
        if edit.old_str.is_empty() {
            return Err(ToolError::failed(numbered(
                index,
                "old_str is empty; give the exact text to replace (to create a file, use \
                 write_file)"
                    .to_string(),
            )));
        }
        refuse_placeholder(&edit.new_str, "new_str")
            .and_then(|()| refuse_placeholder(&edit.old_str, "old_str"))
            .map_err(|e| match e {
                ToolError::Failed(message) => ToolError::Failed(numbered(index, message)),
                other => other,
            })?;
        if edit.old_str == edit.new_str {
            return Err(ToolError::failed(numbered(
                index,
                "old_str and new_str are the same; nothing would change".to_string(),
            )));
        }
    }
    let place = workspace.resolve(path)?;
    let rel = workspace.relative(place.path());
    let (file, meta) = open_regular(&place, &rel)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "'{rel}' is {} bytes, too large for edit_file (limit {MAX_EDIT_BYTES}); use shell \
             tools such as sed for files this size",
            meta.len()
        )));
    }
    // The size was checked on the handle, but the file may grow while it
    // is read, and the editor's text may be larger: no more than the limit
    // is ever held from the disk.
    let Text { bytes, from_editor } = read_whole(workspace, &place, file, &meta, MAX_EDIT_BYTES)
        .map_err(|e| ToolError::io("read", &rel, &e))?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(ToolError::failed(if from_editor {
            format!(
                "The editor's text of '{rel}' is larger than {MAX_EDIT_BYTES} bytes; too large \
                 for edit_file"
            )
        } else {
            format!(
                "'{rel}' grew past {MAX_EDIT_BYTES} bytes while it was read; too large for \
                 edit_file"
            )
        }));
    }
    // Whatever is said of the content, the hard-link warning comes first.
    let link_note = hard_link_note(&rel, &meta);
    let warned = |e: ToolError| match e {
        ToolError::Failed(message) if !link_note.is_empty() => {
            ToolError::Failed(format!("{link_note}{message}"))
        }
        other => other,
    };
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!("Cannot edit '{rel}': it looks like a binary file")));
    }
    let original = String::from_utf8(bytes)
        .map_err(|_| ToolError::failed(format!("Cannot edit '{rel}': it is not UTF-8 text")))?;
    let mut updated = original.clone();
    let mut replaced = 0;
    for (index, edit) in edits.iter().enumerate() {
        let done = replace_text(&rel, &updated, edit).map_err(|e| match e {
            ToolError::Failed(message) => ToolError::Failed(numbered(index, message)),
            other => other,
        });
        let Replaced { updated: next, count } = done.map_err(warned)?;
        updated = next;
        replaced += count;
    }
    if updated == original {
        return Err(warned(ToolError::failed(format!(
            "the edits leave '{rel}' as it was; nothing would change"
        ))));
    }
    Ok(Planned { place, rel, original, updated, replaced, link_note })
}

/// The new content and how many occurrences were replaced.
struct Replaced {
    updated: String,
    count: usize,
}

/// The replacement itself, on text in memory and nothing else: `original`
/// (the content of `rel`) with `args.old_str` replaced by `args.new_str`,
/// or why that cannot be done.
fn replace_text(rel: &str, original: &str, args: &Replacement) -> Result<Replaced, ToolError> {
    // The snippet is matched as given first; only if that fails, and the
    // file uses CRLF, is the model's bare `\n` read as the file's CRLF.
    let crlf = uses_crlf(original);
    let mut old_str = args.old_str.clone();
    let mut found = Matches::find(original, &old_str);
    if found.count == 0 && crlf && has_bare_lf(&old_str) {
        old_str = to_crlf(&old_str);
        found = Matches::find(original, &old_str);
    }
    let new_str = if crlf && has_bare_lf(&args.new_str) {
        to_crlf(&args.new_str)
    } else {
        args.new_str.clone()
    };
    let updated = match found.count {
        0 => return Err(ToolError::failed(no_match_message(rel, original, &args.old_str))),
        1 => original.replacen(old_str.as_str(), &new_str, 1),
        _ if args.replace_all => original.replace(old_str.as_str(), &new_str),
        n => {
            let lines: Vec<String> =
                line_numbers_of(original, &found.first).iter().map(u64::to_string).collect();
            let more = if n > found.first.len() {
                format!(" and {} more", n - found.first.len())
            } else {
                String::new()
            };
            return Err(ToolError::failed(format!(
                "old_str matches {n} times in '{rel}' (at lines {}{more}). Include more \
                 surrounding lines to make it unique, or set replace_all=true to replace every \
                 occurrence.",
                lines.join(", ")
            )));
        }
    };
    Ok(Replaced { updated, count: found.count })
}

/// Whether most of the file's line breaks are CRLF.
pub(crate) fn uses_crlf(content: &str) -> bool {
    let crlf = content.matches("\r\n").count();
    crlf > 0 && crlf * 2 > content.matches('\n').count()
}

/// Whether `s` has a `\n` not preceded by `\r`.
fn has_bare_lf(s: &str) -> bool {
    s.replace("\r\n", "").contains('\n')
}

fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// How often a snippet occurs, and where its first few occurrences are.
struct Matches {
    count: usize,
    /// Byte offsets of at most MAX_LISTED_MATCHES occurrences, ascending.
    first: Vec<usize>,
}

impl Matches {
    fn find(haystack: &str, needle: &str) -> Matches {
        let mut count = 0;
        let mut first = Vec::new();
        for (offset, _) in haystack.match_indices(needle) {
            if first.len() < MAX_LISTED_MATCHES {
                first.push(offset);
            }
            count += 1;
        }
        Matches { count, first }
    }
}

/// 1-based line numbers of byte offsets (ascending) in `text`.
fn line_numbers_of(text: &str, offsets: &[usize]) -> Vec<u64> {
    let mut numbers = Vec::with_capacity(offsets.len());
    let mut line = 1u64;
    let mut scanned = 0usize;
    for &offset in offsets {
        line += text.as_bytes()[scanned..offset].iter().filter(|&&b| b == b'\n').count() as u64;
        scanned = offset;
        numbers.push(line);
    }
    numbers
}

fn no_match_message(rel: &str, content: &str, old: &str) -> String {
    let mut message = format!("No match for old_str in '{rel}'.");
    let file_lines: Vec<&str> = crate::text::lines(content).collect();
    if let Some(start) = whitespace_insensitive_match(&file_lines, old) {
        let count = crate::text::lines(old).count();
        message.push_str(&format!(
            " It matches lines {}-{} if indentation and trailing spaces are ignored; copy the \
             exact text from read_file.",
            start + 1,
            start + count
        ));
        return message;
    }
    let candidates = closest_lines(&file_lines, old);
    if candidates.is_empty() {
        message.push_str(" Nothing similar was found; read the file again before editing.");
    } else {
        message.push_str(" The closest lines are:");
        for (index, line) in candidates {
            message.push_str(&format!("\n{} | {}", index + 1, clip_line(line, 200)));
        }
        message.push_str("\nRead the file again and copy the exact text, whitespace included.");
    }
    message
}

/// Where `old`'s lines occur in `file_lines` once each is trimmed.
fn whitespace_insensitive_match(file_lines: &[&str], old: &str) -> Option<usize> {
    let wanted: Vec<&str> = crate::text::lines(old).map(str::trim).collect();
    if wanted.is_empty() || wanted.iter().all(|l| l.is_empty()) || wanted.len() > file_lines.len() {
        return None;
    }
    (0..=file_lines.len() - wanted.len())
        .find(|&start| wanted.iter().zip(&file_lines[start..]).all(|(w, f)| *w == f.trim()))
}

/// Up to three file lines most like the first non-blank line of `old`.
pub(crate) fn closest_lines<'a>(file_lines: &[&'a str], old: &str) -> Vec<(usize, &'a str)> {
    let Some(probe) = crate::text::lines(old).map(str::trim).find(|l| !l.is_empty()) else {
        return Vec::new();
    };
    if file_lines.len() > MAX_LINES_FOR_SUGGESTIONS {
        return Vec::new();
    }
    let probe: String = probe.chars().take(MAX_SUGGESTION_CHARS).collect();
    // Scoring is a character diff per line: bounded by line length and by
    // one work budget for the whole search, so a miss on a huge file stays
    // cheap.
    let mut work = 0usize;
    let mut scored: Vec<(f32, usize, &str)> = file_lines
        .iter()
        .enumerate()
        .filter(|(_, line)| {
            let len = line.trim().len();
            len > 0
                && len <= MAX_SUGGESTION_CHARS * 4
                && len <= probe.len() * 2 + 8
                && probe.len() <= len * 2 + 8
        })
        .take_while(|(_, line)| {
            work += probe.len().max(1) * line.trim().len();
            work <= SUGGESTION_WORK
        })
        .map(|(i, line)| {
            let diff = TextDiffConfig::default().diff_chars(probe.as_str(), line.trim());
            (diff.ratio(), i, *line)
        })
        .filter(|(score, _, _)| *score >= 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, i, line)| (i, line)).collect()
}

fn short_diff(rel: &str, before: &str, after: &str) -> String {
    let text = unified_diff(rel, before, after);
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return text;
    }
    let mut shown: String = text.lines().take(MAX_DIFF_LINES).collect::<Vec<_>>().join("\n");
    shown.push_str(&format!("\n… ({} more diff lines)", total - MAX_DIFF_LINES));
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ending_detection() {
        assert!(uses_crlf("a\r\nb\r\n"));
        assert!(!uses_crlf("a\nb\nc\r\n"));
        assert!(has_bare_lf("a\nb"));
        assert!(!has_bare_lf("a\r\nb"));
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
    }

    #[test]
    fn line_numbers_are_counted_incrementally() {
        let text = "a\nb\nab\nc\nab";
        let found = Matches::find(text, "ab");
        assert_eq!(line_numbers_of(text, &found.first), [3, 5]);
    }

    #[test]
    fn suggestions_find_near_misses() {
        let lines = ["fn main() {", "    println!(\"hi\");", "}"];
        let found = closest_lines(&lines, "    println!(\"hello\");");
        assert_eq!(found.first().map(|f| f.0), Some(1));
        assert_eq!(whitespace_insensitive_match(&lines, "println!(\"hi\");\n}"), Some(1));
    }
}
