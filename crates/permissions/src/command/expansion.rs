//! Expansions inside words: `$(...)`, backticks, `$((...))`, `$[...]`,
//! `${...}` and `$'...'`, each read as one unit.
//!
//! Guarantees: nothing inside an expansion is taken for an operator or a
//! redirection (`<<` in `$((1<<2))` or `${x/<<A/}` is no here-document), and
//! scanning resumes right after it. Command substitutions are scanned as
//! nested lists, so their commands become parts. Arithmetic whose text is
//! not constant, and `${...}` other than a plain name with a plain-text
//! operator word, make the command opaque: bash evaluates the value of a
//! variable named there (`x='a[$(rm -rf ~)]'; echo $((x))` runs `rm`), so
//! what runs cannot be read. `((...))` is told apart from nested subshells
//! and `$((...))` from `$( (...) )` the way bash does: by whether the first
//! unbalanced `)` is followed by another.

use super::{MAX_DEPTH, SUBSTITUTED, Scanner, Stop};

/// How an arithmetic body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arith {
    /// `$((...))` and `((...))`.
    Parens,
    /// `$[...]`, bash's older spelling.
    Bracket,
}

/// Characters of constant arithmetic: numbers and operators, nothing bash
/// would look up or evaluate.
const ARITH_CONSTANT: &str = "0123456789+-*/%<>=!~&|^?:,()";

/// Operators of `${NAME<op>WORD}` whose word is only a value or a pattern.
const PARAMETER_OPERATORS: &[&str] = &[
    ":-", ":=", ":?", ":+", "-", "=", "?", "+", "##", "#", "%%", "%", "//", "/#", "/%", "/", "^^",
    "^", ",,", ",",
];

