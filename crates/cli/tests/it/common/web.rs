//! `axon web` from a test: the real binary started against the scripted
//! model, and a raw HTTP/1.1 client on loopback (every header under the
//! test's control, Server-Sent Events read frame by frame).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use serde_json::Value;

use super::Setup;

pub use super::PATIENCE;

/// A running `axon web`, killed when dropped.
pub struct Web {
    pub child: Child,
    pub port: u16,
    pub token: String,
    /// This run's random prefix (`/s/<random>`): every path of the panel
    /// is under it, and the cookie is bound to it.
    pub base: String,
    pub stderr: Arc<Mutex<String>>,
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Web {
    /// `axon web ARGS` in the workspace, once it printed its address.
    pub fn start(s: &Setup, args: &[&str]) -> Web {
        Web::start_with(s, args, &[])
    }

    pub fn start_with(s: &Setup, args: &[&str], env: &[(&str, &str)]) -> Web {
        let mut command = s.std_command();
        command
            .arg("web")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let kept = Arc::clone(&stderr);
        let stderr_done = std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut kept = kept.lock().unwrap();
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // Read to the end: a closed pipe must not be what ends the server.
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = sender.send(line);
            }
        });
        let url = match lines.recv_timeout(PATIENCE) {
            Ok(url) => url,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = stderr_done.join();
                panic!("axon web printed no address ({e}); stderr: {}", stderr.lock().unwrap());
            }
        };
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url}"));
        let (port_and_base, token) = rest.split_once("/?token=").unwrap_or_else(|| panic!("{url}"));
        let (port, base) = port_and_base.split_at(port_and_base.find('/').unwrap_or(0));
        assert!(base.starts_with("/s/") && base.len() > 20, "a random prefix: {url}");
        Web {
            port: port.parse().unwrap(),
            token: token.to_string(),
            base: base.to_string(),
            child,
            stderr,
        }
    }

    /// The address `axon web` printed, token included.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}{}/?token={}", self.port, self.base, self.token)
    }

    /// The page's own address, without the token.
    pub fn page_url(&self) -> String {
        format!("http://127.0.0.1:{}{}/", self.port, self.base)
    }

    pub fn cookie(&self) -> String {
        format!("axon_web_{}={}", self.port, self.token)
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A request without credentials, to `path` under the run's prefix.
    pub fn anonymous(&self, method: &'static str, path: &str) -> Req {
        Req::new(self.port, method, &format!("{}{path}", self.base))
    }

    /// A request without credentials to `path` exactly (outside the prefix).
    pub fn raw(&self, method: &'static str, path: &str) -> Req {
        Req::new(self.port, method, path)
    }

    /// A request as the page sends it: with the cookie.
    pub fn page(&self, method: &'static str, path: &str) -> Req {
        self.anonymous(method, path).header("Cookie", &self.cookie())
    }

    pub fn get(&self, path: &str) -> Response {
        self.page("GET", path).send()
    }

    /// `POST /api/op` as the page sends it (cookie, its own Origin, JSON).
    pub fn op(&self, op: Value) -> Response {
        self.page("POST", "/api/op").header("Origin", &self.origin()).json(&op).send()
    }

    /// The event stream, resuming after `last` when given.
    pub fn events(&self, last: Option<&str>) -> Events {
        let mut request = self.page("GET", "/api/events").header("Accept", "text/event-stream");
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        request.stream()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

/// One request, written by hand.
pub struct Req {
    pub port: u16,
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn new(port: u16, method: &'static str, path: &str) -> Req {
        let host = ("Host".to_string(), format!("127.0.0.1:{port}"));
        Req { port, method, path: path.to_string(), headers: vec![host], body: Vec::new() }
    }

    /// Sets a header, replacing one of the same name (`Host`).
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn body(mut self, content_type: &str, body: &[u8]) -> Req {
        self.body = body.to_vec();
        self.header("Content-Type", content_type)
    }

    pub fn json(self, value: &Value) -> Req {
        self.body("application/json", value.to_string().as_bytes())
    }

    pub fn connect(&self) -> TcpStream {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() || self.method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&self.body).unwrap();
        stream.flush().unwrap();
        stream
    }

    /// Sends it and reads the whole answer.
    pub fn send(self) -> Response {
        let what = format!("{} {}", self.method, self.path);
        let mut reader = Reader::new(self.connect());
        let deadline = Instant::now() + PATIENCE;
        let (status, headers) = reader.head(&what, deadline);
        let response = Response { status, headers, body: String::new() };
        let body = if response.status == 204 || response.status == 304 {
            Vec::new()
        } else if let Some(length) = response.header("content-length") {
            reader.exactly(length.parse().unwrap(), &what, deadline)
        } else if response.header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            while !reader.chunked_done {
                if !reader.fill(&what, deadline) {
                    panic!("{what}: the connection closed inside a chunked body");
                }
                reader.dechunk();
            }
            std::mem::take(&mut reader.decoded)
        } else {
            while reader.fill(&what, deadline) {}
            std::mem::take(&mut reader.raw)
        };
        Response { body: String::from_utf8_lossy(&body).into_owned(), ..response }
    }

    /// Sends it and reads the answer's head; the body is read as events.
    pub fn stream(self) -> Events {
        let what = format!("{} {}", self.method, self.path);
        let mut reader = Reader::new(self.connect());
        let (status, headers) = reader.head(&what, Instant::now() + PATIENCE);
        let response = Response { status, headers, body: String::new() };
        assert_eq!(response.status, 200, "{what}: {response:?}");
        let chunked = response.header("transfer-encoding").is_some_and(|t| t.contains("chunked"));
        assert!(chunked, "an event stream is chunked: {response:?}");
        Events { reader, response, frames: Vec::new(), checked: 0 }
    }
}

