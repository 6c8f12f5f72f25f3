//! A child lists its own process group with the guardian before it runs
//! anything, so no instant exists in which axon can die with a command
//! running that the guardian does not know.
//!
//! Listing from axon after `spawn` returned left such an instant: the child
//! could run `touch started; sleep 60` before axon's thread wrote its line,
//! and a `kill -9` of axon then left the `sleep` running (the death signal
//! reaches only the child, `sh`). Here the child writes `+PID` to the
//! guardian's pipe in its last step before `exec`, once it leads its own
//! group. A write to a pipe of no more than `PIPE_BUF` bytes is atomic, so
//! the line never interleaves with axon's own.
//!
//! If the `exec` then fails, the child is gone and its line would stay on
//! the list; should its pid come back as another process's group before
//! axon ends, the guardian would kill that. So the child also reports its
//! pid to axon on a pipe of its own, and a failed spawn takes the line back.
//!
//! axon still writes its own `+PID` after the spawn (`guard_group`, which
//! also tells `orphans`): it covers a child that could not list itself
//! (its report pipe could not be made). Two `+PID` lines are harmless; one
//! `-PID` removes both.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The report pipe of one spawn: read after a failed spawn to take the
/// child's line back.
pub struct Listing {
    report: Option<OwnedFd>,
}

impl Listing {
    /// Adds the listing to `command`'s steps before `exec`. Call it after
    /// every other `pre_exec` step, so a later step's failure cannot follow
    /// the line, and with the child made a group leader
    /// (`process_group(0)`); a child in axon's group lists nothing.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    pub fn prepare(command: &mut std::process::Command) -> Listing {
        use std::os::unix::process::CommandExt;
        let Some(guardian) = crate::group::guardian_fd() else {
            return Listing { report: None };
        };
        let Some((read, write)) = report_pipe() else {
            return Listing { report: None };
        };
        // SAFETY: the step runs in the forked child before exec and calls
        // only async-signal-safe functions (getpid, getpgrp, signal, write);
        // it allocates nothing and takes no lock. Both descriptors stay open
        // in the child until exec: `write` is owned by the step, and the
        // guardian's is never closed while axon runs (`group::guardian_fd`).
        unsafe {
            command.pre_exec(move || {
                let pid = libc::getpid();
                if libc::getpgrp() != pid {
                    return Ok(());
                }
                // A reader that is gone (the guardian killed, the report
                // read already) must fail the write, not kill the child.
                let before = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                let bytes = pid.to_ne_bytes();
                libc::write(write.as_raw_fd(), bytes.as_ptr().cast(), bytes.len());
                let mut line = [0u8; 16];
                let length = group_line(pid, &mut line);
                libc::write(guardian, line.as_ptr().cast(), length);
                libc::signal(libc::SIGPIPE, before);
                Ok(())
            });
        }
        Listing { report: Some(read) }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn prepare(_command: &mut std::process::Command) -> Listing {
        Listing { report: None }
    }

    /// The spawn failed: if the child got as far as listing itself, the
    /// guardian forgets it.
    pub fn spawn_failed(self) {
        let _ = self.take_back();
    }

    /// [`Listing::spawn_failed`], saying which group it took back.
    fn take_back(self) -> Option<u32> {
        let report = self.report?;
        let mut bytes = [0u8; 4];
        // The child has exited (std reaps it before a spawn fails), so what
        // it wrote is there; the read end does not block.
        if !read_exact_now(&report, &mut bytes) {
            return None;
        }
        let pid = u32::try_from(i32::from_ne_bytes(bytes)).ok()?;
        crate::group::forget_group(pid);
        Some(pid)
    }
}

/// Spawns `command` with its group listed by the child ([`Listing`]).
/// `command` must make the child a group leader (`process_group(0)`).
pub fn spawn_listed(command: &mut tokio::process::Command) -> io::Result<tokio::process::Child> {
    let listing = Listing::prepare(command.as_std_mut());
    command.spawn().inspect_err(|_| listing.spawn_failed())
}

/// [`spawn_listed`] for a blocking `std` command.
pub fn spawn_listed_std(command: &mut std::process::Command) -> io::Result<std::process::Child> {
    let listing = Listing::prepare(command);
    command.spawn().inspect_err(|_| listing.spawn_failed())
}

