//! The lifetime of the processes axon starts: nothing it started outlives it.
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
//!   [`kill_orphans`] kills every such process when axon leaves.
//!
//! [`kill_process_group`] is the workspace's one place that signals a group.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn die_with_parent(command: &mut tokio::process::Command) {
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
pub fn die_with_parent(_command: &mut tokio::process::Command) {}

/// Makes orphaned descendants re-parent to axon rather than init, so
/// [`kill_orphans`] can find them. Called once, at the start of `main`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only; it changes this process's
    // own attribute.
    let result = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> std::io::Result<()> {
    Ok(())
}

/// Kills every process that is still axon's child, and the groups those
/// lead, round after round (killing a daemon re-parents its own children to
/// axon), then reaps them. For the moment axon leaves: it may also reap
/// children the async runtime still waits for. Bounded to a few seconds.
#[cfg(target_os = "linux")]
pub fn kill_orphans() {
    let me = std::process::id();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let children = children_of(me);
        let live: Vec<&Proc> = children.iter().filter(|c| !c.zombie).collect();
        for child in &children {
            reap(child.pid);
        }
        if live.is_empty() || Instant::now() > deadline {
            return;
        }
        for child in live {
            signal_orphan(child);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(not(target_os = "linux"))]
pub fn kill_orphans() {}

#[derive(Debug)]
struct Proc {
    pid: u32,
    pgid: u32,
    zombie: bool,
}

/// The processes whose parent is `parent`, read from `/proc`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command name is in parentheses and may hold anything, so
            // the fields are read after its last ')'.
            let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
            let (state, ppid, pgid) = (fields.first()?, fields.get(1)?, fields.get(2)?);
            (ppid.parse::<u32>().ok()? == parent).then(|| Proc {
                pid,
                pgid: pgid.parse().unwrap_or(0),
                zombie: *state == "Z" || *state == "X",
            })
        })
        .collect()
}

/// Kills an orphan, and its whole group when it leads one (a `setsid`
/// daemon does); a process in someone else's group is killed alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn signal_orphan(child: &Proc) {
    if child.pgid == child.pid {
        kill_process_group(child.pgid);
    }
    let Ok(pid) = i32::try_from(child.pid) else { return };
    if pid > 1 {
        // SAFETY: kill(2) takes no pointers; pid is our own child, which
        // cannot be reused before we reap it.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Collects a dead child's exit status, if it has one yet.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn reap(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    let mut status = 0;
    // SAFETY: waitpid writes one int through a pointer to a live local; a
    // child that is not ready yet returns 0 with WNOHANG.
    unsafe {
        libc::waitpid(pid, &raw mut status, libc::WNOHANG);
    }
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
    input: ChildStdin,
}

/// `None` once starting the guardian failed: the death signal still
/// covers direct children.
static GUARDIAN_STATE: Mutex<Option<Option<Guardian>>> = Mutex::new(None);

/// Asks the guardian to kill group `pgid` should axon die before
/// [`release_group`] is called for it.
pub fn guard_group(pgid: u32) {
    tell_guardian(&format!("+{pgid}\n"));
}

/// The group `pgid` ended (or was killed); the guardian forgets it.
pub fn release_group(pgid: u32) {
    tell_guardian(&format!("-{pgid}\n"));
}

fn tell_guardian(line: &str) {
    let mut state = GUARDIAN_STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let guardian = state.get_or_insert_with(start_guardian);
    if let Some(running) = guardian
        && running.input.write_all(line.as_bytes()).is_err()
    {
        // It is gone; the death signal is all that is left.
        *guardian = None;
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
    Some(Guardian { _child: child, input })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_stat_parser_finds_our_children() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let found = children_of(std::process::id());
        let ours = found.iter().find(|p| p.pid == child.id());
        assert!(ours.is_some_and(|p| !p.zombie), "{found:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
