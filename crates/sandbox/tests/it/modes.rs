//! The other modes and settings: `read-only`, the network on (TCP and Unix
//! sockets), `off`; what
//! `prepare` refuses and how it says so; the hook on a command spawned
//! twice and on a tokio command; and `self_test`/`describe` on this
//! machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::net::TcpListener;
use std::process::Command;

use crate::common::{Sandbox, assert_ok, assert_refused, python_errno, stderr, stdout};
use axon_sandbox::{Mode, Policy, Prepared, SandboxError, prepare, probe, self_test};

#[test]
fn read_only_refuses_workspace_writes_but_not_tmpdir() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::ReadOnly);
    assert_refused(&sandbox.sh("echo x > src/new.rs"), "a write in the workspace");
    assert_refused(&sandbox.sh("echo x >> README.md"), "an append to a workspace file");
    assert_refused(&sandbox.sh(": > README.md"), "truncating a workspace file");
    assert!(!sandbox.path("src/new.rs").exists());
    assert_eq!(std::fs::read_to_string(sandbox.path("README.md")).unwrap(), "hello\n");
    assert_ok(&sandbox.sh("echo x > \"$TMPDIR/f\""), "a write in $TMPDIR");
    assert!(sandbox.policy.temp.join("f").exists());
    // Reading stays possible.
    assert_eq!(stdout(&sandbox.sh("cat README.md")), "hello");
}

#[test]
fn read_only_ignores_writable_roots() {
    require_landlock!();
    let mut sandbox = Sandbox::plain(Mode::ReadOnly);
    let extra = tempfile::tempdir().unwrap();
    sandbox.policy.writable_roots.push(extra.path().to_path_buf());
    assert_refused(&sandbox.sh(&format!("echo x > {}/f", extra.path().display())), "a write");
}

#[test]
fn writable_roots_are_writable_in_workspace_write() {
    require_landlock!();
    let mut sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let extra = tempfile::tempdir().unwrap();
    sandbox.policy.writable_roots.push(extra.path().to_path_buf());
    assert_ok(&sandbox.sh(&format!("echo x > {}/f", extra.path().display())), "a write");
    assert!(extra.path().join("f").exists());
}

#[test]
fn the_network_on_lets_a_tcp_connect_through() {
    require_landlock!();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    sandbox.policy.network = true;
    let output = sandbox.python(&python_errno(&format!(
        "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=10).close()"
    )));
    assert_eq!(stdout(&output), "ok", "stderr: {}", stderr(&output));
    // create_connection returned after the handshake, so the connection
    // is already queued.
    listener.accept().unwrap();
    // Files stay confined with the network on.
    assert_refused(&sandbox.sh("echo x > /tmp/../etc/axon-network-on"), "a write to /etc");
}

#[test]
fn the_network_on_lets_a_unix_client_connect() {
    require_landlock!();
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let mut sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let connect = |path: &std::path::Path| {
        python_errno(&format!(
            "import socket; socket.socket(socket.AF_UNIX).connect({:?})",
            path.to_str().unwrap()
        ))
    };
    // The same client is refused with the network off (see escapes.rs) ...
    assert_eq!(stdout(&sandbox.python(&connect(&path))), "1");
    sandbox.policy.network = true;
    let output = sandbox.python(&connect(&path));
    if common::landlock_abi() >= 9 {
        // ... and with it on, Landlock keeps the sockets outside out of reach.
        assert_eq!(stdout(&output), "13", "stderr: {}", stderr(&output));
    } else {
        // ... and with it on, nothing before Landlock ABI 9 can refuse it.
        assert_eq!(stdout(&output), "ok", "stderr: {}", stderr(&output));
        // connect returned, so the connection is queued.
        listener.accept().unwrap();
    }
    // A socket in the sandbox's own temp folder is reachable either way.
    let inside = sandbox.policy.temp.join("own.sock");
    let own = std::os::unix::net::UnixListener::bind(&inside).unwrap();
    let output = sandbox.python(&connect(&inside));
    assert_eq!(stdout(&output), "ok", "stderr: {}", stderr(&output));
    own.accept().unwrap();
}

