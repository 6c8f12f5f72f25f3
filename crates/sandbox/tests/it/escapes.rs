//! Escapes that must fail under `workspace-write` with the network off:
//! writes outside the workspace or into its protected entries, network
//! connections, Unix sockets outside (a daemon's, by connect or by
//! datagram), writing the terminal, ptrace, signals to outside processes,
//! namespaces, x32 system calls and terminal injection. Each check also
//! verifies that nothing was changed (the file is absent, the listener saw
//! no connection).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::net::TcpListener;
use std::os::unix::fs::symlink;

use crate::common::{Sandbox, assert_refused, python_errno, stderr, stdout};
use axon_sandbox::Mode;

#[test]
fn writing_to_home_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join(".bashrc");
    let mut command = std::process::Command::new("/bin/sh");
    command.args(["-c", "echo evil >> \"$HOME/.bashrc\""]).env("HOME", home.path());
    assert_refused(&sandbox.output(command), "a write to $HOME");
    assert!(!target.exists());
}

#[test]
fn writing_to_the_real_home_is_refused() {
    require_landlock!();
    let Some(home) = std::env::var_os("HOME") else {
        eprintln!("skipped: HOME is not set");
        return;
    };
    let name = format!(".axon-sandbox-escape-{}", std::process::id());
    let target = std::path::Path::new(&home).join(&name);
    // Only meaningful where this test process itself may write there.
    if std::fs::write(&target, "probe").is_err() {
        eprintln!("skipped: {} is not writable even outside the sandbox", target.display());
        return;
    }
    std::fs::remove_file(&target).unwrap();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.sh(&format!("echo evil > \"$HOME/{name}\""));
    let escaped = target.exists();
    let _ = std::fs::remove_file(&target);
    assert_refused(&output, "a write to the real $HOME");
    assert!(!escaped, "{} was written", target.display());
}

#[test]
fn writing_to_etc_through_tmp_dotdot_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let name = format!("axon-x-{}", std::process::id());
    let output = sandbox.sh(&format!("echo evil > /tmp/../etc/{name}"));
    let target = std::path::Path::new("/etc").join(&name);
    let escaped = target.exists();
    let _ = std::fs::remove_file(&target);
    assert_refused(&output, "a write to /tmp/../etc");
    assert!(!escaped, "{} was written", target.display());
}

#[test]
fn appending_to_git_config_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let before = std::fs::read(sandbox.path(".git/config")).unwrap();
    let output = sandbox.sh("printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config");
    assert_refused(&output, "appending to .git/config");
    // Landlock says EACCES, a read-only mount EROFS.
    let said = stderr(&output);
    assert!(said.contains("Permission denied") || said.contains("Read-only file system"), "{said}");
    assert_eq!(std::fs::read(sandbox.path(".git/config")).unwrap(), before);
}

#[test]
fn creating_a_git_hook_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let output = sandbox.sh("printf '#!/bin/sh\\necho evil\\n' > .git/hooks/pre-commit");
    assert_refused(&output, "creating .git/hooks/pre-commit");
    assert!(!sandbox.path(".git/hooks/pre-commit").exists());
}

#[test]
fn replacing_the_git_folder_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    assert_refused(&sandbox.sh("mv .git .git-old"), "renaming .git");
    assert_refused(&sandbox.sh("rm -rf .git"), "removing .git");
    assert!(sandbox.path(".git/config").exists());
}

#[test]
fn a_git_file_is_protected_like_a_git_folder() {
    require_landlock!();
    // A worktree or submodule has a `.git` file naming its real git folder.
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    std::fs::write(sandbox.path(".git"), "gitdir: /elsewhere\n").unwrap();
    assert_refused(&sandbox.sh("echo 'gitdir: /tmp/evil' > .git"), "rewriting the .git file");
    assert_eq!(std::fs::read_to_string(sandbox.path(".git")).unwrap(), "gitdir: /elsewhere\n");
    common::assert_ok(&sandbox.sh("echo fine > src/x"), "a write into src");
}

#[test]
fn writing_into_axon_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    std::fs::create_dir(sandbox.path(".axon")).unwrap();
    assert_refused(&sandbox.sh("echo evil > .axon/x"), "a write into .axon");
    assert!(!sandbox.path(".axon/x").exists());
    // .axon alone protects: the rest of the workspace stays writable.
    common::assert_ok(&sandbox.sh("echo fine > src/x"), "a write into src");
}

