//! A hook's `matcher`, as Claude Code reads it.
//!
//! Empty, absent or `*` matches everything. Anything else is a regular
//! expression that must match the whole name (`Bash` is an exact name,
//! `Edit|Write` a list, `mcp__memory__.*` a pattern). Tool names are tested
//! in axon's and Claude's spelling (see [`crate::names`]), so `Bash` matches
//! axon's `shell`. A matcher that is not a valid regex matches only a name
//! equal to its text, and says so once, when loaded.

use regex::Regex;

use crate::names::match_names;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// What the configuration said (empty for none).
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    All,
    Pattern(Regex),
    Literal,
}

impl Matcher {
    /// The matcher `text` (`None` for a group without one), and a warning
    /// when it is not a valid regex.
    pub fn new(text: Option<&str>) -> (Matcher, Option<String>) {
        let text = text.unwrap_or("").trim().to_string();
        if text.is_empty() || text == "*" {
            return (Matcher { text, kind: Kind::All }, None);
        }
        match Regex::new(&format!("^(?:{text})$")) {
            Ok(regex) => (Matcher { text, kind: Kind::Pattern(regex) }, None),
            Err(e) => {
                let warning = format!(
                    "matcher `{text}` is not a valid regular expression ({e}); it matches only \
                     the exact name `{text}`"
                );
                (Matcher { text, kind: Kind::Literal }, Some(warning))
            }
        }
    }

    /// A matcher that matches everything.
    pub fn all() -> Matcher {
        Matcher { text: String::new(), kind: Kind::All }
    }

    /// The configured text; empty when it matches everything by omission.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn matches_all(&self) -> bool {
        matches!(self.kind, Kind::All)
    }

    /// Whether a tool called `tool` (axon's name) matches.
    pub fn matches_tool(&self, tool: &str) -> bool {
        match &self.kind {
            Kind::All => true,
            _ => match_names(tool).iter().any(|name| self.matches_exactly(name)),
        }
    }

    /// Whether `value` itself matches (a SessionStart `source`, a
    /// PreCompact `trigger`).
    pub fn matches_value(&self, value: &str) -> bool {
        matches!(self.kind, Kind::All) || self.matches_exactly(value)
    }

    fn matches_exactly(&self, name: &str) -> bool {
        match &self.kind {
            Kind::All => true,
            Kind::Pattern(regex) => regex.is_match(name),
            Kind::Literal => self.text == name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(text: &str) -> Matcher {
        Matcher::new(Some(text)).0
    }

    #[test]
    fn empty_star_and_absent_match_everything() {
        for m in [Matcher::new(None).0, matcher(""), matcher("*"), matcher("  ")] {
            assert!(m.matches_tool("shell"));
            assert!(m.matches_tool("mcp_a_b"));
            assert!(m.matches_value("startup"));
        }
    }

    #[test]
    fn an_exact_name_matches_only_itself() {
        let m = matcher("shell");
        assert!(m.matches_tool("shell"));
        assert!(!m.matches_tool("shell2"));
        assert!(!m.matches_tool("read_file"));
        // Anchored: a name containing the matcher is not matched.
        assert!(!matcher("file").matches_tool("read_file"));
        // Case-sensitive, as in Claude Code.
        assert!(!matcher("bash").matches_tool("shell"));
    }

    #[test]
    fn a_bar_list_matches_each_name() {
        let m = matcher("shell|write_file");
        assert!(m.matches_tool("shell"));
        assert!(m.matches_tool("write_file"));
        assert!(!m.matches_tool("edit_file"));
    }

    #[test]
    fn a_regex_must_match_the_whole_name() {
        let m = matcher(".*_file");
        assert!(m.matches_tool("read_file"));
        assert!(m.matches_tool("edit_file"));
        assert!(!m.matches_tool("shell"));
        assert!(matcher("Notebook.*").matches_value("NotebookEdit"));
    }

    #[test]
    fn claude_names_match_axon_tools() {
        assert!(matcher("Bash").matches_tool("shell"));
        let m = matcher("Edit|Write");
        assert!(m.matches_tool("edit_file"));
        assert!(m.matches_tool("write_file"));
        assert!(!m.matches_tool("read_file"));
        assert!(matcher("MultiEdit").matches_tool("edit_file"));
        assert!(matcher("Grep").matches_tool("search"));
        assert!(matcher("LS").matches_tool("list_dir"));
        assert!(matcher("Read").matches_tool("read_file"));
        assert!(matcher("Glob").matches_tool("glob"));
    }

    #[test]
    fn claude_mcp_names_match_axon_mcp_tools() {
        assert!(matcher("mcp__memory__create_entities").matches_tool("mcp_memory_create_entities"));
        assert!(matcher("mcp__memory__.*").matches_tool("mcp_memory_create_entities"));
        assert!(matcher("mcp__my_server__.*").matches_tool("mcp_my_server_read"));
        assert!(matcher("mcp__.*").matches_tool("mcp_github_list_issues"));
        assert!(!matcher("mcp__memory__.*").matches_tool("mcp_github_list_issues"));
        assert!(!matcher("mcp__memory__.*").matches_tool("shell"));
        // axon's own spelling works as well.
        assert!(matcher("mcp_memory_.*").matches_tool("mcp_memory_create_entities"));
    }

    #[test]
    fn an_invalid_regex_is_a_literal_with_a_warning() {
        let (m, warning) = Matcher::new(Some("shell("));
        assert!(warning.is_some_and(|w| w.contains("shell(")));
        assert!(m.matches_tool("shell("));
        assert!(!m.matches_tool("shell"));
    }
}
