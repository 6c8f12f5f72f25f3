//! A rule set in gitleaks' format, read from TOML and matched lazily.
//!
//! Guarantees: keywords are found in one case-insensitive pass; a rule
//! runs only when one of its keywords occurs (or it has none); its regex
//! and allowlists are compiled at its first run and kept. Matching is on
//! bytes with ASCII classes, as Go's regexp (gitleaks' engine) reads
//! `\w`, `\s` and `\d`.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::Finding;
use crate::entropy::shannon;
use crate::mask::PLACEHOLDER_PREFIX;

#[derive(Debug, Default, Deserialize)]
struct FileToml {
    allowlist: Option<AllowToml>,
    #[serde(default)]
    rules: Vec<RuleToml>,
}

#[derive(Debug, Default, Clone, Deserialize)]
struct AllowToml {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(rename = "regexTarget")]
    regex_target: Option<String>,
    condition: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct RuleToml {
    id: String,
    regex: Option<String>,
    #[serde(rename = "secretGroup")]
    secret_group: Option<usize>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowToml>,
}

/// What an allowlist's regexes are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
struct Allow {
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
}

impl Allow {
    /// `None` for an allowlist that can only apply with a file path (its
    /// paths ANDed with the rest): text has no path.
    fn compile(file: &AllowToml) -> Result<Option<Allow>, String> {
        let and = file.condition.as_deref().is_some_and(|c| c.eq_ignore_ascii_case("and"));
        if and && !file.paths.is_empty() {
            return Ok(None);
        }
        let target = match file.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        let regexes = file.regexes.iter().map(|r| compile(r)).collect::<Result<_, _>>()?;
        let stopwords = file.stopwords.iter().map(|w| w.to_ascii_lowercase()).collect();
        Ok(Some(Allow { target, regexes, stopwords }))
    }

    /// `line` is asked for only by a line allowlist: finding a match's
    /// line costs the line's length, which must not be paid per match.
    fn allows<'t>(&self, secret: &'t [u8], whole: &'t [u8], line: impl Fn() -> &'t [u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line(),
        };
        if self.regexes.iter().any(|r| r.is_match(target)) {
            return true;
        }
        if self.stopwords.is_empty() {
            return false;
        }
        let lower = String::from_utf8_lossy(secret).to_ascii_lowercase();
        self.stopwords.iter().any(|w| lower.contains(w.as_str()))
    }
}

#[derive(Debug)]
struct Compiled {
    regex: Regex,
    allows: Vec<Allow>,
}

#[derive(Debug)]
struct Rule {
    id: String,
    /// Which source file it came from: that file's global allowlist is its.
    file: usize,
    source: RuleToml,
    /// A broad rule (gitleaks' `generic-*`, or axon's own, which back up
    /// gitleaks' exact formats): named only when no exact rule matched.
    fallback: bool,
    compiled: OnceLock<Result<Compiled, String>>,
}

