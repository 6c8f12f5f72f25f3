//! Shell command analysis: what a command line runs, judged without running it.
//!
//! A quote-aware scanner (single and double quotes, backslashes, comments,
//! here-documents, and expansions read as units: see `expansion`) splits the
//! line into simple commands at unquoted `;`, `&&`, `||`, `|`, `|&`, `&` and
//! newlines, takes redirections out, and feeds each remaining word to shlex
//! for its final text.
//!
//! Guarantees: the analysis is conservative. Whatever the scanner cannot
//! pin down makes the command `opaque` (never auto-allowed by a prefix or
//! exact rule): command and process substitutions, subshells, brace groups
//! and compound-command keywords, `$'...'` quoting, unbalanced quotes or
//! parentheses, operators with no command, and redirections whose target is
//! outside the workspace, inside `.git` or `.axon`, or depends on expansion.
//! Commands nested in substitutions and subshells still appear in `parts`,
//! so deny rules see them. Here-document bodies are data, never commands
//! (unless their delimiter is unquoted and they hold a substitution).
//! Ordinary commands (`cargo test 2>&1 | tail -20`, `grep -rn "a|b" src`)
//! are never opaque. Redirection targets are judged by their text (a symlink
//! inside the workspace is not followed); the OS sandbox is the boundary.

use std::path::Path;

use crate::path;

mod expansion;
mod heredoc;

/// What a command line runs, as far as its text tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The argv of each simple command, in the order they appear, including
    /// commands nested in substitutions or subshells. A word built from a
    /// substitution shows it as `$(…)`. A command made only of redirections
    /// has an empty argv.
    pub parts: Vec<Vec<String>>,
    /// Why the command can never be auto-allowed by a prefix or exact rule
    /// (the first reason found); `None` when every part was understood.
    pub opaque: Option<String>,
    /// Why the parts may not be everything the command runs (the first
    /// reason found): every opaque reason except a redirection's target.
    pub(crate) unreadable: Option<String>,
}

/// Analyses `command` for a shell whose workspace root is `workspace`
/// (relative redirection targets are taken from the root).
pub fn analyze(command: &str, workspace: &Path) -> Analysis {
    let scan = scan(command, Some(workspace));
    Analysis { parts: scan.parts, opaque: scan.opaque, unreadable: scan.unreadable }
}

/// The full result of a scan, with the counts rule parsing needs.
pub(crate) struct Scan {
    pub(crate) parts: Vec<Vec<String>>,
    pub(crate) opaque: Option<String>,
    pub(crate) unreadable: Option<String>,
    pub(crate) redirects: usize,
    pub(crate) separators: usize,
}

/// Scans `command`; without a workspace, redirection targets are not judged
/// (rule patterns, which reject redirections anyway).
pub(crate) fn scan(command: &str, workspace: Option<&Path>) -> Scan {
    let mut scanner = Scanner {
        chars: command.chars().collect(),
        pos: 0,
        workspace,
        parts: Vec::new(),
        opaque: None,
        unreadable: None,
        redirects: 0,
        separators: 0,
        heredocs: Vec::new(),
        depth: 0,
    };
    scanner.list(Stop::End);
    Scan {
        parts: scanner.parts,
        opaque: scanner.opaque,
        unreadable: scanner.unreadable,
        redirects: scanner.redirects,
        separators: scanner.separators,
    }
}

/// Nesting deeper than this is refused as opaque: it keeps the recursion
/// bounded on hostile input and no real command needs it.
const MAX_DEPTH: usize = 32;

/// Words that open or continue a compound command when they come first:
/// what such a command runs depends on control flow the scanner does not follow.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "function", "coproc", "[[", "]]",
];

/// Marks a word that stands for a substitution's output.
const SUBSTITUTED: &str = "$(…)";

/// What ends the command list being scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    End,
    Paren,
    Backtick,
}

