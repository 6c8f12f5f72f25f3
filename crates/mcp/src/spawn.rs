//! Starting a stdio MCP server: what it runs with and what it must say first.
//!
//! - Its environment is the safe core of axon's (`PATH`, `HOME`, `LANG`,
//!   `LC_*`, `TERM`, …) and the proxy settings
//!   ([`EnvPolicy::mcp_server`]) plus exactly the `env` its
//!   configuration lists: never the user's API keys.
//! - With `sandbox = true` it runs in the session's OS sandbox (the one its
//!   commands run in); if that sandbox cannot be set up it does not start,
//!   rather than run unconfined.
//! - It runs in its own process group, dies with axon
//!   ([`axon_process::die_with_parent`]), and lists its group with the
//!   guardian before it execs ([`axon_process::Listing`]), so even
//!   `kill -9` of axon takes it along.
//! - The first line on its stdout must be a JSON-RPC message. One that is
//!   not (a banner, a log line, another protocol) fails the start at once
//!   with "MCP server NAME is not speaking MCP: first bytes …" instead of
//!   waiting out the startup timeout while the SDK skips what it cannot
//!   parse. Nothing but blank lines in the first [`JUDGED`] bytes is not
//!   MCP either, and no more than that is held while judging.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use axon_process::EnvPolicy;
use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::process::{ChildStderr, ChildStdin};
use tokio::sync::oneshot;

/// Bytes of a bad first line shown in the error.
const SHOWN: usize = 120;
/// The most bytes read before a verdict: a first line longer than this that
/// starts like JSON is left to the SDK, and this many blank bytes are not
/// MCP.
const JUDGED: usize = 64 * 1024;

/// A started server: its transport, its process group, its stderr, and the
/// verdict on its first line (a message when it is not MCP).
pub(crate) struct Started {
    pub transport: StdioTransport,
    pub group: Option<u32>,
    pub stderr: Option<ChildStderr>,
    pub not_mcp: oneshot::Receiver<String>,
}

/// Spawns `command` for the server `name`, in `sandbox` if it asks for one.
pub(crate) fn start(
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    dir: &Path,
    sandbox: &crate::config::ServerSandbox,
) -> Result<Started, String> {
    use crate::config::ServerSandbox;
    let prepared = match sandbox {
        ServerSandbox::Off => None,
        ServerSandbox::In(sandbox) => {
            Some(axon_sandbox::prepare(sandbox.policy()).map_err(|e| {
                format!("not started: its sandbox (sandbox = true) could not be set up: {e}")
            })?)
        }
        ServerSandbox::Wanted => {
            return Err("not started: it asks for the OS sandbox (sandbox = true), and this \
                        command does not set one up for servers"
                .to_string());
        }
        ServerSandbox::Unavailable(why) => {
            return Err(format!(
                "not started: it asks for the OS sandbox (sandbox = true), but {why}"
            ));
        }
    };
    let mut listing = None;
    let mut wrapped = CommandWrap::with_new(command, |c| {
        EnvPolicy::mcp_server().configure(c);
        c.envs(env)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        axon_process::die_with_parent(c);
        if let Some(prepared) = prepared {
            prepared.apply_tokio(c);
        }
        // Last: the server lists its group itself before it execs.
        listing = Some(axon_process::Listing::prepare(c.as_std_mut()));
    });
    // Signals reach everything the server started (npx, node, …).
    #[cfg(unix)]
    wrapped.wrap(ProcessGroup::leader());
    let mut child = wrapped.spawn().map_err(|e| {
        if let Some(listing) = listing.take() {
            listing.spawn_failed();
        }
        format!("cannot start `{command}`: {e}")
    })?;
    let group = child.id();
    if let Some(group) = group {
        axon_process::track_server_group(group);
    }
    let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
        return Err(format!("cannot talk to `{command}`: its stdin or stdout is not a pipe"));
    };
    let stderr = child.stderr().take();
    let (reader, not_mcp) = check_first_line(name.to_string(), stdout);
    Ok(Started {
        transport: StdioTransport {
            inner: AsyncRwTransport::new(reader, stdin),
            _child: ChildGuard(Some(child)),
        },
        group,
        stderr,
        not_mcp,
    })
}

/// The SDK's line transport over the checked stdout, owning the child so
/// that the session ending (or never starting) kills and reaps it.
pub(crate) struct StdioTransport {
    inner: AsyncRwTransport<RoleClient, DuplexStream, ChildStdin>,
    _child: ChildGuard,
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

struct ChildGuard(Option<Box<dyn ChildWrapper>>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let Some(mut child) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            // kill() also waits, so no zombie is left behind.
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = Box::into_pin(child.kill()).await;
                });
            }
            Err(_) => {
                let _ = child.start_kill();
            }
        }
    }
}