#[test]
fn a_new_top_level_entry_is_refused_next_to_git_in_landlock_only_mode() {
    require_landlock!();
    // The documented price of a read-only .git without namespaces.
    let sandbox = Sandbox::git(Mode::WorkspaceWrite).landlock_only();
    assert_refused(&sandbox.sh("echo x > new.txt"), "a new top-level file");
    assert!(!sandbox.path("new.txt").exists());
}

#[test]
fn a_symlink_out_of_the_workspace_does_not_lend_its_rights() {
    require_landlock!();
    let outside = tempfile::tempdir().unwrap();
    for sandbox in [Sandbox::git(Mode::WorkspaceWrite), Sandbox::plain(Mode::WorkspaceWrite)] {
        symlink(outside.path(), sandbox.path("out")).unwrap();
        symlink(outside.path(), sandbox.path("src/out")).unwrap();
        assert_refused(&sandbox.sh("echo evil > out/x"), "a write through a top-level link");
        assert_refused(&sandbox.sh("echo evil > src/out/x"), "a write through a nested link");
        assert!(!outside.path().join("x").exists());
    }
}

#[test]
fn a_tcp_connect_to_loopback_is_refused_with_eperm() {
    require_landlock!();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python(&python_errno(&format!(
        "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=10)"
    )));
    assert_eq!(stdout(&output), "1", "stderr: {}", stderr(&output));
    if std::process::Command::new("curl").arg("--version").output().is_ok() {
        let output = sandbox.run("curl", &["-sS", &format!("http://127.0.0.1:{port}/")]);
        assert_refused(&output, "curl to a loopback server");
    }
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener saw a connection: {accepted:?}"
    );
}

#[test]
fn udp_raw_and_netlink_sockets_are_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    for family in [
        "socket.AF_INET, socket.SOCK_DGRAM",
        "socket.AF_INET6, socket.SOCK_STREAM",
        "socket.AF_NETLINK, socket.SOCK_RAW",
    ] {
        let output =
            sandbox.python(&python_errno(&format!("import socket; socket.socket({family})")));
        assert_eq!(stdout(&output), "1", "{family}: {}", stderr(&output));
    }
}

#[test]
fn ptrace_is_refused_with_eperm() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         rc = libc.ptrace(0, 0, None, None)\nprint(rc, ctypes.get_errno())",
    );
    assert_eq!(stdout(&output), "-1 1", "stderr: {}", stderr(&output));
    if std::process::Command::new("strace").arg("-V").output().is_ok() {
        let output = sandbox.run("strace", &["-o", "/dev/null", "true"]);
        assert_refused(&output, "strace");
        assert!(stderr(&output).contains("Operation not permitted"), "{}", stderr(&output));
    }
}

#[test]
fn signalling_a_process_outside_is_refused() {
    require_landlock!();
    if common::landlock_abi() < 6 {
        eprintln!(
            "skipped: signal scoping needs Landlock ABI 6, this kernel has {}",
            common::landlock_abi()
        );
        return;
    }
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.sh(&format!("kill -0 {}", std::process::id()));
    assert_refused(&output, "kill -0 of the test process");
    assert!(stderr(&output).contains("Operation not permitted"), "{}", stderr(&output));
    // Its own children are inside the sandbox and remain reachable.
    common::assert_ok(&sandbox.sh("sleep 5 & kill $!; wait $! || true"), "killing its own child");
}

#[test]
fn namespaces_are_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         rc = libc.unshare(0)\nprint(rc, ctypes.get_errno())",
    );
    assert_eq!(stdout(&output), "-1 1", "stderr: {}", stderr(&output));
    if std::process::Command::new("unshare").arg("--version").output().is_ok() {
        assert_refused(&sandbox.run("unshare", &["--user", "true"]), "unshare --user");
    }
}

#[test]
fn terminal_injection_is_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // stdin is /dev/null: without the filter this is ENOTTY (25).
    let output = sandbox
        .python(&python_errno("import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')"));
    assert_eq!(stdout(&output), "1", "stderr: {}", stderr(&output));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x32_system_calls_are_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // getpid (39) with the x32 bit: ENOSYS or a pid without the filter.
    let output = sandbox.python(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         rc = libc.syscall(0x40000000 | 39)\nprint(rc, ctypes.get_errno())",
    );
    assert_eq!(stdout(&output), "-1 1", "stderr: {}", stderr(&output));
}