/// Bytes off a socket, with a deadline on every wait.
pub struct Reader {
    pub stream: TcpStream,
    pub raw: Vec<u8>,
    /// The chunked body decoded so far, and whether its last chunk came.
    pub decoded: Vec<u8>,
    pub chunked_done: bool,
}

impl Reader {
    pub fn new(stream: TcpStream) -> Reader {
        Reader { stream, raw: Vec::new(), decoded: Vec::new(), chunked_done: false }
    }

    /// Reads more; false at the end of the connection. Panics after the
    /// deadline, naming `what` was awaited.
    pub fn fill(&mut self, what: &str, deadline: Instant) -> bool {
        self.try_fill(deadline).unwrap_or_else(|e| panic!("{what}: {e}"))
    }

    /// Reads more: false at the end of the connection, an error when
    /// nothing came before the deadline.
    pub fn try_fill(&mut self, deadline: Instant) -> Result<bool, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("nothing within {PATIENCE:?}"));
        }
        self.stream.set_read_timeout(Some(left)).unwrap();
        let mut buffer = [0u8; 16 * 1024];
        match self.stream.read(&mut buffer) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.raw.extend_from_slice(&buffer[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(false),
            Err(e) => Err(format!("{e} (nothing within {PATIENCE:?})")),
        }
    }

    /// The status and the headers (names in lower case).
    pub fn head(&mut self, what: &str, deadline: Instant) -> (u16, Vec<(String, String)>) {
        let end = loop {
            if let Some(at) = find(&self.raw, b"\r\n\r\n") {
                break at;
            }
            assert!(self.fill(what, deadline), "{what}: closed before an answer");
        };
        let head = String::from_utf8(self.raw[..end].to_vec()).unwrap();
        self.raw.drain(..end + 4);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
            .collect();
        (status, headers)
    }

    pub fn exactly(&mut self, length: usize, what: &str, deadline: Instant) -> Vec<u8> {
        while self.raw.len() < length {
            assert!(self.fill(what, deadline), "{what}: closed inside the body");
        }
        self.raw[..length].to_vec()
    }

    /// Moves the complete chunks of `raw` to `decoded`.
    pub fn dechunk(&mut self) {
        while !self.chunked_done {
            let Some(line) = find(&self.raw, b"\r\n") else { return };
            let size_text = String::from_utf8_lossy(&self.raw[..line]).into_owned();
            let size_text = size_text.split(';').next().unwrap_or_default().trim().to_string();
            let size = usize::from_str_radix(&size_text, 16).unwrap();
            if self.raw.len() < line + 2 + size + 2 {
                return;
            }
            self.decoded.extend_from_slice(&self.raw[line + 2..line + 2 + size]);
            self.raw.drain(..line + 2 + size + 2);
            self.chunked_done = size == 0;
        }
    }
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The `error` of a JSON error answer.
    pub fn error(&self) -> String {
        let json = self.json();
        json["error"].as_str().unwrap_or_else(|| panic!("no error message: {self:?}")).to_string()
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The number of the frame's id (`EPOCH.NUMBER`).
    pub id: Option<u64>,
    /// The server run the id belongs to.
    pub epoch: Option<String>,
    /// `message` unless named.
    pub event: String,
    pub data: String,
}

