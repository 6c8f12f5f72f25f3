//! `search`: ripgrep's engine as a tool.
//!
//! The walk is the workspace's own handle-based parallel walk (`walk.rs`:
//! .gitignore respected, `.git` skipped, symlinks neither followed nor
//! read, every file opened beneath the root), each thread runs its own
//! `grep-searcher` over files, and results are gathered in a collector that
//! keeps only the first `max_results` matches in path order, so the answer is
//! the same on every run and memory stays bounded however many files match.
//! Every match is still counted, so the truncation note gives the real total.
//! Files past the collector's cut-off are searched without context, which is
//! cheaper. Everything here is blocking; the tool runs it on a blocking
//! thread so the async runtime never stalls. A file the user's rules deny
//! reading (`Workspace::read_denied`: `deny = ["read_file(.env)"]`) is
//! never searched, so its lines cannot come back through `search`.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use axon_protocol::{ToolAnnotations, ToolOutput};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::read::open_regular;
use crate::registry::{ToolContext, TypedTool};
use crate::text::clip_line;
use crate::walk::{Kind, WalkOptions, walk_parallel_with};
use crate::workspace::Workspace;

const MAX_LINE_CHARS: usize = 300;
const MAX_CONTEXT_LINES: usize = 10;
const MAX_MAX_RESULTS: usize = 500;

fn default_context_lines() -> usize {
    2
}
fn default_max_results() -> usize {
    50
}
fn default_true() -> bool {
    true
}

