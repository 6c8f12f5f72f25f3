//! Background commands: `shell {background: true}` starts a command and
//! returns its id at once; `shell_output {id}` reads what it printed since
//! the last read and whether it ended; `shell_kill {id}` stops it.
//!
//! Guarantees:
//! - A background command starts exactly as a foreground one does
//!   (`Shell::command`: the sandbox, the environment policy, the checked
//!   working folder, its own process group dying with axon), and its group
//!   is listed with the guardian and with `axon_process`'s long-lived
//!   groups, so it is killed exactly once: by `shell_kill`, when it ends
//!   (what it left running in its group goes with it), when the session's
//!   tools are dropped ([`Jobs`]'s `Drop`), or by `axon_process::kill_all`.
//! - Memory is bounded: at most [`MAX_UNREAD`] bytes of unread output are
//!   kept per command (the newest whole lines; what was dropped is counted
//!   and said; a trim never leaves part of a line or of a private key block,
//!   whose rest no secret rule would recognise),
//!   at most [`MAX_RUNNING`] commands run at once, and at most
//!   [`MAX_LISTED`] are remembered.
//! - stdout and stderr are read as they come, merged in the order they
//!   arrive, as a terminal shows them; the pipes are always drained, so a
//!   command never blocks on a full pipe however slowly it is read.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axon_protocol::{ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;

use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
use crate::shell::{ShellCommand, describe_status};

/// Unread output kept per command: the newest bytes.
pub(crate) const MAX_UNREAD: usize = 32 * 1024;
/// Background commands running at once.
pub(crate) const MAX_RUNNING: usize = 16;
/// Commands remembered (running, or ended with their last output).
pub(crate) const MAX_LISTED: usize = 64;
/// Longest `wait_ms` of a `shell_output` call.
const MAX_WAIT_MS: u64 = 30_000;
/// How long `shell_kill` waits for the killed command to be reaped and its
/// last output read.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// The longest unfinished last line a read holds back while the command
/// runs (longer ones are given as they are).
const HELD_LINE: usize = 4096;

/// The background commands of one set of tools (a session's).
#[derive(Default)]
pub struct Jobs {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    started: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
}

