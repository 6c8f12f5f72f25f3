//! The table of tricky commands: what each one's analysis and verdict must
//! be under a realistic rule set, including chains, substitutions,
//! redirections, quoting, env assignments, newlines and here-documents.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use axon_permissions::{Kind, RuleSet, Source, Verdict, analyze};
use serde_json::json;

use crate::common::{WS, rules};

fn verdict(set: &RuleSet, command: &str) -> Option<Kind> {
    set.decide("shell", &json!({ "command": command }), Path::new(WS)).kind()
}

const ALLOW: &[&str] = &[
    "shell(cargo test:*)",
    "shell(ls:*)",
    "shell(echo:*)",
    "shell(cat:*)",
    "shell(tail:*)",
    "shell(git status)",
];

#[test]
fn tricky_commands() {
    let set = rules(ALLOW, &[], &[]);
    // (command, parts, opaque, allowed by prefix rules)
    let table: &[(&str, usize, bool, bool)] = &[
        ("cargo test; rm -rf /", 2, false, false),
        ("cargo test && rm x", 2, false, false),
        ("cargo test $(rm x)", 2, true, false),
        ("cargo test `rm x`", 2, true, false),
        ("cargo test \"$(rm x)\"", 2, true, false),
        ("ls > ../x", 1, true, false),
        ("ls > /etc/x", 1, true, false),
        ("ls > /tmp/../etc/axon-x", 1, true, false),
        ("ls > out.txt", 1, false, true),
        ("ls > /home/u/proj/out.txt", 1, false, true),
        ("ls 2>&1", 1, false, true),
        ("ls 2>/dev/null", 1, false, true),
        ("echo \"a;b\"", 1, false, true),
        ("echo 'a && b'", 1, false, true),
        ("echo a\\;b", 1, false, true),
        ("(rm x)", 1, true, false),
        ("{ ls; }", 1, true, false),
        ("FOO=1 cargo test", 1, false, false),
        ("cargo testx", 1, false, false),
        ("cargo test\nrm x", 2, false, false),
        ("cargo test\nls -la", 2, false, true),
        ("cat <<EOF\nhello; rm x\n$HOME\nEOF", 1, false, true),
        ("cat <<'EOF' > notes.txt\n$(rm x)\nEOF\nls", 2, false, true),
        ("cat <<EOF\n$(rm x)\nEOF", 2, true, false),
        ("cargo test 2>&1 | tail -20", 2, false, true),
        ("cargo test --workspace", 1, false, true),
        ("git status", 1, false, true),
        ("git status --short", 1, false, false),
        ("ls <(rm x)", 2, true, false),
        ("ls & rm x", 2, false, false),
        ("ls |& tail", 2, false, true),
        ("ls || rm x", 2, false, false),
        ("echo 'unclosed", 1, true, false),
        ("ls &&", 1, true, false),
        ("if true; then ls; fi", 3, true, false),
        ("echo $'\\'' ; rm -rf x ; echo $'\\''", 3, true, false),
        ("", 0, false, false),
        ("# only a comment", 0, false, false),
    ];
    for &(command, parts, opaque, allowed) in table {
        let analysis = analyze(command, Path::new(WS));
        assert_eq!(analysis.parts.len(), parts, "{command:?}: {analysis:?}");
        assert_eq!(analysis.opaque.is_some(), opaque, "{command:?}: {analysis:?}");
        let want = allowed.then_some(Kind::Allow);
        assert_eq!(verdict(&set, command), want, "{command:?}");
    }
}

#[test]
fn a_whole_tool_allow_allows_even_opaque_commands() {
    let set = rules(&["shell"], &[], &[]);
    assert_eq!(verdict(&set, "cargo test $(rm x)"), Some(Kind::Allow));
    let set = rules(&["shell(*)"], &[], &["shell(rm:*)"]);
    assert_eq!(verdict(&set, "cargo test $(rm x)"), Some(Kind::Deny));
    assert_eq!(verdict(&set, "ls; sudo rm -rf /"), Some(Kind::Deny));
    assert_eq!(verdict(&set, "bash -c 'rm -rf /'"), Some(Kind::Deny));
    assert_eq!(verdict(&set, "ls > /etc/x"), Some(Kind::Allow));
}

#[test]
fn deny_and_ask_see_every_part() {
    let set = rules(ALLOW, &["shell(git push:*)"], &["shell(rm:*)"]);
    assert_eq!(verdict(&set, "ls && rm x"), Some(Kind::Deny));
    assert_eq!(verdict(&set, "ls && git push origin"), Some(Kind::Ask));
    assert_eq!(verdict(&set, "echo \"$(rm x)\""), Some(Kind::Deny));
    assert_eq!(verdict(&set, "FOO=1 rm x"), Some(Kind::Deny));
    assert_eq!(verdict(&set, "echo rm"), Some(Kind::Allow));
    let Verdict::Deny { rule, source } =
        set.decide("shell", &json!({"command": "rm x"}), Path::new(WS))
    else {
        panic!("not denied");
    };
    assert_eq!((rule.as_str(), source.as_str()), ("shell(rm:*)", "test config"));
}

#[test]
fn an_allowed_chain_names_its_rules() {
    let set = rules(ALLOW, &[], &[]);
    let verdict =
        set.decide("shell", &json!({"command": "cargo test 2>&1 | tail -20 && ls"}), Path::new(WS));
    assert_eq!(
        verdict,
        Verdict::Allow {
            rule: "shell(cargo test:*), shell(tail:*), shell(ls:*)".into(),
            source: "test config".into(),
        }
    );
}