#[test]
fn off_changes_nothing() {
    let outside = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let policy = Policy::new(Mode::Off, workspace.path(), "/nonexistent-temp");
    let prepared = prepare(&policy).unwrap();
    assert!(!prepared.confines());
    let mut command = Command::new("/bin/sh");
    command.args(["-c", "echo x > \"$1/f\"; printf %s \"$TMPDIR\"", "sh"]).arg(outside.path());
    command.env("TMPDIR", "/untouched");
    prepared.apply(&mut command);
    let output = command.output().unwrap();
    assert_ok(&output, "an unsandboxed write");
    assert_eq!(stdout(&output), "/untouched");
    assert!(outside.path().join("f").exists());
    assert_eq!(self_test(&policy), Ok(()));
}

#[test]
fn a_command_spawned_twice_is_confined_twice() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let outside = tempfile::tempdir().unwrap();
    let mut command = Command::new("/bin/sh");
    command.args(["-c", "echo x > \"$1/f\"", "sh"]).arg(outside.path());
    prepare(&sandbox.policy).unwrap().apply(&mut command);
    for _ in 0..2 {
        assert_refused(&command.output().unwrap(), "a write outside");
    }
    assert!(!outside.path().join("f").exists());
}

#[test]
fn a_tokio_command_is_confined() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let outside = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let output = runtime.block_on(async {
        let mut command = tokio::process::Command::new("/bin/sh");
        command.args(["-c", "echo x > \"$1/f\"; echo y > src/g", "sh"]).arg(outside.path());
        command.current_dir(sandbox.root());
        prepare(&sandbox.policy).unwrap().apply_tokio(&mut command);
        command.output().await.unwrap()
    });
    assert!(stderr(&output).contains("Permission denied"), "{}", stderr(&output));
    assert!(!outside.path().join("f").exists());
    assert!(sandbox.path("src/g").exists(), "the workspace write after it did not run");
}

#[test]
fn prepare_names_what_it_cannot_open() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let mut policy = sandbox.policy.clone();
    policy.writable_roots.push("/nonexistent/axon-root".into());
    let error = prepare(&policy).unwrap_err();
    assert!(matches!(error, SandboxError::Path { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the sandbox could not open the writable root /nonexistent/axon-root: \
         No such file or directory (os error 2)"
    );

    let mut policy = sandbox.policy.clone();
    policy.temp = "/nonexistent/axon-temp".into();
    let error = prepare(&policy).unwrap_err().to_string();
    assert!(error.contains("temp folder /nonexistent/axon-temp"), "{error}");

    let mut policy = sandbox.policy.clone();
    policy.workspace = "relative".into();
    let error = prepare(&policy).unwrap_err().to_string();
    assert_eq!(
        error,
        "bad sandbox settings: the sandbox's workspace relative is not an absolute path"
    );
}

#[test]
fn self_test_passes_in_every_mode() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    for (mode, network) in
        [(Mode::WorkspaceWrite, false), (Mode::WorkspaceWrite, true), (Mode::ReadOnly, false)]
    {
        let mut policy = sandbox.policy.clone();
        policy.mode = mode;
        policy.network = network;
        assert_eq!(self_test(&policy), Ok(()), "{mode} network={network}");
    }
}

#[test]
fn describe_reports_this_kernel() {
    let support = probe();
    let lines = support.describe();
    if !cfg!(target_os = "linux") {
        assert_eq!(lines, vec![axon_sandbox::LINUX_ONLY.to_owned()]);
        return;
    }
    match support.landlock_abi {
        Some(abi) => assert_eq!(lines[0], format!("Landlock: ABI {abi}")),
        None => assert!(lines[0].starts_with("Landlock: not available ("), "{lines:?}"),
    }
    assert!(lines.iter().any(|l| l.starts_with("seccomp: ")), "{lines:?}");
}

#[test]
fn a_prepared_sandbox_is_sendable() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    assert_send(&Prepared::off());
}
