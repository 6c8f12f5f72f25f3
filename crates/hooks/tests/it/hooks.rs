//! Hooks run for real: `sh` scripts in temporary workspaces, configured in
//! axon's TOML or in Claude's settings files, read back what they were
//! given and what they said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axon_hooks::{
    CompactTrigger, EventData, HookFile, HookInput, HookSource, Hooks, HooksConfig, Permission,
    SourceFormat, claude_settings_files,
};
use serde_json::{Value, json};

fn input(cwd: &Path, data: EventData) -> HookInput {
    HookInput {
        session_id: "s-1".into(),
        transcript_path: None,
        cwd: cwd.to_path_buf(),
        permission_mode: None,
        data,
    }
}

fn pre_tool(cwd: &Path, tool: &str, args: Value) -> HookInput {
    input(cwd, EventData::PreToolUse { tool_name: tool.into(), tool_input: args })
}

/// Hooks from an axon TOML `[hooks]` table written in `dir/config.toml`.
fn toml_hooks(dir: &Path, text: &str) -> Hooks {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    Hooks::load(&[HookFile { path, format: SourceFormat::AxonToml, workspace: false }]).unwrap()
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn exit_two_blocks_a_tool_call_with_stderr_as_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let guard =
        script(dir.path(), "guard.sh", "echo 'no rm here' >&2\necho 'ignored stdout'\nexit 2\n");
    let hooks = toml_hooks(
        dir.path(),
        &format!("[[hooks.PreToolUse]]\nmatcher = \"shell\"\ncommand = \"{}\"\n", guard.display()),
    );
    let outcome = hooks.run(&pre_tool(dir.path(), "shell", json!({"command": "rm -rf /"}))).await;
    assert_eq!(outcome.blocked.as_deref(), Some("no rm here"));
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    // Another tool is not matched: nothing runs, nothing is said.
    let other = hooks.run(&pre_tool(dir.path(), "read_file", json!({"path": "a"}))).await;
    assert!(other.is_empty(), "{other:?}");
}

#[tokio::test]
async fn a_json_reply_denies_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        r#"
        [[hooks.PreToolUse]]
        matcher = "write_file|edit_file"
        hooks = [{ type = "command", command = '''cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"read-only today"},"systemMessage":"a write was refused"}' ''' }]
        "#,
    );
    let outcome = hooks.run(&pre_tool(dir.path(), "write_file", json!({"path": "a"}))).await;
    assert_eq!(outcome.permission, Some(Permission::Deny("read-only today".into())));
    assert_eq!(outcome.system_messages, vec!["a write was refused"]);
    assert_eq!(outcome.blocked, None);
}

#[tokio::test]
async fn a_post_tool_hook_reads_the_event_on_stdin_in_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.PostToolUse]]\ncommand = 'cat > seen.json; pwd > pwd.txt; echo \"$AXON_WORKSPACE|$CLAUDE_PROJECT_DIR\" > env.txt'\n",
    );
    let post = input(
        dir.path(),
        EventData::PostToolUse {
            tool_name: "shell".into(),
            tool_input: json!({"command": "ls"}),
            tool_response: json!({"output": "a.txt\n", "is_error": false}),
        },
    );
    let outcome = hooks.run(&post).await;
    assert!(outcome.is_empty(), "{outcome:?}");
    let seen = read_json(&dir.path().join("seen.json"));
    assert_eq!(seen["hook_event_name"], "PostToolUse");
    assert_eq!(seen["session_id"], "s-1");
    assert_eq!(seen["tool_name"], "shell");
    assert_eq!(seen["tool_input"], json!({"command": "ls"}));
    assert_eq!(seen["tool_response"], json!({"output": "a.txt\n", "is_error": false}));
    assert_eq!(seen["cwd"], dir.path().display().to_string());
    assert_eq!(seen["transcript_path"], Value::Null);
    let pwd = std::fs::read_to_string(dir.path().join("pwd.txt")).unwrap();
    assert_eq!(
        std::fs::canonicalize(pwd.trim()).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    let env = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
    let root = dir.path().display();
    assert_eq!(env.trim(), format!("{root}|{root}"));
}