#[test]
fn other_tools_and_paths() {
    let set = rules(
        &["edit_file(src/**)", "mcp_github_*", "Read"],
        &["edit_file(src/secret.rs)"],
        &["write_file(*.lock)"],
    );
    let ws = Path::new(WS);
    let decide = |tool: &str, path: &str| set.decide(tool, &json!({ "path": path }), ws).kind();
    assert_eq!(decide("edit_file", "src/a/b.rs"), Some(Kind::Allow));
    assert_eq!(decide("edit_file", "/home/u/proj/src/a.rs"), Some(Kind::Allow));
    assert_eq!(decide("edit_file", "src/../src/a.rs"), Some(Kind::Allow));
    assert_eq!(decide("edit_file", "src/../../proj/src/a.rs"), None);
    assert_eq!(decide("edit_file", "/etc/src/a.rs"), None);
    assert_eq!(decide("edit_file", "tests/a.rs"), None);
    assert_eq!(decide("edit_file", "src/secret.rs"), Some(Kind::Ask));
    // multi_edit is edit_file made several times: the same rules hold.
    assert_eq!(decide("multi_edit", "src/a/b.rs"), Some(Kind::Allow));
    assert_eq!(decide("multi_edit", "src/secret.rs"), Some(Kind::Ask));
    assert_eq!(decide("multi_edit", "tests/a.rs"), None);
    assert_eq!(decide("write_file", "Cargo.lock"), Some(Kind::Deny));
    assert_eq!(decide("write_file", "sub/Cargo.lock"), None);
    assert_eq!(decide("read_file", "/etc/passwd"), Some(Kind::Allow));
    assert_eq!(decide("mcp_github_create_issue", ""), Some(Kind::Allow));
    assert_eq!(decide("mcp_gitlab_x", ""), None);
    assert_eq!(set.decide("edit_file", &json!({}), ws).kind(), None);
}

#[test]
fn a_patch_is_judged_by_every_file_it_names() {
    let set = rules(
        &["edit_file(src/**)", "edit_file(docs/**)"],
        &["edit_file(src/secret.rs)"],
        &["edit_file(.env)", "write_file(*.lock)"],
    );
    let ws = Path::new(WS);
    let patch = |body: &str| {
        set.decide(
            "apply_patch",
            &json!({ "input": format!("*** Begin Patch\n{body}\n*** End Patch") }),
            ws,
        )
    };
    let update = |path: &str| format!("*** Update File: {path}\n@@\n-a\n+b");
    // Every file allowed (by either rule): the patch is, naming both rules.
    assert_eq!(
        patch(&format!("{}\n{}", update("src/a.rs"), update("docs/b.md"))),
        Verdict::Allow {
            rule: "edit_file(src/**), edit_file(docs/**)".into(),
            source: "test config".into()
        }
    );
    // One file no rule allows: no verdict (the policy asks).
    assert_eq!(patch(&format!("{}\n{}", update("src/a.rs"), update("README.md"))).kind(), None);
    // One file asked about, one denied, anywhere in the patch: the whole patch.
    assert_eq!(
        patch(&format!("{}\n{}", update("src/a.rs"), update("src/secret.rs"))).kind(),
        Some(Kind::Ask)
    );
    let denied = patch(&format!("{}\n*** Delete File: .env", update("src/a.rs")));
    assert!(
        matches!(&denied, Verdict::Deny { rule, .. } if rule == "edit_file(.env)"),
        "{denied:?}"
    );
    // A move's destination counts, and what a patch creates is a write too.
    assert_eq!(
        patch("*** Update File: src/a.rs\n*** Move to: .env\n@@\n-a\n+b").kind(),
        Some(Kind::Deny)
    );
    assert_eq!(patch("*** Add File: Cargo.lock\n+x").kind(), Some(Kind::Deny));
    assert_eq!(patch(&update("Cargo.lock")).kind(), None);
    // A marker hidden in an added line is content, not a file.
    assert_eq!(patch("*** Add File: src/n.rs\n+*** Delete File: .env").kind(), Some(Kind::Allow));
    // Rules naming apply_patch hold, for the whole tool or per file.
    let set = rules(&["apply_patch(lib/**)"], &[], &["apply_patch(lib/x.rs)"]);
    let decide = |body: &str| {
        set.decide(
            "apply_patch",
            &json!({ "input": format!("*** Begin Patch\n{body}\n*** End Patch") }),
            ws,
        )
        .kind()
    };
    assert_eq!(decide(&update("lib/a.rs")), Some(Kind::Allow));
    assert_eq!(decide(&update("lib/x.rs")), Some(Kind::Deny));
    let set = rules(&[], &[], &["apply_patch"]);
    assert_eq!(
        set.decide("apply_patch", &json!({ "input": "garbage" }), ws).kind(),
        Some(Kind::Deny)
    );
    assert_eq!(
        set.decide(
            "apply_patch",
            &json!({ "input": format!("*** Begin Patch\n{}\n*** End Patch", update("a")) }),
            ws
        )
        .kind(),
        Some(Kind::Deny)
    );
}

#[test]
fn a_bad_list_adds_nothing_and_names_its_file() {
    let mut set = RuleSet::new();
    let source = Source::from("/home/u/.config/axon/config.toml");
    let error =
        set.parse_list(Kind::Allow, &["shell(ls:*)", "shell(ls > x)"], &source).unwrap_err();
    assert!(set.is_empty());
    let shown = error.to_string();
    assert!(shown.contains("`shell(ls > x)`"), "{shown}");
    assert!(shown.contains("/home/u/.config/axon/config.toml"), "{shown}");
    assert!(shown.contains("redirection"), "{shown}");
}
