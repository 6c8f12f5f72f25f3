//! What must keep working under `workspace-write` with the network off:
//! interpreters, writes in the workspace and `$TMPDIR`, `git status`, a
//! `cargo build` of a small crate, local Unix sockets, threads, and the
//! usual `> /dev/null`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{Sandbox, assert_ok, stderr, stdout};
use axon_sandbox::Mode;

#[test]
fn python_runs() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python("print(1)");
    assert_ok(&output, "python3 -c 'print(1)'");
    assert_eq!(stdout(&output), "1");
}

#[test]
fn writing_in_a_subfolder_next_to_git_works() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    assert_ok(
        &sandbox.sh("echo new > src/new.rs && mkdir -p src/a/b && echo x > src/a/b/c"),
        "writing in src/",
    );
    assert_eq!(std::fs::read_to_string(sandbox.path("src/new.rs")).unwrap(), "new\n");
    assert!(sandbox.path("src/a/b/c").exists());
    assert_ok(
        &sandbox.sh("mv src/new.rs src/a/moved.rs && rm src/a/b/c"),
        "moving and removing in src/",
    );
    assert!(sandbox.path("src/a/moved.rs").exists());
}

#[test]
fn editing_an_existing_top_level_file_next_to_git_works() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    assert_ok(
        &sandbox.sh("echo more >> README.md && echo replaced > README.md"),
        "editing README.md",
    );
    assert_eq!(std::fs::read_to_string(sandbox.path("README.md")).unwrap(), "replaced\n");
}

#[test]
fn writing_at_the_root_without_a_protected_entry_works() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    assert_ok(
        &sandbox.sh("echo x > new.txt && mkdir target && rm README.md"),
        "writing at the root",
    );
    assert!(sandbox.path("new.txt").exists());
    assert!(sandbox.path("target").is_dir());
    assert!(!sandbox.path("README.md").exists());
}

#[test]
fn tmpdir_is_the_private_temp_folder_and_writable() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let output = sandbox.sh(
        "printf '%s %s %s\\n' \"$TMPDIR\" \"$TMP\" \"$TEMP\"; echo x > \"$TMPDIR/f\"; mktemp -d",
    );
    assert_ok(&output, "writing in $TMPDIR");
    let temp = sandbox.policy.temp.display().to_string();
    let lines: Vec<&str> =
        output.stdout.split(|b| *b == b'\n').map(|l| std::str::from_utf8(l).unwrap()).collect();
    assert_eq!(lines[0], format!("{temp} {temp} {temp}"));
    assert!(lines[1].starts_with(&temp), "mktemp made {}", lines[1]);
    assert!(sandbox.policy.temp.join("f").exists());
}

#[test]
fn dev_null_and_friends_stay_writable() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::ReadOnly);
    assert_ok(
        &sandbox.sh("echo x > /dev/null && echo x >> /dev/null && head -c 4 /dev/zero > /dev/null"),
        "writing /dev/null",
    );
}

#[test]
fn git_status_works() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    std::fs::write(sandbox.path("src/lib.rs"), "// changed\n").unwrap();
    let output = sandbox.run("git", &["status", "--porcelain"]);
    assert_ok(&output, "git status");
    assert_eq!(stdout(&output), "M src/lib.rs");
    assert_ok(&sandbox.run("git", &["diff", "--stat"]), "git diff");
    assert_ok(&sandbox.run("git", &["log", "--oneline"]), "git log");
}

#[test]
fn cargo_builds_a_small_crate_in_a_subfolder() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let krate = sandbox.path("hello");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/main.rs"), "fn main() { println!(\"hello\"); }\n").unwrap();
    let mut command = std::process::Command::new("cargo");
    command.args(["build", "--offline", "--quiet"]).current_dir(&krate);
    // The test's own build settings must not leak into the small crate.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CARGO_") && name != "CARGO_HOME" {
            command.env_remove(&name);
        }
    }
    command.env_remove("RUSTFLAGS").env_remove("CARGO_TARGET_DIR");
    let output = sandbox.output_in(command, &krate);
    assert_ok(&output, "cargo build --offline");
    assert!(krate.join("target/debug/hello").exists(), "{}", stderr(&output));
    let run = sandbox.run(krate.join("target/debug/hello").to_str().unwrap(), &[]);
    assert_eq!(stdout(&run), "hello");
}

#[test]
fn unix_socketpairs_work_with_the_network_off() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python(
        "import socket\na, b = socket.socketpair()\na.sendall(b'ping')\nprint(b.recv(4).decode())",
    );
    assert_ok(&output, "socketpair");
    assert_eq!(stdout(&output), "ping");
}

#[test]
fn a_unix_server_starts_with_the_network_off() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // bind, listen and (non-blocking) accept stay allowed; only reaching a
    // socket by its path (connect) is refused.
    let output = sandbox.python(
        "import os, socket\ns = socket.socket(socket.AF_UNIX)\n\
         s.bind(os.path.join(os.environ['TMPDIR'], 's.sock'))\ns.listen(1)\ns.setblocking(False)\n\
         try:\n    s.accept()\nexcept BlockingIOError:\n    print('listening')\n",
    );
    assert_ok(&output, "a Unix server");
    assert_eq!(stdout(&output), "listening");
}

#[test]
fn threads_start_although_clone3_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // clone3 answers ENOSYS, so the C library falls back to clone.
    let output = sandbox.python(
        "import ctypes, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         rc = libc.syscall(435, None, 0)\nerr = ctypes.get_errno()\n\
         out = []\nt = threading.Thread(target=lambda: out.append(7))\nt.start(); t.join()\n\
         print(rc, err, out[0])",
    );
    assert_ok(&output, "a threaded python");
    assert_eq!(stdout(&output), "-1 38 7");
}
