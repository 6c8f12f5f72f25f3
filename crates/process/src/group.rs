//! Process groups: the lifetime of the processes axon starts, so nothing
//! it started outlives it.
//!
//! Three nets, from the narrowest:
//! - [`die_with_parent`]: a child gets `SIGKILL` when axon dies, even by
//!   `kill -9` (`PR_SET_PDEATHSIG`), and one whose parent died before it was
//!   set exits at once.
//! - The guardian ([`guard_group`]): one small `sh` per axon holding the list
//!   of live process groups on a pipe. When axon dies, however it dies, the
//!   pipe closes and the guardian kills every group still listed, so the
//!   grandchildren of a command (a `sleep` under `sh -c`) go too, not only
//!   the child the death signal reaches.
//! - [`become_subreaper`] and [`kill_orphans`]: a grandchild that left its
//!   group (`setsid`, a daemon) is re-parented to axon instead of init, and
//!   [`kill_orphans`] kills every such process when axon leaves (see
//!   `orphans.rs`, which also reaps what axon adopts while it runs).
//!
//! [`kill_process_group`] is the workspace's one place that signals a group.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// Sends SIGKILL to the process group `pgid` (a group this process created).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn kill_process_group(pgid: u32) {
    let Ok(pgid) = i32::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) takes no pointers; a negative pid names the process
    // group this process created with process_group(0), whose id is the
    // child's pid. A group that is already gone yields ESRCH, which is fine.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
pub fn kill_process_group(_pgid: u32) {}

/// Makes the child `command` starts receive SIGKILL when axon dies. Linux
/// delivers it when the thread that spawned the child ends, so children are
/// spawned from the runtime's long-lived threads (never a blocking-pool
/// thread, which ends when idle); the guardian covers the rest.
pub fn die_with_parent(command: &mut tokio::process::Command) {
    die_with_parent_std(command.as_std_mut());
}

/// [`die_with_parent`] for a blocking `std` command (checkpoint's git).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn die_with_parent_std(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    // SAFETY: the hook runs in the forked child before exec and calls only
    // async-signal-safe functions (prctl, getppid, _exit); it allocates
    // nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // axon died between fork and prctl: nothing will deliver the
            // signal now, so leave before running anything.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn die_with_parent_std(_command: &mut std::process::Command) {}

/// Makes orphaned descendants re-parent to axon rather than init, so
/// [`kill_orphans`] can find them. Called once, at the start of `main`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only; it changes this process's
    // own attribute.
    let result = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if result != 0 {
        return Err(std::io::Error::last_os_error());
    }
    crate::orphans::start_reaper();
    Ok(())
}

/// Makes `/proc/<axon>/environ` and `/proc/<axon>/mem` readable by root
/// only, and axon untraceable by its own user: a command the model runs
/// (as the same user) cannot read the API keys out of its parent's
/// environment (`cat /proc/$PPID/environ`), which filtering the child's own
/// environment does not prevent. Children become dumpable again when they
/// execute a program. Called once, at the start of `main`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn hide_environment() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only; it changes this process's
    // own attribute.
    let result = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
pub fn hide_environment() -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> std::io::Result<()> {
    Ok(())
}

/// The guardian's program: remember `+GROUP` lines, forget `-GROUP` lines,
/// and at end of input (axon gone) kill what is left.
const GUARDIAN: &str = r#"trap '' INT HUP TERM QUIT PIPE
g=' '
while IFS= read -r l; do
  case $l in
    +*) g="$g${l#+} " ;;
    -*) n=' '; for x in $g; do [ "$x" = "${l#-}" ] || n="$n$x "; done; g=$n ;;
  esac
done
for x in $g; do kill -s KILL -- "-$x" 2>/dev/null; done
"#;

struct Guardian {
    /// Kept so the guardian is not reaped while axon runs.
    _child: Child,
    /// Never closed while axon runs, even once the guardian is gone:
    /// children write to its descriptor between fork and exec
    /// ([`guardian_fd`]), and a closed number could be reused for a file
    /// or socket they would then write into.
    input: ChildStdin,
    alive: bool,
}

/// `None` once starting the guardian failed: the death signal still
/// covers direct children.
static GUARDIAN_STATE: Mutex<Option<Option<Guardian>>> = Mutex::new(None);