impl Rule {
    fn compiled(&self) -> Result<&Compiled, &str> {
        self.compiled
            .get_or_init(|| {
                let regex = compile(self.source.regex.as_deref().unwrap_or_default())?;
                let mut allows = Vec::new();
                for file in &self.source.allowlists {
                    allows.extend(Allow::compile(file)?);
                }
                Ok(Compiled { regex, allows })
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// A regex as gitleaks' Go engine reads it: ASCII classes, bytes.
fn compile(pattern: &str) -> Result<Regex, String> {
    let pattern = go_braces(pattern);
    let pattern = pattern.as_str();
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(32 * 1024 * 1024)
        .build()
        .or_else(|_| RegexBuilder::new(pattern).size_limit(32 * 1024 * 1024).build())
        .map_err(|e| e.to_string())
}

/// `pattern` with every `{` that does not open a repetition (`{2}`, `{2,}`,
/// `{2,5}`) escaped: Go's regexp reads such a brace as itself (gitleaks'
/// rules match `{{ template }}` that way), Rust's refuses it.
fn go_braces(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut class = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' => {
                // An escape: copy it and what it escapes, whole characters.
                let end = pattern[i + 1..].chars().next().map_or(i + 1, |ch| i + 1 + ch.len_utf8());
                out.push_str(&pattern[i..end]);
                i = end;
                continue;
            }
            b'[' if !class => class = true,
            b']' if class => class = false,
            b'{' if !class && !opens_repetition(&bytes[i + 1..]) => {
                out.push_str("\\{");
                i += 1;
                continue;
            }
            _ => {}
        }
        let ch_len = pattern[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&pattern[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// Whether `rest` (what follows a `{`) is `N}`, `N,}` or `N,M}`.
fn opens_repetition(rest: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let n = digits(rest);
    if n == 0 {
        return false;
    }
    match rest.get(n) {
        Some(b'}') => true,
        Some(b',') => {
            let m = digits(&rest[n + 1..]);
            rest.get(n + 1 + m) == Some(&b'}')
        }
        _ => false,
    }
}

/// Rules, their keywords, and each source file's global allowlist.
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Finds every keyword; `owners[k]` are the rules of keyword `k`.
    keywords: Option<AhoCorasick>,
    owners: Vec<Vec<usize>>,
    /// Rules without keywords: they always run.
    always: Vec<usize>,
    /// Per source file: its `[allowlist]`, compiled when first needed.
    globals: Vec<(Option<AllowToml>, OnceLock<Option<Allow>>)>,
    skipped: Vec<(String, String)>,
}

impl RuleSet {
    /// The rules of every TOML text in `sources`, in order (a source's
    /// global allowlist applies to its own rules: gitleaks' stop words are
    /// not axon's). A source that does not
    /// parse, or a rule without a regex or needing a file path, is left
    /// out and named in [`RuleSet::skipped`].
    pub fn from_sources(sources: &[&str]) -> RuleSet {
        let mut set = RuleSet {
            rules: Vec::new(),
            keywords: None,
            owners: Vec::new(),
            always: Vec::new(),
            globals: Vec::new(),
            skipped: Vec::new(),
        };
        let mut words: Vec<String> = Vec::new();
        for (n, source) in sources.iter().enumerate() {
            let file: FileToml = match toml::from_str(source) {
                Ok(file) => file,
                Err(e) => {
                    set.skipped.push((format!("source {n}"), e.to_string()));
                    continue;
                }
            };
            let file_index = set.globals.len();
            set.globals.push((file.allowlist, OnceLock::new()));
            for rule in file.rules {
                if rule.regex.is_none() || rule.path.is_some() {
                    set.skipped.push((rule.id.clone(), "needs a file path".to_string()));
                    continue;
                }
                let index = set.rules.len();
                if rule.keywords.is_empty() {
                    set.always.push(index);
                }
                for word in &rule.keywords {
                    let word = word.to_ascii_lowercase();
                    match words.iter().position(|w| *w == word) {
                        Some(k) => set.owners[k].push(index),
                        None => {
                            words.push(word);
                            set.owners.push(vec![index]);
                        }
                    }
                }
                set.rules.push(Rule {
                    id: rule.id.clone(),
                    file: file_index,
                    fallback: rule.id.starts_with("generic") || file_index > 0,
                    source: rule,
                    compiled: OnceLock::new(),
                });
            }
        }
        match AhoCorasick::builder().ascii_case_insensitive(true).build(&words) {
            Ok(ac) => set.keywords = Some(ac),
            Err(e) => {
                // Without the keyword pass every rule runs: slower, as safe.
                set.skipped.push(("keywords".to_string(), e.to_string()));
                set.always = (0..set.rules.len()).collect();
            }
        }
        set
    }

    /// Rules left out, with why (path-only rules, and any that did not
    /// compile once they were first needed).
    pub fn skipped(&self) -> Vec<(String, String)> {
        let mut out = self.skipped.clone();
        for rule in &self.rules {
            if let Some(Err(e)) = rule.compiled.get() {
                out.push((rule.id.clone(), e.clone()));
            }
        }
        out
    }

    /// Compiles every rule now (for a test, or to pay up front).
    pub fn compile_all(&self) {
        for rule in &self.rules {
            let _ = rule.compiled();
        }
    }

    /// The number of rules that can match text.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn global(&self, file: usize) -> Option<&Allow> {
        let (source, compiled) = self.globals.get(file)?;
        compiled
            .get_or_init(|| source.as_ref().and_then(|g| Allow::compile(g).ok().flatten()))
            .as_ref()
    }

    /// The secrets these rules find in `text`, sorted, overlaps merged.
    pub fn find<'r>(&'r self, text: &str) -> Vec<Finding<'r>> {
        let bytes = text.as_bytes();
        let mut candidates: BTreeSet<usize> = self.always.iter().copied().collect();
        if let Some(ac) = &self.keywords {
            for hit in ac.find_overlapping_iter(text) {
                candidates.extend(self.owners[hit.pattern().as_usize()].iter().copied());
            }
        }
        // (finding, whether its rule is a broad fallback)
        let mut found: Vec<(Finding<'r>, bool)> = Vec::new();
        for index in candidates {
            let rule = &self.rules[index];
            let Ok(compiled) = rule.compiled() else { continue };
            for caps in compiled.regex.captures_iter(bytes) {
                let Some(whole) = caps.get(0) else { continue };
                let group = match rule.source.secret_group {
                    Some(n) if n > 0 => caps.get(n),
                    _ => (1..caps.len()).find_map(|n| caps.get(n).filter(|m| !m.is_empty())),
                };
                let secret = group.unwrap_or(whole);
                if secret.is_empty() {
                    continue;
                }
                if let Some(floor) = rule.source.entropy
                    && shannon(secret.as_bytes()) <= floor
                {
                    continue;
                }
                let line = || line_of(bytes, whole.start(), whole.end());
                let allowed =
                    |allow: &Allow| allow.allows(secret.as_bytes(), whole.as_bytes(), line);
                if self.global(rule.file).is_some_and(allowed)
                    || compiled.allows.iter().any(allowed)
                {
                    continue;
                }
                let span = floor_char(text, secret.start())..ceil_char(text, secret.end());
                found.push((Finding { kind: &rule.id, span }, rule.fallback));
            }
        }
        let placeholders = placeholders(text);
        if !placeholders.is_empty() {
            found.retain(|(f, _)| {
                !placeholders.iter().any(|p| f.span.start < p.end && p.start < f.span.end)
            });
        }
        // Of findings on the same span, a provider's rule names it rather
        // than a fallback (`openai-api-key`, not `generic-api-key`).
        found.sort_by_key(|(f, fallback)| (f.span.start, std::cmp::Reverse(f.span.end), *fallback));
        let mut merged: Vec<Finding<'r>> = Vec::with_capacity(found.len());
        for (finding, _) in found {
            match merged.last_mut() {
                Some(last) if finding.span.start <= last.span.end => {
                    last.span.end = last.span.end.max(finding.span.end);
                }
                _ => merged.push(finding),
            }
        }
        merged
    }
}

/// The spans of the placeholders `mask` writes (`[SECRET:kind:abcd…]`):
/// never a secret, so masked text masks to itself.
fn placeholders(text: &str) -> Vec<Range<usize>> {
    text.match_indices(PLACEHOLDER_PREFIX)
        .map(|(start, _)| {
            // A kind and four characters: the `]` is near.
            let window = &text[start..ceil_char(text, (start + 160).min(text.len()))];
            start..start + window.find("…]").map_or(PLACEHOLDER_PREFIX.len(), |e| e + "…]".len())
        })
        .collect()
}

/// The line of `bytes` holding `start..end`.
fn line_of(bytes: &[u8], start: usize, end: usize) -> &[u8] {
    let from = bytes[..start].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let to = bytes[end..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| end + i);
    &bytes[from..to]
}

fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::go_braces;

    #[test]
    fn go_s_literal_braces_are_escaped_and_repetitions_kept() {
        assert_eq!(go_braces(r"a{2}b{1,}c{1,3}"), r"a{2}b{1,}c{1,3}");
        assert_eq!(go_braces(r"\$?{{[^}]+}}"), r"\$?\{\{[^}]+}}");
        assert_eq!(go_braces(r"import[ \t]+{[ \t\w,]+}"), r"import[ \t]+\{[ \t\w,]+}");
        assert_eq!(go_braces(r"[{]\{x"), r"[{]\{x");
    }
}
