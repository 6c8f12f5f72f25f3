//! Seed 001 (Pantheon Forge) properties 8–12 and seed 002 (VS Code agent)
//! properties 8–11 of the code tools, one proptest each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use crate::common::{TestWorkspace, expect_ok};
use axon_tools::{SearchOptions, search_workspace};
use globset::GlobBuilder;
use proptest::prelude::*;
use serde_json::json;

/// Lines over a tiny alphabet, so queries match often and repeatedly.
fn lines(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[abc ]{0,12}", 1..max)
}

fn text_of(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

proptest! {
    #![proptest_config(common::proptest_config())]

    /// Property 8 (seed 001): 搜索结果格式与上下文. *For any* file content
    /// and a search query matching it (literal or regular expression), every
    /// match searchFiles returns contains: the file's relative path, the line
    /// number (≥ 1), the full text of the matching line, and up to 2 lines of
    /// context above and below.
    #[test]
    fn seed001_prop08_search_results_have_location_and_context(
        files in prop::collection::btree_map("(src|docs|x/y)/[a-z]{1,6}\\.txt", lines(30), 1..4),
        pick in any::<prop::sample::Index>(),
        span in (0usize..12, 1usize..4),
        regex in any::<bool>(),
    ) {
        let ws = TestWorkspace::code();
        for (path, content) in &files {
            ws.write(path, text_of(content));
        }
        // The query is a piece of one real line, so at least one match exists.
        let all: Vec<&String> = files.values().flatten().filter(|l| !l.trim().is_empty()).collect();
        prop_assume!(!all.is_empty());
        let line = pick.get(&all);
        let start = span.0.min(line.len() - 1);
        let end = (start + span.1).min(line.len());
        let piece = &line[start..end];
        prop_assume!(!piece.trim().is_empty());
        let query = if regex { piece.replace(' ', "\\s") } else { piece.to_string() };

        let options = SearchOptions { regex, max_results: 500, ..SearchOptions::new(query.clone()) };
        let results = search_workspace(&ws.ctx.workspace, &options).unwrap();
        prop_assert!(results.total_matches >= 1);
        prop_assert!(!results.truncated);
        for file in &results.files {
            let content = &files[&file.path];
            for m in &file.matches {
                prop_assert!(m.line >= 1);
                let i = (m.line - 1) as usize;
                prop_assert_eq!(&m.text, &content[i]);
                prop_assert!(m.text.contains(piece));
                let before = &content[i.saturating_sub(2)..i];
                let after = &content[i + 1..(i + 3).min(content.len())];
                prop_assert_eq!(&m.context_before, before);
                prop_assert_eq!(&m.context_after, after);
                prop_assert!(m.column >= 1);
            }
        }
        // Every matching line is found, and the rendering names each file
        // and each match's line.
        let expected: usize = files.values().flatten().filter(|l| l.contains(piece)).count();
        prop_assert_eq!(results.total_matches as usize, expected);
        let rendered = results.render(&query);
        for file in &results.files {
            let header = format!("\n{}\n", file.path);
            prop_assert!(rendered.contains(&header));
            for m in &file.matches {
                let located = format!("\n{}:{}: ", m.line, m.column);
                prop_assert!(rendered.contains(&located));
            }
        }
    }

    /// Property 9 (seed 001): 搜索结果截断. *For any* search producing more
    /// than 50 matches, the returned matches number ≤ 50 and the output
    /// contains a truncation notice.
    #[test]
    fn seed001_prop09_search_truncates_at_50(per_file in prop::collection::vec(1usize..80, 1..5)) {
        let total: usize = per_file.iter().sum();
        prop_assume!(total > 50);
        let ws = TestWorkspace::code();
        for (i, count) in per_file.iter().enumerate() {
            let content: String = (0..*count).map(|n| format!("needle {n}\nhay\n")).collect();
            ws.write(&format!("f{i}.txt"), content);
        }
        let output = expect_ok(&ws.call("search", json!({"query": "needle"})));
        let shown = output.lines().filter(|l| l.contains(": needle ")).count();
        prop_assert_eq!(shown, 50);
        let notice = format!("[Results truncated: 50 of {total} matches shown.");
        prop_assert!(output.contains(&notice), "{}", output);
    }

    /// Property 10 (seed 001): read_file 行号格式. *For any* multi-line file
    /// content, every line of readFile's output is prefixed `N | `, numbers
    /// start at 1 and increase by one, and the text after the number equals
    /// the file's line exactly.
    #[test]
    fn seed001_prop10_read_file_numbers_lines(content in prop::collection::vec("[^\u{0}\r\n]{0,40}", 2..60)) {
        let ws = TestWorkspace::code();
        ws.write("f.txt", text_of(&content));
        let output = expect_ok(&ws.call("read_file", json!({"path": "f.txt"})));
        let shown: Vec<&str> = output.split('\n').collect();
        prop_assert_eq!(shown.len(), content.len());
        for (i, (line, original)) in shown.iter().zip(&content).enumerate() {
            prop_assert_eq!(*line, format!("{} | {original}", i + 1));
        }
    }

    /// Property 11 (seed 001): read_file 行范围读取. *For any* file of N lines
    /// and a valid range [start, end] (1 ≤ start ≤ end ≤ N),
    /// readFile(path, start, end) returns exactly end − start + 1 lines, each
    /// equal to the corresponding line of the file.
    #[test]
    fn seed001_prop11_read_file_line_range(
        content in prop::collection::vec("[^\u{0}\r\n]{0,40}", 1..80),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let ws = TestWorkspace::code();
        ws.write("f.txt", text_of(&content));
        let (x, y) = (a.index(content.len()) + 1, b.index(content.len()) + 1);
        let (start, end) = (x.min(y), x.max(y));
        let output = expect_ok(&ws.call("read_file", json!({"path": "f.txt", "start_line": start, "end_line": end})));
        let shown: Vec<&str> = output.split('\n').collect();
        prop_assert_eq!(shown.len(), end - start + 1);
        for (offset, line) in shown.iter().enumerate() {
            let n = start + offset;
            prop_assert_eq!(*line, format!("{n} | {}", content[n - 1]));
        }
    }

    /// Property 12 (seed 001): edit_file 查找替换正确性. *For any* file
    /// content and a substring oldStr occurring in it exactly once,
    /// editFile(path, oldStr, newStr) leaves the file equal to the original
    /// content with oldStr replaced by newStr.
    #[test]
    fn seed001_prop12_edit_replaces_unique_match(
        before in "[^\u{0}]{0,200}",
        old in "[^\u{0}]{1,40}",
        after in "[^\u{0}]{0,200}",
        new in "[^\u{0}]{0,40}",
    ) {
        let original = format!("{before}{old}{after}");
        prop_assume!(original.matches(old.as_str()).count() == 1);
        prop_assume!(old != new);
        // CRLF adaptation applies only when the snippet has bare LFs and the
        // file has CRLF; the property is about exact text, so keep it out.
        prop_assume!(!original.contains("\r\n"));
        let ws = TestWorkspace::code();
        ws.write("f.txt", &original);
        expect_ok(&ws.call("edit_file", json!({"path": "f.txt", "old_str": old, "new_str": new})));
        prop_assert_eq!(ws.read("f.txt"), original.replacen(old.as_str(), &new, 1));
    }

    /// Property 8 (seed 002): 搜索结果包含模式. *For any* grep query pattern
    /// P with matches in the workspace, every returned result's content
    /// contains P.
    #[test]
    fn seed002_prop08_search_results_contain_pattern(
        files in prop::collection::btree_map("[a-z]{1,5}\\.(rs|md)", prop::collection::vec("[a-dA-D .]{0,20}", 1..20), 1..5),
        pattern in "[a-dA-D.]{1,3}",
        case_sensitive in any::<bool>(),
    ) {
        let ws = TestWorkspace::code();
        for (path, content) in &files {
            ws.write(path, text_of(content));
        }
        let options = SearchOptions { case_sensitive, max_results: 500, ..SearchOptions::new(pattern.clone()) };
        let results = search_workspace(&ws.ctx.workspace, &options).unwrap();
        let contains = |line: &str| if case_sensitive {
            line.contains(&pattern)
        } else {
            line.to_lowercase().contains(&pattern.to_lowercase())
        };
        for file in &results.files {
            for m in &file.matches {
                prop_assert!(contains(&m.text), "{:?} does not contain {:?}", m.text, pattern);
                prop_assert!(contains(&m.match_text));
            }
        }
        let expected = files.values().flatten().filter(|l| contains(l)).count();
        prop_assert_eq!(results.total_matches as usize, expected);
    }

    /// Property 9 (seed 002): 文件搜索返回匹配路径. *For any* file search with
    /// a file-name pattern, every returned path matches the pattern.
    #[test]
    fn seed002_prop09_glob_returns_matching_paths(
        tree in prop::collection::btree_set("([xy]/){0,2}[a-c]{1,2}\\.(rs|md|txt)", 1..25),
        pattern in prop_oneof![
            "\\*\\.(rs|md|txt)",
            "[a-c]\\*",
            "[xy]/\\*\\.(rs|md)",
            "\\*\\*/[a-c]{1,2}\\.rs",
            "[xy]/\\*\\*",
        ],
    ) {
        let ws = TestWorkspace::code();
        for path in &tree {
            ws.write(path, "x");
        }
        let output = ws.call("glob", json!({"pattern": pattern}));
        let text = expect_ok(&output);
        let returned: BTreeSet<String> = if text.starts_with("No files match") {
            BTreeSet::new()
        } else {
            text.lines().map(String::from).collect()
        };
        // Independent statement of the rules: `*` never crosses `/`; without
        // a `/` the pattern applies to the file name, with one to the path.
        let glob = GlobBuilder::new(&pattern).literal_separator(true).build().unwrap().compile_matcher();
        let matches = |path: &str| if pattern.contains('/') {
            glob.is_match(path)
        } else {
            glob.is_match(path.rsplit('/').next().unwrap())
        };
        for path in &returned {
            prop_assert!(matches(path), "{} does not match {}", path, pattern);
        }
        let expected: BTreeSet<String> = tree.iter().filter(|p| matches(p)).cloned().collect();
        prop_assert_eq!(returned, expected);
    }

    /// Property 10 (seed 002): 命令输出捕获. *For any* shell command that
    /// produces output, the ToolResult contains both stdout and stderr (even
    /// when they are empty strings).
    #[test]
    fn seed002_prop10_shell_captures_stdout_and_stderr(
        out in "[a-zA-Z0-9_.,=-]{0,40}",
        err in "[a-zA-Z0-9_.,=-]{0,40}",
        code in 0u8..4,
    ) {
        let ws = TestWorkspace::code();
        let command = format!("printf '%s' '{out}'; printf '%s' '{err}' >&2; exit {code}");
        let output = ws.call("shell", json!({"command": command}));
        prop_assert_eq!(output.is_error, code != 0);
        let text = output.text_content();
        let (status, streams) = text.split_once('\n').unwrap();
        prop_assert!(status.starts_with(&format!("exit code: {code} (")), "{}", status);
        let show = |s: &str| if s.is_empty() { "(empty)".to_string() } else { s.to_string() };
        prop_assert_eq!(streams, format!("stdout:\n{}\nstderr:\n{}", show(&out), show(&err)));
    }

    /// Property 11 (seed 002): 工作区边界强制. *For any* shell command or file
    /// operation whose target path is outside the workspace root, the
    /// operation is refused.
    #[test]
    fn seed002_prop11_workspace_boundary_enforced(
        parts in prop::collection::vec(prop::sample::select(vec!["..", ".", "a", "b", "c"]), 1..7),
        absolute in any::<bool>(),
        tool in prop::sample::select(vec!["read_file", "write_file", "edit_file", "list_dir", "search", "glob", "shell"]),
    ) {
        let ws = TestWorkspace::code();
        ws.write("a/b/c/keep.txt", "x");
        let before = ws.snapshot();
        let path = if absolute {
            format!("{}/{}", ws.outside().display(), parts.join("/"))
        } else {
            parts.join("/")
        };
        // Independent judgement: relative paths escape when `..` climbs above
        // the root; absolute ones start from the folder *around* the
        // workspace, so they are inside only when they walk into `ws`, which
        // these parts never name.
        let mut depth: i32 = 0;
        let mut escapes = absolute;
        for part in &parts {
            match *part {
                ".." => depth -= 1,
                "." => {}
                _ => depth += 1,
            }
            escapes |= depth < 0;
        }
        let args = match tool {
            "read_file" | "list_dir" => json!({"path": path}),
            "write_file" => json!({"path": format!("{path}/new.txt"), "content": "x"}),
            "edit_file" => json!({"path": format!("{path}/keep.txt"), "old_str": "x", "new_str": "y"}),
            "search" => json!({"query": "x", "path": path}),
            "glob" => json!({"pattern": "*", "path": path}),
            _ => json!({"command": "touch made-by-shell", "workdir": path}),
        };
        let output = ws.call(tool, args);
        let text = output.text_content();
        if escapes {
            prop_assert!(output.is_error && text.contains("outside the workspace"), "{} {}: {}", tool, path, text);
            prop_assert_eq!(ws.snapshot(), before, "{} changed something", tool);
        } else {
            prop_assert!(!text.contains("outside the workspace"), "{} {}: {}", tool, path, text);
        }
    }
}
