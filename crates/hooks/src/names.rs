//! Claude Code's tool names and arguments, mapped to axon's.
//!
//! A hook written for Claude Code matches `Bash`, `Edit|Write` or
//! `mcp__memory__.*` and reads `tool_input.file_path`. axon's tools are
//! `shell`, `edit_file`, `write_file`, and its MCP tools are
//! `mcp_{server}_{tool}` (see `axon_mcp::naming`). The table:
//!
//! | Claude Code            | axon              |
//! |------------------------|-------------------|
//! | `Bash`                 | `shell`           |
//! | `Read`                 | `read_file`       |
//! | `Write`                | `write_file`      |
//! | `Edit`, `MultiEdit`    | `edit_file`       |
//! | `MultiEdit`            | `multi_edit`      |
//! | `Edit`, `Write`        | `apply_patch`     |
//! | `BashOutput`           | `shell_output`    |
//! | `KillShell`, `KillBash`| `shell_kill`      |
//! | `Glob`                 | `glob`            |
//! | `Grep`                 | `search`          |
//! | `LS`                   | `list_dir`        |
//! | `TodoWrite`            | `todo`            |
//! | `WebFetch`             | `web_fetch`       |
//! | `WebSearch`            | `web_search`      |
//! | `mcp__server__tool`    | `mcp_server_tool` |
//!
//! A matcher is tested against axon's name and every Claude name the tool
//! has ([`match_names`]); an MCP name is tried with every split of its
//! server and tool at a `_` (server and tool names may contain `_`
//! themselves, so the split is unknown). axon's own names always match
//! too, so an axon matcher needs no Claude names.
//!
//! Hooks loaded from Claude's settings get Claude's dialect on stdin
//! ([`claude_input`]): `tool_name` is Claude's, and `tool_input` gains
//! Claude's argument names beside axon's (`file_path` as an absolute path,
//! `old_string`, `new_string`); nothing of axon's is removed. A patch
//! (`apply_patch`, told as `Edit`) gets `file_paths`, every file it names
//! as an absolute path, and `file_path` when it names one file only.

use std::path::Path;

use serde_json::Value;

/// (Claude Code's name, axon's name); the first entry for an axon name is
/// the one a hook is told.
const TOOLS: [(&str, &str); 17] = [
    ("Bash", "shell"),
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("MultiEdit", "multi_edit"),
    // Claude Code has no patch tool; a patch edits and creates files, so
    // the hooks that guard or format edits and writes see it.
    ("Edit", "apply_patch"),
    ("Write", "apply_patch"),
    ("BashOutput", "shell_output"),
    ("KillShell", "shell_kill"),
    ("KillBash", "shell_kill"),
    ("Glob", "glob"),
    ("Grep", "search"),
    ("LS", "list_dir"),
    ("TodoWrite", "todo"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
];

/// Claude Code's name for axon's built-in tool `axon_name`.
pub fn claude_name(axon_name: &str) -> Option<&'static str> {
    TOOLS.iter().find(|(_, axon)| *axon == axon_name).map(|(claude, _)| *claude)
}

/// axon's name for Claude Code's tool `claude_name`: a built-in from the
/// table, or `mcp__server__tool` as `mcp_server_tool`.
pub fn axon_name(claude_name: &str) -> Option<String> {
    if let Some((_, axon)) = TOOLS.iter().find(|(claude, _)| *claude == claude_name) {
        return Some((*axon).to_string());
    }
    let rest = claude_name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    Some(format!("mcp_{server}_{tool}"))
}

/// Every name a matcher is tested against for axon's tool `axon_name`:
/// the name itself, its Claude names, and for an MCP tool each
/// `mcp__server__tool` it may stand for.
pub fn match_names(axon_name: &str) -> Vec<String> {
    let mut names = vec![axon_name.to_string()];
    names.extend(
        TOOLS
            .iter()
            .filter(|(_, axon)| *axon == axon_name)
            .map(|(claude, _)| (*claude).to_string()),
    );
    if let Some(rest) = axon_name.strip_prefix("mcp_") {
        names.extend(
            rest.match_indices('_')
                .map(|(at, _)| format!("mcp__{}__{}", &rest[..at], &rest[at + 1..]))
                .filter(|name| !name.ends_with("__") && !name.starts_with("mcp____")),
        );
    }
    names
}

/// `input` with Claude's argument names added for axon's tool `axon_name`;
/// a relative `path` becomes an absolute `file_path` under `cwd`.
pub fn claude_input(axon_name: &str, input: &Value, cwd: &Path) -> Value {
    let mut input = input.clone();
    let Some(object) = input.as_object_mut() else {
        return input;
    };
    let file_tool = matches!(axon_name, "read_file" | "write_file" | "edit_file" | "multi_edit");
    if file_tool
        && !object.contains_key("file_path")
        && let Some(Value::String(path)) = object.get("path")
    {
        let absolute = cwd.join(path).display().to_string();
        object.insert("file_path".into(), Value::String(absolute));
    }
    if axon_name == "apply_patch"
        && let Some(Value::String(patch)) = object.get("input")
    {
        let paths: Vec<String> = axon_tools::patch_paths(patch)
            .iter()
            .map(|path| cwd.join(path).display().to_string())
            .collect();
        if let [only] = paths.as_slice()
            && !object.contains_key("file_path")
        {
            object.insert("file_path".into(), Value::String(only.clone()));
        }
        if !object.contains_key("file_paths") {
            object.insert(
                "file_paths".into(),
                Value::Array(paths.into_iter().map(Value::String).collect()),
            );
        }
    }
    // Claude's names for a background command's arguments.
    for (tool, axon, claude) in [
        ("shell", "background", "run_in_background"),
        ("shell_output", "id", "bash_id"),
        ("shell_kill", "id", "shell_id"),
    ] {
        if axon_name == tool
            && !object.contains_key(claude)
            && let Some(value) = object.get(axon).cloned()
        {
            object.insert(claude.into(), value);
        }
    }
    if axon_name == "edit_file" {
        with_claude_edit_names(object);
    }
    if axon_name == "multi_edit"
        && let Some(Value::Array(edits)) = object.get_mut("edits")
    {
        for edit in edits.iter_mut().filter_map(Value::as_object_mut) {
            with_claude_edit_names(edit);
        }
    }
    input
}