struct Job {
    id: String,
    command: String,
    started: Instant,
    /// The process group, which is also the child's pid.
    group: u32,
    output: Mutex<Output>,
    /// Woken when output arrives or the command ends.
    changed: Notify,
    /// The readers and the waiter, aborted when the job is dropped.
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

#[derive(Default)]
struct Output {
    unread: VecDeque<u8>,
    /// Bytes dropped since the last read: they came faster than they were read.
    dropped: u64,
    /// How it ended, once it has.
    end: Option<End>,
    /// Whether `shell_kill` stopped it.
    killed: bool,
    /// Pipes still open.
    open_streams: u8,
    /// The line being dropped has not ended yet (see [`Output::push`]).
    cutting_line: bool,
}

/// Where a line ends, for trimming: a carriage return too, so a progress
/// bar redrawn in place is not one endless line.
fn is_line_end(byte: u8) -> bool {
    byte == b'\n' || byte == b'\r'
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[derive(Clone)]
struct End {
    how: String,
    after: Duration,
}

impl Output {
    /// Keeps `bytes` after what is unread; past [`MAX_UNREAD`] the oldest
    /// are dropped, always up to a line's end: a key cut in two matches no
    /// rule, so its rest would reach the model unmasked. A line longer than
    /// what is kept is dropped whole, up to its end in a later push.
    fn push(&mut self, mut bytes: &[u8]) {
        if self.cutting_line {
            match bytes.iter().position(|&b| is_line_end(b)) {
                Some(end) => {
                    self.cutting_line = false;
                    self.dropped += end as u64 + 1;
                    bytes = &bytes[end + 1..];
                }
                None => {
                    self.dropped += bytes.len() as u64;
                    return;
                }
            }
        }
        self.unread.extend(bytes);
        let excess = self.unread.len().saturating_sub(MAX_UNREAD);
        if excess == 0 {
            return;
        }
        let held = self.unread.make_contiguous();
        let mut cut = if is_line_end(held[excess - 1]) {
            excess
        } else {
            match held[excess..].iter().position(|&b| is_line_end(b)) {
                Some(end) => excess + end + 1,
                None => {
                    self.cutting_line = true;
                    held.len()
                }
            }
        };
        // The rest of a private key block whose start was dropped goes too,
        // through its END line: its lines alone match no rule either.
        let kept = &held[cut..];
        if let Some(end) = find(kept, b"-----END ")
            && find(kept, b"-----BEGIN ").is_none_or(|begin| end < begin)
        {
            cut +=
                kept[end..].iter().position(|&b| b == b'\n').map_or(kept.len(), |at| end + at + 1);
        }
        self.unread.drain(..cut);
        self.dropped += cut as u64;
    }

    /// Takes the unread output as text. While the command may still write,
    /// an unfinished last line (up to [`HELD_LINE`] bytes) stays for the next
    /// read: secrets are masked a read at a time, and a key cut between two
    /// reads would match no rule in either half.
    fn take(&mut self) -> (String, u64) {
        let bytes: Vec<u8> = self.unread.drain(..).collect();
        let dropped = std::mem::take(&mut self.dropped);
        let keep = self.held_back(&bytes);
        let (text, rest) = bytes.split_at(bytes.len() - keep);
        self.unread.extend(rest);
        (String::from_utf8_lossy(text).into_owned(), dropped)
    }

    /// How many bytes at the end of `bytes` a read leaves for the next one.
    fn held_back(&self, bytes: &[u8]) -> usize {
        let more = self.end.is_none() || self.open_streams > 0;
        let line_start = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
        match std::str::from_utf8(bytes) {
            _ if more && bytes.len() - line_start <= HELD_LINE && line_start > 0 => {
                bytes.len() - line_start
            }
            _ if more && line_start == 0 && bytes.len() <= HELD_LINE => bytes.len(),
            Err(e) if more && e.error_len().is_none() => bytes.len() - e.valid_up_to(),
            _ => 0,
        }
    }

    /// Whether a read now would say something new: output it would give
    /// (not only a line it holds back), dropped bytes, or the end.
    fn ready(&mut self) -> bool {
        self.unread.make_contiguous();
        let held = self.held_back(self.unread.as_slices().0);
        self.unread.len() > held || self.dropped > 0 || self.done()
    }

    fn done(&self) -> bool {
        self.end.is_some() && self.open_streams == 0
    }
}

impl Jobs {
    /// Starts `prepared` in the background; the text says its id.
    pub(crate) fn start(
        &self,
        mut prepared: ShellCommand,
        command: &str,
        timeout: Option<Duration>,
    ) -> Result<String, ToolError> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let running = table.jobs.values().filter(|j| j.lock().end.is_none()).count();
        if running >= MAX_RUNNING {
            return Err(ToolError::failed(format!(
                "{running} background commands are running, the most at once; stop one with \
                 shell_kill first (shell_output on each id says what it is doing)"
            )));
        }
        prepared.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = axon_process::spawn_listed(&mut prepared.command)
            .map_err(|e| ToolError::failed(format!("Failed to start `sh`: {e}")))?;
        let Some(group) = child.id() else {
            return Err(ToolError::failed("The command ended before it could be tracked"));
        };
        axon_process::guard_group(group);
        axon_process::track_server_group(group);
        table.started += 1;
        let number = table.started;
        let job = Arc::new(Job {
            id: format!("bg{number}"),
            command: command.to_string(),
            started: Instant::now(),
            group,
            output: Mutex::new(Output { open_streams: 2, ..Output::default() }),
            changed: Notify::new(),
            tasks: Mutex::new(Vec::new()),
        });
        let mut tasks = vec![
            tokio::spawn(read_into(child.stdout.take(), Arc::clone(&job))),
            tokio::spawn(read_into(child.stderr.take(), Arc::clone(&job))),
        ];
        let waiter = Arc::clone(&job);
        tasks.push(tokio::spawn(async move {
            let status = match timeout {
                Some(limit) => tokio::time::timeout(limit, child.wait()).await.ok(),
                None => Some(child.wait().await),
            };
            // What it left in its group goes with it; once, whoever is first.
            axon_process::kill_server_group(waiter.group);
            let how = match status {
                Some(Ok(status)) => describe_status(&status),
                Some(Err(e)) => format!("could not be waited for ({e})"),
                None => {
                    let _ = child.wait().await;
                    format!(
                        "timed out after {} ms and was killed",
                        timeout.map_or(0, |t| t.as_millis())
                    )
                }
            };
            waiter.finish(how);
        }));
        *job.tasks.lock().unwrap_or_else(PoisonError::into_inner) = tasks;
        let id = job.id.clone();
        table.jobs.insert(number, job);
        forget_the_oldest_ended(&mut table);
        // crates/core/src/carry.rs reads this line and the reports' "[id]
        // ended" to carry running commands through a compaction.
        Ok(format!(
            "Started in the background as {id}: `{command}`. Read its output with shell_output \
             {{\"id\": \"{id}\"}} (wait_ms waits for more), stop it with shell_kill. It is killed \
             when the session ends."
        ))
    }

    fn find(&self, id: &str) -> Result<Arc<Job>, ToolError> {
        let table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(job) = table.jobs.values().find(|job| job.id == id.trim()) {
            return Ok(Arc::clone(job));
        }
        let known: Vec<&str> = table.jobs.values().map(|job| job.id.as_str()).collect();
        Err(ToolError::failed(if known.is_empty() {
            format!("No background command '{id}': none was started (shell with background=true)")
        } else {
            format!("No background command '{id}'; the known ones are {}", known.join(", "))
        }))
    }

    /// Every command remembered, oldest first: what `/ps` shows. Reading
    /// the list reads no output (`unread` stays for `shell_output`).
    pub fn list(&self) -> Vec<axon_protocol::BackgroundCommand> {
        let table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table
            .jobs
            .values()
            .map(|job| {
                let output = job.lock();
                axon_protocol::BackgroundCommand {
                    id: job.id.clone(),
                    command: job.command.clone(),
                    seconds: output
                        .end
                        .as_ref()
                        .map_or_else(|| job.started.elapsed(), |end| end.after)
                        .as_secs(),
                    ended: output.end.as_ref().map(|end| end.how.clone()),
                    unread: output.unread.len() as u64 + output.dropped,
                }
            })
            .collect()
    }
}

/// Ended commands past [`MAX_LISTED`] are forgotten, oldest first.
fn forget_the_oldest_ended(table: &mut Table) {
    while table.jobs.len() > MAX_LISTED {
        let oldest = table.jobs.iter().find(|(_, job)| job.lock().done()).map(|(n, _)| *n);
        match oldest {
            Some(number) => {
                table.jobs.remove(&number);
            }
            None => break,
        }
    }
}

/// The session's tools are going: every command still running is killed.
impl Drop for Jobs {
    fn drop(&mut self) {
        let table = self.table.get_mut().unwrap_or_else(PoisonError::into_inner);
        for job in table.jobs.values() {
            axon_process::kill_server_group(job.group);
            for task in job.tasks.lock().unwrap_or_else(PoisonError::into_inner).drain(..) {
                task.abort();
            }
        }
    }
}

impl Job {
    fn lock(&self) -> std::sync::MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(&self, how: String) {
        let mut output = self.lock();
        if output.end.is_none() {
            let how = if output.killed { "was killed by shell_kill".to_string() } else { how };
            output.end = Some(End { how, after: self.started.elapsed() });
        }
        drop(output);
        self.changed.notify_waiters();
    }