/// A Unix socket listening outside the workspace, as the Docker daemon,
/// the D-Bus session bus or a tmux server do.
fn outside_listener() -> (tempfile::TempDir, std::path::PathBuf, std::os::unix::net::UnixListener) {
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    (outside, path, listener)
}

#[test]
fn connecting_to_a_unix_socket_outside_is_refused_with_eperm() {
    require_landlock!();
    let (_outside, path, listener) = outside_listener();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let output = sandbox.python(&python_errno(&format!(
        "import socket; socket.socket(socket.AF_UNIX).connect({:?})",
        path.to_str().unwrap()
    )));
    assert_eq!(stdout(&output), "1", "stderr: {}", stderr(&output));
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the daemon saw a connection: {accepted:?}"
    );
    // The same with a shell tool that talks to sockets, where present.
    if std::process::Command::new("socat").arg("-V").output().is_ok() {
        let output = sandbox
            .run("socat", &["-u", "OPEN:/dev/null", &format!("UNIX-CONNECT:{}", path.display())]);
        assert_refused(&output, "socat to the daemon's socket");
    }
}

#[test]
fn a_datagram_to_a_unix_socket_outside_is_refused() {
    require_landlock!();
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixDatagram;
    use std::os::unix::process::CommandExt;
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("journal.sock");
    let daemon = UnixDatagram::bind(&path).unwrap();
    daemon.set_nonblocking(true).unwrap();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let path = path.to_str().unwrap();

    // Datagram sockets are not created: sendmsg's address is out of the
    // filter's sight.
    for create in [
        "socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
        "socket.socket(socket.AF_UNIX, socket.SOCK_RAW)",
        "socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)",
        "socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
    ] {
        let output = sandbox.python(&python_errno(&format!("import socket; {create}")));
        assert_eq!(stdout(&output), "1", "{create}: {}", stderr(&output));
    }

    // sendto with an address, on a datagram socket handed down as fd 3.
    let sender = UnixDatagram::unbound().unwrap();
    let fd = sender.as_raw_fd();
    let mut command = std::process::Command::new("python3");
    command.arg("-c").arg(python_errno(&format!(
        "import socket; socket.socket(fileno=3).sendto(b'evil', {path:?})"
    )));
    // SAFETY: dup2 and fcntl only; runs before the sandbox's own hook. When
    // the socket already is fd 3 (a test binary with few files open), dup2
    // is a no-op that keeps close-on-exec, so the flag is cleared instead.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            let handed = if fd == 3 { libc::fcntl(3, libc::F_SETFD, 0) } else { libc::dup2(fd, 3) };
            if handed < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = sandbox.output(command);
    // EBADF: the sandbox passes on no descriptor above 2 (so the handed
    // socket never arrives); EPERM would be the filter refusing sendto.
    assert!(["1", "9"].contains(&stdout(&output).as_str()), "stderr: {}", stderr(&output));
    let received = daemon.recv(&mut [0; 16]);
    assert!(
        matches!(&received, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the daemon received a datagram: {received:?}"
    );
}

#[test]
fn the_terminal_is_not_writable() {
    require_landlock!();
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    // A pseudo-terminal made the command's controlling terminal, as the
    // user's terminal is when axon runs in it.
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the locals; the null
    // pointers ask for no name, default settings and size.
    #[allow(unsafe_code)]
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just returned by openpty.
    #[allow(unsafe_code)]
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let slave_fd = slave.as_raw_fd();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let mut command = std::process::Command::new("python3");
    command.arg("-c").arg(
        "import os\nos.close(os.open('/dev/tty', os.O_RDONLY))\nprint('has a terminal')\n\
         try:\n    os.open('/dev/tty', os.O_WRONLY)\n    print('ok')\n\
         except OSError as e:\n    print(e.errno)\n",
    );
    // SAFETY: setsid and ioctl only; runs before the sandbox's own hook.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = sandbox.output(command);
    drop((master, slave));
    // 13: EACCES, Landlock's answer to a write it does not grant.
    assert_eq!(stdout(&output), "has a terminal\n13", "stderr: {}", stderr(&output));
}