/// The guardian's input, for a child to list its own group before it
/// runs anything (`listing.rs`); `None` when there is no live guardian.
#[cfg(unix)]
pub(crate) fn guardian_fd() -> Option<std::os::fd::RawFd> {
    use std::os::fd::AsRawFd;
    let mut state = GUARDIAN_STATE.lock().unwrap_or_else(PoisonError::into_inner);
    match state.get_or_insert_with(start_guardian) {
        Some(guardian) if guardian.alive => Some(guardian.input.as_raw_fd()),
        _ => None,
    }
}

/// The guardian forgets `pgid`: a child that listed itself and whose
/// exec then failed.
pub(crate) fn forget_group(pgid: u32) {
    tell_guardian(&format!("-{pgid}\n"));
}

/// Asks the guardian to kill group `pgid` should axon die before
/// [`release_group`] is called for it.
pub fn guard_group(pgid: u32) {
    tell_guardian(&format!("+{pgid}\n"));
    crate::orphans::group_started(pgid);
}

/// The group `pgid` ended (or was killed); the guardian forgets it, and
/// the members axon adopted from it are reaped as they die.
pub fn release_group(pgid: u32) {
    tell_guardian(&format!("-{pgid}\n"));
    crate::orphans::group_ended(pgid);
}

/// Starts the guardian now rather than at the first command. Started
/// lazily, it was spawned while that command already ran: an axon killed
/// in between (as `kill -9` right after the first command started) left
/// the guardian with an empty list and the command's grandchildren alive.
/// The instant between a command's spawn and its line is closed by the
/// child listing itself (`listing.rs`).
pub fn start_guardian_early() {
    let mut state = GUARDIAN_STATE.lock().unwrap_or_else(PoisonError::into_inner);
    state.get_or_insert_with(start_guardian);
}

fn tell_guardian(line: &str) {
    let mut state = GUARDIAN_STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let guardian = state.get_or_insert_with(start_guardian);
    if let Some(running) = guardian
        && running.alive
        && running.input.write_all(line.as_bytes()).is_err()
    {
        // It is gone; the death signal is all that is left.
        running.alive = false;
    }
}

fn start_guardian() -> Option<Guardian> {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(GUARDIAN)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own group: a Ctrl-C at the terminal must not take it away.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().ok()?;
    let input = child.stdin.take()?;
    Some(Guardian { _child: child, input, alive: true })
}

/// A child started in its own process group (`process_group(0)`), guarded
/// while it runs: the group is killed when the child ends or times out
/// ([`GroupChild::kill_group`]) and when this is dropped (a cancelled
/// call); a dropped one leaves a task behind that reaps the child, so no
/// zombie waits for the runtime's next SIGCHLD. The `shell` tool and hooks
/// run their commands in one.
pub struct GroupChild {
    child: Option<tokio::process::Child>,
    group: Option<u32>,
}

impl GroupChild {
    pub fn new(child: tokio::process::Child) -> Self {
        let group = child.id();
        if let Some(group) = group {
            guard_group(group);
        }
        GroupChild { group, child: Some(child) }
    }

    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match &mut self.child {
            Some(child) => child.wait().await,
            None => Err(std::io::Error::other("the process was already reaped")),
        }
    }

    /// Kills what is left of the group (the child's own children too).
    pub fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            kill_process_group(group);
            release_group(group);
        }
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = child.wait().await;
            });
        }
    }
}

/// [`GroupChild`] for a blocking `std` child (the skills' `git clone`):
/// its group guarded while it runs, killed by [`StdGroupChild::kill_group`]
/// and on drop, when the child is also killed and reaped.
#[derive(Debug)]
pub struct StdGroupChild {
    pub child: std::process::Child,
    group: Option<u32>,
}

impl StdGroupChild {
    /// `child` must lead its own group (`process_group(0)`).
    pub fn new(child: std::process::Child) -> Self {
        let group = child.id();
        guard_group(group);
        StdGroupChild { child, group: Some(group) }
    }

    /// Kills what is left of the group, once.
    pub fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            kill_process_group(group);
            release_group(group);
        }
    }
}

impl Drop for StdGroupChild {
    fn drop(&mut self) {
        self.kill_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
