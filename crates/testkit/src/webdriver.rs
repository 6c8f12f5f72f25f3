//! A real browser for tests: Debian's Chromium, headless, driven through
//! chromedriver's W3C WebDriver endpoints.
//!
//! Small on purpose: the dozen commands the browser tests and the web
//! benchmark use, on the reqwest client already in the tree (fantoccini
//! and thirtyfour bring second versions of crates we share). chromedriver
//! runs in its own process group with a fresh profile folder; dropping the
//! [`Browser`] ends the WebDriver session and kills the group, so no
//! Chromium outlives its test.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Where Debian puts them (`scripts/peers` installs both).
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium's flags for a closed network as root, as the machine notes
/// say: no sandbox (root), no GPU, and none of its background traffic.
const FLAGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--password-store=basic",
];

/// One Chromium with one WebDriver session.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.command("DELETE", "", Value::Null);
        kill_group(&mut self.driver);
    }
}

/// How long a single WebDriver command may take on a busy machine.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width`x`height`,
    /// with `dark` (or light) as the system colour scheme.
    pub fn start(width: u32, height: u32, dark: bool) -> Result<Browser, String> {
        Browser::start_with_args(width, height, dark, &[])
    }

    /// [`Browser::start`] with more Chromium flags after the usual ones
    /// (the web benchmark's `--enable-precise-memory-info`, for one).
    pub fn start_with_args(
        width: u32,
        height: u32,
        dark: bool,
        extra: &[&str],
    ) -> Result<Browser, String> {
        for needed in [CHROMIUM, CHROMEDRIVER] {
            if !Path::new(needed).exists() {
                return Err(format!(
                    "{needed} is missing: run scripts/peers (Debian chromium and chromium-driver)"
                ));
            }
        }
        let profile = tempfile::tempdir().map_err(|e| format!("no profile folder: {e}"))?;
        let mut driver = spawn_driver()?;
        let port = read_port(&mut driver)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime: {e}"))?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(COMMAND_TIMEOUT)
            .no_proxy()
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        let mut args: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push(format!("--window-size={width},{height}"));
        if dark {
            args.push("--force-dark-mode".into());
            args.push("--blink-settings=preferredColorScheme=0".into());
        } else {
            args.push("--blink-settings=preferredColorScheme=1".into());
        }
        args.extend(extra.iter().map(|f| f.to_string()));
        let mut browser = Browser {
            driver,
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            runtime,
            client,
            _profile: profile,
        };
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
            "pageLoadStrategy": "normal",
        }}});
        let created = browser.post_root("/session", capabilities)?;
        browser.session = created["sessionId"]
            .as_str()
            .ok_or_else(|| format!("chromedriver made no session: {created}"))?
            .to_string();
        Ok(browser)
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) -> Result<(), String> {
        self.command("POST", "/url", json!({"url": url})).map(|_| ())
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the
    /// page and returns what it returns.
    pub fn execute(&self, script: &str, args: Value) -> Result<Value, String> {
        self.command("POST", "/execute/sync", json!({"script": script, "args": args}))
    }

    /// Runs `script` asynchronously: it calls `arguments[0]` with its result.
    pub fn execute_async(&self, script: &str) -> Result<Value, String> {
        self.command("POST", "/execute/async", json!({"script": script, "args": []}))
    }

    /// Polls `expression` (JavaScript) until it is truthy, and returns its
    /// value; fails after `patience` with what the page showed last.
    pub fn wait_for(&self, expression: &str, patience: Duration) -> Result<Value, String> {
        let deadline = Instant::now() + patience;
        let script = format!("return ({expression});");
        loop {
            let value = self.execute(&script, json!([]))?;
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
                Value::String(s) => !s.is_empty(),
                Value::Array(_) | Value::Object(_) => true,
            };
            if truthy {
                return Ok(value);
            }
            if Instant::now() > deadline {
                let shown = self
                    .execute(
                        "return document.body ? document.body.innerText.slice(-2000) : ''",
                        json!([]),
                    )
                    .unwrap_or_default();
                return Err(format!(
                    "timed out waiting for `{expression}`; the page shows: {shown}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The first element matching `css`, as a WebDriver element reference.
    pub fn find(&self, css: &str) -> Result<Value, String> {
        let found =
            self.command("POST", "/element", json!({"using": "css selector", "value": css}))?;
        Ok(found)
    }

    /// Clicks the first element matching `css` (as a user would: it must
    /// be visible and not covered).
    pub fn click(&self, css: &str) -> Result<(), String> {
        let id = element_id(&self.find(css)?)?;
        self.command("POST", &format!("/element/{id}/click"), json!({})).map(|_| ())
    }

    /// Types `text` into the element matching `css` (WebDriver key codes
    /// such as `\u{E007}` for Enter work).
    pub fn type_into(&self, css: &str, text: &str) -> Result<(), String> {
        let id = element_id(&self.find(css)?)?;
        self.command("POST", &format!("/element/{id}/value"), json!({"text": text})).map(|_| ())
    }

    /// Saves a PNG of the viewport at `path`.
    pub fn screenshot(&self, path: &Path) -> Result<(), String> {
        let data = self.command("GET", "/screenshot", Value::Null)?;
        let encoded = data.as_str().ok_or("no screenshot data")?;
        let bytes = decode_base64(encoded)?;
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// A PNG of the viewport at `path` once animations settled: a picture
    /// taken mid fade-in shows a half-drawn page; animations that loop for
    /// ever (spinners) are not waited for.
    pub fn settled_screenshot(&self, path: &Path, patience: Duration) -> Result<(), String> {
        self.wait_for(
            "document.getAnimations().every(a => a.effect && a.effect.getTiming().iterations === Infinity)",
            patience,
        )?;
        self.screenshot(path)
    }

    /// The console's script errors and Content Security Policy violations
    /// since the last call; a page that works has none.
    pub fn console_problems(&self) -> Result<Vec<String>, String> {
        Ok(self
            .console()?
            .into_iter()
            .filter(|line| line.starts_with("SEVERE") || line.contains("Content Security Policy"))
            .collect())
    }

    /// The browser console's messages since the last call (errors, CSP
    /// violations), as `LEVEL message` lines.
    pub fn console(&self) -> Result<Vec<String>, String> {
        let logs = self.command("POST", "/se/log", json!({"type": "browser"}))?;
        Ok(logs
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| {
                        format!(
                            "{} {}",
                            e["level"].as_str().unwrap_or("?"),
                            e["message"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Sends a Chrome DevTools Protocol command (chromedriver's
    /// `goog/cdp/execute`), e.g. `Page.addScriptToEvaluateOnNewDocument` to
    /// run a script in every page before the page's own.
    pub fn cdp(&self, command: &str, params: Value) -> Result<Value, String> {
        self.command("POST", "/goog/cdp/execute", json!({"cmd": command, "params": params}))
    }

    /// Resizes the window (for phone-width screenshots).
    pub fn resize(&self, width: u32, height: u32) -> Result<(), String> {
        self.command("POST", "/window/rect", json!({"width": width, "height": height})).map(|_| ())
    }

    fn command(&self, method: &str, path: &str, body: Value) -> Result<Value, String> {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        self.send(method, &url, body)
    }

    fn post_root(&self, path: &str, body: Value) -> Result<Value, String> {
        self.send("POST", &format!("{}{path}", self.base), body)
    }

    fn send(&self, method: &str, url: &str, body: Value) -> Result<Value, String> {
        let request = match method {
            "GET" => self.client.get(url),
            "DELETE" => self.client.delete(url),
            _ => self
                .client
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string()),
        };
        let reply: Value = self.runtime.block_on(async {
            let response = request.send().await.map_err(|e| format!("{method} {url}: {e}"))?;
            let text = response.text().await.map_err(|e| format!("{method} {url}: {e}"))?;
            serde_json::from_str(&text).map_err(|e| format!("{method} {url}: {e}: {text}"))
        })?;
        let value = reply.get("value").cloned().unwrap_or(Value::Null);
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            let message = value.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(format!("{method} {url}: {error}: {message}"));
        }
        Ok(value)
    }
}

fn element_id(found: &Value) -> Result<String, String> {
    found
        .get("element-6066-11e4-a52e-4f735466cecf")
        .and_then(Value::as_str)
        .map(String::from)
        .ok_or_else(|| format!("not an element: {found}"))
}

fn spawn_driver() -> Result<Child, String> {
    use std::os::unix::process::CommandExt;
    Command::new(CHROMEDRIVER)
        .arg("--port=0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {CHROMEDRIVER}: {e}"))
}

/// The port chromedriver chose, from its "started successfully on port N"
/// line.
fn read_port(driver: &mut Child) -> Result<u16, String> {
    let stdout = driver.stdout.take().ok_or("chromedriver has no stdout")?;
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // Not the "Starting ChromeDriver ... on port 0" line before
            // it, which names the port asked for.
            if let Some(port) = line.split("started successfully on port ").nth(1) {
                let port = port.trim().trim_end_matches('.').parse::<u16>().ok();
                let _ = sender.send(port);
            }
        }
    });
    match receiver.recv_timeout(COMMAND_TIMEOUT) {
        Ok(Some(port)) => Ok(port),
        _ => {
            kill_group(driver);
            Err("chromedriver did not say which port it listens on".into())
        }
    }
}

/// Kills chromedriver's whole group (it and every Chromium it started).
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
    let _ = child.kill();
    let _ = child.wait();
}

fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut table = [255u8; 256];
    for (i, &c) in ALPHABET.iter().enumerate() {
        table[c as usize] = i as u8;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0u32);
    for &c in text.as_bytes() {
        if c == b'=' || c.is_ascii_whitespace() {
            continue;
        }
        let v = table[c as usize];
        if v == 255 {
            return Err(format!("not base64: {:?}", c as char));
        }
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("a$").is_err());
    }
}