/// Forwards `stdout` to the returned reader once its first non-blank line
/// reads as a JSON-RPC message; otherwise sends the error on the channel and
/// forwards nothing.
fn check_first_line(
    name: String,
    mut stdout: impl AsyncRead + Unpin + Send + 'static,
) -> (DuplexStream, oneshot::Receiver<String>) {
    let (mut forward, reader) = tokio::io::duplex(64 * 1024);
    let (verdict, not_mcp) = oneshot::channel();
    tokio::spawn(async move {
        let mut head = Vec::new();
        let mut buf = vec![0u8; 8192];
        loop {
            // Never past JUDGED + 1 bytes, where `judge` always decides.
            let room = (JUDGED + 1).saturating_sub(head.len()).min(buf.len());
            let n = match stdout.read(&mut buf[..room]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            head.extend_from_slice(&buf[..n]);
            match judge(&head) {
                Judgement::Undecided => {}
                Judgement::Mcp => break,
                Judgement::NotMcp => {
                    let _ = verdict.send(format!(
                        "MCP server {name} is not speaking MCP: first bytes {}",
                        shown(&head)
                    ));
                    return;
                }
            }
        }
        if forward.write_all(&head).await.is_ok() {
            let _ = tokio::io::copy(&mut stdout, &mut forward).await;
        }
    });
    (reader, not_mcp)
}

#[derive(Debug, PartialEq)]
enum Judgement {
    Undecided,
    Mcp,
    NotMcp,
}

/// Whether the bytes read so far start with a JSON-RPC message.
fn judge(head: &[u8]) -> Judgement {
    let Some(start) = head.iter().position(|b| !b.is_ascii_whitespace()) else {
        return if head.len() > JUDGED { Judgement::NotMcp } else { Judgement::Undecided };
    };
    if !matches!(head[start], b'{' | b'[') {
        return Judgement::NotMcp;
    }
    let Some(end) = head[start..].iter().position(|&b| b == b'\n') else {
        return if head.len() > JUDGED { Judgement::Mcp } else { Judgement::Undecided };
    };
    match serde_json::from_slice::<serde_json::Value>(&head[start..start + end]) {
        Ok(serde_json::Value::Object(message)) if message.contains_key("jsonrpc") => Judgement::Mcp,
        Ok(serde_json::Value::Array(_)) => Judgement::Mcp,
        _ => Judgement::NotMcp,
    }
}

/// The first line of `head`, at most [`SHOWN`] bytes, quoted with control
/// characters escaped.
fn shown(head: &[u8]) -> String {
    let Some(start) = head.iter().position(|b| !b.is_ascii_whitespace()) else {
        let text = String::from_utf8_lossy(&head[..head.len().min(8)]);
        return format!("{text:?} … (only blank lines in {} bytes)", head.len());
    };
    let line = head[start..].split(|&b| b == b'\n').next().unwrap_or_default();
    let cut = line.len() > SHOWN;
    let text = String::from_utf8_lossy(&line[..line.len().min(SHOWN)]).into_owned();
    format!("{text:?}{}", if cut { " …" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_judged() {
        assert_eq!(judge(b"\n  "), Judgement::Undecided);
        assert_eq!(judge(&[b'\n'; JUDGED]), Judgement::Undecided);
        assert_eq!(judge(&[b'\n'; JUDGED + 1]), Judgement::NotMcp, "blank past the limit");
        let mut long_json = vec![b' '; 10];
        long_json.extend([b'{'; JUDGED]);
        assert_eq!(judge(&long_json), Judgement::Mcp, "a long first message is the SDK's");
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":0"#), Judgement::Undecided);
        assert_eq!(judge(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n"), Judgement::Mcp);
        assert_eq!(judge(b"Server listening on 8080\n"), Judgement::NotMcp);
        assert_eq!(judge(b"{not json}\n"), Judgement::NotMcp);
        assert_eq!(judge(b"{\"hello\":1}\n"), Judgement::NotMcp);
        assert_eq!(judge(b"\x1b[31mred"), Judgement::NotMcp);
    }

    #[test]
    fn what_is_shown_is_escaped_and_capped() {
        assert_eq!(shown(b"\x1b[31mhi\tthere\nmore"), r#""\u{1b}[31mhi\tthere""#);
        let long = shown(&[b'x'; 500]);
        assert!(long.ends_with(" …") && long.len() < 130, "{long}");
        let blank = shown(&[b'\n'; JUDGED + 1]);
        assert_eq!(blank, r#""\n\n\n\n\n\n\n\n" … (only blank lines in 65537 bytes)"#);
    }
}
