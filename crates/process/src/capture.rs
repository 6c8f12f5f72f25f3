//! Reading a child's stdout or stderr in the background, keeping a bounded
//! part: its first `head` bytes and its last `tail` bytes, and counting what
//! was dropped between them. Memory stays bounded however much a command
//! prints, the pipe is always drained (a child never blocks on a full
//! pipe), and a reader never outlives its capture: a detached daemon that
//! holds the pipe open cannot keep a task alive.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of a stream to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Bytes kept from the start.
    pub head: usize,
    /// Bytes kept from the end (after the head).
    pub tail: usize,
}

/// What was kept of a stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes, as text (invalid UTF-8 replaced).
    pub head: String,
    /// How many bytes between head and tail were read and dropped.
    pub omitted: u64,
    /// The last bytes, as text.
    pub tail: String,
}

impl Captured {
    /// Head and tail with a line saying how much was left out between them.
    pub fn joined(&self) -> String {
        let mut text = self.head.clone();
        if self.omitted > 0 {
            text.push_str(&format!("\n… [{} bytes of output omitted] …\n", self.omitted));
        }
        text.push_str(&self.tail);
        text
    }
}

#[derive(Debug, Default)]
struct Kept {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Kept {
    fn push(&mut self, keep: Keep, mut bytes: &[u8]) {
        let room = keep.head.saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(keep.tail);
        if excess > 0 {
            self.tail.drain(..excess);
            self.omitted += excess as u64;
        }
    }

    fn captured(&self) -> Captured {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        Captured {
            head: String::from_utf8_lossy(&self.head).into_owned(),
            omitted: self.omitted,
            tail: String::from_utf8_lossy(&tail).into_owned(),
        }
    }
}

/// One output stream, read in the background.
#[derive(Debug)]
pub struct Capture {
    state: Arc<Mutex<Kept>>,
    task: tokio::task::JoinHandle<()>,
}

impl Capture {
    /// Starts reading `stream` (nothing to read when `None`), keeping `keep`.
    /// Must be called within a tokio runtime.
    pub fn spawn(stream: Option<impl AsyncRead + Unpin + Send + 'static>, keep: Keep) -> Capture {
        let state = Arc::new(Mutex::new(Kept::default()));
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            let Some(mut stream) = stream else { return };
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = stream.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                shared.lock().unwrap_or_else(PoisonError::into_inner).push(keep, &buf[..n]);
            }
        });
        Capture { state, task }
    }

    /// Waits up to `grace` for the stream's end (a detached process may hold
    /// the pipe open forever), then returns what was kept.
    pub async fn finish(mut self, grace: Duration) -> Captured {
        let _ = tokio::time::timeout(grace, &mut self.task).await;
        self.state.lock().unwrap_or_else(PoisonError::into_inner).captured()
    }
}

/// A cancelled call drops its captures; their readers must not outlive it.
impl Drop for Capture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_what_it_drops() {
        let keep = Keep { head: 10, tail: 5 };
        let mut kept = Kept::default();
        kept.push(keep, &[b'x'; 30]);
        kept.push(keep, b"END");
        let captured = kept.captured();
        assert_eq!(captured.head.len(), 10);
        assert_eq!(captured.omitted, 18);
        assert_eq!(captured.tail, "xxEND");
        assert!(captured.joined().contains("[18 bytes of output omitted]"));
    }

    #[test]
    fn a_head_only_capture_drops_the_rest() {
        let keep = Keep { head: 4, tail: 0 };
        let mut kept = Kept::default();
        kept.push(keep, b"abcdefgh");
        let captured = kept.captured();
        assert_eq!(
            (captured.head.as_str(), captured.omitted, captured.tail.as_str()),
            ("abcd", 4, "")
        );
    }

    #[tokio::test]
    async fn reads_a_childs_output_to_its_end() {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "printf hello; printf oops >&2"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        let keep = Keep { head: 1024, tail: 1024 };
        let stdout = Capture::spawn(child.stdout.take(), keep);
        let stderr = Capture::spawn(child.stderr.take(), keep);
        let _ = child.wait().await;
        let grace = Duration::from_secs(30);
        assert_eq!(stdout.finish(grace).await.joined(), "hello");
        assert_eq!(stderr.finish(grace).await.joined(), "oops");
    }
}
