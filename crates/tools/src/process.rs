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
//! As a subreaper axon also inherits the grandchildren of a group it kills,
//! and must reap them or they stay zombies in the group for as long as axon
//! runs (an `axon mcp serve` runs for days). [`release_group`] therefore
//! watches the killed group for a few seconds and reaps every dead child of
//! axon's in it except the group's leader: axon started only leaders (each
//! command or server in a group of its own), so any other member that is
//! axon's child was adopted, and no other code waits for it. Leaders are
//! left to the async runtime that waits for them.
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

/// The group `pgid` ended (or was killed); the guardian forgets it, and
/// the members axon adopted from it are reaped as they die.
pub fn release_group(pgid: u32) {
    tell_guardian(&format!("-{pgid}\n"));
    watch_for_orphans(pgid);
}

/// How long a killed group is watched for adopted members to reap.
const ORPHAN_WATCH: Duration = Duration::from_secs(10);
/// How often the watched groups are scanned.
const ORPHAN_SCAN: Duration = Duration::from_millis(100);

/// Groups whose adopted members are still to be reaped, with the moment
/// the watch ends; `None` while no reaper thread runs.
static WATCHED: Mutex<Option<Vec<(u32, Instant)>>> = Mutex::new(None);

#[cfg(target_os = "linux")]
fn watch_for_orphans(pgid: u32) {
    let mut watched = WATCHED.lock().unwrap_or_else(PoisonError::into_inner);
    let until = Instant::now() + ORPHAN_WATCH;
    match watched.as_mut() {
        Some(groups) => groups.push((pgid, until)),
        None => {
            *watched = Some(vec![(pgid, until)]);
            let started = std::thread::Builder::new()
                .name("axon-reaper".to_string())
                .spawn(reap_watched_groups);
            if started.is_err() {
                // No thread: the zombies wait for kill_orphans at exit.
                *watched = None;
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn watch_for_orphans(_pgid: u32) {}

/// The reaper thread: scans while any group is watched, then ends.
#[cfg(target_os = "linux")]
fn reap_watched_groups() {
    let me = std::process::id();
    loop {
        std::thread::sleep(ORPHAN_SCAN);
        let groups: Vec<u32> = {
            let mut watched = WATCHED.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(list) = watched.as_mut() else { return };
            let now = Instant::now();
            list.retain(|(_, until)| *until > now);
            if list.is_empty() {
                *watched = None;
                return;
            }
            list.iter().map(|(group, _)| *group).collect()
        };
        for child in children_of(me) {
            if child.zombie && child.pid != child.pgid && groups.contains(&child.pgid) {
                reap(child.pid);
            }
        }
    }
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
    use std::os::unix::process::CommandExt;

    use super::*;

    #[test]
    fn adopted_members_of_a_killed_group_are_reaped() {
        // Without a subreaper the orphan would go to init; this process
        // becomes one, as axon's main does.
        become_subreaper().unwrap();
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(leader.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let orphan: u32 = line.trim().parse().unwrap();
        let group = leader.id();
        guard_group(group);
        kill_process_group(group);
        leader.wait().unwrap();
        release_group(group);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::path::Path::new(&format!("/proc/{orphan}")).exists() {
            assert!(Instant::now() < deadline, "the adopted sleep was never reaped");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

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