    /// Its state, its new output and what was dropped, as the model reads it.
    fn report(&self) -> String {
        let mut output = self.lock();
        let state = match &output.end {
            None => format!("running for {:.1}s", self.started.elapsed().as_secs_f64()),
            Some(End { how, after }) => format!("ended: {how} after {:.1}s", after.as_secs_f64()),
        };
        let (text, dropped) = output.take();
        let done = output.done();
        drop(output);
        let mut out = format!("[{}] {state}: `{}`\n", self.id, self.command);
        if dropped > 0 {
            out.push_str(&format!(
                "[{dropped} bytes of output were dropped: it printed faster than it was read; \
                 the newest {} KiB are kept]\n",
                MAX_UNREAD / 1024
            ));
        }
        if text.is_empty() {
            out.push_str(if done { "(no new output; it has ended)" } else { "(no new output)" });
        } else {
            out.push_str(&text);
        }
        out
    }
}

/// Reads one of the command's pipes into its output until the pipe closes.
async fn read_into(stream: Option<impl AsyncRead + Unpin>, job: Arc<Job>) {
    if let Some(mut stream) = stream {
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
            job.lock().push(&buf[..n]);
            job.changed.notify_waiters();
        }
    }
    job.lock().open_streams -= 1;
    job.changed.notify_waiters();
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellOutputArgs {
    /// The id shell gave when it started the command in the background (bg1, bg2, …).
    pub id: String,
    /// Milliseconds to wait for new output or the command's end when there is none yet. Defaults to 0, at most 30000.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// `shell_output`: a background command's new output and state.
pub struct ShellOutput {
    pub jobs: Arc<Jobs>,
}

impl TypedTool for ShellOutput {
    type Args = ShellOutputArgs;
    const NAME: &'static str = "shell_output";

    fn description(&self) -> String {
        format!(
            "Read what a background command (shell with background=true) printed since the last \
             read, stdout and stderr together, and whether it is still running or how it ended. \
             At most the newest {} KiB are kept between reads. wait_ms waits for output first.",
            MAX_UNREAD / 1024
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(
        &self,
        _ctx: &ToolContext,
        args: ShellOutputArgs,
    ) -> Result<ToolOutput, ToolError> {
        let job = self.jobs.find(&args.id)?;
        let wait = Duration::from_millis(args.wait_ms.unwrap_or(0).min(MAX_WAIT_MS));
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before looking, so a change in between still wakes it.
            let changed = job.changed.notified();
            // A line held back is not news: waiting lets it end.
            if job.lock().ready() {
                break;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                break;
            }
        }
        Ok(ToolOutput::text(job.report()))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellKillArgs {
    /// The id of the background command to stop (bg1, bg2, …).
    pub id: String,
}

/// `shell_kill`: stops a background command and everything in its group.
pub struct ShellKill {
    pub jobs: Arc<Jobs>,
}

impl TypedTool for ShellKill {
    type Args = ShellKillArgs;
    const NAME: &'static str = "shell_kill";

    fn description(&self) -> String {
        "Stop a background command (shell with background=true) and everything it started; \
         returns its last output."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations { read_only: false, destructive: false, idempotent: true }
    }

    async fn run(&self, _ctx: &ToolContext, args: ShellKillArgs) -> Result<ToolOutput, ToolError> {
        let job = self.jobs.find(&args.id)?;
        let deadline = tokio::time::Instant::now() + KILL_GRACE;
        {
            let mut output = job.lock();
            if output.end.is_some() {
                drop(output);
                return Ok(ToolOutput::text(format!(
                    "{} had already ended; nothing to stop.\n{}",
                    job.id,
                    job.report()
                )));
            }
            output.killed = true;
        }
        axon_process::kill_server_group(job.group);
        loop {
            let changed = job.changed.notified();
            if job.lock().done() {
                break;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                break;
            }
        }
        Ok(ToolOutput::text(job.report()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_output_keeps_the_newest_lines_and_counts_the_rest() {
        let mut output = Output { open_streams: 1, ..Output::default() };
        let line = format!("{}\n", "a".repeat(99));
        output.push(line.repeat(MAX_UNREAD / 100).as_bytes());
        output.push(format!("{line}tail\n").as_bytes());
        let (text, dropped) = output.take();
        // The trim fell inside the first line: all of it went.
        assert_eq!(dropped, 100);
        assert_eq!(text.len(), 100 * (MAX_UNREAD / 100) + 5);
        assert!(text.starts_with('a') && text.ends_with("a\ntail\n"));
        assert_eq!(output.take(), (String::new(), 0));
        // A line longer than what is kept goes whole, up to its end.
        output.push(&vec![b'b'; MAX_UNREAD + 10]);
        output.push(b"bbb\rnext\n");
        let (text, dropped) = output.take();
        assert_eq!((text.as_str(), dropped), ("next\n", MAX_UNREAD as u64 + 14));
    }

    #[test]
    fn a_line_held_back_does_not_end_a_wait() {
        // shell_output's wait_ms waits while only an unfinished line is
        // there; returning at once would spin without letting it end.
        let mut output = Output { open_streams: 1, ..Output::default() };
        output.push(b"half a li");
        assert!(!output.ready());
        output.push(b"ne\n");
        assert!(output.ready());
    }

    /// Issue 36 §1: a flood that trims the held output inside a key.
    const KEY: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";

    /// What a flood leaves when the trim falls `into` bytes past the start
    /// of `first`, filler lines after it.
    fn flooded(first: &str, into: usize) -> String {
        let mut output = Output { open_streams: 1, ..Output::default() };
        let filler = format!("{}\n", "x".repeat(99));
        let mut flood = first.to_string();
        while flood.len() < MAX_UNREAD + into {
            flood.push_str(&filler);
        }
        // Filler lines are 100 bytes: the last one is cut short so the
        // trim lands exactly `into` bytes into `first`.
        flood.truncate(MAX_UNREAD + into);
        output.push(flood.as_bytes());
        output.take().0
    }

    #[test]
    fn a_trim_inside_a_key_drops_the_rest_of_its_line() {
        let text = flooded(&format!("GH_TOKEN={KEY}\n"), "GH_TOKEN=ghp_aB".len());
        assert!(!text.contains("cDeFgHiJ"), "part of a key is left: {}", &text[..80]);
        assert!(text.starts_with("xxx"), "{}", &text[..80]);
        let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n";
        let block = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}-----END OPENSSH PRIVATE KEY-----\n",
            body.repeat(5)
        );
        let text = flooded(&block, 80);
        assert!(!text.contains("b3BlbnNzaC1"), "part of a key block is left: {}", &text[..80]);
        assert!(text.starts_with("xxx"), "{}", &text[..80]);
    }

    #[test]
    fn a_character_cut_by_a_read_waits_for_its_end() {
        // A line too long to hold back is given as it is, but never half a
        // character.
        let mut output = Output { open_streams: 1, ..Output::default() };
        let e_acute = "é".as_bytes();
        let long = "x".repeat(HELD_LINE);
        output.push(long.as_bytes());
        output.push(e_acute.get(..1).unwrap_or_default());
        assert_eq!(output.take().0, long);
        output.push(e_acute.get(1..).unwrap_or_default());
        output.push(b"\n");
        assert_eq!(output.take().0, "é\n");
    }

    #[test]
    fn an_unfinished_line_waits_so_a_key_is_masked_whole() {
        // Secrets are masked a read at a time: a key cut between two reads
        // would match no rule in either half.
        let mut output = Output { open_streams: 1, ..Output::default() };
        output.push(b"starting\nGH_TOKEN=ghp_aBcDeFgHiJ");
        assert_eq!(output.take().0, "starting\n");
        output.push(b"kLmNoPqRsTuVwXyZ0123456789\nnext");
        assert_eq!(output.take().0, "GH_TOKEN=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n");
        // Once the command has ended, what is left comes out.
        output.open_streams = 0;
        output.end = Some(End { how: "exit 0".into(), after: Duration::ZERO });
        assert_eq!(output.take().0, "next");
    }
}
