//! `axon sandbox check`, `axon sandbox run` and the sandbox in `axon config
//! show`, through the binary. This machine (and CI) has Landlock; the tests
//! say so and stop on one that does not, unless `CI` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

fn axon(dir: &std::path::Path, home: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AXON_HOME", home.join("axon"))
        .current_dir(dir)
        .timeout(Duration::from_secs(60));
    cmd
}

fn enforced() -> bool {
    let policy = axon_sandbox::Policy::new(axon_sandbox::Mode::WorkspaceWrite, "/w", "/t");
    match axon_sandbox::probe().can_enforce(&policy) {
        Ok(()) => true,
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "CI must run the sandbox tests: {why}");
            eprintln!("skipped: {why}");
            false
        }
    }
}

#[test]
fn check_says_what_is_enforced_and_tries_it() {
    if !enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    axon(dir.path(), home.path())
        .args(["sandbox", "check"])
        .assert()
        .success()
        .stdout(contains("Landlock: ABI"))
        .stdout(contains("mode: workspace-write, network off"))
        .stdout(contains("enforced: a workspace-write command was tried here"));
    axon(dir.path(), home.path())
        .args(["sandbox", "check", "--sandbox", "off"])
        .assert()
        .success()
        .stdout(contains("unsandboxed"));
    axon(dir.path(), home.path())
        .args(["sandbox", "check", "--sandbox", "strict"])
        .assert()
        .code(2)
        .stderr(contains("use read-only, workspace-write or off"));
}

#[test]
fn run_runs_a_command_as_the_tool_would() {
    if !enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    axon(dir.path(), home.path())
        .args(["sandbox", "run", "--", "echo hi > made && cat made"])
        .assert()
        .success()
        .stdout(contains("hi"))
        .stderr(contains("running sandboxed (workspace-write, network off)"));
    axon(dir.path(), home.path())
        .args(["sandbox", "run", "--", &format!("echo x > '{}'", target.display())])
        .assert()
        .failure()
        .stderr(contains("Permission denied"));
    assert!(!target.exists());
    // Words are quoted back into one command line.
    axon(dir.path(), home.path())
        .args(["sandbox", "run", "--", "printf", "%s\\n", "a b", "c;d"])
        .assert()
        .success()
        .stdout(contains("a b\nc;d\n"));
    // read-only: the workspace is not writable either.
    axon(dir.path(), home.path())
        .args(["sandbox", "run", "--sandbox", "read-only", "--", "touch made2"])
        .assert()
        .failure();
    assert!(!dir.path().join("made2").exists());
}

#[test]
fn config_show_prints_the_sandbox_and_the_rules_with_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("axon")).unwrap();
    std::fs::write(
        home.path().join("axon/config.toml"),
        "[sandbox]\nnetwork = true\n[permissions]\nallow = [\"shell(cargo test:*)\"]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join(".axon")).unwrap();
    std::fs::write(
        dir.path().join(".axon/config.toml"),
        "[sandbox]\nmode = \"off\"\n[permissions]\nallow = [\"shell\"]\ndeny = [\"shell(rm:*)\"]\n",
    )
    .unwrap();
    axon(dir.path(), home.path())
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(contains("mode = \"workspace-write\""))
        .stdout(contains("network = true"))
        .stdout(contains("# allow \"shell(cargo test:*)\"  from"))
        .stdout(contains("# deny \"shell(rm:*)\"  from"))
        .stdout(contains("may not set sandbox.mode = \"off\""))
        .stdout(contains("may not set permissions.allow \"shell\""))
        .stdout(contains("# trust file:"))
        .stdout(contains("# allow \"shell\"").not());
    // A rule that does not parse names itself and its file.
    std::fs::write(home.path().join("axon/config.toml"), "[permissions]\ndeny = [\"shell(\"]\n")
        .unwrap();
    axon(dir.path(), home.path())
        .args(["run", "hi"])
        .env("OPENAI_API_KEY", "sk-test")
        // Never the internet: a closed loopback port if anything were sent.
        .env("AXON_BASE_URL", "http://127.0.0.1:9/v1")
        .assert()
        .failure()
        .stderr(contains("shell("))
        .stderr(contains("config.toml"));
}

/// A `git init`ed workspace with one commit.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "hi\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "."], &["commit", "-qm", "first"]] {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    dir
}

#[test]
fn check_says_which_confinement_and_why() {
    if !enforced() {
        return;
    }
    let dir = repository();
    let home = tempfile::tempdir().unwrap();
    let support = axon_sandbox::probe();
    let expected = match support.namespaces {
        Some(_) => "confinement: mount namespace".to_string(),
        None => {
            eprintln!("no mount namespace here: checking that check says Landlock-only and why");
            "confinement: Landlock-only (no mount namespace: ".to_string()
        }
    };
    axon(dir.path(), home.path())
        .args(["sandbox", "check"])
        .assert()
        .success()
        .stdout(contains(expected))
        .stdout(contains("enforced: a workspace-write command was tried here"));
}

