//! Secrets kept from the model: what every tool result passes before a
//! model sees it. Two doors call it, each the only way results leave:
//! core's call runner (built-in tools, `shell`, MCP tools, hook context,
//! for axon's own agent) and `axon mcp serve` (for another host's model);
//! the runtime passes prompt attachments through [`mask_text`].
//!
//! Guarantees: each secret `axon_secrets` finds in a text part becomes
//! `[SECRET:kind:abcd…]`; images and other parts are left as they are;
//! the notice says what was masked and where (the file and line when the
//! result shows them, as `read_file`'s `N | text`, `search`'s listing and
//! `grep -n`'s `path:N:` lines do; else the line of the result), and
//! never holds a secret. Nothing is changed when nothing is found.

use axon_protocol::{ContentPart, ToolOutput};
use serde_json::Value;

/// Masks the secrets in `output`, the result of calling `tool` with
/// `arguments`; the notice for the user when any were found.
pub fn mask_output(tool: &str, arguments: &Value, output: &mut ToolOutput) -> Option<String> {
    let path = arguments.get("path").and_then(|p| p.as_str());
    let mut places = Vec::new();
    for part in &mut output.content {
        let ContentPart::Text { text } = part else { continue };
        let (masked, found) = axon_secrets::mask(text);
        if found.is_empty() {
            continue;
        }
        let masked = masked.into_owned();
        let lines: Vec<&str> = masked.lines().collect();
        for hit in &found {
            let at = place(tool, path, &lines, hit.line.saturating_sub(1));
            places.push(format!("{at} ({})", hit.kind));
        }
        *text = masked;
    }
    notice(&format!("{tool}'s result"), &places)
}

/// `text` (an attachment named `name`) with its secrets masked, and the
/// notice for the user when any were found.
pub fn mask_text(name: &str, text: &str) -> (String, Option<String>) {
    mask_described(text, &format!("the attachment {name}"), &format!("{name}:"))
}

/// What a UserPromptSubmit hook added to a request, with its secrets
/// masked, and the notice for the user when any were found.
pub fn mask_hook_context(text: &str) -> (String, Option<String>) {
    mask_described(text, "a UserPromptSubmit hook's output", "line ")
}

/// `text` masked; the notice calls it `what` and each place `{at}{line}`.
fn mask_described(text: &str, what: &str, at: &str) -> (String, Option<String>) {
    let (masked, found) = axon_secrets::mask(text);
    let places: Vec<String> =
        found.iter().map(|hit| format!("{at}{} ({})", hit.line, hit.kind)).collect();
    (masked.into_owned(), notice(what, &places))
}

fn notice(what: &str, places: &[String]) -> Option<String> {
    if places.is_empty() {
        return None;
    }
    let n = places.len();
    Some(format!(
        "masked {n} secret{} in {what} before the model saw it: {}. The model sees \
         [SECRET:kind:abcd…] instead and cannot write it back; set secrets = \"off\" to stop this",
        if n == 1 { "" } else { "s" },
        places.join(", ")
    ))
}

/// Where line `index` of a result came from: the file and line a listing
/// names, else the line of the result.
fn place(tool: &str, path: Option<&str>, lines: &[&str], index: usize) -> String {
    let line = lines.get(index).copied().unwrap_or_default();
    // read_file: `N | text`, of the file its `path` names.
    if let (Some(path), Some((number, _))) = (path, line.split_once(" | "))
        && let Ok(n) = number.trim().parse::<u64>()
    {
        return format!("{path}:{n}");
    }
    // search: a file's path on a line of its own, then `N:col: text`
    // (a match) or `N- text` (context) lines.
    if let Some(n) = listed_number(line) {
        let header = lines[..index.min(lines.len())]
            .iter()
            .rev()
            .find(|l| !l.is_empty() && *l != &"--" && listed_number(l).is_none());
        if let Some(file) = header.filter(|h| !h.contains(char::is_whitespace)) {
            return format!("{file}:{n}");
        }
    }
    // grep -n and the like: `path:N:text`.
    let mut fields = line.splitn(3, ':');
    if let (Some(file), Some(number), Some(_)) = (fields.next(), fields.next(), fields.next())
        && !file.is_empty()
        && !file.contains(char::is_whitespace)
        && let Ok(n) = number.parse::<u64>()
    {
        return format!("{file}:{n}");
    }
    format!("line {} of {tool}'s result", index + 1)
}

/// The line number of a `search` listing's `N:col: text` or `N- text`.
fn listed_number(line: &str) -> Option<u64> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    match line.as_bytes().get(digits) {
        Some(b':' | b'-') if digits > 0 => line[..digits].parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn a_place_is_the_file_and_line_a_listing_names() {
        let at = |tool, path, text: &str, index| {
            let lines: Vec<&str> = text.lines().collect();
            place(tool, path, &lines, index)
        };
        assert_eq!(at("read_file", Some(".env"), "   12 | KEY=x", 0), ".env:12");
        let search = "2 matches in 2 files\n\nsrc/a.rs\n6- fn f() {\n7:9: let k = 1;\n--\n20:1: k\n\nb.sh\n3:1: K=1";
        assert_eq!(at("search", None, search, 4), "src/a.rs:7");
        assert_eq!(at("search", None, search, 6), "src/a.rs:20");
        assert_eq!(at("search", None, search, 9), "b.sh:3");
        assert_eq!(at("shell", None, "src/a.rs:7:let k = 1;", 0), "src/a.rs:7");
        assert_eq!(at("shell", None, "x\nKEY=abc", 1), "line 2 of shell's result");
        assert_eq!(at("shell", None, "note: 12: x", 0), "line 1 of shell's result");
    }
}
