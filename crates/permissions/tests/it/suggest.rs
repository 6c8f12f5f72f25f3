//! The suggestion table: what "always" offers for each kind of call, and
//! that every offered rule parses and then allows the call it came from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use axon_permissions::{Kind, RuleSet, Source, suggest};
use serde_json::{Value, json};

const WS: &str = "/home/u/proj";

fn shell(command: &str) -> Value {
    json!({ "command": command })
}

fn path(path: &str) -> Value {
    json!({ "path": path })
}

/// A tool, its arguments, and the rules and description expected (or none).
type Row = (&'static str, Value, Option<(&'static [&'static str], &'static str)>);

#[test]
fn suggestion_table() {
    let table: &[Row] = &[
        (
            "shell",
            shell("cargo test --workspace"),
            Some((&["shell(cargo test:*)"], "allow `cargo test` commands in this workspace")),
        ),
        (
            "shell",
            shell("git status"),
            Some((&["shell(git status:*)"], "allow `git status` commands in this workspace")),
        ),
        (
            "shell",
            shell("git -C sub status"),
            Some((&["shell(git:*)"], "allow `git` commands in this workspace")),
        ),
        (
            "shell",
            shell("ls -la src"),
            Some((&["shell(ls:*)"], "allow `ls` commands in this workspace")),
        ),
        (
            "shell",
            shell("cargo test 2>&1 | tail -20"),
            Some((
                &["shell(cargo test:*)", "shell(tail:*)"],
                "allow `cargo test` and `tail` commands in this workspace",
            )),
        ),
        (
            "shell",
            shell("cargo build && cargo test -p x; cargo build --release"),
            Some((
                &["shell(cargo build:*)", "shell(cargo test:*)"],
                "allow `cargo build` and `cargo test` commands in this workspace",
            )),
        ),
        (
            "shell",
            shell("cd src && make check && wc -l x"),
            Some((
                &["shell(cd:*)", "shell(make check:*)", "shell(wc:*)"],
                "allow `cd`, `make check` and `wc` commands in this workspace",
            )),
        ),
        (
            "shell",
            shell("npm run build"),
            Some((&["shell(npm run:*)"], "allow `npm run` commands in this workspace")),
        ),
        (
            "shell",
            shell("python3 -m pytest -q"),
            Some((
                &["shell(python3 -m pytest:*)"],
                "allow `python3 -m pytest` commands in this workspace",
            )),
        ),
        (
            "shell",
            shell("python3 tools/gen.py --out x"),
            Some((
                &["shell(python3 tools/gen.py:*)"],
                "allow `python3 tools/gen.py` commands in this workspace",
            )),
        ),
        (
            "shell",
            shell("'./my tool' run"),
            Some((&["shell('./my tool':*)"], "allow `./my tool` commands in this workspace")),
        ),
        ("shell", shell("python3 -c 'print(1)'"), None),
        ("shell", shell("python -u -c 'print(1)'"), None),
        ("shell", shell("node -e 'x'"), None),
        ("shell", shell("python3"), None),
        ("shell", shell("bash -c 'ls'"), None),
        ("shell", shell("sh script.sh"), None),
        ("shell", shell("sudo ls"), None),
        ("shell", shell("env A=1 ls"), None),
        ("shell", shell("ls | xargs rm"), None),
        ("shell", shell("eval ls"), None),
        ("shell", shell("exec ls"), None),
        ("shell", shell("FOO=1 cargo test"), None),
        ("shell", shell("cargo test $(rm x)"), None),
        ("shell", shell("ls > /etc/x"), None),
        ("shell", shell(""), None),
        ("shell", json!({}), None),
        (
            "edit_file",
            path("src/a/b.rs"),
            Some((&["edit_file(src/**)"], "allow edit_file in src/")),
        ),
        (
            "edit_file",
            path("/home/u/proj/src/a.rs"),
            Some((&["edit_file(src/**)"], "allow edit_file in src/")),
        ),
        (
            "write_file",
            path("README.md"),
            Some((&["write_file(README.md)"], "allow write_file on README.md")),
        ),
        (
            "write_file",
            path("a[1]*.md"),
            Some((&["write_file(a\\[1\\]\\*.md)"], "allow write_file on a[1]*.md")),
        ),
        ("edit_file", path("../x"), None),
        ("edit_file", path("/etc/passwd"), None),
        ("edit_file", path(".git/config"), None),
        ("write_file", path(".axon/x"), None),
        ("edit_file", json!({}), None),
        ("mcp_x_y", json!({"anything": 1}), Some((&["mcp_x_y"], "allow mcp_x_y"))),
        ("read_file", path("/etc/passwd"), Some((&["read_file"], "allow read_file"))),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Update File: README.md\n@@\n-a\n+b\n*** Delete File: src/b.rs\n*** End Patch"}),
            Some((
                &["edit_file(src/**)", "edit_file(README.md)"],
                "allow edit_file in src/ and on README.md",
            )),
        ),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Delete File: .git/config\n*** End Patch"}),
            None,
        ),
        ("apply_patch", json!({"input": "not a patch"}), None),
    ];
    for (tool, args, want) in table {
        let got = suggest(tool, args, Path::new(WS));
        let got = got.as_ref().map(|s| (s.rules.clone(), s.description.clone()));
        let want = want.map(|(rules, description)| {
            (rules.iter().map(|r| r.to_string()).collect::<Vec<_>>(), description.to_string())
        });
        assert_eq!(got, want, "{tool} {args}");
    }
}

#[test]
fn a_suggested_rule_allows_its_call() {
    let calls = [
        ("shell", shell("cargo test --workspace")),
        ("shell", shell("cargo test 2>&1 | tail -20")),
        ("shell", shell("'./my tool' run")),
        ("shell", shell("python3 -m pytest -q")),
        ("edit_file", path("src/a/b.rs")),
        ("write_file", path("a[1]*.md")),
        ("write_file", path("~odd name (1).txt")),
        ("mcp_x_y", json!({})),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: src/a/n.rs\n+x\n*** Update File: README.md\n*** Move to: docs/r.md\n@@\n-a\n+b\n*** End Patch"}),
        ),
    ];
    for (tool, args) in calls {
        let suggestion = suggest(tool, &args, Path::new(WS)).unwrap();
        let mut set = RuleSet::new();
        set.parse_list(Kind::Allow, &suggestion.rules, &Source::from("trust file")).unwrap();
        let verdict = set.decide(tool, &args, Path::new(WS));
        assert_eq!(verdict.kind(), Some(Kind::Allow), "{tool} {args}: {suggestion:?}");
    }
}
