//! Seed 000 (Axon for Obsidian) Correctness Properties of the vault tools,
//! one proptest each, driven through the registry as the agent drives them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use crate::common::{TestWorkspace, expect_error, expect_ok};
use axon_tools::normalize_note_path;
use proptest::prelude::*;
use serde_json::json;

/// A file or folder name a vault accepts.
fn name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9 _-]{0,10}[A-Za-z0-9]".prop_map(|s| s.to_string())
}

/// A vault-relative note path of one to three parts, with or without `.md`.
fn note_path() -> impl Strategy<Value = String> {
    (prop::collection::vec(name(), 1..=3), any::<bool>()).prop_map(|(parts, md)| {
        let path = parts.join("/");
        if md { format!("{path}.md") } else { path }
    })
}

/// Note text: anything but NUL (which makes a file binary), including
/// newlines, CR and non-ASCII.
fn content() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,300}"
}

fn non_empty_content() -> impl Strategy<Value = String> {
    "[^\u{0}]{1,300}"
}

proptest! {
    #![proptest_config(common::proptest_config())]

    /// Property 1: Read note round-trip. *For any* valid file path and
    /// content, if a note is created with that content, then reading the note
    /// with read_note should return the exact same content.
    #[test]
    fn seed000_prop01_read_note_round_trip(path in note_path(), text in content()) {
        let ws = TestWorkspace::vault();
        expect_ok(&ws.call("create_note", json!({"path": path, "content": text})));
        let read = ws.call("read_note", json!({"path": path}));
        prop_assert_eq!(expect_ok(&read), text);
    }

    /// Property 2: Path normalization adds .md extension. *For any* file path
    /// string that does not end with `.md`, the normalized path should end
    /// with `.md` appended to the original path.
    #[test]
    fn seed000_prop02_normalize_appends_md(path in "[^\u{0}]{0,60}") {
        prop_assume!(!path.ends_with(".md"));
        let normalized = normalize_note_path(&path);
        prop_assert_eq!(normalized, format!("{path}.md"));
    }

    /// Property 3: Non-existent file returns error. *For any* file path that
    /// does not exist in the Vault, calling read_note should return a
    /// ToolResult with success=false and an error message containing
    /// "not found".
    #[test]
    fn seed000_prop03_missing_note_is_not_found(
        existing in prop::collection::btree_set(name(), 0..5),
        missing in name(),
    ) {
        let ws = TestWorkspace::vault();
        // Existing notes start with "a_", the missing one with "z_": no note
        // can match it even ignoring case or folder.
        for note in &existing {
            ws.write(&format!("sub/a_{note}.md"), "x");
        }
        let output = ws.call("read_note", json!({"path": format!("z_{missing}")}));
        let message = expect_error(&output);
        prop_assert!(message.to_lowercase().contains("not found"), "{}", message);
    }

    /// Property 4: Create note round-trip. *For any* valid file path and
    /// non-empty content string, calling create_note and then reading the
    /// file should return the exact content that was written.
    #[test]
    fn seed000_prop04_create_note_round_trip(path in note_path(), text in non_empty_content()) {
        let ws = TestWorkspace::vault();
        expect_ok(&ws.call("create_note", json!({"path": path, "content": text})));
        prop_assert_eq!(ws.read(&normalize_note_path(&path)), text);
    }

    /// Property 5: Write mode behavior. *For any* existing file with initial
    /// content, calling create_note with mode="overwrite" should result in
    /// only the new content, while mode="append" should result in initial
    /// content followed by new content.
    #[test]
    fn seed000_prop05_write_modes(
        path in note_path(),
        initial in content(),
        added in content(),
        append in any::<bool>(),
    ) {
        let ws = TestWorkspace::vault();
        let file = normalize_note_path(&path);
        ws.write(&file, &initial);
        let mode = if append { "append" } else { "overwrite" };
        expect_ok(&ws.call("create_note", json!({"path": path, "content": added, "mode": mode})));
        let expected = if append { format!("{initial}{added}") } else { added.clone() };
        prop_assert_eq!(ws.read(&file), expected);
    }

    /// Property 6: Nested folder auto-creation. *For any* file path
    /// containing non-existent parent folders, calling create_note should
    /// succeed and all parent folders should exist after the operation.
    #[test]
    fn seed000_prop06_nested_folders_created(folders in prop::collection::vec(name(), 1..5), note in name()) {
        let ws = TestWorkspace::vault();
        let path = format!("{}/{note}", folders.join("/"));
        expect_ok(&ws.call("create_note", json!({"path": path, "content": "hello"})));
        let mut folder = ws.root().to_path_buf();
        for part in &folders {
            folder.push(part);
            prop_assert!(folder.is_dir(), "{} was not created", folder.display());
        }
        let note_file = folder.join(format!("{note}.md"));
        prop_assert!(note_file.is_file());
    }

    /// Property 7: Invalid path returns error. *For any* file path containing
    /// invalid characters (e.g., `<`, `>`, `:`, `"`, `|`, `?`, `*`), calling
    /// create_note should return a ToolResult with success=false.
    #[test]
    fn seed000_prop07_invalid_characters_rejected(
        before in name(),
        bad in prop::sample::select(vec!['<', '>', ':', '"', '|', '?', '*']),
        after in "[A-Za-z0-9/]{0,8}",
    ) {
        let ws = TestWorkspace::vault();
        let path = format!("{before}{bad}{after}");
        let message = expect_error(&ws.call("create_note", json!({"path": path, "content": "x"})));
        prop_assert!(message.contains("Invalid path"), "{}", message);
        prop_assert!(std::fs::read_dir(ws.root()).unwrap().next().is_none(), "something was written");
    }

    /// Property 8: List folder returns all contents. *For any* folder
    /// containing a known set of files and subfolders, calling list_folder
    /// should return a list containing all items in that folder.
    #[test]
    fn seed000_prop08_list_folder_returns_all(
        files in prop::collection::btree_set(name(), 0..8),
        folders in prop::collection::btree_set(name(), 0..5),
        at_root in any::<bool>(),
    ) {
        let ws = TestWorkspace::vault();
        let base = if at_root { "" } else { "Box/" };
        std::fs::create_dir_all(ws.path(base)).unwrap();
        for f in &files { ws.write(&format!("{base}f_{f}.md"), "x"); }
        for d in &folders { std::fs::create_dir_all(ws.path(&format!("{base}d_{d}"))).unwrap(); }
        let request = if at_root { "/" } else { "Box" };
        let listing = expect_ok(&ws.call("list_folder", json!({"path": request})));
        let names: BTreeSet<String> = listing
            .lines()
            .filter_map(|l| l.split_once("] ").map(|(_, n)| n.trim_end_matches('/').to_string()))
            .collect();
        let expected: BTreeSet<String> = files.iter().map(|f| format!("f_{f}.md"))
            .chain(folders.iter().map(|d| format!("d_{d}")))
            .collect();
        prop_assert_eq!(names, expected);
    }

    /// Property 9: Non-existent folder returns error. *For any* folder path
    /// that does not exist in the Vault, calling list_folder should return a
    /// ToolResult with success=false and an error message.
    #[test]
    fn seed000_prop09_missing_folder_is_error(path in prop::collection::vec(name(), 1..3)) {
        let ws = TestWorkspace::vault();
        ws.write("Existing/note.md", "x");
        let folder = format!("Missing/{}", path.join("/"));
        let message = expect_error(&ws.call("list_folder", json!({"path": folder})));
        prop_assert!(message.contains("Folder not found"), "{}", message);
    }

    /// Property 10: List folder includes type indicators. *For any* folder
    /// containing both files and subfolders, the list_folder result should
    /// correctly identify each item's type (file vs folder).
    #[test]
    fn seed000_prop10_list_folder_type_markers(
        items in prop::collection::btree_map(name(), any::<bool>(), 1..10),
    ) {
        let ws = TestWorkspace::vault();
        for (item, is_folder) in &items {
            if *is_folder {
                std::fs::create_dir(ws.path(item)).unwrap();
            } else {
                ws.write(item, "x");
            }
        }
        let listing = expect_ok(&ws.call("list_folder", json!({"path": ""})));
        let mut seen = 0;
        for line in listing.lines() {
            let (marker, rest) = line.split_once(' ').unwrap();
            let name = rest.trim_end_matches('/');
            let is_folder = items[name];
            prop_assert_eq!(marker == "[folder]", is_folder, "{}", line);
            prop_assert_eq!(marker == "[file]", !is_folder, "{}", line);
            seen += 1;
        }
        prop_assert_eq!(seen, items.len());
    }

    /// Property 11: Parameter validation rejects invalid params. *For any*
    /// tool call with missing required parameters or wrong parameter types,
    /// the ToolManager should return a validation error before attempting
    /// execution.
    #[test]
    fn seed000_prop11_invalid_params_rejected_before_execution(
        case in prop::sample::select(vec![
            // (profile is vault?, tool, valid arguments with a visible effect)
            (true, "create_note", r#"{"path": "made", "content": "x", "mode": "append"}"#),
            (true, "read_note", r#"{"path": "made"}"#),
            (true, "list_folder", r#"{"path": "made"}"#),
            (false, "write_file", r#"{"path": "made.md", "content": "x", "mode": "overwrite"}"#),
            (false, "edit_file", r#"{"path": "made.md", "old_str": "a", "new_str": "b", "replace_all": true}"#),
            (false, "shell", r#"{"command": "touch made.md", "timeout_ms": 5000, "workdir": "."}"#),
            (false, "read_file", r#"{"path": "made.md", "start_line": 1, "end_line": 2}"#),
            (false, "search", r#"{"query": "a", "regex": false, "context_lines": 1}"#),
            (false, "glob", r#"{"pattern": "*.md", "path": "."}"#),
            (false, "list_dir", r#"{"path": ".", "depth": 1}"#),
        ]),
        field_index in any::<prop::sample::Index>(),
        wrong in prop::sample::select(vec![json!(42), json!(true), json!([1]), json!({"a": 1}), json!(-1.5)]),
        drop_field in any::<bool>(),
    ) {
        let (vault, tool, valid) = case;
        let ws = if vault { TestWorkspace::vault() } else { TestWorkspace::code() };
        let mut args: serde_json::Map<String, serde_json::Value> = serde_json::from_str(valid).unwrap();
        let schema = ws.registry.spec(tool).unwrap().input_schema.clone();
        let required: Vec<String> = schema["required"].as_array().map(|r| {
            r.iter().filter_map(|v| v.as_str().map(String::from)).collect()
        }).unwrap_or_default();
        let fields: Vec<String> = args.keys().cloned().collect();
        let field = fields[field_index.index(fields.len())].clone();
        let is_required = required.contains(&field);
        if drop_field && is_required {
            args.remove(&field);
        } else {
            // Every field's type is a string, an integer, a boolean or an
            // enum; a value of another kind is always wrong for it.
            let declared = &schema["properties"][&field]["type"];
            let types: Vec<&str> = match declared {
                serde_json::Value::String(t) => vec![t.as_str()],
                serde_json::Value::Array(ts) => ts.iter().filter_map(|t| t.as_str()).collect(),
                _ => vec![],
            };
            let wrong = if (types.contains(&"integer") && wrong.is_i64())
                || (types.contains(&"boolean") && wrong.is_boolean())
            {
                json!("seven")
            } else {
                wrong
            };
            args.insert(field.clone(), wrong);
        }
        let message = expect_error(&ws.call(tool, serde_json::Value::Object(args)));
        prop_assert!(message.starts_with(&format!("Invalid parameters for {tool}:")), "{}", message);
        prop_assert!(message.contains(&field), "{} does not name {}", message, field);
        prop_assert!(!ws.path("made.md").exists(), "{} ran despite invalid arguments", tool);
    }

    /// Property 15: Undefined tool returns error. *For any* tool call with a
    /// tool name not in the defined tool set, the ToolManager should return a
    /// ToolResult with success=false and an error indicating the tool is not
    /// found.
    #[test]
    fn seed000_prop15_undefined_tool_is_error(tool in "[a-z_]{1,20}", vault in any::<bool>()) {
        let ws = if vault { TestWorkspace::vault() } else { TestWorkspace::code() };
        prop_assume!(!ws.registry.contains(&tool));
        let message = expect_error(&ws.call(&tool, json!({"path": "x"})));
        prop_assert_eq!(message, format!("Tool '{tool}' is not available"));
    }
}
