//! The mount namespace of a sandboxed command (the way bubblewrap confines
//! Codex's and Claude Code's commands): the workspace stays writable and
//! the protected parts of it are bound read-only over themselves.
//!
//! Guarantees: [`Plan::enter`], run in the child between fork and exec,
//! allocates nothing and takes no lock: every path and the uid/gid map
//! lines were built by [`Plan::new`] in the parent, and it only makes raw
//! system calls (unshare, open/write/close on `/proc/self`, mount, statfs,
//! getcwd into a stack buffer, chdir). It either sets the namespace up
//! completely or fails the spawn with the failing step's OS error. The
//! namespace's mounts are private (`MS_REC | MS_PRIVATE` first), so no
//! mount is ever seen outside the command.
//!
//! Why in the pre-exec hook rather than a re-exec helper (a second
//! process, as bubblewrap is): the hook already exists and runs after
//! fork in a child that is single-threaded (as `unshare(CLONE_NEWUSER)`
//! requires), the work is a fixed list of system calls on prepared
//! C strings, and a helper would add an exec per command (about a
//! millisecond) and a binary whose path must itself be trusted. The calls
//! are made through `libc` directly rather than rustix so that each one
//! is visibly a single system call with no conversion that might
//! allocate.
//!
//! Without privilege the command gets a user namespace too, mapping only
//! its own uid and gid (as `unshare -Ur` would, but to the same ids), so
//! files keep their owners; a process that already holds `CAP_SYS_ADMIN`
//! (root outside a container) only gets a mount namespace, so it keeps
//! reaching files of other users as it would unsandboxed. Landlock and
//! the seccomp filter, installed after, forbid any further mount change.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::SandboxError;
use crate::probe::Namespaces;
use crate::protect::Mounts;

/// A namespace ready to enter.
#[derive(Debug)]
pub(crate) struct Plan {
    user: bool,
    uid_map: CString,
    gid_map: CString,
    pins: Vec<CString>,
    read_only: Vec<CString>,
}

impl Plan {
    pub(crate) fn new(kind: Namespaces, mounts: &Mounts) -> Result<Plan, SandboxError> {
        let c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes()).map_err(|_| {
                SandboxError::Policy(format!("the path {} holds a NUL byte", path.display()))
            })
        };
        Ok(Plan {
            user: kind == Namespaces::UserAndMount,
            uid_map: id_map(current_uid()),
            gid_map: id_map(current_gid()),
            pins: mounts.pins.iter().map(|p| c(p)).collect::<Result<_, _>>()?,
            read_only: mounts.read_only.iter().map(|p| c(p)).collect::<Result<_, _>>()?,
        })
    }

    /// Enters the namespace. Called in the child only.
    #[allow(unsafe_code)]
    pub(crate) fn enter(&self) -> io::Result<()> {
        let flags =
            if self.user { libc::CLONE_NEWUSER | libc::CLONE_NEWNS } else { libc::CLONE_NEWNS };
        // SAFETY: unshare with integer flags.
        check(unsafe { libc::unshare(flags) })?;
        if self.user {
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", self.uid_map.as_bytes())?;
            write_proc(c"/proc/self/gid_map", self.gid_map.as_bytes())?;
        }
        let none = std::ptr::null::<libc::c_char>();
        // SAFETY: mount with a static C string and null pointers: makes
        // every mount of the new namespace private, so nothing below is
        // propagated to the namespace axon runs in.
        check(unsafe {
            libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        })?;
        for pin in &self.pins {
            // SAFETY: both paths are the same live NUL-terminated string.
            check(unsafe {
                libc::mount(
                    pin.as_ptr(),
                    pin.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            })?;
        }
        for path in &self.read_only {
            bind_read_only(path)?;
        }
        reenter_cwd()
    }
}