impl Scanner<'_> {
    /// At a `$`: consumes the expansion it opens, adding its text (or a
    /// marker) to `raw`; any other `$` is itself.
    pub(super) fn dollar(&mut self, raw: &mut String) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') && self.arithmetic_closes(self.pos + 3) => {
                self.advance(3);
                match self.arithmetic(Arith::Parens) {
                    Some(text) => raw.push_str(&format!("$(({text}))")),
                    None => raw.push_str("$((…))"),
                }
            }
            Some('(') => {
                self.advance(2);
                self.substitution(Stop::Paren, raw);
            }
            Some('[') => {
                self.advance(2);
                match self.arithmetic(Arith::Bracket) {
                    Some(text) => raw.push_str(&format!("$[{text}]")),
                    None => raw.push_str("$[…]"),
                }
            }
            Some('{') => {
                self.advance(2);
                self.parameter(raw);
            }
            _ => {
                raw.push('$');
                self.advance(1);
            }
        }
    }

    /// A `$(...)` or backtick substitution whose opening was consumed.
    pub(super) fn substitution(&mut self, stop: Stop, raw: &mut String) {
        self.mark("it runs a command substitution (`$(...)` or backticks)");
        self.list(stop);
        raw.push_str(SUBSTITUTED);
    }

    /// Whether the `((` whose body starts at `from` is arithmetic: bash's
    /// test, its first unbalanced `)` directly followed by another.
    /// Otherwise it is a subshell (or `$(` and a subshell).
    pub(super) fn arithmetic_closes(&self, from: usize) -> bool {
        let mut depth = 0usize;
        let mut at = from;
        while let Some(&c) = self.chars.get(at) {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => return self.chars.get(at + 1) == Some(&')'),
                ')' => depth -= 1,
                '\\' => at += 1,
                '\'' | '"' => {
                    at += 1;
                    while let Some(&q) = self.chars.get(at) {
                        if q == c {
                            break;
                        }
                        if q == '\\' && c == '"' {
                            at += 1;
                        }
                        at += 1;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        false
    }

    /// An arithmetic body whose opening was consumed, through its closing
    /// `))` or `]`. Answers its text (blanks dropped) when it is constant;
    /// otherwise the command is opaque. Substitutions inside still become
    /// parts.
    pub(super) fn arithmetic(&mut self, close: Arith) -> Option<String> {
        if self.depth >= MAX_DEPTH {
            self.too_deep();
            return None;
        }
        self.depth += 1;
        let mut text = String::new();
        let mut constant = true;
        let mut nested = 0usize;
        loop {
            let Some(c) = self.peek() else {
                self.mark("an arithmetic expansion is never closed");
                constant = false;
                break;
            };
            match (c, close) {
                (')', Arith::Parens) if nested == 0 => {
                    if self.peek_at(1) == Some(')') {
                        self.advance(2);
                    } else {
                        self.mark("an arithmetic expansion is not closed by `))`");
                        self.advance(1);
                        constant = false;
                    }
                    break;
                }
                (']', Arith::Bracket) if nested == 0 => {
                    self.advance(1);
                    break;
                }
                ('(', Arith::Parens) | ('[', Arith::Bracket) => nested += 1,
                (')', Arith::Parens) | (']', Arith::Bracket) => nested -= 1,
                _ => {}
            }
            match c {
                '$' => {
                    constant = false;
                    let mut ignored = String::new();
                    self.dollar(&mut ignored);
                }
                '`' => {
                    constant = false;
                    self.advance(1);
                    let mut ignored = String::new();
                    self.substitution(Stop::Backtick, &mut ignored);
                }
                '\'' => {
                    constant = false;
                    self.single_quoted(&mut String::new());
                }
                '"' => {
                    constant = false;
                    self.double_quoted(&mut String::new());
                }
                ' ' | '\t' => self.advance(1),
                c if ARITH_CONSTANT.contains(c) => {
                    text.push(c);
                    self.advance(1);
                }
                _ => {
                    // A name (looked up and evaluated), a subscript, a
                    // backslash, a newline: nothing to vouch for.
                    constant = false;
                    self.advance(1);
                }
            }
        }
        self.depth -= 1;
        if !constant {
            self.mark(
                "it uses arithmetic (`$((...))`, `((...))` or `$[...]`) on more than numbers, \
                 and bash evaluates the values of variables there as code",
            );
        }
        constant.then_some(text)
    }

    /// A `${...}` whose `${` was consumed, through its `}` (bash does not
    /// count bare `{` inside). Its text goes to `raw` when plain.
    fn parameter(&mut self, raw: &mut String) {
        if self.depth >= MAX_DEPTH {
            self.too_deep();
            return;
        }
        self.depth += 1;
        let mut body = String::new();
        let mut plain = true;
        loop {
            let Some(c) = self.peek() else {
                self.mark("a `${` is never closed");
                plain = false;
                break;
            };
            match c {
                '}' => {
                    self.advance(1);
                    break;
                }
                '$' if matches!(self.peek_at(1), Some('(' | '[' | '{')) => {
                    plain = false;
                    self.dollar(&mut String::new());
                }
                '`' => {
                    plain = false;
                    self.advance(1);
                    self.substitution(Stop::Backtick, &mut String::new());
                }
                '\'' => {
                    plain = false;
                    self.single_quoted(&mut String::new());
                }
                '"' => {
                    plain = false;
                    self.double_quoted(&mut String::new());
                }
                '\\' => {
                    plain = false;
                    self.advance(2);
                }
                _ => {
                    body.push(c);
                    self.advance(1);
                }
            }
        }
        self.depth -= 1;
        if plain && plain_parameter(&body) {
            raw.push_str("${");
            raw.push_str(&body);
            raw.push('}');
        } else {
            self.mark(
                "it uses a `${...}` expansion that bash may evaluate as code (indirection, a \
                 subscript, an offset, a transformation) or that the scanner does not follow",
            );
            raw.push_str("${…}");
        }
    }

    /// `$'...'`: shlex does not know it, so the command is opaque; it is
    /// still skipped correctly (`\'` does not close it) to find the parts.
    pub(super) fn ansi_c(&mut self, raw: &mut String) {
        self.mark("it uses `$'...'` quoting");
        self.advance(2);
        raw.push_str("'…'");
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.advance(2),
                '\'' => {
                    self.advance(1);
                    return;
                }
                _ => self.advance(1),
            }
        }
        self.mark("a quote is never closed");
    }

    /// Gives up on input nested deeper than `MAX_DEPTH`.
    pub(super) fn too_deep(&mut self) {
        self.mark("it nests substitutions or subshells too deeply to follow");
        self.pos = self.chars.len();
    }
}

/// `NAME`, `#NAME` or `NAME<op>WORD` with a value-or-pattern operator and a
/// word of plain characters: nothing bash evaluates. Indirection (`!x`),
/// subscripts (`a[i]`), offsets (`x:i`, arithmetic) and transformations
/// (`x@P` expands a prompt) are not plain.
fn plain_parameter(body: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if let Some(name) = body.strip_prefix('#')
        && !name.is_empty()
    {
        return name.chars().all(is_name);
    }
    let name_end = body.find(|c: char| !is_name(c)).unwrap_or(body.len());
    let name_end = match (name_end, body.chars().next()) {
        (0, Some(special @ ('#' | '?' | '$' | '-' | '@' | '*'))) => special.len_utf8(),
        (0, _) => return false,
        (end, _) => end,
    };
    let rest = &body[name_end..];
    if rest.is_empty() {
        return true;
    }
    let Some(word) = PARAMETER_OPERATORS.iter().find_map(|op| rest.strip_prefix(op)) else {
        return false;
    };
    word.chars().all(|c| is_name(c) || "./-+=,:~%#^*?$".contains(c))
}
