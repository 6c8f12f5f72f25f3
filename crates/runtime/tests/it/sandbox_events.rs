//! Sandboxed commands and standing permissions, end to end with the
//! scripted model: what runs unasked, what is asked even under `--yes`,
//! what an "always" saves and where, and what the model is told.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_core::ApprovalPolicy;
use axon_protocol::{AgentEvent, ApprovalDecision, Op, Preview};
use axon_testkit::Reply;
use serde_json::json;

/// The outputs the model was given, in order.
fn outputs(seen: &[AgentEvent]) -> Vec<(String, bool)> {
    seen.iter()
        .filter_map(|event| match event {
            AgentEvent::Observation { output, .. } => {
                Some((output.text_content(), output.is_error))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_sandboxed_command_runs_unasked_and_the_network_off_is_explained() {
    runtime().block_on(async {
        // A listener the command would reach if the network were on.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reach = format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
        );
        let curl = format!("curl -sS --max-time 30 http://127.0.0.1:{port}/");
        let rig = Rig::new(vec![
            Reply::tool("shell", json!({"command": "cargo --version"})),
            Reply::tool("shell", json!({"command": reach})),
            Reply::tool("shell", json!({"command": curl})),
            Reply::text("The network is off here."),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        let opened = opened(&mut events);
        let sandbox = opened.iter().find_map(|event| match event {
            AgentEvent::SessionStarted { session } => session.sandbox.clone(),
            _ => None,
        });
        let sandbox = sandbox.expect("a code session reports its sandbox");
        assert!(sandbox.enforced, "this machine enforces the sandbox: {sandbox:?}");
        session.submit(user("what cargo is there, and can you reach the server?"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(
            !seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
            "a sandboxed command is not asked about"
        );
        let outputs = outputs(&seen);
        assert_eq!(outputs.len(), 3, "{outputs:?}");
        assert!(!outputs[0].1 && outputs[0].0.contains("cargo "), "{outputs:?}");
        let (text, failed) = &outputs[1];
        assert!(*failed, "{text}");
        assert!(text.contains("Operation not permitted"), "{text}");
        assert!(text.contains("The network is off in the sandbox"), "{text}");
        assert!(text.contains("unsandboxed: true"), "{text}");
        // curl too: it fails, and the model is told the network is off.
        let (text, failed) = &outputs[2];
        assert!(*failed && text.contains("curl: ("), "{text}");
        assert!(text.contains("The network is off in the sandbox"), "{text}");
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "nothing reached the listener");
    });
}

#[test]
fn leaving_the_sandbox_is_asked_every_time_whatever_the_rules_and_policy() {
    runtime().block_on(async {
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped.txt");
        let command = format!("echo outside > '{}'", escaped.display());
        let rig = Rig::new(vec![
            Reply::tool("shell", json!({"command": command, "unsandboxed": true})),
            Reply::tool("shell", json!({"command": "echo again", "unsandboxed": true})),
            Reply::tool("shell", json!({"command": "echo third", "unsandboxed": true})),
            Reply::text("Done."),
        ])
        .await;
        // The user allows `echo` commands, and every call by policy, and
        // chose to be asked about leaving the sandbox under --yes: an allow
        // rule still never lets a command out of the sandbox unasked.
        let config_file = rig.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config_file).unwrap();
        text.push_str("[permissions]\nallow = [\"shell(echo:*)\"]\n");
        text = with_sandbox_setting(&text, "unsandboxed_under_yes = \"ask\"");
        std::fs::write(&config_file, text).unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("write outside"));
        let mut rules = Vec::new();
        let seen = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, preview, rule } => {
                assert!(
                    matches!(preview, Preview::Command { sandbox: None, .. }),
                    "the question says it runs unsandboxed: {preview:?}"
                );
                rules.push(rule.clone());
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Always })
            }
            _ => None,
        })
        .await;
        session.shutdown().await;
        // Asked all three times; no rule is offered, since none could cover it.
        assert_eq!(rules, [None, None, None]);
        let outputs = outputs(&seen);
        assert!(outputs.iter().all(|(_, failed)| !failed), "{outputs:?}");
        assert_eq!(std::fs::read_to_string(&escaped).unwrap(), "outside\n");
        // The trust file records that a session ran here, but no rule.
        let trust = axon_permissions::Trust::load(
            &rig.home.path().join("data"),
            &rig.workspace.path().canonicalize().unwrap(),
        )
        .unwrap();
        assert!(trust.yes_baseline, "the session ran here is not recorded (the wrong file?)");
        assert!(trust.allow.is_empty(), "a rule was saved: {:?}", trust.allow);
    });
}