/// Binds `path` onto itself, then remounts the bind read-only keeping the
/// flags the kernel locks in a user namespace (nosuid, nodev, noexec and
/// the atime ones), which it refuses to clear.
#[allow(unsafe_code)]
fn bind_read_only(path: &CString) -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: live NUL-terminated strings, null data.
    check(unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })?;
    // statfs64 because libc's `statfs` hides `f_flags`; on 64-bit Linux
    // both are the one statfs system call.
    // SAFETY: `stat` is a plain struct of integers, written by the kernel.
    let mut stat: libc::statfs64 = unsafe { std::mem::zeroed() };
    // SAFETY: a live path and a pointer to a local struct.
    check(unsafe { libc::statfs64(path.as_ptr(), &mut stat) })?;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
    let have = stat.f_flags as libc::c_ulong;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if have & st != 0 {
            flags |= ms;
        }
    }
    // SAFETY: as above.
    check(unsafe { libc::mount(none, path.as_ptr(), none, flags, std::ptr::null()) })
}

/// The working folder was entered before the mounts existed, so it still
/// names the folder beneath them: a write relative to it would go around a
/// read-only mount. Entering it again by its absolute path goes through
/// them.
#[allow(unsafe_code)]
fn reenter_cwd() -> io::Result<()> {
    let mut buffer = [0 as libc::c_char; libc::PATH_MAX as usize];
    // SAFETY: getcwd writes at most `buffer.len()` bytes into the local
    // buffer, NUL-terminated on success.
    if unsafe { libc::getcwd(buffer.as_mut_ptr(), buffer.len()) }.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the buffer holds a NUL-terminated path.
    check(unsafe { libc::chdir(buffer.as_ptr()) })
}

/// Writes `data` to a `/proc/self` file in one `write`.
#[allow(unsafe_code)]
fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: a static NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `data` is live for the call; `fd` was just opened.
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let error = io::Error::last_os_error();
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if written < 0 || written as usize != data.len() {
        return Err(error);
    }
    Ok(())
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

fn id_map(id: u32) -> CString {
    // Digits and spaces only: no NUL.
    CString::new(format!("{id} {id} 1\n")).unwrap_or_default()
}

#[allow(unsafe_code)]
fn current_uid() -> u32 {
    // SAFETY: getuid cannot fail and reads no memory.
    unsafe { libc::getuid() }
}

#[allow(unsafe_code)]
fn current_gid() -> u32 {
    // SAFETY: getgid cannot fail and reads no memory.
    unsafe { libc::getgid() }
}

/// Whether (and how) this kernel lets this process make a mount namespace
/// with a read-only bind in it, found by trying once in a throw-away child
/// and cached for the life of the process.
pub(crate) fn available() -> Result<Namespaces, String> {
    static CACHE: OnceLock<Result<Namespaces, String>> = OnceLock::new();
    CACHE.get_or_init(try_both).clone()
}

fn try_both() -> Result<Namespaces, String> {
    let mount_only = attempt(Namespaces::Mount);
    if mount_only.is_ok() {
        return Ok(Namespaces::Mount);
    }
    match attempt(Namespaces::UserAndMount) {
        Ok(()) => Ok(Namespaces::UserAndMount),
        Err(error) => Err(format!(
            "the kernel refused a mount namespace ({}) and a user namespace with one ({error}); \
             this is usual in containers (Docker's default seccomp profile, no CAP_SYS_ADMIN) and \
             where kernel.unprivileged_userns_clone = 0 or \
             kernel.apparmor_restrict_unprivileged_userns = 1",
            mount_only.err().map(|e| e.to_string()).unwrap_or_default()
        )),
    }
}

/// Forks a child that enters a namespace of `kind` and binds `/` read-only
/// onto itself (nothing leaves the child's namespace),
/// then exits with 0 or the errno of the step that failed.
#[allow(unsafe_code)]
fn attempt(kind: Namespaces) -> io::Result<()> {
    let plan = Plan::new(kind, &Mounts { pins: Vec::new(), read_only: vec!["/".into()] })
        .map_err(|e| io::Error::other(e.to_string()))?;
    // SAFETY: the child only runs `Plan::enter` (raw system calls on data
    // built above, see its guarantees) and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = match plan.enter() {
            Ok(()) => 0,
            Err(error) => error.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255),
        };
        // SAFETY: leaves the child without running the parent's atexit
        // handlers or destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child forked above; `status` is a local.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(error);
        }
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else if libc::WIFEXITED(status) {
        Err(io::Error::from_raw_os_error(libc::WEXITSTATUS(status)))
    } else {
        Err(io::Error::other("the trial child was killed"))
    }
}