/// `+PID\n` in `line`, without allocating (this runs between fork and
/// exec); returns its length.
#[cfg(target_os = "linux")]
fn group_line(pid: libc::pid_t, line: &mut [u8; 16]) -> usize {
    let mut digits = [0u8; 12];
    let mut count = 0;
    let mut rest = pid.unsigned_abs();
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 || count == digits.len() {
            break;
        }
    }
    line[0] = b'+';
    for (slot, digit) in line[1..=count].iter_mut().zip(digits[..count].iter().rev()) {
        *slot = *digit;
    }
    line[count + 1] = b'\n';
    count + 2
}

/// A close-on-exec pipe whose read end never blocks: (read, write).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn report_pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned by no one
    // else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(read.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0
        || unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } != 0
    {
        return None;
    }
    Some((read, write))
}

#[allow(unsafe_code)]
fn read_exact_now(fd: &OwnedFd, bytes: &mut [u8; 4]) -> bool {
    // SAFETY: read(2) into a buffer of the length given.
    let read = unsafe { libc::read(fd.as_raw_fd(), bytes.as_mut_ptr().cast(), bytes.len()) };
    read == 4
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// Set in the copy of this test binary that plays axon.
    const PLAYING_AXON_IN: &str = "AXON_LISTING_TEST_DIR";

    fn running(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next();
        !matches!(state, Some("Z" | "X") | None)
    }

    /// axon killed after the command ran but before axon listed its group
    /// (no `guard_group` call at all here): the child's own line is what
    /// the guardian kills by.
    #[test]
    #[allow(unsafe_code)]
    fn a_command_listed_only_by_itself_dies_with_a_killed_axon() {
        if let Ok(dir) = std::env::var(PLAYING_AXON_IN) {
            crate::group::start_guardian_early();
            let mut command = std::process::Command::new("sh");
            command
                .arg("-c")
                .arg("sleep 120 & echo $! > sleeping.tmp; mv sleeping.tmp sleeping; wait")
                .current_dir(&dir);
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            // Never waited on: this process dies with it running, on purpose.
            #[allow(clippy::zombie_processes)]
            let _child = spawn_listed_std(&mut command).unwrap();
            while !Path::new(&dir).join("sleeping").exists() {
                std::thread::sleep(Duration::from_millis(10));
            }
            // SAFETY: kill(2) on this process, as `kill -9` from outside.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "listing::tests::a_command_listed_only_by_itself_dies_with_a_killed_axon",
            ])
            .args(["--test-threads=1", "--nocapture"])
            .env(PLAYING_AXON_IN, dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
        let sleeping = std::fs::read_to_string(dir.path().join("sleeping")).unwrap();
        let pid: i32 = sleeping.trim().parse().unwrap();
        // The sleep would outlive this deadline by far if it were left.
        let deadline = Instant::now() + Duration::from_secs(60);
        while running(pid) {
            if Instant::now() > deadline {
                // SAFETY: kill(2) on the group this test's command made.
                unsafe { libc::kill(-libc::getpgid(pid), libc::SIGKILL) };
                panic!("the command's sleep ({pid}) outlived axon");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_failed_exec_takes_its_line_back() {
        let mut command = std::process::Command::new("/nonexistent/axon-listing-test");
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let listing = Listing::prepare(&mut command);
        assert!(command.spawn().is_err());
        assert!(listing.take_back().is_some_and(|pid| pid > 1));
    }

    #[test]
    fn a_child_in_axons_group_lists_nothing() {
        let mut command = std::process::Command::new("/nonexistent/axon-listing-test");
        let listing = Listing::prepare(&mut command);
        assert!(command.spawn().is_err());
        assert_eq!(listing.take_back(), None);
    }

    #[test]
    fn the_line_is_the_pid_in_decimal() {
        for pid in [1, 7, 10, 4_194_304, i32::MAX] {
            let mut line = [0u8; 16];
            let length = group_line(pid, &mut line);
            assert_eq!(&line[..length], format!("+{pid}\n").as_bytes());
        }
    }
}
