//! What this machine's kernel can enforce: [`probe`] asks it, [`Support`]
//! says whether a policy can be enforced and describes the rest in words.
//!
//! Guarantees: [`probe`] only asks (two syscalls, nothing installed, no
//! file opened; the first call in a process also forks one throw-away
//! child that tries a mount namespace, and caches its answer) so callers
//! may run it at start-up and cache it;
//! [`Support::can_enforce`] answers `Err` whenever a part the mode promises
//! would not be enforced (no Landlock, a Landlock too old to stop truncation,
//! no seccomp filter, not Linux), so the caller falls back to asking instead
//! of running commands less confined than it says.

use crate::policy::{Mode, Policy};

/// Said wherever the OS sandbox does not exist.
pub const LINUX_ONLY: &str =
    "the OS sandbox is Linux-only (Landlock); on this system commands are asked about";

/// The oldest Landlock ABI the sandbox accepts: ABI 3 (Linux 6.2) is the
/// first that stops a command from truncating files it may only read.
pub const MIN_LANDLOCK_ABI: i32 = 3;

/// How the kernel lets this process make a mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// A mount namespace alone (the process holds `CAP_SYS_ADMIN`).
    Mount,
    /// A user namespace (mapping the process's own ids) and a mount
    /// namespace.
    UserAndMount,
}

/// How a `workspace-write` command is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// A mount namespace binds the protected entries read-only; the rest
    /// of the workspace is fully writable. Landlock and seccomp on top.
    Namespace(Namespaces),
    /// Landlock and seccomp only: a folder holding a protected entry (the
    /// top of every repository) cannot gain or lose entries.
    LandlockOnly,
}

/// The price of the Landlock-only mode, said by `describe` and in refusals.
pub const LANDLOCK_ONLY_PRICE: &str = "Landlock cannot grant a folder and deny a part of it, so \
     a folder holding a protected entry (the top of every repository, the folder of a `.git` \
     file) cannot gain, lose or rename entries: no new file or folder there (`touch NEW`, a first \
     `cargo build` making target/, `npm install` making node_modules/), no `rm` or `mv` there, \
     and the whole `.git` is read-only (`git add` and `git commit` fail); files there can still \
     be edited, and everything below their other folders is writable";

/// What the kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version, `None` when there is no Landlock.
    pub landlock_abi: Option<i32>,
    /// Why there is no Landlock, when `landlock_abi` is `None`.
    pub landlock_missing: Option<String>,
    /// Whether seccomp filters (with `SECCOMP_RET_ERRNO`) can be installed
    /// for this architecture.
    pub seccomp: bool,
    /// Why there are no seccomp filters, when `seccomp` is false.
    pub seccomp_missing: Option<String>,
    /// How a mount namespace can be made, `None` when the kernel refuses.
    pub namespaces: Option<Namespaces>,
    /// Why there is no mount namespace, when `namespaces` is `None`.
    pub namespaces_missing: Option<String>,
}

/// Asks the kernel which sandbox features it has. Cheap (two syscalls).
pub fn probe() -> Support {
    imp::probe()
}

impl Support {
    /// `Ok` when `policy`'s mode can be enforced as documented; otherwise
    /// the one sentence to tell the user, ending with what axon does instead.
    pub fn can_enforce(&self, policy: &Policy) -> Result<(), String> {
        if policy.mode == Mode::Off {
            return Ok(());
        }
        if !cfg!(target_os = "linux") {
            return Err(LINUX_ONLY.to_owned());
        }
        let Some(abi) = self.landlock_abi else {
            let why = self.landlock_missing.as_deref().unwrap_or("Landlock is not available");
            return Err(format!("{why}; commands are asked about instead"));
        };
        if abi < MIN_LANDLOCK_ABI {
            return Err(format!(
                "this kernel's Landlock (ABI {abi}) cannot stop a command from truncating files \
                 it may only read; the sandbox needs ABI {MIN_LANDLOCK_ABI} (Linux 6.2 or later), \
                 so commands are asked about instead"
            ));
        }
        if !self.seccomp {
            let why =
                self.seccomp_missing.as_deref().unwrap_or("seccomp filters are not available");
            return Err(format!(
                "{why}, so dangerous system calls{} could not be refused; commands are asked \
                 about instead",
                if policy.network { "" } else { " and the network" }
            ));
        }
        Ok(())
    }

