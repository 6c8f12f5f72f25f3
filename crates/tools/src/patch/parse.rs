//! Codex's patch format, read into file operations.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH        then its lines, each starting with `+`
//! *** Delete File: PATH
//! *** Update File: PATH
//! *** Move to: PATH         optional, right after Update
//! @@ CONTEXT                a chunk: ` ` kept, `-` removed, `+` added lines
//! *** End of File           optional: the chunk's lines end the file
//! *** End Patch
//! ```
//!
//! Guarantees: parsing is a pure function of the text, never panics, and
//! every refusal names the patch line and what was expected there. Like
//! Codex's own reader it is lenient where models are known to slip: blanks
//! around the markers, a heredoc (`<<'EOF'` … `EOF`) around the whole
//! patch, CRLF line ends, blank lines between chunks, and a first chunk
//! without its `@@`. A header is recognised only on a line of its own
//! (trimmed), never on a `+`, `-` or ` ` line, so a file whose text holds
//! `*** Add File:` can be patched.

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// One file operation of a patch, in the patch's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// Create the file (or replace its whole content) with `content`.
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    /// Change the file by `chunks`, in order; then rename it when
    /// `move_to` is given.
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// Lines to replace in a file being updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// A line (`@@ fn main()`) the chunk's lines come after: it narrows
    /// where they are looked for.
    pub(crate) context: Option<String>,
    /// The kept and removed lines, as the file has them now.
    pub(crate) old: Vec<String>,
    /// The kept and added lines, as the file will have them.
    pub(crate) new: Vec<String>,
    /// `*** End of File`: the old lines are the file's last.
    pub(crate) at_end: bool,
    /// The kept (` `) lines: each one's index in `old` and in `new`, so
    /// the file's own text of them is kept whatever tolerance matched it.
    pub(crate) kept: Vec<(usize, usize)>,
    /// The patch line the chunk starts on, for messages.
    pub(crate) line: usize,
}

/// Why a patch cannot be read.
pub(crate) type ParseError = String;

/// Reads a whole patch.
pub(crate) fn parse(text: &str) -> Result<Vec<FileOp>, ParseError> {
    let all: Vec<&str> =
        text.trim().split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let lines = unwrap_heredoc(&all);
    let first = lines.first().map(|l| l.trim()).unwrap_or_default();
    if first != BEGIN {
        return Err(format!(
            "the first line of the patch must be '{BEGIN}' (it is '{}')",
            clip(first)
        ));
    }
    let last = lines.last().map(|l| l.trim()).unwrap_or_default();
    if lines.len() < 2 || last != END {
        return Err(format!(
            "the last line of the patch must be '{END}' (it is '{}'); send the whole patch",
            clip(last)
        ));
    }
    // Line numbers count from the patch's first line, `*** Begin Patch`.
    let body = &lines[1..lines.len() - 1];
    let mut reader = Reader { lines: body, at: 0 };
    let mut ops = Vec::new();
    while let Some(line) = reader.peek() {
        if line.trim().is_empty() {
            reader.at += 1;
            continue;
        }
        ops.push(reader.file_op()?);
    }
    if ops.is_empty() {
        return Err("the patch changes no file: give at least one '*** Add File:', '*** Update \
                    File:' or '*** Delete File:' section"
            .to_string());
    }
    Ok(ops)
}

/// The lines inside `<<'EOF'` … `EOF`, when a model wrapped the patch in
/// the heredoc of a shell command; else all of them.
fn unwrap_heredoc<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    match lines {
        [first, inner @ .., last]
            if matches!(first.trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
                && last.trim().ends_with("EOF")
                && inner.len() >= 2 =>
        {
            inner
        }
        _ => lines,
    }
}

