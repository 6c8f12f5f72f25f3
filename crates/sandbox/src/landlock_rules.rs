//! The Landlock ruleset of a sandboxed command, built in the parent.
//!
//! Guarantees, on a kernel with Landlock ABI 3 or later (weaker features
//! are dropped by the crate's best-effort mode and reported by `probe`):
//! - every filesystem right the kernel knows is handled, so anything not
//!   granted below is refused;
//! - everywhere (`/`): read, list and execute;
//! - Unix sockets on the filesystem (ABI 9+, `ResolveUnix`): reachable only
//!   beneath the temp folder, the workspace and the writable roots, so a
//!   command cannot talk to a daemon outside (the Docker socket, the D-Bus
//!   session bus, a tmux server), which would run what it asks unconfined.
//!   Older kernels have no such right: there seccomp refuses `connect` when
//!   the network is off, and with the network on those sockets stay
//!   reachable (`probe` says so);
//! - the temp folder: every right; `/dev/null`, `/dev/zero`, `/dev/full`
//!   (those that exist): every file right (write, truncate, ioctl). Not
//!   `/dev/tty`: writing it would paint fake prompts into the user's
//!   terminal or set the clipboard (OSC 52);
//! - `workspace-write`: the workspace and the writable roots get every
//!   right but making block or character devices (no command needs one;
//!   as root a device node for a disk writes the raw disk), except around
//!   the `kept` paths `build` is given. Landlock has no deny rule and
//!   rights flow down the tree, so a folder holding a kept path (at any
//!   depth) gets no right itself, each of its other entries gets every
//!   right, and folders on the way to a kept path are treated the same.
//!   In the Landlock-only mode the kept paths are every protected entry
//!   (whole `.git` folders included); the price is that a folder holding
//!   one cannot gain, lose or rename entries: in a repository no new file
//!   or folder at its top (`target/`, `node_modules/`, `Cargo.lock`), no
//!   `rm` or `mv` there, and `git add`/`git commit` fail (the whole `.git`
//!   is read-only). With a mount namespace only protected symbolic links
//!   are kept this way (a mount would cover a link's target, not the link)
//!   and the mounts do the rest. Symbolic links met on the way are skipped
//!   (a link could point anywhere);
//! - network off: TCP (and, on newer kernels, UDP) bind and connect are
//!   handled with no rule, and abstract Unix sockets are scoped;
//! - always: signals are scoped, so a command cannot signal processes
//!   outside its own sandbox.
//!
//! Every path is opened here, in the parent, so the child only enforces.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope,
};

use crate::error::SandboxError;
use crate::policy::{Mode, Policy};

/// The newest ABI this crate knows: rights are asked at this level and
/// the crate lowers them to what the running kernel supports.
const BEST: ABI = ABI::V10;

/// Devices any command may write (and truncate: `> /dev/null` opens with
/// `O_TRUNC`). `/dev/tty` is left out on purpose (see the module comment).
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Builds the ruleset for `policy` (mode `ReadOnly` or `WorkspaceWrite`).
/// `kept` are the absolute paths inside the workspace that get no right
/// (see the module comment).
pub(crate) fn build(policy: &Policy, kept: &[PathBuf]) -> Result<RulesetCreated, SandboxError> {
    let all = AccessFs::from_all(BEST);
    let writes = all & !(AccessFs::MakeBlock | AccessFs::MakeChar);
    let mut ruleset = Ruleset::default().handle_access(all).map_err(landlock)?;
    let mut scopes: BitFlags<Scope> = Scope::Signal.into();
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(BEST)).map_err(landlock)?;
        scopes |= Scope::AbstractUnixSocket;
    }
    ruleset = ruleset.scope(scopes).map_err(landlock)?;
    let mut created = ruleset.create().map_err(landlock)?;

    // Reading everything keeps tools, compilers and libraries working;
    // the sandbox is about writes, the network and other processes.
    // `from_read` holds no `ResolveUnix`: Unix sockets are reachable only
    // where it is granted below.
    created = grant(created, open("root folder", Path::new("/"))?, AccessFs::from_read(BEST))?;
    // `all` holds `ResolveUnix` where the kernel knows it.
    created = grant(created, open("temp folder", &policy.temp)?, writes)?;
    for device in WRITABLE_DEVICES {
        match open("device", Path::new(device)) {
            Ok(fd) => created = grant(created, fd, AccessFs::from_file(BEST))?,
            // A missing device is simply not granted.
            Err(_) => continue,
        }
    }
    // The workspace's own sockets (a server the command started there),
    // in both modes; connecting writes nothing. Kernels before ABI 9 drop
    // this rule, which then grants nothing.
    let unix: BitFlags<AccessFs> = AccessFs::ResolveUnix.into();
    created = grant(created, open("workspace", &policy.workspace)?, unix)?;
    if policy.mode == Mode::WorkspaceWrite {
        let root = open("workspace", &policy.workspace)?;
        created = grant_tree(created, root, &policy.workspace, kept, writes)?;
        for root in &policy.writable_roots {
            created = grant(created, open("writable root", root)?, writes)?;
        }
    }
    Ok(created)
}

/// The rights of the folder `dir` (open as `fd`): all of `writes` when it
/// holds no kept path, else each entry's own (see the module comment).
fn grant_tree(
    mut created: RulesetCreated,
    fd: OwnedFd,
    dir: &Path,
    kept: &[PathBuf],
    writes: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    if !kept.iter().any(|path| path.starts_with(dir)) {
        return grant(created, fd, writes);
    }
    let entries = std::fs::read_dir(dir).map_err(|source| SandboxError::Path {
        what: "workspace folder",
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| SandboxError::Path {
            what: "workspace folder",
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let path = dir.join(&name);
        if kept.contains(&path) {
            continue;
        }
        let child = match open_beneath(&fd, &name) {
            Ok(child) => child,
            // Removed since it was listed: nothing to grant.
            Err(error) if error.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(source) => {
                return Err(SandboxError::Path { what: "workspace entry", path, source });
            }
        };
        let file = File::from(child);
        let kind = file
            .metadata()
            .map_err(|source| SandboxError::Path {
                what: "workspace entry",
                path: path.clone(),
                source,
            })?
            .file_type();
        if kind.is_dir() {
            created = grant_tree(created, file.into(), &path, kept, writes)?;
        } else if kind.is_file() {
            created = grant(created, file.into(), AccessFs::from_file(BEST))?;
        }
        // Symbolic links, sockets, fifos and devices: not granted.
    }
    Ok(created)
}

fn grant(
    created: RulesetCreated,
    fd: OwnedFd,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    created.add_rule(PathBeneath::new(fd, access)).map_err(landlock)
}

/// Opens `path` as a Landlock rule anchor (`O_PATH`, following links: the
/// rule applies to what the path names when the command starts).
fn open(what: &'static str, path: &Path) -> Result<OwnedFd, SandboxError> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .map(OwnedFd::from)
        .map_err(|source| SandboxError::Path { what, path: path.to_path_buf(), source })
}

/// Opens the top-level entry `name` relative to the workspace's descriptor,
/// without following a final symbolic link, so a link swapped in after the
/// listing is seen as a link and skipped.
#[allow(unsafe_code)]
fn open_beneath(root: &OwnedFd, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `root` is a live descriptor and `name` a NUL-terminated string
    // that outlives the call; openat returns a new descriptor we own.
    let fd = unsafe {
        libc::openat(
            root.as_raw_fd(),
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn landlock(error: landlock::RulesetError) -> SandboxError {
    SandboxError::Landlock(error.to_string())
}