/// How a redirection operator uses its word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redirect {
    /// Opens a file (`<`, `>`, `>>`, `>|`, `<>`, `&>`, `&>>`).
    File,
    /// Duplicates or closes a descriptor (`>&`, `<&`); a file when the word is not one.
    Dup,
    /// `<<<`: the word is the input itself.
    HereString,
    /// `<<` or `<<-` (strip leading tabs): the word is a delimiter.
    HereDoc { strip_tabs: bool },
}

/// A here-document whose body starts after the current line.
struct HereDoc {
    delimiter: String,
    strip_tabs: bool,
    /// An unquoted delimiter: the body undergoes substitutions.
    expands: bool,
}

/// One simple command being collected.
#[derive(Default)]
struct Simple {
    words: Vec<String>,
    redirects: usize,
}

struct Scanner<'w> {
    chars: Vec<char>,
    pos: usize,
    workspace: Option<&'w Path>,
    parts: Vec<Vec<String>>,
    opaque: Option<String>,
    unreadable: Option<String>,
    redirects: usize,
    separators: usize,
    heredocs: Vec<HereDoc>,
    depth: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn advance(&mut self, by: usize) {
        self.pos = (self.pos + by).min(self.chars.len());
    }

    /// Records why the command is opaque and may run more than its parts
    /// show; the first reason is kept.
    fn mark(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.unreadable.is_none() {
            self.unreadable = Some(why.clone());
        }
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
    }

    /// Records why a redirection's target makes the command opaque; what it
    /// runs is still read in full.
    fn mark_target(&mut self, why: String) {
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
    }

    /// Spaces, tabs and line continuations between words.
    fn skip_blanks(&mut self) {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(' ' | '\t'), _) => self.advance(1),
                (Some('\\'), Some('\n')) => self.advance(2),
                _ => return,
            }
        }
    }

    /// Scans simple commands and operators until the input ends or `stop`
    /// (an unquoted `)` or backtick) closes the list.
    fn list(&mut self, stop: Stop) {
        if self.depth >= MAX_DEPTH {
            self.too_deep();
            return;
        }
        self.depth += 1;
        let mut cmd = Simple::default();
        // After `&&`, `||`, `|` or `|&` a command must follow (possibly on a later line).
        let mut needs_command = false;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                let had = self.finish(&mut cmd);
                if needs_command && !had {
                    self.mark("it ends with an operator that needs a command after it");
                }
                if stop != Stop::End {
                    self.mark("a `$(`, `(` or backtick is never closed");
                }
                break;
            };
            match c {
                '\n' => {
                    self.advance(1);
                    if self.finish(&mut cmd) {
                        needs_command = false;
                    }
                    self.read_heredocs();
                }
                '#' => self.skip_comment(),
                ')' if stop == Stop::Paren => {
                    self.close(&mut cmd, needs_command);
                    break;
                }
                '`' if stop == Stop::Backtick => {
                    self.close(&mut cmd, needs_command);
                    break;
                }
                '&' if self.peek_at(1) == Some('>') => self.redirect(&mut cmd, stop),
                ';' | '&' | '|' => needs_command = self.operator(c, &mut cmd),
                '(' if self.peek_at(1) == Some('(')
                    && cmd.words.is_empty()
                    && self.arithmetic_closes(self.pos + 2) =>
                {
                    self.mark("it runs an arithmetic command `((...))`");
                    self.finish(&mut cmd);
                    self.advance(2);
                    self.arithmetic(expansion::Arith::Parens);
                }
                '(' => {
                    self.mark("it runs a subshell `( ... )`");
                    self.finish(&mut cmd);
                    self.advance(1);
                    self.list(Stop::Paren);
                }
                ')' => {
                    self.mark("it has an unbalanced `)`");
                    self.finish(&mut cmd);
                    self.advance(1);
                }
                '<' | '>' => self.redirect(&mut cmd, stop),
                _ => {
                    let raw = self.word(stop);
                    let is_fd = !raw.is_empty() && raw.chars().all(|d| d.is_ascii_digit());
                    if is_fd && matches!(self.peek(), Some('<' | '>')) {
                        // The number is the descriptor, not a word.
                        self.redirect(&mut cmd, stop);
                    } else if raw == "{" || raw == "}" {
                        self.mark("it uses a `{ ... }` group");
                        self.finish(&mut cmd);
                    } else if raw.is_empty() {
                        // Unreachable by construction (every character that
                        // ends a word is handled above); never loop forever.
                        self.mark("it has a character the scanner does not expect");
                        self.advance(1);
                    } else {
                        let word = self.unquote(&raw);
                        cmd.words.push(word);
                    }
                }
            }
        }
        self.depth -= 1;
    }

    /// Consumes the `)` or backtick closing a nested list.
    fn close(&mut self, cmd: &mut Simple, needs_command: bool) {
        self.advance(1);
        if !self.finish(cmd) && needs_command {
            self.mark("an operator needs a command after it");
        }
    }

    /// Consumes a control operator starting with `c`; answers whether a
    /// command must follow it.
    fn operator(&mut self, c: char, cmd: &mut Simple) -> bool {
        if !self.finish(cmd) {
            self.mark("an operator (`;`, `&&`, `|`, ...) has no command before it");
        }
        self.separators += 1;
        match (c, self.peek_at(1)) {
            (';', Some(';' | '&')) => {
                self.mark("it uses `case` syntax");
                self.advance(2);
                false
            }
            ('&', Some('&')) | ('|', Some('|' | '&')) => {
                self.advance(2);
                true
            }
            ('|', _) => {
                self.advance(1);
                true
            }
            _ => {
                self.advance(1);
                false
            }
        }
    }

    /// Ends the simple command being collected; answers whether it had
    /// anything (a word or a redirection).
    fn finish(&mut self, cmd: &mut Simple) -> bool {
        if cmd.words.is_empty() && cmd.redirects == 0 {
            return false;
        }
        let words = std::mem::take(&mut cmd.words);
        cmd.redirects = 0;
        if let Some(first) = words.first()
            && KEYWORDS.contains(&first.as_str())
        {
            self.mark(format!("it uses the shell keyword `{first}`"));
        }
        self.parts.push(words);
        true
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                return;
            }
            self.advance(1);
        }
    }

    /// The final text of one word (quotes removed by shlex).
    fn unquote(&mut self, raw: &str) -> String {
        match shlex::split(raw) {
            Some(mut words) if words.len() == 1 => words.pop().unwrap_or_default(),
            _ => {
                self.mark("its quoting cannot be parsed");
                raw.to_string()
            }
        }
    }

    /// Reads one word's raw text (quotes kept, line continuations dropped,
    /// substitutions scanned as nested lists and replaced by a marker).
    fn word(&mut self, stop: Stop) -> String {
        let mut raw = String::new();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '`' if stop == Stop::Backtick => break,
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.advance(2),
                    Some(next) => {
                        raw.push('\\');
                        raw.push(next);
                        self.advance(2);
                    }
                    None => {
                        self.mark("it ends with a lone backslash");
                        self.advance(1);
                    }
                },
                '\'' => self.single_quoted(&mut raw),
                '"' => self.double_quoted(&mut raw),
                '$' if self.peek_at(1) == Some('\'') => self.ansi_c(&mut raw),
                '$' => self.dollar(&mut raw),
                '`' => {
                    self.advance(1);
                    self.substitution(Stop::Backtick, &mut raw);
                }
                _ => {
                    raw.push(c);
                    self.advance(1);
                }
            }
        }
        raw
    }

    fn single_quoted(&mut self, raw: &mut String) {
        raw.push('\'');
        self.advance(1);
        while let Some(c) = self.peek() {
            raw.push(c);
            self.advance(1);
            if c == '\'' {
                return;
            }
        }
        self.mark("a quote is never closed");
    }

    fn double_quoted(&mut self, raw: &mut String) {
        raw.push('"');
        self.advance(1);
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    raw.push('"');
                    self.advance(1);
                    return;
                }
                '\\' => {
                    raw.push('\\');
                    self.advance(1);
                    if let Some(next) = self.peek() {
                        raw.push(next);
                        self.advance(1);
                    }
                }
                '`' => {
                    self.advance(1);
                    self.substitution(Stop::Backtick, raw);
                }
                '$' => self.dollar(raw),
                _ => {
                    raw.push(c);
                    self.advance(1);
                }
            }
        }
        self.mark("a quote is never closed");
    }

    /// A redirection at the current `<`, `>` or `&>` (after its descriptor
    /// number, if any) and its word.
    fn redirect(&mut self, cmd: &mut Simple, stop: Stop) {
        let kind = match (self.peek(), self.peek_at(1), self.peek_at(2)) {
            (Some('&'), _, Some('>')) => {
                self.advance(3);
                Redirect::File
            }
            (Some('&'), _, _) => {
                self.advance(2);
                Redirect::File
            }
            (Some('<' | '>'), Some('('), _) => {
                self.mark("it uses process substitution `<(...)` or `>(...)`");
                self.advance(2);
                self.list(Stop::Paren);
                cmd.words.push(SUBSTITUTED.to_string());
                return;
            }
            (Some('<'), Some('<'), Some('<')) => {
                self.advance(3);
                Redirect::HereString
            }
            (Some('<'), Some('<'), Some('-')) => {
                self.advance(3);
                Redirect::HereDoc { strip_tabs: true }
            }
            (Some('<'), Some('<'), _) => {
                self.advance(2);
                Redirect::HereDoc { strip_tabs: false }
            }
            (Some('<' | '>'), Some('&'), _) => {
                self.advance(2);
                Redirect::Dup
            }
            (Some('<'), Some('>'), _) | (Some('>'), Some('>' | '|'), _) => {
                self.advance(2);
                Redirect::File
            }
            _ => {
                self.advance(1);
                Redirect::File
            }
        };
        cmd.redirects += 1;
        self.redirects += 1;
        self.skip_blanks();
        let ends = match self.peek() {
            None | Some('\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') => true,
            Some('`') => stop == Stop::Backtick,
            Some(_) => false,
        };
        if ends {
            self.mark("a redirection has no target");
            return;
        }
        let raw = self.word(stop);
        match kind {
            Redirect::HereString => {}
            Redirect::HereDoc { strip_tabs } => {
                let expands = !raw.contains(['\'', '"', '\\']);
                let delimiter = self.unquote(&raw);
                self.heredocs.push(HereDoc { delimiter, strip_tabs, expands });
            }
            Redirect::Dup => {
                let is_fd = raw == "-" || raw.chars().all(|d| d.is_ascii_digit());
                if !is_fd {
                    // `>&file` writes both streams to a file.
                    self.check_target(&raw);
                }
            }
            Redirect::File => self.check_target(&raw),
        }
    }

    /// Judges a redirection's target word.
    fn check_target(&mut self, raw: &str) {
        let Some(workspace) = self.workspace else {
            return;
        };
        if raw.contains(['$', '`', '*', '?', '[', '{']) || raw.starts_with('~') {
            self.mark_target(format!("its redirection target `{raw}` depends on shell expansion"));
            return;
        }
        let target = self.unquote(raw);
        if matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr") {
            return;
        }
        if target.is_empty() {
            self.mark("a redirection has an empty target");
            return;
        }
        match path::relative(workspace, &target) {
            None => self.mark_target(format!("it redirects to `{target}`, outside the workspace")),
            Some(rel) => {
                let top = rel.split('/').next().unwrap_or_default();
                if top == ".git" || top == ".axon" {
                    self.mark_target(format!("it redirects into `{top}`, which stays protected"));
                }
            }
        }
    }
}