#[tokio::test]
async fn a_claude_settings_hook_on_bash_runs_for_shell_in_claude_s_dialect() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".claude")).unwrap();
    std::fs::write(
        work.path().join(".claude/settings.json"),
        r#"{
          "permissions": { "allow": ["Bash(ls:*)"] },
          "hooks": {
            "PreToolUse": [
              { "matcher": "Bash", "hooks": [ { "type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/bash.json\"", "timeout": 60 } ] },
              { "matcher": "Edit|Write", "hooks": [ { "type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/edit.json\"" } ] }
            ],
            "PermissionRequest": [ { "hooks": [ { "type": "command", "command": "true" } ] } ]
          }
        }"#,
    )
    .unwrap();
    let hooks = Hooks::load(&claude_settings_files(work.path(), Some(home.path()))).unwrap();
    assert_eq!(hooks.warnings().len(), 1, "{:?}", hooks.warnings());
    assert!(hooks.warnings()[0].contains("settings.json"));
    let listed = hooks.list();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].matcher, "Bash");
    assert_eq!(listed[0].timeout, Duration::from_secs(60));
    assert_eq!(listed[1].timeout, Duration::from_secs(axon_hooks::DEFAULT_TIMEOUT_SECS));
    assert_eq!(
        listed[0].source,
        HookSource {
            path: work.path().join(".claude/settings.json"),
            workspace: true,
            format: SourceFormat::ClaudeSettings
        }
    );

    let outcome = hooks.run(&pre_tool(work.path(), "shell", json!({"command": "ls"}))).await;
    assert!(outcome.is_empty(), "{outcome:?}");
    let seen = read_json(&work.path().join("bash.json"));
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(seen["tool_input"]["command"], "ls");
    assert!(!work.path().join("edit.json").exists());

    let edit = json!({"path": "src/a.rs", "old_str": "a", "new_str": "b"});
    hooks.run(&pre_tool(work.path(), "edit_file", edit)).await;
    let seen = read_json(&work.path().join("edit.json"));
    assert_eq!(seen["tool_name"], "Edit");
    assert_eq!(seen["tool_input"]["file_path"], work.path().join("src/a.rs").display().to_string());
    assert_eq!(seen["tool_input"]["old_string"], "a");
    assert_eq!(seen["tool_input"]["path"], "src/a.rs");
}

#[tokio::test]
async fn user_hooks_load_before_workspace_hooks_and_missing_files_are_fine() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for (root, command) in [(work.path(), "echo workspace"), (home.path(), "echo user")] {
        std::fs::create_dir(root.join(".claude")).unwrap();
        let settings =
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}});
        std::fs::write(root.join(".claude/settings.local.json"), "{}").unwrap();
        std::fs::write(root.join(".claude/settings.json"), settings.to_string()).unwrap();
    }
    let hooks = Hooks::load(&claude_settings_files(work.path(), Some(home.path()))).unwrap();
    let commands: Vec<_> =
        hooks.list().into_iter().map(|e| (e.command, e.source.workspace)).collect();
    assert_eq!(
        commands,
        vec![("echo user".to_string(), false), ("echo workspace".to_string(), true)]
    );

    let mut consented = hooks.clone();
    consented.retain(|source| !source.workspace);
    assert_eq!(consented.list().len(), 1);
    assert_eq!(hooks.sources().len(), 2);

    let nothing = tempfile::tempdir().unwrap();
    let empty = Hooks::load(&claude_settings_files(nothing.path(), Some(nothing.path()))).unwrap();
    assert!(empty.is_empty());
}

#[tokio::test]
async fn a_malformed_settings_file_is_an_error_naming_it() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".claude")).unwrap();
    let path = work.path().join(".claude/settings.local.json");
    std::fs::write(&path, "{ \"hooks\": { \"Stop\": [ }").unwrap();
    let error = Hooks::load(&claude_settings_files(work.path(), None)).unwrap_err();
    assert!(error.to_string().contains(&path.display().to_string()), "{error}");

    std::fs::write(&path, r#"{ "hooks": { "Stop": [ { "hooks": [ { "command": 7 } ] } ] } }"#)
        .unwrap();
    let error = Hooks::load(&claude_settings_files(work.path(), None)).unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("hooks.Stop[0].hooks[0].command"), "{error}");
}

#[tokio::test]
async fn other_exit_codes_are_warnings_and_the_step_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.PreToolUse]]\ncommand = 'echo \"lint failed\" >&2; exit 1'\n\n\
         [[hooks.PreToolUse]]\ncommand = 'kill -9 $$'\n\n\
         [[hooks.PreToolUse]]\ncommand = 'no-such-command-for-hooks'\n",
    );
    let outcome = hooks.run(&pre_tool(dir.path(), "shell", json!({"command": "ls"}))).await;
    assert_eq!(outcome.blocked, None);
    assert_eq!(outcome.permission, None);
    assert_eq!(outcome.warnings.len(), 3, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings[0].contains("exited with code 1: lint failed"),
        "{:?}",
        outcome.warnings
    );
    assert!(outcome.warnings[0].contains("config.toml"));
    assert!(outcome.warnings[1].contains("killed by a signal"));
    assert!(outcome.warnings[2].contains("exited with code 127"));
}