#[test]
fn always_saves_the_offered_rule_outside_the_workspace_and_it_applies_at_once() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "notes.md", "content": "one\n"})),
            Reply::tool("write_file", json!({"path": "notes.md", "content": "two\n"})),
            Reply::text("Done."),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("write the notes twice"));
        let mut rules = Vec::new();
        until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, rule, .. } => {
                rules.push(rule.clone());
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Always })
            }
            _ => None,
        })
        .await;
        session.shutdown().await;
        assert_eq!(rules.len(), 1, "the second write is covered by the saved rule: {rules:?}");
        let rule = rules[0].clone().expect("a rule is offered for a write");
        assert_eq!(rule.rules, ["write_file(notes.md)"]);
        assert_eq!(
            std::fs::read_to_string(rig.workspace.path().join("notes.md")).unwrap(),
            "two\n"
        );
        // In the trust file under the data folder, not in the workspace.
        let trust = std::fs::read_dir(rig.home.path().join("data").join("trust"))
            .unwrap()
            .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
            .collect::<String>();
        assert!(trust.contains("write_file(notes.md)"), "{trust}");
        assert!(!rig.workspace.path().join(".axon").exists());
    });
}

#[test]
fn without_anyone_to_ask_a_command_outside_the_sandbox_is_refused() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("shell", json!({"command": "echo hi", "unsandboxed": true})),
            Reply::text("I may not."),
        ])
        .await;
        let mut config = rig.config();
        config.interactive = false;
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("say hi outside"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let outputs = outputs(&seen);
        assert!(outputs[0].1, "{outputs:?}");
        // --yes by default refuses, naming the setting that allows it.
        assert!(outputs[0].0.contains("--yes allows sandboxed commands"), "{outputs:?}");
        assert!(outputs[0].0.contains("unsandboxed_under_yes = \"allow\""), "{outputs:?}");
    });
}

/// `config` (a config file's text) with `line` added to its `[sandbox]`
/// table, which is created when missing.
fn with_sandbox_setting(config: &str, line: &str) -> String {
    match config.find("[sandbox]\n") {
        Some(at) => {
            let end = at + "[sandbox]\n".len();
            format!("{}{line}\n{}", &config[..end], &config[end..])
        }
        None => format!("{config}\n[sandbox]\n{line}\n"),
    }
}

#[test]
fn under_yes_leaving_the_sandbox_follows_the_users_setting() {
    runtime().block_on(async {
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped.txt");
        let command = format!("echo outside > '{}'", escaped.display());
        for (setting, runs) in [(None, false), (Some("allow"), true), (Some("refuse"), false)] {
            let rig = Rig::new(vec![
                Reply::tool("shell", json!({"command": command, "unsandboxed": true})),
                Reply::text("Done."),
            ])
            .await;
            if let Some(setting) = setting {
                let config_file = rig.home.path().join("config.toml");
                let text = std::fs::read_to_string(&config_file).unwrap();
                let line = format!("unsandboxed_under_yes = \"{setting}\"");
                std::fs::write(&config_file, with_sandbox_setting(&text, &line)).unwrap();
            }
            let mut config = rig.config();
            config.approval = Some(ApprovalPolicy::Auto);
            let (session, mut events) = rig.open(config).await;
            opened(&mut events);
            session.submit(user("write outside"));
            let seen = until_turn_end(&session, &mut events, |event| match event {
                AgentEvent::ApprovalRequested { .. } => panic!("{setting:?}: nobody is asked"),
                _ => None,
            })
            .await;
            session.shutdown().await;
            let outputs = outputs(&seen);
            assert_eq!(!outputs[0].1, runs, "{setting:?}: {outputs:?}");
            assert_eq!(escaped.exists(), runs, "{setting:?}");
            if !runs {
                assert!(outputs[0].0.contains("unsandboxed_under_yes"), "{outputs:?}");
            }
            let _ = std::fs::remove_file(&escaped);
        }
    });
}

