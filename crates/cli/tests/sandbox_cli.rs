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
