//! Per-turn cost of a checkpoint: after a 3-file change, how long
//! [`Checkpoints::snapshot`] takes, against a peer doing the same in the
//! same tree at the same moment: Gemini CLI's sequence (a shadow repository
//! with `GIT_DIR`/`GIT_WORK_TREE`, then `git add -A` and
//! `git commit --allow-empty`), run as plain git processes with the same
//! isolated environment. `bench/checkpoint.sh` runs it.
//!
//! Usage: bench TREE RUNS            (measure on an existing tree)
//!        bench --generate N DIR     (write N files of source-like text)
//! Prints a table: first snapshot (creating the shadow repository
//! included, for both, on a warm page cache), per-turn median and p95, one
//! restore.

#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use axon_checkpoint::Checkpoints;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    match args.as_slice() {
        [_, flag, n, dir] if flag == "--generate" => generate(Path::new(dir), n.parse()?),
        [_, tree, runs] => measure(Path::new(tree), runs.parse()?),
        _ => Err("usage: bench TREE RUNS | bench --generate N DIR".into()),
    }
}

fn generate(dir: &Path, n: usize) -> Result<(), Error> {
    for i in 0..n {
        let sub = dir.join(format!("mod{:03}", i % 100)).join(format!("sub{}", i % 7));
        std::fs::create_dir_all(&sub)?;
        let body: String = (0..40)
            .map(|line| format!("pub fn f_{i}_{line}(x: u64) -> u64 {{ x * {line} + {i} }}\n"))
            .collect();
        std::fs::write(sub.join(format!("file{i}.rs")), body)?;
    }
    Ok(())
}

fn measure(tree: &Path, runs: usize) -> Result<(), Error> {
    let files = text_files(tree)?;
    if files.len() < 3 {
        return Err("the tree needs at least 3 files".into());
    }
    let data = tempfile::tempdir()?;
    // Both first snapshots read every file: from the page cache for both,
    // not from the disk for whichever goes first.
    warm(tree)?;

    // The first snapshot includes creating the shadow repository, for both.
    let started = Instant::now();
    let cp = Checkpoints::open(data.path(), tree)?;
    let first = cp.snapshot("bench", "first")?;
    let axon_first = started.elapsed();
    let started = Instant::now();
    let peer = Peer::new(data.path().join("peer"), tree)?;
    peer.turn()?;
    let peer_first = started.elapsed();

    let mut axon = Vec::new();
    let mut peer_times = Vec::new();
    let (mut axon_cpu, mut peer_cpu) = (Duration::ZERO, Duration::ZERO);
    for run in 0..runs {
        for k in 0..3 {
            let file = &files[(run * 3 + k) * 7919 % files.len()];
            let mut bytes = std::fs::read(file)?;
            bytes.extend_from_slice(format!("// turn {run}\n").as_bytes());
            std::fs::write(file, bytes)?;
        }
        // Alternate who goes first, so neither always meets a warm cache.
        let mut ours = || time(&mut axon_cpu, || cp.snapshot("bench", "turn").map(|s| s.changed));
        let (a, p) = if run % 2 == 0 {
            let a = ours()?;
            (a, time(&mut peer_cpu, || peer.turn())?)
        } else {
            let p = time(&mut peer_cpu, || peer.turn())?;
            (ours()?, p)
        };
        axon.push(a);
        peer_times.push(p);
    }
    let started = Instant::now();
    let restored = cp.restore("bench", &first.id)?;
    let restore = started.elapsed();

    println!("tree: {} ({} .rs/.md files take the changes)", tree.display(), files.len());
    println!(
        "| what | first snapshot | per turn median | per turn p95 | git CPU per turn (mean) |"
    );
    println!("|---|---|---|---|---|");
    row("axon-checkpoint", axon_first, &mut axon, axon_cpu);
    row("peer: shadow repo, git add -A + commit", peer_first, &mut peer_times, peer_cpu);
    println!(
        "restore to the first snapshot ({} files written, {} removed): {}",
        restored.written.len(),
        restored.removed.len(),
        ms(restore)
    );
    Ok(())
}

/// Wall time of `f`; the CPU time of the processes it ran is added to `cpu`.
fn time<T, E: Into<Error>>(
    cpu: &mut Duration,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<Duration, Error> {
    let cpu_before = children_cpu();
    let started = Instant::now();
    f().map_err(Into::into)?;
    let wall = started.elapsed();
    *cpu += children_cpu().saturating_sub(cpu_before);
    Ok(wall)
}

/// User + system time of the waited-for children, from /proc (in the
/// kernel's fixed 100 Hz ticks: exact only summed over many runs).
fn children_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    // Fields 16 and 17 (cutime, cstime); `after_name` starts at field 3.
    let ticks: u64 =
        after_name.split_whitespace().skip(13).take(2).filter_map(|f| f.parse::<u64>().ok()).sum();
    Duration::from_millis(ticks * 10)
}

fn row(name: &str, first: Duration, times: &mut [Duration], cpu: Duration) {
    times.sort();
    let median = times[times.len() / 2];
    let p95 = times[((times.len() * 95).div_ceil(100)).saturating_sub(1).min(times.len() - 1)];
    let cpu = cpu / times.len() as u32;
    println!("| {name} | {} | {} | {} | {} |", ms(first), ms(median), ms(p95), ms(cpu));
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Reads every regular file below `root`, outside `.git`, once.
fn warm(root: &Path) -> Result<(), Error> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() && entry.file_name() != ".git" {
                stack.push(entry.path());
            } else if kind.is_file() {
                std::fs::read(entry.path())?;
            }
        }
    }
    Ok(())
}

/// Regular text files outside `.git`, to change 3 of each turn.
fn text_files(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() && entry.file_name() != ".git" {
                stack.push(entry.path());
            } else if kind.is_file()
                && entry.path().extension().is_some_and(|e| e == "rs" || e == "md")
            {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Gemini CLI's checkpoint: a shadow repository, `git add -A`, then a commit
/// that may be empty.
struct Peer {
    git_dir: PathBuf,
    tree: PathBuf,
}

impl Peer {
    fn new(git_dir: PathBuf, tree: &Path) -> Result<Peer, Error> {
        let peer = Peer { git_dir, tree: tree.to_path_buf() };
        peer.git(&["init", "-q", "--template="])?;
        peer.git(&["config", "core.autocrlf", "false"])?;
        Ok(peer)
    }

    fn turn(&self) -> Result<(), Error> {
        self.git(&["add", "-A"])?;
        self.git(&["commit", "-q", "--allow-empty", "--no-verify", "-m", "checkpoint"])
    }

    fn git(&self, args: &[&str]) -> Result<(), Error> {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        let status = command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.tree)
            .env("HOME", &self.git_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "peer")
            .env("GIT_AUTHOR_EMAIL", "peer@localhost")
            .env("GIT_COMMITTER_NAME", "peer")
            .env("GIT_COMMITTER_EMAIL", "peer@localhost")
            .current_dir(&self.tree)
            .args(args)
            .status()?;
        if status.success() { Ok(()) } else { Err(format!("git {args:?} failed").into()) }
    }
}