#[test]
fn deny_rules_hold_for_reads_and_for_paths_behind_a_symlink() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("read_file", json!({"path": ".env"})),
            Reply::tool("write_file", json!({"path": "src/e", "content": "KEY=stolen\n"})),
            Reply::tool("write_file", json!({"path": "src/ok.txt", "content": "fine\n"})),
            Reply::text("Done."),
        ])
        .await;
        let root = rig.workspace.path();
        std::fs::write(root.join(".env"), "KEY=secret\n").unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink("../.env", root.join("src/e")).unwrap();
        let config_file = rig.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config_file).unwrap();
        text.push_str(
            "[permissions]\nallow = [\"write_file(src/**)\"]\ndeny = [\"read_file(.env)\", \"write_file(.env)\"]\n",
        );
        std::fs::write(&config_file, text).unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("look at the secrets"));
        let seen = until_turn_end(&session, &mut events, |event| {
            assert!(
                !matches!(event, AgentEvent::ApprovalRequested { .. }),
                "nothing here should be asked: {event:?}"
            );
            None
        })
        .await;
        session.shutdown().await;
        let outputs = outputs(&seen);
        assert_eq!(outputs.len(), 3, "{outputs:?}");
        assert!(outputs[0].1 && outputs[0].0.contains("deny \"read_file(.env)\""), "{outputs:?}");
        assert!(!outputs[0].0.contains("secret"), "{outputs:?}");
        // src/e is allowed as written, but it is .env: the deny wins.
        assert!(outputs[1].1 && outputs[1].0.contains("deny \"write_file(.env)\""), "{outputs:?}");
        assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), "KEY=secret\n");
        // The allow rule covers the plain file: written unasked.
        assert!(!outputs[2].1, "{outputs:?}");
        assert_eq!(std::fs::read_to_string(root.join("src/ok.txt")).unwrap(), "fine\n");
    });
}

#[test]
fn a_patch_is_refused_whole_when_one_of_its_files_is_denied_even_behind_a_symlink() {
    runtime().block_on(async {
        let both = "*** Begin Patch\n*** Update File: src/ok.txt\n@@\n-one\n+two\n\
                    *** Update File: src/e\n@@\n-KEY=secret\n+KEY=stolen\n*** End Patch";
        let fine = "*** Begin Patch\n*** Update File: src/ok.txt\n@@\n-one\n+two\n\
                    *** Add File: src/new.txt\n+new\n*** End Patch";
        let rig = Rig::new(vec![
            Reply::tool("apply_patch", json!({ "input": both })),
            Reply::tool("apply_patch", json!({ "input": fine })),
            Reply::text("Done."),
        ])
        .await;
        let root = rig.workspace.path();
        std::fs::write(root.join(".env"), "KEY=secret\n").unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/ok.txt"), "one\n").unwrap();
        std::os::unix::fs::symlink("../.env", root.join("src/e")).unwrap();
        let config_file = rig.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config_file).unwrap();
        text.push_str(
            "[permissions]\nallow = [\"edit_file(src/**)\"]\ndeny = [\"edit_file(.env)\"]\n",
        );
        std::fs::write(&config_file, text).unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("patch things"));
        let seen = until_turn_end(&session, &mut events, |event| {
            assert!(
                !matches!(event, AgentEvent::ApprovalRequested { .. }),
                "nothing here should be asked: {event:?}"
            );
            None
        })
        .await;
        session.shutdown().await;
        let outputs = outputs(&seen);
        assert_eq!(outputs.len(), 2, "{outputs:?}");
        // src/e is allowed as written, but it is .env: the whole patch is refused.
        assert!(outputs[0].1 && outputs[0].0.contains("deny \"edit_file(.env)\""), "{outputs:?}");
        assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), "KEY=secret\n");
        // Every file allowed: applied unasked.
        assert!(!outputs[1].1, "{outputs:?}");
        assert_eq!(std::fs::read_to_string(root.join("src/ok.txt")).unwrap(), "two\n");
        assert_eq!(std::fs::read_to_string(root.join("src/new.txt")).unwrap(), "new\n");
    });
}

