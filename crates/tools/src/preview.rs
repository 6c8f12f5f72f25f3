//! Diffs of file changes, for previews and tool results.
//!
//! A preview's diff is a unified diff with 3 lines of context and
//! `--- a/PATH` / `+++ b/PATH` headers (PATH workspace-relative, `/`
//! separators), preceded by any notes the approver should read first, each a
//! bracketed line of its own. It is never longer than
//! [`MAX_PREVIEW_DIFF_BYTES`]: a longer one is cut at a line boundary and
//! says how many lines were left out. Computing it takes bounded time: past
//! [`DIFF_BUDGET`] the diff gets coarser (still correct), never slower.

use std::time::{Duration, Instant};

use axon_protocol::Preview;
use similar::TextDiffConfig;

use crate::error::ToolError;

/// Bytes of one diff preview, at most.
pub(crate) const MAX_PREVIEW_DIFF_BYTES: usize = 64 * 1024;
/// Time allowed for finding a fine-grained diff.
const DIFF_BUDGET: Duration = Duration::from_secs(1);
/// Lines of unchanged text shown around each change.
const CONTEXT_LINES: usize = 3;

/// The unified diff from `before` to `after` of the file `rel`, whole;
/// empty when nothing changes.
pub(crate) fn unified_diff(rel: &str, before: &str, after: &str) -> String {
    unified_diff_named(rel, rel, before, after)
}

/// [`unified_diff`] of a file named `from` before and `to` after (a move).
pub(crate) fn unified_diff_named(from: &str, to: &str, before: &str, after: &str) -> String {
    let diff =
        TextDiffConfig::default().deadline(Instant::now() + DIFF_BUDGET).diff_lines(before, after);
    diff.unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&format!("a/{from}"), &format!("b/{to}"))
        .to_string()
}

/// The preview of the file `rel` going from `before` to `after`: `notes`
/// first, then the diff, bounded. A change that changes nothing still gets
/// its headers and a note saying so.
pub(crate) fn diff_preview(
    rel: &str,
    before: &str,
    after: &str,
    created: bool,
    mut notes: Vec<String>,
) -> Preview {
    let diff = unified_diff(rel, before, after);
    if diff.is_empty() {
        notes.push(if created {
            "[An empty file would be created.]".to_string()
        } else {
            "[The content would stay the same.]".to_string()
        });
        return note_preview(rel, created, notes);
    }
    let mut text = notes_text(&notes);
    text.push_str(&diff);
    Preview::Diff { path: rel.to_string(), diff: cap(text), created }
}

/// A preview of a change to `rel` too large or too binary to show as lines:
/// the headers and `notes` saying what would happen.
pub(crate) fn note_preview(rel: &str, created: bool, notes: Vec<String>) -> Preview {
    let mut text = notes_text(&notes);
    text.push_str(&format!("--- a/{rel}\n+++ b/{rel}\n"));
    Preview::Diff { path: rel.to_string(), diff: cap(text), created }
}

/// The preview of a call the tool would refuse, in the tool's own words.
pub(crate) fn invalid(error: &ToolError) -> Preview {
    Preview::Invalid { message: error.to_string() }
}

fn notes_text(notes: &[String]) -> String {
    let mut text = String::new();
    for note in notes {
        text.push_str(note.trim_end());
        text.push('\n');
    }
    text
}

/// `text` cut at the last line boundary that leaves room for the note
/// saying how many lines were left out.
pub(crate) fn cap(text: String) -> String {
    if text.len() <= MAX_PREVIEW_DIFF_BYTES {
        return text;
    }
    // Room for the note, whose length depends only on the count's digits.
    let room = MAX_PREVIEW_DIFF_BYTES - 160;
    // A line of multi-byte text may straddle `room`: cut on a character.
    let room = text.floor_char_boundary(room);
    let cut = text[..room].rfind('\n').map_or(0, |i| i + 1);
    let left_out = text[cut..].lines().count();
    let mut shown = text[..cut].to_string();
    shown.push_str(&format!(
        "[… {left_out} more lines of the diff not shown: a preview is limited to {} KiB]\n",
        MAX_PREVIEW_DIFF_BYTES / 1024
    ));
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_diff_of_multibyte_text_is_cut_on_a_character() {
        // One long line of 3-byte characters: byte `room` falls inside one.
        let after: String = "字".repeat(30_000);
        let Preview::Diff { diff, .. } = diff_preview("cjk.txt", "", &after, true, vec![]) else {
            panic!("not a diff")
        };
        assert!(diff.len() <= MAX_PREVIEW_DIFF_BYTES, "{}", diff.len());
        assert!(diff.contains("more lines of the diff not shown"), "{diff}");
    }

    #[test]
    fn long_diffs_are_cut_at_a_line_and_counted() {
        let after: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
        let Preview::Diff { diff, created, .. } = diff_preview("big.txt", "", &after, true, vec![])
        else {
            panic!("not a diff")
        };
        assert!(created);
        assert!(diff.len() <= MAX_PREVIEW_DIFF_BYTES, "{}", diff.len());
        assert!(diff.starts_with("--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,20000 @@\n+line 0\n"));
        let last = diff.lines().last().unwrap_or_default();
        let shown = diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
        // Three header lines, the added lines shown, and the rest counted.
        assert_eq!(
            last,
            format!(
                "[… {} more lines of the diff not shown: a preview is limited to 64 KiB]",
                20_000 - shown
            )
        );
        // Every line shown is whole.
        assert!(
            diff.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .all(|l| { l.strip_prefix("+line ").is_some_and(|n| n.parse::<u32>().is_ok()) })
        );
    }

    #[test]
    fn no_change_still_names_the_file() {
        let Preview::Diff { diff, .. } = diff_preview("a.txt", "x\n", "x\n", false, vec![]) else {
            panic!("not a diff")
        };
        assert_eq!(diff, "[The content would stay the same.]\n--- a/a.txt\n+++ b/a.txt\n");
    }
}
