//! An update's chunks applied to a file's text, in memory.
//!
//! Each chunk is looked for after the one before it (its `@@` line first,
//! then its old lines), as Codex does, at four levels of tolerance tried in
//! turn over the whole rest of the file: exact, then ignoring trailing
//! blanks, then ignoring blanks at both ends, then also reading typographic
//! dashes, quotes and spaces as their ASCII forms. A chunk marked `*** End
//! of File` is looked for at the end first. A miss says which chunk, what
//! was not found, and the file's closest lines, like `edit_file`.
//!
//! Guarantees: a pure function of the text and the chunks. Lines the patch
//! does not touch keep their bytes, line ends included; lines it writes get
//! the file's line end (CRLF in a CRLF file), and the result ends with a
//! line end when the patch wrote its last line or added after it.

use crate::edit::{closest_lines, uses_crlf};
use crate::error::ToolError;
use crate::patch::parse::Chunk;
use crate::text::clip_line;

/// Old lines quoted in a miss, at most.
const MAX_QUOTED_LINES: usize = 12;

/// One line of the file and the line end after it (`""` for a last line
/// without one).
struct Line<'a> {
    text: &'a str,
    end: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(at) => {
                let (line, end) = match rest[..at].strip_suffix('\r') {
                    Some(line) => (line, &rest[at - 1..=at]),
                    None => (&rest[..at], &rest[at..=at]),
                };
                lines.push(Line { text: line, end });
                rest = &rest[at + 1..];
            }
            None => {
                lines.push(Line { text: rest, end: "" });
                rest = "";
            }
        }
    }
    lines
}

/// `original` (the text of `rel`) with `chunks` applied.
pub(crate) fn apply_chunks(
    rel: &str,
    original: &str,
    chunks: &[Chunk],
) -> Result<String, ToolError> {
    let lines = split_lines(original);
    let texts: Vec<&str> = lines.iter().map(|l| l.text).collect();
    // (start, old length, new lines), in file order.
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            let pattern = std::slice::from_ref(context);
            match seek(&texts, pattern, cursor, false) {
                Some(at) => cursor = at + 1,
                None => return Err(miss(rel, &texts, chunk, pattern, cursor, true)),
            }
        }
        if chunk.old.is_empty() {
            // Only added lines: after the `@@` line, or at the end of the
            // file when there is none.
            let at = if chunk.context.is_some() && !chunk.at_end { cursor } else { texts.len() };
            replacements.push((at, 0, chunk.new.clone()));
            cursor = at;
            continue;
        }
        let mut old: &[String] = &chunk.old;
        let mut new: &[String] = &chunk.new;
        let mut found = seek(&texts, old, cursor, chunk.at_end);
        // A blank line ending a chunk is often the separator before the
        // next section, not a line of the file.
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = if old.is_empty() { None } else { seek(&texts, old, cursor, chunk.at_end) };
        }
        match found {
            Some(at) => {
                let mut new = new.to_vec();
                for &(in_old, in_new) in &chunk.kept {
                    if in_old < old.len()
                        && let Some(line) = new.get_mut(in_new)
                    {
                        *line = texts[at + in_old].to_string();
                    }
                }
                replacements.push((at, old.len(), new));
                cursor = at + old.len();
            }
            None => return Err(miss(rel, &texts, chunk, &chunk.old, cursor, false)),
        }
    }
    let ending = if uses_crlf(original) { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(original.len());
    let mut next = 0;
    // Whether the last thing written was a line without its end.
    let mut open = false;
    let push = |out: &mut String, text: &str, end: &str, open: &mut bool| {
        if *open {
            out.push_str(ending);
        }
        out.push_str(text);
        out.push_str(end);
        *open = end.is_empty();
    };
    for (start, old_len, new) in replacements {
        for line in &lines[next..start] {
            push(&mut out, line.text, line.end, &mut open);
        }
        for line in &new {
            push(&mut out, line, ending, &mut open);
        }
        next = start + old_len;
    }
    for line in &lines[next..] {
        push(&mut out, line.text, line.end, &mut open);
    }
    Ok(out)
}

/// Where `pattern` starts in `lines`, at `start` or later, at the first
/// tolerance level that finds it; with `at_end`, the end of the file is
/// tried first.
fn seek(lines: &[&str], pattern: &[String], start: usize, at_end: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let levels: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalise(a) == normalise(b),
    ];
    let matches_at = |at: usize, same: fn(&str, &str) -> bool| {
        pattern.iter().zip(&lines[at..]).all(|(p, l)| same(l, p))
    };
    for same in levels {
        if at_end && last >= start && matches_at(last, same) {
            return Some(last);
        }
        if let Some(at) = (start..=last).find(|&at| matches_at(at, same)) {
            return Some(at);
        }
    }
    None
}

/// `s` trimmed, with typographic dashes, quotes and spaces as ASCII.
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}'..='\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// The refusal of a chunk whose `@@` line (`context`) or old lines were not
/// found after line `cursor`.
fn miss(
    rel: &str,
    lines: &[&str],
    chunk: &Chunk,
    pattern: &[String],
    cursor: usize,
    context: bool,
) -> ToolError {
    let what = if context {
        format!("its '@@ {}' line was not found", pattern.first().map(String::as_str).unwrap_or(""))
    } else {
        let mut quoted: Vec<String> = pattern
            .iter()
            .take(MAX_QUOTED_LINES)
            .map(|l| format!("  {}", clip_line(l, 200)))
            .collect();
        if pattern.len() > MAX_QUOTED_LINES {
            quoted.push(format!("  … ({} more lines)", pattern.len() - MAX_QUOTED_LINES));
        }
        format!("its ' ' and '-' lines were not found:\n{}\n", quoted.join("\n"))
    };
    let after = if cursor > 0 { format!(" after line {cursor}") } else { String::new() };
    let mut message = format!(
        "Cannot apply the chunk at patch line {} to '{rel}': {what}{}",
        chunk.line,
        if context { after.clone() } else { String::new() }
    );
    if !context && cursor > 0 {
        message.push_str(&format!("(looked{after}, where the chunk before it ended)"));
    }
    if cursor > 0 && seek(lines, pattern, 0, false).is_some() {
        message.push_str(
            "\nThey occur earlier in the file: chunks must come in the order of the file, each \
             after the one before it. Nothing was changed.",
        );
        return ToolError::failed(message);
    }
    let probe = pattern.iter().find(|l| !l.trim().is_empty()).map(String::as_str).unwrap_or("");
    let candidates = closest_lines(lines, probe);
    if candidates.is_empty() {
        message.push_str(
            "\nNothing similar was found; read the file again and rewrite the patch. Nothing was \
             changed.",
        );
    } else {
        message.push_str("\nThe closest lines are:");
        for (index, line) in candidates {
            message.push_str(&format!("\n{} | {}", index + 1, clip_line(line, 200)));
        }
        message.push_str(
            "\nRead the file again and copy the lines exactly into the patch; nothing was changed.",
        );
    }
    ToolError::failed(message)
}
