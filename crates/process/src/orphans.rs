//! What axon adopts as a child subreaper: killed when axon leaves, reaped
//! while it runs.
//!
//! A process a command or server detached (`setsid`, a daemon) and the
//! grandchildren of a group axon killed are re-parented to axon. They are
//! axon's to reap, or they stay zombies for as long as axon runs (an
//! `axon mcp serve` runs for days). The reaper thread reaps only zombies no
//! other code waits for, known by what axon never does itself:
//! - a session leader (`sid == pid`): axon starts children in process
//!   groups of their own, never in new sessions, so one was adopted;
//! - a member of a group axon started other than its leader: axon's only
//!   direct child in such a group is the leader (the command or server),
//!   which the async runtime waits for.
//!
//! [`kill_orphans`] is for the moment axon leaves: it kills every child
//! still there, round after round (killing a daemon re-parents its own
//! children to axon), and reaps them all.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a group is still watched after axon killed it (its members die
/// and are re-parented over a few moments).
const ENDED_GROUP_WATCH: Duration = Duration::from_secs(10);
/// How often the reaper looks.
const SCAN_EVERY: Duration = Duration::from_millis(250);

#[derive(Default)]
struct Groups {
    live: HashSet<u32>,
    ended: Vec<(u32, Instant)>,
}

static GROUPS: Mutex<Option<Groups>> = Mutex::new(None);

/// axon started a process group (a command or a server) led by `pgid`.
pub(crate) fn group_started(pgid: u32) {
    let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    groups.get_or_insert_with(Groups::default).live.insert(pgid);
}

/// The group led by `pgid` ended or was killed; its adopted members are
/// still reaped for a while.
pub(crate) fn group_ended(pgid: u32) {
    let mut guard = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    let groups = guard.get_or_insert_with(Groups::default);
    groups.live.remove(&pgid);
    groups.ended.push((pgid, Instant::now() + ENDED_GROUP_WATCH));
}

/// The groups whose non-leader members are axon's to reap.
fn watched_groups() -> HashSet<u32> {
    let mut guard = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    let groups = guard.get_or_insert_with(Groups::default);
    let now = Instant::now();
    groups.ended.retain(|(_, until)| *until > now);
    groups.live.iter().copied().chain(groups.ended.iter().map(|(g, _)| *g)).collect()
}

/// Starts the thread that reaps adopted zombies; once per process, with
/// [`crate::group::become_subreaper`].
#[cfg(target_os = "linux")]
pub(crate) fn start_reaper() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // Without the thread, adopted zombies wait for kill_orphans.
        let _ = std::thread::Builder::new().name("axon-reaper".to_string()).spawn(|| {
            let me = std::process::id();
            loop {
                std::thread::sleep(SCAN_EVERY);
                reap_adopted(me);
            }
        });
    });
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn start_reaper() {}

#[cfg(target_os = "linux")]
fn reap_adopted(me: u32) {
    let children = children_of(me);
    if !children.iter().any(|c| c.zombie) {
        return;
    }
    let groups = watched_groups();
    for child in children {
        let adopted =
            child.sid == child.pid || (child.pid != child.pgid && groups.contains(&child.pgid));
        if child.zombie && adopted {
            reap(child.pid);
        }
    }
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
    sid: u32,
    zombie: bool,
}

/// The processes whose parent is `parent`: from each thread's `children`
/// list when the kernel has them (cheap), else by reading all of `/proc`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<Proc> {
    let pids = listed_children(parent).unwrap_or_else(|| {
        std::fs::read_dir("/proc")
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
                    .collect()
            })
            .unwrap_or_default()
    });
    pids.into_iter()
        .filter_map(|pid| stat(pid).filter(|(ppid, _)| *ppid == parent))
        .map(|(_, p)| p)
        .collect()
}

/// Every thread's `children` file of `parent`, or `None` if the kernel has
/// none (it needs CONFIG_PROC_CHILDREN).
#[cfg(target_os = "linux")]
fn listed_children(parent: u32) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).ok()?;
    let mut pids = Vec::new();
    for task in tasks.filter_map(Result::ok) {
        let text = std::fs::read_to_string(task.path().join("children")).ok()?;
        pids.extend(text.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    Some(pids)
}

/// A process's parent and what the reaper needs to know of it.
#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<(u32, Proc)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything, so the
    // fields are read after its last ')'.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u32>().ok());
    let state = fields.first()?;
    Some((
        number(1)?,
        Proc {
            pid,
            pgid: number(2).unwrap_or(0),
            sid: number(3).unwrap_or(0),
            zombie: *state == "Z" || *state == "X",
        },
    ))
}

/// Kills an orphan, and its whole group when it leads one (a `setsid`
/// daemon does); a process in someone else's group is killed alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn signal_orphan(child: &Proc) {
    if child.pgid == child.pid {
        crate::group::kill_process_group(child.pgid);
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

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use super::*;
    use crate::group::{become_subreaper, guard_group, kill_process_group, release_group};

    /// Waits until `/proc/PID` is gone (reaped), 30 s at most.
    fn wait_reaped(pid: u32, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "{what} was never reaped");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts `sh -c SCRIPT` in a group of its own and reads the pid the
    /// script prints first.
    fn start(script: &str) -> (std::process::Child, u32) {
        let mut leader = Command::new("sh")
            .args(["-c", script])
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
        (leader, line.trim().parse().unwrap())
    }

    #[test]
    fn adopted_members_of_a_killed_group_are_reaped() {
        // Without a subreaper the orphan would go to init; this process
        // becomes one, as axon's main does.
        become_subreaper().unwrap();
        let (mut leader, orphan) = start("sleep 30 & echo $!; wait");
        let group = leader.id();
        guard_group(group);
        kill_process_group(group);
        leader.wait().unwrap();
        release_group(group);
        wait_reaped(orphan, "the adopted sleep");
    }

    #[test]
    fn a_detached_daemon_that_ends_is_reaped() {
        become_subreaper().unwrap();
        // The daemon outlives its starter, is adopted, then ends by itself.
        let (mut leader, daemon) = start("setsid sh -c 'read x < /dev/null; sleep 0.2' & echo $!");
        leader.wait().unwrap();
        wait_reaped(daemon, "the ended daemon");
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