#[test]
fn mount_namespace_false_keeps_the_landlock_only_mode() {
    if !enforced() {
        return;
    }
    let dir = repository();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("axon")).unwrap();
    std::fs::write(home.path().join("axon/config.toml"), "[sandbox]\nmount_namespace = false\n")
        .unwrap();
    axon(dir.path(), home.path())
        .args(["sandbox", "check"])
        .assert()
        .success()
        .stdout(contains("confinement: Landlock-only (the mount namespace is turned off"))
        .stdout(contains("git commit` fail"));
    axon(dir.path(), home.path())
        .args(["sandbox", "run", "--", "touch NEW.md"])
        .assert()
        .failure()
        .stderr(contains("Permission denied"));
    assert!(!dir.path().join("NEW.md").exists());
}

#[test]
fn tool_call_shell_runs_sandboxed_and_says_why_it_was_refused() {
    if !enforced() {
        return;
    }
    let dir = repository();
    let home = tempfile::tempdir().unwrap();
    let before = std::fs::read(dir.path().join(".git/config")).unwrap();
    // Before the fix this ran unconfined and the write landed.
    let plant = r#"{"command": "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config"}"#;
    axon(dir.path(), home.path())
        .args(["tool", "call", "shell", plant])
        .assert()
        .failure()
        // The first line names the rule, not only the exit code.
        .stderr(contains("; the sandbox may have refused it: "))
        .stderr(contains("protected entr").or(contains("Landlock-only")))
        .stderr(contains("--sandbox off"))
        .stderr(contains("writable_roots"));
    assert_eq!(std::fs::read(dir.path().join(".git/config")).unwrap(), before);
    axon(dir.path(), home.path())
        .args(["tool", "call", "shell", r#"{"command": "true", "unsandboxed": true}"#])
        .assert()
        .failure()
        .stderr(contains("cannot be approved through axon tool call"));
    // The user's explicit --sandbox off runs it unconfined.
    axon(dir.path(), home.path())
        .args([
            "tool",
            "call",
            "shell",
            "--sandbox",
            "off",
            r#"{"command": "echo '#x' >> .git/config"}"#,
        ])
        .assert()
        .success();
    assert_ne!(std::fs::read(dir.path().join(".git/config")).unwrap(), before);
}

#[test]
fn sandbox_run_commits_in_a_repository() {
    if !enforced() {
        return;
    }
    let dir = repository();
    let home = tempfile::tempdir().unwrap();
    let work = "touch NEW.md && rm README.md && git add -A && \
                git -c user.name=t -c user.email=t@t commit -qm second && git log --format=%s";
    let assert = axon(dir.path(), home.path()).args(["sandbox", "run", "--", work]).assert();
    if axon_sandbox::probe().namespaces.is_none() {
        eprintln!("no mount namespace here: the Landlock-only price (no new top-level file)");
        assert.failure();
        return;
    }
    assert.success().stdout(contains("second\nfirst"));
}

/// The `axon-sandbox-*` folders in `tmp`.
fn sandbox_temps(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("axon-sandbox-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn the_sandboxs_temp_folder_does_not_outlive_axon_however_it_ends() {
    // A day of tests here had left about 3,000 `axon-sandbox-*` folders in
    // /tmp: SIGTERM and SIGHUP end axon through process::exit (no
    // destructors), SIGKILL through nothing.
    use axon_testkit::Reply;
    use serde_json::json;
    if !enforced() {
        return;
    }
    let long = || Reply::tool("shell", json!({"command": "sleep 120"}));
    let s = crate::common::setup(vec![long(), long(), Reply::text("done")]);
    let tmp = tempfile::tempdir().unwrap();
    let start = || {
        let mut cmd = s.std_command();
        cmd.env("TMPDIR", tmp.path()).args(["run", "--yes", "wait"]);
        cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        cmd.spawn().unwrap()
    };
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGKILL, "SIGKILL")] {
        let mut axon = start();
        assert!(
            crate::common::eventually(|| !sandbox_temps(tmp.path()).is_empty()),
            "{name}: the session made no sandbox temp folder in $TMPDIR"
        );
        let pid = libc::pid_t::try_from(axon.id()).unwrap();
        // SAFETY: signals the child this test started.
        #[allow(unsafe_code)]
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0);
        axon.wait().unwrap();
        if signal == libc::SIGTERM {
            let left = sandbox_temps(tmp.path());
            assert!(left.is_empty(), "SIGTERM left {left:?}");
        }
    }
    // SIGKILL left its folder; the next axon removes it, as the pid that
    // made it runs no more.
    let left = sandbox_temps(tmp.path());
    assert_eq!(left.len(), 1, "{left:?}");
    let mut cmd = s.std_command();
    let output = cmd
        .env("TMPDIR", tmp.path())
        .args(["tool", "call", "shell", r#"{"command":"true"}"#])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let after = sandbox_temps(tmp.path());
    assert!(!after.contains(&left[0]), "the killed axon's folder stayed: {after:?}");
    assert!(after.is_empty(), "axon tool call left its own: {after:?}");
}