/// What to search for and where. These are the tool's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchOptions {
    /// The text to find (or a regular expression when regex is true).
    pub query: String,
    /// File or folder to search, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// Treat query as a regular expression (Rust regex syntax). Defaults to false: a literal search.
    #[serde(default)]
    pub regex: bool,
    /// Match case exactly. Defaults to true.
    #[serde(default = "default_true")]
    pub case_sensitive: bool,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts` (gitignore syntax; `!` excludes).
    #[serde(default)]
    pub glob: Option<String>,
    /// Lines of context shown before and after each match. Defaults to 2, at most 10.
    #[serde(default = "default_context_lines")]
    pub context_lines: usize,
    /// Most matches returned. Defaults to 50, at most 500.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
}

impl SearchOptions {
    pub fn new(query: impl Into<String>) -> Self {
        SearchOptions {
            query: query.into(),
            path: None,
            regex: false,
            case_sensitive: true,
            glob: None,
            context_lines: default_context_lines(),
            max_results: default_max_results(),
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchMatch {
    /// 1-based line number.
    pub line: u64,
    /// 1-based column (in characters) of the first match on the line.
    pub column: u64,
    /// The whole line, without its line ending (very long lines are cut).
    pub text: String,
    /// The text the first match covered.
    pub match_text: String,
    pub context_before: Vec<String>,
    pub context_after: Vec<String>,
}

/// The matches in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileMatches {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    pub matches: Vec<SearchMatch>,
    /// The file's hard links: above 1, its content may also be reachable
    /// from outside the workspace, and the rendering says so.
    pub hard_links: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchResults {
    /// Files in path order, holding at most `max_results` matches in all.
    pub files: Vec<FileMatches>,
    /// Matching lines across everything searched.
    pub total_matches: u64,
    pub files_with_matches: u64,
    /// Some matches were left out because of `max_results`.
    pub truncated: bool,
    /// Files or folders that could not be read (permissions, or changed
    /// while the search ran); their matches, if any, are missing.
    pub unreadable: u64,
}

impl SearchResults {
    pub fn shown(&self) -> usize {
        self.files.iter().map(|f| f.matches.len()).sum()
    }

    /// The text the model sees: matches grouped by file, `N:C: text` for a
    /// matching line and `N- text` for context, `--` between separate
    /// stretches, and a note when matches were left out.
    pub fn render(&self, query: &str) -> String {
        let unreadable = match self.unreadable {
            0 => String::new(),
            n => format!(
                "\n[{n} files or folders could not be read (permissions, or changed while \
                 searched); matches in them are not counted]"
            ),
        };
        if self.total_matches == 0 {
            return format!("No matches for '{query}'.{unreadable}");
        }
        let mut out = String::new();
        let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "es" });
        out.push_str(&format!(
            "{} in {} file{}",
            plural(self.total_matches, "match"),
            self.files_with_matches,
            if self.files_with_matches == 1 { "" } else { "s" }
        ));
        if self.truncated {
            out.push_str(&format!(" (showing the first {})", self.shown()));
        }
        out.push('\n');
        for file in &self.files {
            out.push('\n');
            out.push_str(&file.path);
            out.push('\n');
            if file.hard_links > 1 {
                out.push_str(&format!(
                    "[note: this file has {} hard links; the same content may be reachable \
                     from outside the workspace]\n",
                    file.hard_links
                ));
            }
            render_file(&mut out, file);
        }
        if self.truncated {
            out.push_str(&format!(
                "\n[Results truncated: {} of {} matches shown. Narrow the query, or use path or \
                 glob, to see the rest.]",
                self.shown(),
                self.total_matches
            ));
        }
        out.push_str(&unreadable);
        out.trim_end().to_string()
    }
}

fn render_file(out: &mut String, file: &FileMatches) {
    // Context of nearby matches overlaps; print each line once, in order.
    let mut lines: BTreeMap<u64, (Option<u64>, &str)> = BTreeMap::new();
    for m in &file.matches {
        let first_before = m.line - m.context_before.len() as u64;
        for (i, text) in m.context_before.iter().enumerate() {
            lines.entry(first_before + i as u64).or_insert((None, text));
        }
        for (i, text) in m.context_after.iter().enumerate() {
            lines.entry(m.line + 1 + i as u64).or_insert((None, text));
        }
        lines.insert(m.line, (Some(m.column), &m.text));
    }
    let mut previous: Option<u64> = None;
    for (number, (column, text)) in lines {
        if previous.is_some_and(|p| number > p + 1) {
            out.push_str("--\n");
        }
        match column {
            Some(column) => out.push_str(&format!("{number}:{column}: {text}\n")),
            None => out.push_str(&format!("{number}- {text}\n")),
        }
        previous = Some(number);
    }
}

pub struct Search;

impl TypedTool for Search {
    type Args = SearchOptions;
    const NAME: &'static str = "search";

    fn description(&self) -> String {
        "Search file contents in the workspace (ripgrep engine). Returns matches grouped by \
         file: `line:column: text` for each match with context lines `line- text` around it. \
         Literal by default; set regex=true for a regular expression. Respects .gitignore and \
         skips binary files. Use path and glob to narrow the search."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: SearchOptions) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| {
            search_workspace(workspace, &args).map(|r| r.render(&args.query))
        })
        .await
        .map(ToolOutput::text)
    }
}

/// Runs a search. Blocking: call it from a blocking thread.
pub fn search_workspace(
    workspace: &Workspace,
    options: &SearchOptions,
) -> Result<SearchResults, ToolError> {
    if options.query.is_empty() {
        return Err(ToolError::failed("query is empty; give the text to search for"));
    }
    let matcher = build_matcher(options)?;
    let root = workspace.resolve(options.path.as_deref().unwrap_or("."))?;
    let root_rel = workspace.relative(root.path());
    let is_dir = match root.metadata() {
        Ok(meta) => meta.is_dir(),
        Err(e) => return Err(ToolError::io("search", &root_rel, &e)),
    };
    let context = options.context_lines.min(MAX_CONTEXT_LINES);
    let max_results = options.max_results.clamp(1, MAX_MAX_RESULTS);

    let collector = Collector::new(max_results);
    let total = AtomicU64::new(0);
    let files_with_matches = AtomicU64::new(0);
    // One file, with a thread's two searchers (their buffers are reused).
    let new_searchers = || (searcher(context), searcher(0));
    let search_one = |searchers: &mut (Searcher, Searcher), file: std::fs::File, rel: String| {
        let (detailed, counting) = searchers;
        let matched = if collector.would_keep(&rel) {
            let mut sink = DetailSink::new(&matcher, context, max_results);
            // A file that cannot be read is skipped, as ripgrep does.
            let _ = detailed.search_file(&matcher, &file, &mut sink);
            let matched = sink.matched;
            if matched > 0 {
                let links = file.metadata().map_or(1, |m| m.nlink());
                collector.offer(rel, sink.into_matches(context), links);
            }
            matched
        } else {
            let mut sink = CountSink(0);
            let _ = counting.search_file(&matcher, &file, &mut sink);
            sink.0
        };
        if matched > 0 {
            total.fetch_add(matched, Ordering::Relaxed);
            files_with_matches.fetch_add(1, Ordering::Relaxed);
        }
    };
    let unreadable = AtomicU64::new(0);
    if !is_dir {
        if workspace.read_denied(&root_rel) {
            return Err(ToolError::failed(format!(
                "The user's rules deny reading {root_rel}; do not try to read it another way."
            )));
        }
        let (file, _) = open_regular(&root, &root_rel)?;
        search_one(&mut new_searchers(), file, root_rel);
    } else {
        let mut walk = WalkOptions::default();
        if let Some(glob) = options.glob.as_deref().filter(|g| !g.trim().is_empty()) {
            let overrides = OverrideBuilder::new(root.path())
                .add(glob)
                .and_then(|b| b.build())
                .map_err(|e| ToolError::failed(format!("Invalid glob '{glob}': {e}")))?;
            walk.overrides = Some(overrides);
        }
        let errors = walk_parallel_with(&root, &walk, new_searchers, &|searchers, entry| {
            if entry.kind != Kind::File {
                return;
            }
            let rel = workspace.relative(entry.place.path());
            // A file the user's rules keep from read_file is not searched.
            if workspace.read_denied(&rel) {
                return;
            }
            match entry.open_file() {
                Ok(Some(file)) => search_one(searchers, file, rel),
                // Replaced by something else while the walk ran.
                Ok(None) => {}
                Err(_) => {
                    unreadable.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .map_err(|e| ToolError::io("search", &root_rel, &e))?;
        unreadable.fetch_add(errors, Ordering::Relaxed);
    }

    let files = collector.into_files();
    let total_matches = total.into_inner();
    let shown: usize = files.iter().map(|f| f.matches.len()).sum();
    Ok(SearchResults {
        files,
        total_matches,
        files_with_matches: files_with_matches.into_inner(),
        truncated: (shown as u64) < total_matches,
        unreadable: unreadable.into_inner(),
    })
}

fn build_matcher(options: &SearchOptions) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .fixed_strings(!options.regex)
        .case_insensitive(!options.case_sensitive)
        .line_terminator(Some(b'\n'))
        .build(&options.query)
        .map_err(|e| {
            if options.regex {
                ToolError::failed(format!("Invalid regex '{}': {e}", options.query))
            } else {
                ToolError::failed(format!("Cannot search for '{}': {e}", options.query))
            }
        })
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}

fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    clip_line(&String::from_utf8_lossy(bytes), MAX_LINE_CHARS).into_owned()
}

/// Counts matching lines only.
struct CountSink(u64);

impl Sink for CountSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 += 1;
        Ok(true)
    }
}

struct Line {
    number: u64,
    text: String,
    /// Column and matched text, for matching lines.
    hit: Option<(u64, String)>,
}

/// Keeps a file's first `max` matching lines with their context, and
/// counts the rest.
struct DetailSink<'m> {
    matcher: &'m RegexMatcher,
    context: u64,
    max: usize,
    matched: u64,
    kept: usize,
    last_kept: u64,
    lines: Vec<Line>,
}

impl<'m> DetailSink<'m> {
    fn new(matcher: &'m RegexMatcher, context: usize, max: usize) -> Self {
        DetailSink {
            matcher,
            context: context as u64,
            max,
            matched: 0,
            kept: 0,
            last_kept: 0,
            lines: Vec::new(),
        }
    }

    /// Pairs each kept match with the context lines around it.
    fn into_matches(self, context: usize) -> Vec<SearchMatch> {
        let by_number: BTreeMap<u64, &str> =
            self.lines.iter().map(|l| (l.number, l.text.as_str())).collect();
        let around = |numbers: &mut dyn Iterator<Item = u64>| -> Vec<String> {
            numbers.map_while(|n| by_number.get(&n).map(|t| t.to_string())).collect()
        };
        self.lines
            .iter()
            .filter_map(|line| {
                let (column, match_text) = line.hit.clone()?;
                let n = line.number;
                let mut before =
                    around(&mut (n.saturating_sub(context as u64)..n).rev().filter(|&b| b > 0));
                before.reverse();
                let after = around(&mut (n + 1..=n + context as u64));
                Some(SearchMatch {
                    line: n,
                    column,
                    text: line.text.clone(),
                    match_text,
                    context_before: before,
                    context_after: after,
                })
            })
            .collect()
    }
}

impl Sink for DetailSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matched += 1;
        if self.kept < self.max {
            let number = found.line_number().unwrap_or(0);
            let bytes = found.bytes();
            let hit = match self.matcher.find(bytes) {
                Ok(Some(m)) => (
                    String::from_utf8_lossy(&bytes[..m.start()]).chars().count() as u64 + 1,
                    String::from_utf8_lossy(&bytes[m]).into_owned(),
                ),
                _ => (1, String::new()),
            };
            self.lines.push(Line { number, text: line_text(bytes), hit: Some(hit) });
            self.kept += 1;
            self.last_kept = number;
        } else {
            // A match past the limit can still be context for the last kept
            // one; without it the context would stop short at this line.
            let number = found.line_number().unwrap_or(0);
            if number <= self.last_kept + self.context {
                let text = line_text(found.bytes());
                self.lines.push(Line { number, text, hit: None });
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let number = ctx.line_number().unwrap_or(0);
        let wanted = match ctx.kind() {
            SinkContextKind::After => number <= self.last_kept + self.context,
            _ => self.kept < self.max,
        };
        if wanted {
            self.lines.push(Line { number, text: line_text(ctx.bytes()), hit: None });
        }
        Ok(true)
    }
}

/// The first `max` matches in (path, line) order, whatever order the walker
/// threads deliver files in.
struct Collector {
    max: usize,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    files: BTreeMap<String, (Vec<SearchMatch>, u64)>,
    stored: usize,
}

impl Collector {
    fn new(max: usize) -> Self {
        Collector { max, kept: Mutex::new(Kept::default()) }
    }

    /// Whether matches in `path` could still be among the first `max`.
    fn would_keep(&self, path: &str) -> bool {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.stored < self.max
            || kept.files.keys().next_back().is_some_and(|last| path < last.as_str())
    }

    fn offer(&self, path: String, matches: Vec<SearchMatch>, hard_links: u64) {
        let mut guard = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = &mut *guard;
        let fits = kept.stored < self.max
            || kept.files.keys().next_back().is_some_and(|last| path.as_str() < last.as_str());
        if !fits {
            return;
        }
        kept.stored += matches.len();
        kept.files.insert(path, (matches, hard_links));
        while kept.stored > self.max {
            let Some(mut last) = kept.files.last_entry() else {
                break;
            };
            let excess = kept.stored - self.max;
            let len = last.get().0.len();
            if len <= excess {
                kept.stored -= len;
                last.remove();
            } else {
                last.get_mut().0.truncate(len - excess);
                kept.stored = self.max;
            }
        }
    }

    fn into_files(self) -> Vec<FileMatches> {
        let kept = self.kept.into_inner().unwrap_or_else(PoisonError::into_inner);
        kept.files
            .into_iter()
            .map(|(path, (matches, hard_links))| FileMatches { path, matches, hard_links })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(line: u64) -> SearchMatch {
        SearchMatch {
            line,
            column: 1,
            text: String::new(),
            match_text: String::new(),
            context_before: vec![],
            context_after: vec![],
        }
    }

    #[test]
    fn collector_keeps_the_first_matches_in_path_order() {
        let collector = Collector::new(3);
        collector.offer("c".into(), vec![hit(1), hit(2)], 1);
        collector.offer("a".into(), vec![hit(5)], 1);
        assert!(collector.would_keep("b"));
        collector.offer("b".into(), vec![hit(1), hit(9)], 1);
        assert!(!collector.would_keep("d"));
        let files = collector.into_files();
        let got: Vec<(String, Vec<u64>)> = files
            .into_iter()
            .map(|f| (f.path, f.matches.iter().map(|m| m.line).collect()))
            .collect();
        assert_eq!(got, [("a".to_string(), vec![5]), ("b".to_string(), vec![1, 9])]);
    }

    #[test]
    fn rendering_merges_overlapping_context() {
        let results = SearchResults {
            files: vec![FileMatches {
                path: "f.txt".into(),
                matches: vec![
                    SearchMatch {
                        line: 2,
                        column: 1,
                        text: "x".into(),
                        match_text: "x".into(),
                        context_before: vec!["a".into()],
                        context_after: vec!["b".into()],
                    },
                    SearchMatch {
                        line: 3,
                        column: 2,
                        text: "b".into(),
                        match_text: "b".into(),
                        context_before: vec!["x".into()],
                        context_after: vec![],
                    },
                ],
                hard_links: 1,
            }],
            total_matches: 2,
            files_with_matches: 1,
            truncated: false,
            unreadable: 0,
        };
        assert_eq!(results.render("x"), "2 matches in 1 file\n\nf.txt\n1- a\n2:1: x\n3:2: b");
    }
}
