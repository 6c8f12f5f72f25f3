//! Newline-delimited JSON-RPC over a byte stream (the server's stdin and
//! stdout), answering invalid requests instead of dropping them.
//!
//! Guarantees:
//! - Every line that is a request with a usable id but not a valid MCP
//!   message gets an error reply with that id (-32602 naming the field for
//!   wrong params, -32600 otherwise), written whole on its own line.
//! - Lines that are not JSON, and invalid notifications or responses, get
//!   no reply: there is no id to answer, and replying to garbage can start an
//!   echo storm with a peer that does the same.
//! - Writes never interleave: replies and the handler's messages share one
//!   lock, one line at a time. Receiving is cancel-safe (a channel fed by one
//!   reading task), as `rmcp`'s service loop needs.
//! - A line longer than [`MAX_LINE`] is discarded rather than buffered.

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

use super::jsonrpc;

/// The longest line accepted, as in `rmcp`'s own stdio transport.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// A server transport over `read` (client messages, one per line) and
/// `write` (server messages, one per line).
pub struct LineTransport<W> {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Arc<Mutex<W>>,
    reader: JoinHandle<()>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> LineTransport<W> {
    pub fn new<R: AsyncRead + Unpin + Send + 'static>(read: R, write: W) -> Self {
        let writer = Arc::new(Mutex::new(write));
        let (sender, incoming) = mpsc::channel(16);
        let reader = tokio::spawn(read_lines(read, sender, Arc::clone(&writer)));
        LineTransport { incoming, writer, reader }
    }
}

impl<W> Drop for LineTransport<W> {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &Mutex<W>, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&line).await?;
    writer.flush().await
}

/// Reads lines until the end of input, passing valid messages on and
/// answering invalid requests itself.
async fn read_lines<R, W>(
    read: R,
    sender: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Arc<Mutex<W>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = u64::try_from(MAX_LINE + 1).unwrap_or(u64::MAX);
        match (&mut reader).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            if skip_rest_of_line(&mut reader).await.is_err() {
                return;
            }
            continue;
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        let invalid = match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
            Ok(message) => match jsonrpc::misparsed(&message) {
                None => {
                    if sender.send(message).await.is_err() {
                        return;
                    }
                    continue;
                }
                Some(invalid) => invalid,
            },
            Err(error) => jsonrpc::diagnose(text, &error),
        };
        if invalid.is_request {
            let reply = invalid.response().to_string().into_bytes();
            if write_line(&writer, reply).await.is_err() {
                return;
            }
        }
    }
}

/// Reads past the rest of an over-long line.
async fn skip_rest_of_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> io::Result<()> {
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

/// The line without its terminator, a carriage return or a byte-order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<W: AsyncWrite + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<W> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let line = serde_json::to_vec(&item)?;
            write_line(&writer, line).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}