    /// How `policy`'s commands are confined on this machine.
    pub fn confinement(&self, policy: &Policy) -> Confinement {
        match self.namespaces {
            Some(kind) if policy.mount_namespace => Confinement::Namespace(kind),
            _ => Confinement::LandlockOnly,
        }
    }

    /// The line `axon sandbox check` starts with: which confinement
    /// `policy` gets and why.
    pub fn describe_confinement(&self, policy: &Policy) -> String {
        match (self.confinement(policy), &self.namespaces_missing) {
            (Confinement::Namespace(kind), _) => format!(
                "confinement: mount namespace{} + Landlock + seccomp: protected entries \
                 (every .git's config, hooks and info, .git files, .axon, .mcp.json, \
                 .claude/settings*.json, agents and skills) are bound read-only; the rest of the \
                 workspace can be created, removed and renamed in, so git add and git commit work",
                match kind {
                    Namespaces::Mount => "",
                    Namespaces::UserAndMount => " (in a user namespace mapping your own ids)",
                }
            ),
            (Confinement::LandlockOnly, Some(why)) => format!(
                "confinement: Landlock-only (no mount namespace: {why}). Price: \
                 {LANDLOCK_ONLY_PRICE}"
            ),
            (Confinement::LandlockOnly, None) => format!(
                "confinement: Landlock-only (the mount namespace is turned off: \
                 `mount_namespace = false` under [sandbox]). Price: {LANDLOCK_ONLY_PRICE}"
            ),
        }
    }

    /// One line per feature for `axon sandbox check`: what is enforced and
    /// what is not, with the kernel version that would add it.
    pub fn describe(&self) -> Vec<String> {
        if !cfg!(target_os = "linux") {
            return vec![LINUX_ONLY.to_owned()];
        }
        let mut lines = Vec::new();
        match self.landlock_abi {
            None => lines.push(format!(
                "Landlock: not available ({})",
                self.landlock_missing.as_deref().unwrap_or("unknown reason")
            )),
            Some(abi) => {
                lines.push(format!("Landlock: ABI {abi}"));
                for (feature, needs, kernel, yes, no) in LANDLOCK_FEATURES {
                    if abi >= *needs {
                        lines.push(format!("  {feature}: enforced; {yes}"));
                    } else {
                        lines.push(format!(
                            "  {feature}: NOT enforced (needs ABI {needs}, Linux {kernel}); {no}"
                        ));
                    }
                }
            }
        }
        if self.seccomp {
            lines.push(format!("seccomp: enforced; {SECCOMP_REFUSES}"));
        } else {
            lines.push(format!(
                "seccomp: not available ({})",
                self.seccomp_missing.as_deref().unwrap_or("unknown reason")
            ));
        }
        lines.push(
            "no_new_privs: set on every sandboxed command, so set-uid programs (sudo, su) gain \
             nothing"
                .to_owned(),
        );
        lines.push(format!("not covered: {NOT_COVERED}"));
        lines
    }
}

/// Landlock features by ABI: name, ABI, first Linux, what it gives, what
/// its absence means.
const LANDLOCK_FEATURES: &[(&str, i32, &str, &str, &str)] = &[
    (
        "files",
        1,
        "5.13",
        "read and execute everywhere, create, write and delete only where the mode allows",
        "files are not confined",
    ),
    (
        "rename and link across folders",
        2,
        "5.19",
        "a file cannot be moved or linked to gain rights",
        "moving or linking files between folders is always refused",
    ),
    (
        "truncate",
        3,
        "6.2",
        "files outside the writable folders cannot be truncated",
        "any readable file could be truncated, so the sandbox is not used",
    ),
    (
        "TCP bind and connect",
        4,
        "6.7",
        "refused when the network is off (on top of seccomp)",
        "only seccomp keeps the network off",
    ),
    (
        "device ioctl",
        5,
        "6.10",
        "ioctl on devices opened inside the sandbox is refused outside the writable folders",
        "ioctl on devices the command opens is not confined",
    ),
    (
        "signal and abstract-socket scoping",
        6,
        "6.12",
        "a command cannot signal processes outside its sandbox (such as your editor), nor reach \
         abstract Unix sockets when the network is off",
        "a command can signal any process of the same user and reach abstract Unix sockets",
    ),
    (
        "Unix sockets on the filesystem",
        9,
        "7.1",
        "reachable only in the workspace, the temp folder and the writable roots, even with the \
         network on",
        "with the network on, a command reaches every Unix socket the user can, and that reaches \
         outside the sandbox (the Docker socket, the D-Bus session bus, a tmux server run what \
         they are sent unconfined); with the network off seccomp refuses connecting them",
    ),
];