impl Frame {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The agent event's `type` (empty for the server's named events).
    pub fn kind(&self) -> String {
        if self.event != "message" {
            return String::new();
        }
        self.json()["type"].as_str().unwrap_or_default().to_string()
    }
}

/// An open event stream, read as far as a test needs.
pub struct Events {
    pub reader: Reader,
    pub response: Response,
    /// Every frame read so far, resets included.
    pub frames: Vec<Frame>,
    /// How many frames `until` has looked at.
    pub checked: usize,
}

impl Events {
    /// The next frame `pred` accepts (after the last one returned).
    pub fn until(&mut self, what: &str, pred: impl Fn(&Frame) -> bool) -> Frame {
        let deadline = Instant::now() + PATIENCE;
        loop {
            // The head's read may have brought frames already.
            self.reader.dechunk();
            self.parse();
            while self.checked < self.frames.len() {
                let frame = &self.frames[self.checked];
                self.checked += 1;
                if pred(frame) {
                    return frame.clone();
                }
            }
            match self.reader.try_fill(deadline) {
                Ok(true) => {}
                Ok(false) => panic!("the stream ended: no {what}; seen: {:#?}", self.frames),
                Err(e) => panic!("no {what} in the event stream ({e}); seen: {:#?}", self.frames),
            }
        }
    }

    /// Moves the complete frames of the decoded body to `frames`.
    pub fn parse(&mut self) {
        while let Some(end) = find(&self.reader.decoded, b"\n\n") {
            let text = String::from_utf8(self.reader.decoded[..end].to_vec()).unwrap();
            self.reader.decoded.drain(..end + 2);
            let mut frame =
                Frame { id: None, epoch: None, event: "message".into(), data: String::new() };
            let mut fields = false;
            for line in text.lines() {
                let (name, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match name {
                    "" => continue, // a comment (keep-alive)
                    "id" => {
                        let (epoch, number) = value.split_once('.').unwrap();
                        frame.epoch = Some(epoch.to_string());
                        frame.id = Some(number.parse().unwrap());
                    }
                    "event" => frame.event = value.to_string(),
                    "data" => frame.data.push_str(value),
                    other => panic!("unknown field {other:?} in {text:?}"),
                }
                fields = true;
            }
            if fields {
                self.frames.push(frame);
            }
        }
    }

    /// What a page shows now: the frames after the last reset.
    pub fn shown(&self) -> &[Frame] {
        let start = self.frames.iter().rposition(|f| f.event == "reset").map_or(0, |at| at + 1);
        &self.frames[start..]
    }

    pub fn last_id(&self) -> u64 {
        self.frames.iter().filter_map(|f| f.id).max().unwrap()
    }

    /// The `Last-Event-ID` a browser would send back now.
    pub fn last_event_id(&self) -> String {
        let last = self.frames.iter().rev().find(|f| f.id.is_some()).unwrap();
        format!("{}.{}", last.epoch.as_deref().unwrap(), last.id.unwrap())
    }
}
