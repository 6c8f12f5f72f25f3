//! A small HTTP/1.1 server on 127.0.0.1 for the tests: each request's head
//! is recorded, and a route function answers it. It stops when dropped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub target: String,
    /// Header lines, lower-cased names: `name: value`.
    pub headers: Vec<String>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<String> {
        let prefix = format!("{}:", name.to_ascii_lowercase());
        self.headers.iter().find_map(|h| h.strip_prefix(&prefix).map(|v| v.trim().to_string()))
    }
}

/// How to answer.
pub enum Reply {
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `total` bytes of `fill`, written in chunks as the client reads.
    Endless {
        content_type: String,
        total: usize,
        fill: u8,
    },
    /// Headers never sent: the connection stays open until the client leaves.
    Silent,
    /// Headers at once, then the body a byte at a time, one every 20 ms,
    /// until the client leaves: never idle long enough for a read timeout.
    Drip,
}

impl Reply {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        Reply::Full {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn redirect(to: &str) -> Reply {
        Reply::status(302, &[("Location", to)], "")
    }
}

pub type Route = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

pub struct Server {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub async fn start(route: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let route: Route = Arc::new(route);
        let recorded = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (route, recorded) = (Arc::clone(&route), Arc::clone(&recorded));
                tokio::spawn(async move {
                    let _ = serve(stream, route, recorded).await;
                });
            }
        });
        Server { port, seen, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    route: Route,
    recorded: Arc<Mutex<Vec<Seen>>>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let head_end = buffer.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(end) = head_end {
            let head = String::from_utf8_lossy(&buffer[..end]).to_string();
            let mut lines = head.split("\r\n");
            let mut first = lines.next().unwrap_or_default().split(' ');
            let method = first.next().unwrap_or_default().to_string();
            let target = first.next().unwrap_or_default().to_string();
            let headers: Vec<String> = lines
                .map(|l| match l.split_once(':') {
                    Some((k, v)) => format!("{}:{v}", k.to_ascii_lowercase()),
                    None => l.to_string(),
                })
                .collect();
            let length: usize = headers
                .iter()
                .find_map(|h| h.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let mut body = buffer[end + 4..].to_vec();
            while body.len() < length {
                let n = stream.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
            let seen =
                Seen { method, target, headers, body: String::from_utf8_lossy(&body).to_string() };
            recorded.lock().unwrap().push(seen.clone());
            return answer(&mut stream, route(&seen)).await;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

async fn answer(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Full { status, headers, body } => {
            let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("Connection: close\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
        }
        Reply::Endless { content_type, total, fill } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {total}\r\n\
                 Connection: close\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            let block = vec![fill; 64 * 1024];
            let mut left = total;
            while left > 0 {
                let n = left.min(block.len());
                stream.write_all(&block[..n]).await?;
                left -= n;
            }
        }
        Reply::Drip => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
                        Content-Length: 1000000\r\nConnection: close\r\n\r\n";
            stream.write_all(head.as_bytes()).await?;
            loop {
                stream.write_all(b"a").await?;
                stream.flush().await?;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        Reply::Silent => {
            // Hold the connection open, reading until the client gives up.
            let mut sink = [0u8; 1024];
            while stream.read(&mut sink).await? > 0 {}
        }
    }
    stream.flush().await
}