#[tokio::test]
async fn plain_stdout_of_a_prompt_hook_is_context_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.UserPromptSubmit]]\ncommand = 'p=$(cat); echo \"branch: main\"'\n\n\
         [[hooks.UserPromptSubmit]]\ncommand = 'grep -q secret && { echo \"no secrets\" >&2; exit 2; }; exit 0'\n",
    );
    let prompt =
        |text: &str| input(dir.path(), EventData::UserPromptSubmit { prompt: text.into() });
    let outcome = hooks.run(&prompt("fix the bug")).await;
    assert_eq!(outcome.additional_context, vec!["branch: main"]);
    assert_eq!(outcome.blocked, None);
    let outcome = hooks.run(&prompt("print the secret")).await;
    assert_eq!(outcome.blocked.as_deref(), Some("no secrets"));
    assert_eq!(outcome.additional_context, vec!["branch: main"]);
}

#[tokio::test]
async fn stop_hooks_are_told_when_a_stop_was_already_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        r#"
        [[hooks.Stop]]
        command = '''grep -q '"stop_hook_active":true' || echo '{"decision":"block","reason":"run the tests first"}' '''
        [[hooks.PreCompact]]
        matcher = "manual"
        command = "cat > compact.json"
        "#,
    );
    let stop = |again| {
        input(
            dir.path(),
            EventData::Stop {
                stop_hook_active: again,
                last_assistant_message: Some("done".into()),
            },
        )
    };
    assert_eq!(hooks.run(&stop(false)).await.blocked.as_deref(), Some("run the tests first"));
    assert!(hooks.run(&stop(true)).await.is_empty());

    let compact =
        |trigger| input(dir.path(), EventData::PreCompact { trigger, custom_instructions: None });
    hooks.run(&compact(CompactTrigger::Auto)).await;
    assert!(!dir.path().join("compact.json").exists());
    hooks.run(&compact(CompactTrigger::Manual)).await;
    assert_eq!(read_json(&dir.path().join("compact.json"))["trigger"], "manual");
}

#[tokio::test]
async fn matching_hooks_run_at_once() {
    // Each waits for the other's file: only concurrent runs finish both.
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.Stop]]\ntimeout = 120\ncommand = 'touch a; while [ ! -f b ]; do sleep 0.05; done; echo \"{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"A\\\"}\"'\n\n\
         [[hooks.Stop]]\ntimeout = 120\ncommand = 'touch b; while [ ! -f a ]; do sleep 0.05; done; echo B >&2; exit 2'\n",
    );
    let outcome = hooks
        .run(&input(
            dir.path(),
            EventData::Stop { stop_hook_active: false, last_assistant_message: None },
        ))
        .await;
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(outcome.blocked.as_deref(), Some("A\nB"));
}

#[tokio::test]
async fn a_chatty_hook_is_capped_and_does_not_stall() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.SessionStart]]\ncommand = 'head -c 3000000 /dev/zero | tr \"\\\\0\" x; head -c 3000000 /dev/zero >&2'\n",
    );
    let start =
        input(dir.path(), EventData::SessionStart { source: axon_hooks::SessionSource::Startup });
    let outcome = hooks.run(&start).await;
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(outcome.additional_context.len(), 1);
    assert_eq!(outcome.additional_context[0].len(), axon_hooks::OUTPUT_CAP);
}

/// Whether process `pid` is gone (or a zombie waiting to be reaped).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        }
    }
}

#[tokio::test]
async fn a_hanging_hook_is_killed_at_its_timeout_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = toml_hooks(
        dir.path(),
        "[[hooks.PreToolUse]]\ntimeout = 5\ncommand = 'sleep 600 & echo $! > child.pid; sleep 600'\n",
    );
    // 5 s: room for a busy machine to start the shell and write the pid.
    let outcome = hooks.run(&pre_tool(dir.path(), "shell", json!({"command": "ls"}))).await;
    assert_eq!(outcome.blocked, None);
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(outcome.warnings[0].contains("timed out after 5 s"), "{:?}", outcome.warnings);
    let pid: i32 =
        std::fs::read_to_string(dir.path().join("child.pid")).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !gone(pid) {
        if Instant::now() > deadline {
            // Do not leave it behind, then fail.
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("the hook's child {pid} outlived its timeout");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn axon_toml_configs_are_added_with_their_source() {
    let value: toml::Value =
        toml::from_str("[[PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"x\"\n").unwrap();
    let config = HooksConfig::from_toml_value(&value).unwrap();
    let mut hooks = Hooks::new();
    let source = HookSource {
        path: PathBuf::from("/w/.axon/config.toml"),
        workspace: true,
        format: SourceFormat::AxonToml,
    };
    hooks.add_config(&config, source.clone());
    let listed = hooks.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].source, source);
    assert!(hooks.has(axon_hooks::HookEvent::PreToolUse));
    assert!(!hooks.has(axon_hooks::HookEvent::Stop));
}
