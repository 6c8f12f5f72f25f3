//! Permission rules, in Claude Code's syntax: `TOOL`, a tool-name glob
//! (`mcp_github_*`), `shell(PATTERN)`, `web_fetch(domain:HOST)` and
//! `TOOL(PATH GLOB)`.
//!
//! Guarantees: parsing never panics and every failure is a `RuleError`
//! naming the rule text and why. A shell pattern is one simple command,
//! parsed by the same scanner and shlex as the commands it matches, so it
//! compares whole words (`cargo test:*` never matches `cargo testx`). A path
//! glob is relative to the workspace root (`~`, `//abs` and `..` are refused
//! rather than silently never matching) and `*` never crosses a `/`.

use std::fmt;
use std::str::FromStr;

use globset::{GlobBuilder, GlobMatcher};

use crate::command;
use crate::domain::{DomainPattern, domain_pattern};

/// A parsed permission rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: ToolPattern,
    arg: Arg,
}

/// Which tools a rule names.
#[derive(Debug, Clone)]
enum ToolPattern {
    Exact(String),
    /// A name with `*` wildcards (matching any run of characters).
    Wildcard(String),
}

/// What a rule says about a call's arguments.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    /// Every call of the tool.
    Whole,
    /// `shell` calls whose simple commands match.
    Command(CommandPattern),
    /// Calls whose `path` argument, made workspace-relative, matches.
    Path(GlobMatcher),
    /// `web_fetch` calls whose `url` is on this domain.
    Domain(DomainPattern),
}

/// The argv a `shell(...)` rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandPattern {
    /// `cargo test:*` or `cargo test *`: these words, then anything.
    Prefix(Vec<String>),
    /// `git status`: exactly these words.
    Exact(Vec<String>),
}

impl CommandPattern {
    pub(crate) fn matches(&self, argv: &[String]) -> bool {
        match self {
            CommandPattern::Prefix(words) => argv.starts_with(words),
            CommandPattern::Exact(words) => argv == words.as_slice(),
        }
    }

    /// `matches` for the argv `program` followed by `args`.
    pub(crate) fn matches_split(&self, program: &str, args: &[String]) -> bool {
        let (CommandPattern::Prefix(words) | CommandPattern::Exact(words)) = self;
        let Some((first, rest)) = words.split_first() else {
            return false;
        };
        if first != program {
            return false;
        }
        match self {
            CommandPattern::Prefix(_) => args.starts_with(rest),
            CommandPattern::Exact(_) => args == rest,
        }
    }
}

/// A rule that does not parse: its text, why, and where it came from when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    rule: String,
    reason: String,
    origin: Option<String>,
}

impl RuleError {
    fn new(rule: &str, reason: impl Into<String>) -> RuleError {
        RuleError { rule: rule.to_string(), reason: reason.into(), origin: None }
    }

    /// The rule's text as written.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// Why it does not parse.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Where the rule was written (a config file, the trust file), when known.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The same error, naming where the rule was written.
    pub fn with_origin(mut self, origin: impl Into<String>) -> RuleError {
        self.origin = Some(origin.into());
        self
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid permission rule `{}`", self.rule)?;
        if let Some(origin) = &self.origin {
            write!(f, " in {origin}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for RuleError {}

/// The tool name rules are written for: `multi_edit` is `edit_file` made
/// several times on one file, so `edit_file` rules hold for it (as Claude
/// Code's `Edit` rules hold for its `MultiEdit`).
pub(crate) fn rules_name(tool: &str) -> &str {
    if tool == "multi_edit" { "edit_file" } else { tool }
}

/// Claude Code's tool names, accepted so its rules can be pasted as they are.
fn canonical_tool(name: &str) -> &str {
    match name {
        "Bash" => "shell",
        "Edit" | "MultiEdit" => "edit_file",
        "Write" => "write_file",
        "Read" => "read_file",
        "WebFetch" => "web_fetch",
        "WebSearch" => "web_search",
        other => other,
    }
}

impl Rule {
    /// Parses one rule.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RuleError::new(text, "the rule is empty"));
        }
        let (name, arg) = match trimmed.find('(') {
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::new(
                        text,
                        "a `(` must be closed by a `)` at the end, as in `shell(cargo test:*)`",
                    ));
                };
                (trimmed[..open].trim(), Some(inner.trim()))
            }
            None if trimmed.contains(')') => {
                return Err(RuleError::new(text, "it has a `)` without a `(`"));
            }
            None => (trimmed, None),
        };
        if name.is_empty() {
            return Err(RuleError::new(text, "the tool name is missing"));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*')))
        {
            return Err(RuleError::new(
                text,
                format!(
                    "`{bad}` cannot appear in a tool name (letters, digits, `_`, `-`, `.`, and `*` as a wildcard)"
                ),
            ));
        }
        let name = canonical_tool(name);
        let tool = if name.contains('*') {
            ToolPattern::Wildcard(name.to_string())
        } else {
            ToolPattern::Exact(name.to_string())
        };
        let arg = match arg {
            None => Arg::Whole,
            Some("*") => Arg::Whole,
            Some(pattern) if name == "shell" => {
                command_pattern(pattern).map_err(|why| RuleError::new(text, why))?
            }
            Some(pattern) if name == "web_fetch" => {
                Arg::Domain(domain_pattern(pattern).map_err(|why| RuleError::new(text, why))?)
            }
            Some(glob) => Arg::Path(path_glob(glob).map_err(|why| RuleError::new(text, why))?),
        };
        Ok(Rule { text: trimmed.to_string(), tool, arg })
    }