/// What the seccomp filter refuses, for `describe`.
const SECCOMP_REFUSES: &str = "refuses ptrace, process_vm_readv/writev, pidfd_getfd, \
     process_madvise, kcmp, kernel modules, kexec, reboot, swap, mount (old and new API), \
     pivot_root, bpf, perf events, userfaultfd, keyrings, io_uring, new namespaces (unshare, \
     setns, clone flags), acct, sethostname, setdomainname, block and character device nodes \
     (mknod), limits, priorities and scheduling of other processes (prlimit, setpriority, \
     ioprio_set, sched_set*), terminal injection (TIOCSTI, TIOCLINUX) and 32-bit or x32 system \
     calls; with the network off, every socket but AF_UNIX, AF_UNIX \
     datagram sockets, connect on any socket and sendto an address, so no Unix socket on the \
     filesystem (the Docker socket, the D-Bus session bus) is reachable";

/// What no mode confines, for `describe` and the documentation.
pub const NOT_COVERED: &str = "reading (every file the user can read stays readable), changing \
     the mode, owner, timestamps or extended attributes of existing files (Landlock has no right \
     for them), with the network on and Landlock older than ABI 9 (Linux 7.1) the Unix sockets \
     on the filesystem, which reach outside the sandbox (the Docker socket, the D-Bus session \
     bus: they run what they are sent, unconfined), the CPU, memory and time a command uses, and \
     protected names that do not exist when a command starts (a new `.mcp.json`, a new \
     repository, and in a mount namespace a new `commondir` file inside a git folder, which git \
     follows to another git folder's config)";

#[cfg(target_os = "linux")]
mod imp {
    use super::Support;

    /// `LANDLOCK_CREATE_RULESET_VERSION` from `<linux/landlock.h>`.
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

    pub(super) fn probe() -> Support {
        let (landlock_abi, landlock_missing) = match landlock_abi() {
            Ok(abi) => (Some(abi), None),
            Err(why) => (None, Some(why)),
        };
        let (seccomp, seccomp_missing) = match seccomp_errno_available() {
            Ok(()) => (true, None),
            Err(why) => (false, Some(why)),
        };
        let (namespaces, namespaces_missing) = match crate::ns::available() {
            Ok(kind) => (Some(kind), None),
            Err(why) => (None, Some(why)),
        };
        Support {
            landlock_abi,
            landlock_missing,
            seccomp,
            seccomp_missing,
            namespaces,
            namespaces_missing,
        }
    }