#[test]
fn a_background_command_is_killed_when_its_session_ends() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool(
                "shell",
                json!({"command": "echo pid=$$ > pid.txt; sleep 1000", "background": true}),
            ),
            Reply::text("Started."),
        ])
        .await;
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("start it"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        let outputs = outputs(&seen);
        assert!(outputs[0].0.starts_with("Started in the background as bg1"), "{outputs:?}");
        let pid_file = rig.workspace.path().join("pid.txt");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let pid: u32 = loop {
            let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
            if let Some(pid) = text.trim().strip_prefix("pid=").and_then(|p| p.parse().ok()) {
                break pid;
            }
            assert!(std::time::Instant::now() < deadline, "the command never started");
            tokio::task::yield_now().await;
        };
        let alive = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z')
            })
        };
        assert!(alive(pid));
        // The session ends; axon (this test process) goes on.
        session.shutdown().await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while alive(pid) {
            assert!(std::time::Instant::now() < deadline, "{pid} outlived its session");
            tokio::task::yield_now().await;
        }
    });
}

#[test]
fn a_read_deny_rule_holds_for_search_too() {
    // Issue 30 §2.12: `search` returned a .env line despite read_file(.env).
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("search", json!({"query": "KEY="})),
            Reply::tool("search", json!({"query": "KEY=", "path": ".env"})),
            Reply::text("Done."),
        ])
        .await;
        let root = rig.workspace.path();
        std::fs::write(root.join(".env"), "KEY=hunter2-secret\n").unwrap();
        std::fs::write(root.join("notes.txt"), "KEY=documented\n").unwrap();
        let config_file = rig.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config_file).unwrap();
        text.push_str("[permissions]\ndeny = [\"read_file(.env)\"]\n");
        std::fs::write(&config_file, text).unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("find the keys"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let outputs = outputs(&seen);
        assert_eq!(outputs.len(), 2, "{outputs:?}");
        assert!(!outputs[0].1 && outputs[0].0.contains("documented"), "{outputs:?}");
        for (text, _) in &outputs {
            assert!(!text.contains("hunter2"), "the denied file came back: {outputs:?}");
        }
        assert!(outputs[1].1 && outputs[1].0.contains("deny reading .env"), "{outputs:?}");
    });
}

#[test]
fn a_write_the_jail_refuses_is_not_asked_about() {
    // Issue 30 §2.12: ACP asked approval for writes the jail then refused.
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "../outside.txt", "content": "x\n"})),
            Reply::tool("write_file", json!({"path": "inside.txt", "content": "x\n"})),
            Reply::text("Done."),
        ])
        .await;
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Ask);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("write"));
        let mut asked = Vec::new();
        let seen = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                asked.push(call.arguments["path"].clone());
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Once })
            }
            _ => None,
        })
        .await;
        session.shutdown().await;
        assert_eq!(asked, [json!("inside.txt")], "only the write that can happen is asked");
        let outputs = outputs(&seen);
        assert!(outputs[0].1 && outputs[0].0.contains("outside"), "{outputs:?}");
        assert!(!outputs[1].1, "{outputs:?}");
    });
}