struct Reader<'a> {
    lines: &'a [&'a str],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).copied()
    }

    /// The patch's line number of the line at `at`.
    fn number(&self, at: usize) -> usize {
        at + 2
    }

    fn file_op(&mut self) -> Result<FileOp, ParseError> {
        let at = self.at;
        let header = self.peek().unwrap_or_default().trim();
        self.at += 1;
        if let Some(path) = header.strip_prefix(ADD.trim_end()) {
            let path = self.path(path, at, "Add File")?;
            let mut content = String::new();
            while let Some(line) = self.peek().and_then(|l| l.strip_prefix('+')) {
                content.push_str(line);
                content.push('\n');
                self.at += 1;
            }
            self.expect_header(&path)?;
            return Ok(FileOp::Add { path, content });
        }
        if let Some(path) = header.strip_prefix(DELETE.trim_end()) {
            let path = self.path(path, at, "Delete File")?;
            self.expect_header(&path)?;
            return Ok(FileOp::Delete { path });
        }
        if let Some(path) = header.strip_prefix(UPDATE.trim_end()) {
            let path = self.path(path, at, "Update File")?;
            let mut move_to = None;
            if let Some(to) =
                self.peek().map(str::trim).and_then(|l| l.strip_prefix(MOVE.trim_end()))
            {
                move_to = Some(self.path(to, self.at, "Move to")?);
                self.at += 1;
            }
            let mut chunks = Vec::new();
            while let Some(line) = self.peek() {
                if line.trim().is_empty() {
                    self.at += 1;
                    continue;
                }
                if line.starts_with("***") {
                    break;
                }
                chunks.push(self.chunk(&path, chunks.is_empty())?);
            }
            if chunks.is_empty() && move_to.is_none() {
                return Err(format!(
                    "line {}: '*** Update File: {path}' has no changes; give its chunks (`@@` and \
                     ` `, `-`, `+` lines) or remove the section",
                    self.number(at)
                ));
            }
            return Ok(FileOp::Update { path, move_to, chunks });
        }
        Err(format!(
            "line {}: '{}' is not a section header; each file starts with '{ADD}PATH', \
             '{UPDATE}PATH' or '{DELETE}PATH'",
            self.number(at),
            clip(header)
        ))
    }

    /// The path after a header, which must not be empty.
    fn path(&self, rest: &str, at: usize, what: &str) -> Result<String, ParseError> {
        let path = rest.trim();
        if path.is_empty() {
            return Err(format!("line {}: '*** {what}:' needs a path", self.number(at)));
        }
        Ok(path.to_string())
    }

    /// After an added file's lines or a delete: the next section, a blank
    /// line or the end.
    fn expect_header(&self, path: &str) -> Result<(), ParseError> {
        match self.peek() {
            Some(line) if !line.trim().is_empty() && !line.trim_start().starts_with("***") => {
                Err(format!(
                    "line {}: unexpected '{}' in the section of '{path}': every line of an added \
                     file starts with '+', and a deleted file has no lines",
                    self.number(self.at),
                    clip(line)
                ))
            }
            _ => Ok(()),
        }
    }

    /// One chunk: its `@@` line (optional for a file's first), then its
    /// lines up to the next `@@`, section or end.
    fn chunk(&mut self, path: &str, first: bool) -> Result<Chunk, ParseError> {
        let start = self.at;
        let header = self.peek().unwrap_or_default();
        let context = if header.trim_end() == "@@" {
            self.at += 1;
            None
        } else if let Some(context) = header.strip_prefix("@@ ") {
            self.at += 1;
            Some(context.to_string()).filter(|c| !c.trim().is_empty())
        } else if first {
            None
        } else {
            return Err(format!(
                "line {}: expected a chunk of '{path}' starting with '@@', got '{}'",
                self.number(start),
                clip(header)
            ));
        };
        let mut chunk = Chunk {
            context,
            old: Vec::new(),
            new: Vec::new(),
            at_end: false,
            kept: Vec::new(),
            line: self.number(start),
        };
        let mut lines = 0;
        while let Some(line) = self.peek() {
            if line.trim() == END_OF_FILE {
                self.at += 1;
                chunk.at_end = true;
                break;
            }
            match line.chars().next() {
                // A blank line is a kept empty line (editors strip the
                // space a diff puts before it).
                None => {
                    chunk.kept.push((chunk.old.len(), chunk.new.len()));
                    chunk.old.push(String::new());
                    chunk.new.push(String::new());
                }
                Some(' ') => {
                    chunk.kept.push((chunk.old.len(), chunk.new.len()));
                    chunk.old.push(line[1..].to_string());
                    chunk.new.push(line[1..].to_string());
                }
                Some('-') => chunk.old.push(line[1..].to_string()),
                Some('+') => chunk.new.push(line[1..].to_string()),
                _ if lines == 0 => {
                    return Err(format!(
                        "line {}: unexpected '{}' in a chunk of '{path}': each line starts with \
                         ' ' (kept), '-' (removed) or '+' (added)",
                        self.number(self.at),
                        clip(line)
                    ));
                }
                _ => break,
            }
            lines += 1;
            self.at += 1;
        }
        if lines == 0 {
            return Err(format!(
                "line {}: a chunk of '{path}' has no lines; give ' ', '-' and '+' lines after its \
                 '@@'",
                self.number(start)
            ));
        }
        Ok(chunk)
    }
}