    #[allow(unsafe_code)]
    fn landlock_abi() -> Result<i32, String> {
        // SAFETY: landlock_create_ruleset with a null attribute, size 0 and
        // the VERSION flag only returns the ABI number; it reads no memory
        // and creates no file descriptor.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        if abi > 0 {
            return i32::try_from(abi).map_err(|_| format!("Landlock reported ABI {abi}"));
        }
        let error = std::io::Error::last_os_error();
        Err(match error.raw_os_error() {
            Some(libc::ENOSYS) => "Landlock is not available: the kernel is older than 5.13, \
                 was built without CONFIG_SECURITY_LANDLOCK, or a container's seccomp profile \
                 hides it"
                .to_owned(),
            Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled: add \
                 `landlock` to the `lsm=` kernel boot parameter"
                .to_owned(),
            Some(libc::EPERM) => "Landlock is blocked (EPERM), most likely by a container's \
                 seccomp profile: allow the landlock_* system calls"
                .to_owned(),
            _ => format!("Landlock is not available: {error}"),
        })
    }

    #[allow(unsafe_code)]
    fn seccomp_errno_available() -> Result<(), String> {
        crate::seccomp::target_arch()?;
        let action: u32 = libc::SECCOMP_RET_ERRNO;
        // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 through the pointer,
        // which points at a live local; it installs nothing.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_GET_ACTION_AVAIL,
                0 as libc::c_uint,
                &action as *const u32,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        Err(match error.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EINVAL) => {
                "seccomp filters are not available: the kernel is older than 4.14 or was built \
                 without CONFIG_SECCOMP_FILTER"
                    .to_owned()
            }
            Some(libc::EOPNOTSUPP) => "seccomp cannot return errors on this kernel".to_owned(),
            _ => format!("seccomp filters are not available: {error}"),
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{LINUX_ONLY, Support};

    pub(super) fn probe() -> Support {
        Support {
            landlock_abi: None,
            landlock_missing: Some(LINUX_ONLY.to_owned()),
            seccomp: false,
            seccomp_missing: Some(LINUX_ONLY.to_owned()),
            namespaces: None,
            namespaces_missing: Some(LINUX_ONLY.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: Mode) -> Policy {
        Policy::new(mode, "/w", "/t")
    }

    fn support(abi: Option<i32>, seccomp: bool) -> Support {
        Support {
            landlock_abi: abi,
            landlock_missing: abi.is_none().then(|| "Landlock is not available: test".to_owned()),
            seccomp,
            seccomp_missing: (!seccomp).then(|| "seccomp filters are not available".to_owned()),
            namespaces: None,
            namespaces_missing: Some("test".to_owned()),
        }
    }

    #[test]
    fn off_is_always_enforceable() {
        assert_eq!(support(None, false).can_enforce(&policy(Mode::Off)), Ok(()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn each_missing_feature_is_named() {
        let ws = policy(Mode::WorkspaceWrite);
        assert_eq!(support(Some(7), true).can_enforce(&ws), Ok(()));
        let no_landlock = support(None, true).can_enforce(&ws).unwrap_err();
        assert!(no_landlock.starts_with("Landlock is not available: test"), "{no_landlock}");
        assert!(no_landlock.ends_with("asked about instead"), "{no_landlock}");
        let old = support(Some(2), true).can_enforce(&ws).unwrap_err();
        assert!(old.contains("ABI 2") && old.contains("truncating"), "{old}");
        let no_seccomp = support(Some(7), false).can_enforce(&ws).unwrap_err();
        assert!(no_seccomp.contains("and the network"), "{no_seccomp}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn describe_says_what_an_old_kernel_lacks() {
        let lines = support(Some(4), true).describe();
        assert_eq!(lines[0], "Landlock: ABI 4");
        assert!(lines.iter().any(|l| l.starts_with("  TCP bind and connect: enforced")));
        assert!(
            lines.iter().any(|l| l.starts_with(
                "  signal and abstract-socket scoping: NOT enforced (needs ABI 6, Linux 6.12)"
            )),
            "{lines:#?}"
        );
        assert!(lines.iter().any(|l| l.starts_with("seccomp: enforced")));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn describe_says_where_unix_sockets_reach_outside() {
        let old = support(Some(7), true).describe();
        let line = old
            .iter()
            .find(|l| l.starts_with("  Unix sockets on the filesystem: NOT enforced (needs ABI 9"))
            .unwrap_or_else(|| panic!("{old:#?}"));
        assert!(line.contains("with the network on") && line.contains("Docker"), "{line}");
        let new = support(Some(9), true).describe();
        assert!(
            new.iter().any(|l| l.starts_with("  Unix sockets on the filesystem: enforced")),
            "{new:#?}"
        );
        assert!(NOT_COVERED.contains("with the network on"), "{NOT_COVERED}");
        assert!(NOT_COVERED.contains("session bus"), "{NOT_COVERED}");
        assert!(SECCOMP_REFUSES.contains("connect on any socket"), "{SECCOMP_REFUSES}");
    }

    #[test]
    fn the_confinement_is_said_with_its_reason_or_price() {
        let ws = policy(Mode::WorkspaceWrite);
        let mut with = support(Some(7), true);
        with.namespaces = Some(Namespaces::UserAndMount);
        with.namespaces_missing = None;
        let mut off = ws.clone();
        off.mount_namespace = false;
        let lines = [
            with.describe_confinement(&ws),
            with.describe_confinement(&off),
            support(Some(7), true).describe_confinement(&ws),
        ];
        assert!(lines[0].starts_with("confinement: mount namespace (in a user namespace"));
        assert!(lines[1].contains("`mount_namespace = false`") && lines[1].contains("Price:"));
        assert!(lines[2].starts_with("confinement: Landlock-only (no mount namespace: test)"));
        for line in lines {
            // A broken line continuation leaves runs of spaces.
            assert!(!line.contains("  "), "{line}");
        }
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn other_systems_have_no_sandbox() {
        let support = probe();
        assert_eq!(support.can_enforce(&policy(Mode::ReadOnly)), Err(LINUX_ONLY.to_owned()));
        assert_eq!(support.describe(), vec![LINUX_ONLY.to_owned()]);
    }
}