    /// The rule as written (surrounding blanks trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the rule names `tool`.
    pub(crate) fn matches_tool(&self, tool: &str) -> bool {
        match &self.tool {
            ToolPattern::Exact(name) => name == tool,
            ToolPattern::Wildcard(pattern) => wildcard(pattern, tool),
        }
    }

    pub(crate) fn arg(&self) -> &Arg {
        &self.arg
    }
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Rule, RuleError> {
        Rule::parse(text)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.text == other.text
    }
}

impl Eq for Rule {}

/// `*` matches any run of characters; everything else is literal.
fn wildcard(pattern: &str, name: &str) -> bool {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The argument of `shell(...)`.
fn command_pattern(pattern: &str) -> Result<Arg, String> {
    let (body, prefix) = if let Some(body) = pattern.strip_suffix(":*") {
        (body, true)
    } else if let Some(body) = pattern.strip_suffix('*').filter(|body| body.ends_with([' ', '\t']))
    {
        (body, true)
    } else {
        (pattern, false)
    };
    let scan = command::scan(body, None);
    if let Some(why) = scan.opaque {
        return Err(format!("the command pattern could never match a command: {why}"));
    }
    if scan.separators > 0 || scan.parts.len() > 1 {
        return Err("a shell rule matches one simple command: write one rule per command \
                    (a chain with `&&`, `|` or `;` is allowed when every part is)"
            .to_string());
    }
    if scan.redirects > 0 {
        return Err("a shell rule cannot contain a redirection".to_string());
    }
    let words = scan.parts.into_iter().next().unwrap_or_default();
    match (words.is_empty(), prefix) {
        (true, true) => Ok(Arg::Whole),
        (true, false) => {
            Err("the command pattern is empty; write `shell` for every command".to_string())
        }
        (false, true) => Ok(Arg::Command(CommandPattern::Prefix(words))),
        (false, false) => Ok(Arg::Command(CommandPattern::Exact(words))),
    }
}

/// The argument of `TOOL(...)` for tools other than `shell`.
fn path_glob(glob: &str) -> Result<GlobMatcher, String> {
    if glob.is_empty() {
        return Err("the path glob is empty; write the tool name alone for every call".to_string());
    }
    if glob.starts_with('~') || glob.starts_with("//") {
        return Err(
            "path rules are relative to the workspace root (`src/**`); home and absolute paths are not supported"
                .to_string(),
        );
    }
    // `./x` and `/x` (Claude Code: relative to the project) both mean the root's `x`.
    let relative = glob.strip_prefix("./").or_else(|| glob.strip_prefix('/')).unwrap_or(glob);
    if relative.split('/').any(|component| component == "..") {
        return Err("`..` cannot appear in a path rule".to_string());
    }
    // `src/` names the folder and everything in it, as in .gitignore.
    let full;
    let relative = if relative.ends_with('/') {
        full = format!("{relative}**");
        full.as_str()
    } else {
        relative
    };
    if relative.is_empty() {
        return Err("the path glob is empty; write the tool name alone for every call".to_string());
    }
    let glob = GlobBuilder::new(relative)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("bad glob: {}", error.kind()))?;
    Ok(glob.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::{Arg, CommandPattern, Rule, wildcard};

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn shell_patterns() {
        let prefix = |text: &str, want: &[&str]| {
            let rule = Rule::parse(text).unwrap();
            match rule.arg() {
                Arg::Command(CommandPattern::Prefix(got)) => {
                    assert_eq!(got, &words(want), "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
        };
        prefix("shell(cargo test:*)", &["cargo", "test"]);
        prefix("shell(cargo test *)", &["cargo", "test"]);
        prefix("Bash(npm run test:*)", &["npm", "run", "test"]);
        prefix("shell( git  'log' :*)", &["git", "log"]);
        let rule = Rule::parse("shell(git status)").unwrap();
        assert!(
            matches!(rule.arg(), Arg::Command(CommandPattern::Exact(w)) if *w == words(&["git", "status"]))
        );
        let rule = Rule::parse("shell(ls *.rs)").unwrap();
        assert!(
            matches!(rule.arg(), Arg::Command(CommandPattern::Exact(w)) if *w == words(&["ls", "*.rs"]))
        );
        for whole in ["shell", "shell(*)", "Bash", "shell(:*)", " shell "] {
            let rule = Rule::parse(whole).unwrap();
            assert!(matches!(rule.arg(), Arg::Whole), "{whole}");
            assert!(rule.matches_tool("shell"), "{whole}");
        }
    }

    #[test]
    fn prefix_is_word_bounded() {
        let pattern = CommandPattern::Prefix(words(&["cargo", "test"]));
        assert!(pattern.matches(&words(&["cargo", "test"])));
        assert!(pattern.matches(&words(&["cargo", "test", "-p", "x"])));
        assert!(!pattern.matches(&words(&["cargo", "testx"])));
        assert!(!pattern.matches(&words(&["cargo"])));
        let exact = CommandPattern::Exact(words(&["git", "status"]));
        assert!(!exact.matches(&words(&["git", "status", "-s"])));
    }

    #[test]
    fn tools_and_aliases() {
        let rule = Rule::parse("mcp_github_*").unwrap();
        assert!(rule.matches_tool("mcp_github_create_issue"));
        assert!(!rule.matches_tool("mcp_gitlab_x"));
        assert!(Rule::parse("Edit(src/**)").unwrap().matches_tool("edit_file"));
        assert!(Rule::parse("MultiEdit").unwrap().matches_tool("edit_file"));
        assert!(Rule::parse("Write").unwrap().matches_tool("write_file"));
        assert!(Rule::parse("Read(*.md)").unwrap().matches_tool("read_file"));
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*b*c", "aXXbYYc"));
        assert!(!wildcard("a*b*c", "aXXcYYb"));
        assert!(wildcard("ab*b", "ab_b"));
        assert!(!wildcard("ab*ba", "aba"));
        assert!(!wildcard("read", "read_file"));
    }

    #[test]
    fn path_globs() {
        let matches = |text: &str, path: &str| match Rule::parse(text).unwrap().arg() {
            Arg::Path(glob) => glob.is_match(path),
            other => panic!("{text}: {other:?}"),
        };
        assert!(matches("edit_file(src/**)", "src/a/b.rs"));
        assert!(!matches("edit_file(src/**)", "tests/a.rs"));
        assert!(matches("edit_file(*.md)", "README.md"));
        assert!(!matches("edit_file(*.md)", "docs/a.md"));
        assert!(matches("edit_file(**/*.md)", "docs/a.md"));
        assert!(matches("Edit(/src/**)", "src/x"));
        assert!(matches("edit_file(./Cargo.toml)", "Cargo.toml"));
        assert!(matches("edit_file(docs/)", "docs/a/b.md"));
        assert!(matches!(Rule::parse("edit_file(*)").unwrap().arg(), Arg::Whole));
    }

    #[test]
    fn errors_name_the_rule_and_why() {
        for (text, why) in [
            ("", "empty"),
            ("shell(cargo test", "closed"),
            ("shell)", "without a `(`"),
            ("(x)", "tool name is missing"),
            ("my tool", "cannot appear in a tool name"),
            ("shell(cargo test && rm x)", "one simple command"),
            ("shell(ls > x)", "redirection"),
            ("shell(echo $(rm))", "never match"),
            ("shell('unclosed)", "never match"),
            ("shell()", "empty"),
            ("edit_file()", "empty"),
            ("edit_file(~/.ssh/*)", "relative to the workspace"),
            ("read_file(//etc/passwd)", "relative to the workspace"),
            ("edit_file(../x)", "`..`"),
            ("edit_file(src/[a)", "bad glob"),
        ] {
            let error = Rule::parse(text).unwrap_err();
            let shown = error.to_string();
            assert!(shown.contains(&format!("`{text}`")), "{shown}");
            assert!(shown.contains(why), "{text}: {shown}");
        }
        let error = Rule::parse("x y").unwrap_err().with_origin("/home/u/.config/axon/config.toml");
        assert!(error.to_string().contains("in /home/u/.config/axon/config.toml: "));
    }
}