/// A line as quoted in a message: at most 80 characters.
fn clip(line: &str) -> String {
    let mut out: String = line.chars().take(80).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}

/// The paths a patch names (files added, updated, deleted, and moves'
/// destinations), found by their headers alone, for those who judge a
/// patch before it runs (hooks). A header is any line that, trimmed,
/// starts with a section marker: this can name more paths than the patch
/// touches (a ` ` context line holding a marker), never fewer.
pub fn patch_paths(text: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let path = [ADD, DELETE, UPDATE, MOVE]
            .iter()
            .find_map(|marker| line.strip_prefix(marker.trim_end()))
            .map(str::trim)
            .filter(|p| !p.is_empty());
        if let Some(path) = path
            && !paths.iter().any(|p| p == path)
        {
            paths.push(path.to_string());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    impl FileOp {
        /// The paths it names: the file, and for a move its new name.
        pub(crate) fn paths(&self) -> Vec<&str> {
            match self {
                FileOp::Add { path, .. } | FileOp::Delete { path } => vec![path],
                FileOp::Update { path, move_to, .. } => {
                    let mut paths = vec![path.as_str()];
                    paths.extend(move_to.as_deref());
                    paths
                }
            }
        }
    }

    /// The header scan never names fewer paths than the parser reads.
    #[test]
    fn the_header_scan_covers_every_path_parsed() {
        let patch = "<<'EOF'\n*** Begin Patch\r\n  *** Add File: a.txt  \n+*** Delete File: hidden\n\
                     *** Update File: b.rs\n*** Move to: c.rs\n@@ fn x\n ctx\n-old\n+new\n\n\
                     @@\n *** Update File: d\n-x\n+y\n*** Delete File: e\n*** End Patch\nEOF";
        let ops = parse(patch).unwrap();
        let scanned = patch_paths(patch);
        let parsed: Vec<&str> = ops.iter().flat_map(FileOp::paths).collect();
        assert_eq!(parsed, ["a.txt", "b.rs", "c.rs", "e"]);
        for path in parsed {
            assert!(scanned.iter().any(|p| p == path), "{path} not in {scanned:?}");
        }
        assert!(!scanned.iter().any(|p| p == "hidden"), "{scanned:?}");
    }

    #[test]
    fn refusals_name_the_line() {
        for (patch, want) in [
            ("bad", "first line of the patch must be '*** Begin Patch'"),
            ("*** Begin Patch\n*** Add File: a\n+x", "last line of the patch must be"),
            ("*** Begin Patch\n*** End Patch", "changes no file"),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch",
                "line 2: '*** Update File: a' has no changes",
            ),
            (
                "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
                "line 2: '*** Frobnicate: a' is not a section header",
            ),
            ("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch", "line 4: unexpected 'y'"),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-x\nbad\n@@\n*** End Patch",
                "line 5: expected a chunk of 'a' starting with '@@'",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch",
                "line 3: a chunk of 'a' has no lines",
            ),
            (
                "*** Begin Patch\n*** Add File:   \n*** End Patch",
                "line 2: '*** Add File:' needs a path",
            ),
        ] {
            let error = parse(patch).unwrap_err();
            assert!(error.contains(want), "{patch:?}: {error}");
        }
    }

    #[test]
    fn chunks_are_read_as_codex_reads_them() {
        let ops = parse(
            "*** Begin Patch\n*** Update File: f\n import foo\n+bar\n\n@@ def g():\n-    pass\n+    return 1\n*** End of File\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { chunks, move_to: None, .. } = &ops[0] else { panic!("{ops:?}") };
        assert_eq!(chunks.len(), 2);
        // The first chunk needs no `@@`; the blank line before the next is
        // taken as a kept empty line (the apply step drops it if the file
        // lacks it).
        assert_eq!(chunks[0].context, None);
        assert_eq!(chunks[0].old, ["import foo", ""]);
        assert_eq!(chunks[0].new, ["import foo", "bar", ""]);
        assert_eq!(chunks[1].context.as_deref(), Some("def g():"));
        assert_eq!(chunks[1].old, ["    pass"]);
        assert_eq!(chunks[1].new, ["    return 1"]);
        assert!(chunks[1].at_end && !chunks[0].at_end);
        assert_eq!(chunks[1].line, 6);
    }
}