/// An edit's `old_str`/`new_str` also as Claude's `old_string`/`new_string`.
fn with_claude_edit_names(object: &mut serde_json::Map<String, Value>) {
    for (axon, claude) in [("old_str", "old_string"), ("new_str", "new_string")] {
        if !object.contains_key(claude)
            && let Some(value) = object.get(axon).cloned()
        {
            object.insert(claude.into(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtins_map_both_ways() {
        assert_eq!(claude_name("shell"), Some("Bash"));
        assert_eq!(claude_name("edit_file"), Some("Edit"));
        assert_eq!(claude_name("mcp_a_b"), None);
        assert_eq!(axon_name("MultiEdit").as_deref(), Some("edit_file"));
        assert_eq!(claude_name("multi_edit"), Some("MultiEdit"));
        assert_eq!(match_names("multi_edit"), vec!["multi_edit", "MultiEdit"]);
        let edits = json!({"path": "a.rs", "edits": [{"old_str": "x", "new_str": "y"}]});
        let claude = claude_input("multi_edit", &edits, Path::new("/w"));
        assert_eq!(claude["file_path"], "/w/a.rs");
        assert_eq!(claude["edits"][0]["old_string"], "x");
        assert_eq!(claude["edits"][0]["new_string"], "y");
        assert_eq!(claude_name("apply_patch"), Some("Edit"));
        assert_eq!(match_names("apply_patch"), vec!["apply_patch", "Edit", "Write"]);
        assert_eq!(axon_name("Edit").as_deref(), Some("edit_file"));
        let one =
            json!({"input": "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch"});
        let claude = claude_input("apply_patch", &one, Path::new("/w"));
        assert_eq!(claude["file_path"], "/w/a.rs");
        assert_eq!(claude["file_paths"], json!(["/w/a.rs"]));
        let two = json!({"input": "*** Begin Patch\n*** Add File: b\n+x\n*** Delete File: c/d\n*** End Patch"});
        let claude = claude_input("apply_patch", &two, Path::new("/w"));
        assert!(claude.get("file_path").is_none(), "{claude}");
        assert_eq!(claude["file_paths"], json!(["/w/b", "/w/c/d"]));
        assert_eq!(claude_name("shell_output"), Some("BashOutput"));
        assert_eq!(claude_name("shell_kill"), Some("KillShell"));
        assert_eq!(axon_name("KillBash").as_deref(), Some("shell_kill"));
        let claude = claude_input("shell_output", &json!({"id": "bg1"}), Path::new("/w"));
        assert_eq!(claude["bash_id"], "bg1");
        let claude = claude_input("shell_kill", &json!({"id": "bg1"}), Path::new("/w"));
        assert_eq!(claude["shell_id"], "bg1");
        let claude =
            claude_input("shell", &json!({"command": "x", "background": true}), Path::new("/w"));
        assert_eq!(claude["run_in_background"], true);
        assert_eq!(axon_name("Grep").as_deref(), Some("search"));
        assert_eq!(
            axon_name("mcp__memory__create_entities").as_deref(),
            Some("mcp_memory_create_entities")
        );
        assert_eq!(axon_name("WebFetch").as_deref(), Some("web_fetch"));
        assert_eq!(claude_name("web_search"), Some("WebSearch"));
        assert_eq!(axon_name("NotebookEdit"), None);
    }

    #[test]
    fn mcp_names_are_tried_at_every_split() {
        let names = match_names("mcp_my_server_do_it");
        for expected in ["mcp__my__server_do_it", "mcp__my_server__do_it", "mcp__my_server_do__it"]
        {
            assert!(names.iter().any(|name| name == expected), "{expected} in {names:?}");
        }
        assert_eq!(match_names("shell"), vec!["shell", "Bash"]);
        assert_eq!(match_names("edit_file"), vec!["edit_file", "Edit", "MultiEdit"]);
    }

    #[test]
    fn claude_arguments_are_added_not_swapped() {
        let input = json!({"path": "src/a.rs", "old_str": "x", "new_str": "y"});
        let claude = claude_input("edit_file", &input, Path::new("/w"));
        assert_eq!(claude["file_path"], "/w/src/a.rs");
        assert_eq!(claude["old_string"], "x");
        assert_eq!(claude["new_string"], "y");
        assert_eq!(claude["path"], "src/a.rs");
        let shell = json!({"command": "ls"});
        assert_eq!(claude_input("shell", &shell, Path::new("/w")), shell);
    }
}
