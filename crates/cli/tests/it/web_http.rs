//! `axon web` end to end over raw HTTP/1.1 on loopback: the real binary,
//! the scripted model server, and requests written by hand so that every
//! `Host`, `Origin`, `Cookie` and `Authorization` header is exactly the one
//! a browser, another page or an attacker would send.
//!
//! What is held here: the token (query, cookie, bearer) and nothing else
//! admits; every answer carries the strict headers; foreign hosts, origins
//! and cross-site fetches are refused; operations are checked before the
//! session sees them; the event stream replays the log and continues it;
//! sessions, files and assets are served only from where they should be;
//! an exposed address needs a long token; SIGTERM ends the server cleanly
//! with a page still connected and leaves no process behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::common::web::{Frame, PATIENCE, Response, Web};
use crate::common::{Setup, eventually, setup};
use axon_testkit::Reply;
use serde_json::{Value, json};

/// The headers every answer must carry, whatever its status.
fn assert_secure(response: &Response, what: &str) {
    let csp = response.header("content-security-policy").unwrap_or_else(|| panic!("{what}"));
    assert_eq!(csp, axon_web::auth::CSP, "{what}");
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-"), "{what}: {csp}");
    assert_eq!(response.header("x-content-type-options"), Some("nosniff"), "{what}");
    assert_eq!(response.header("referrer-policy"), Some("no-referrer"), "{what}");
    assert_eq!(response.header("x-frame-options"), Some("DENY"), "{what}");
}

#[test]
fn only_the_token_admits_as_query_cookie_or_bearer() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);

    let none = web.anonymous("GET", "/").send();
    assert_eq!(none.status, 401, "{none:?}");
    assert!(!none.error().is_empty());
    let wrong = web.anonymous("GET", &format!("/?token={}", "0".repeat(web.token.len()))).send();
    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert!(wrong.header("set-cookie").is_none(), "{wrong:?}");
    let wrong_cookie = web
        .anonymous("GET", "/api/files")
        .header("Cookie", &format!("axon_web_{}=nope", web.port))
        .send();
    assert_eq!(wrong_cookie.status, 401, "{wrong_cookie:?}");

    let enter = web.anonymous("GET", &format!("/?token={}", web.token)).send();
    assert_eq!(enter.status, 303, "{enter:?}");
    let page_path = format!("{}/", web.base);
    assert_eq!(enter.header("location"), Some(page_path.as_str()), "{enter:?}");
    let set = enter.header("set-cookie").unwrap_or_else(|| panic!("{enter:?}"));
    let pair = set.split(';').next().unwrap().trim();
    assert_eq!(pair, format!("axon_web_{}={}", web.port, web.token), "{set}");
    let attributes: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attributes.contains(&"HttpOnly"), "{set}");
    assert!(attributes.contains(&"SameSite=Strict"), "{set}");
    // Issue 30 §2.9: cookies ignore ports; bound to this run's random path,
    // this one reaches no other local server the browser visits.
    let path = format!("Path={page_path}");
    assert!(attributes.contains(&path.as_str()), "{set}");
    let outside = web.raw("GET", "/api/files").header("Cookie", pair).send();
    assert_eq!(outside.status, 404, "nothing is served outside the prefix: {outside:?}");

    let page = web.anonymous("GET", "/").header("Cookie", pair).send();
    assert_eq!(
        page.status, 200,
        "the page with the cookie (is assets/index.html there?): {page:?}"
    );
    assert!(page.header("content-type").unwrap().starts_with("text/html"), "{page:?}");
    assert!(page.body.contains("<script type=\"module\""), "{}", page.body);

    let bearer = format!("Bearer {}", web.token);
    let files = web.anonymous("GET", "/api/files").header("Authorization", &bearer).send();
    assert_eq!(files.status, 200, "{files:?}");
    assert!(files.json().is_array(), "{files:?}");
}

#[test]
fn every_answer_carries_the_strict_headers() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let answers = [
        ("200", web.get("/api/files"), 200),
        ("303", web.anonymous("GET", &format!("/?token={}", web.token)).send(), 303),
        ("401", web.anonymous("GET", "/api/files").send(), 401),
        ("403", web.page("GET", "/api/files").header("Host", "attacker.example").send(), 403),
        ("404", web.get("/no/such/thing"), 404),
    ];
    for (what, response, status) in answers {
        assert_eq!(response.status, status, "{what}: {response:?}");
        assert_secure(&response, what);
        if status >= 400 {
            assert!(!response.error().is_empty(), "{what}: {response:?}");
        }
    }
}

#[test]
fn a_foreign_host_name_is_refused_even_with_the_cookie() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let rebound = web
        .page("GET", "/api/files")
        .header("Host", &format!("attacker.example:{}", web.port))
        .send();
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert!(rebound.error().contains("attacker.example"), "{rebound:?}");
    assert!(!rebound.body.starts_with('['), "{rebound:?}");
    let local =
        web.page("GET", "/api/files").header("Host", &format!("localhost:{}", web.port)).send();
    assert_eq!(local.status, 200, "{local:?}");
}

#[test]
fn other_origins_and_cross_site_requests_are_refused() {
    let s = setup(vec![Reply::text("ok")]);
    let web = Web::start(&s, &[]);
    let evil = "http://evil.example";

    let stream = web.page("GET", "/api/events").header("Origin", evil).send();
    assert_eq!(stream.status, 403, "{stream:?}");
    assert!(!stream.body.contains("data:") && !stream.body.contains("session_started"));
    assert!(stream.header("content-type").unwrap().starts_with("application/json"));

    let turn = json!({"op": "user_turn", "text": "from another page"});
    let posted = web.page("POST", "/api/op").header("Origin", evil).json(&turn).send();
    assert_eq!(posted.status, 403, "{posted:?}");
    let other_port = format!("http://127.0.0.1:{}", web.port.wrapping_add(1));
    let posted = web.page("POST", "/api/op").header("Origin", &other_port).json(&turn).send();
    assert_eq!(posted.status, 403, "another port is another origin: {posted:?}");

    let cross = web.page("GET", "/api/files").header("Sec-Fetch-Site", "cross-site").send();
    assert_eq!(cross.status, 403, "{cross:?}");
    let sibling = web.page("GET", "/api/files").header("Sec-Fetch-Site", "same-site").send();
    assert_eq!(sibling.status, 403, "{sibling:?}");

    let bare = web.page("POST", "/api/op").json(&turn).send();
    assert_eq!(bare.status, 403, "a cookie alone does not change anything: {bare:?}");
    assert!(bare.error().contains("Origin"), "{bare:?}");

    // Nothing refused reached the session.
    let mut page = web.events(None);
    page.until("the session", |f| f.kind() == "session_started");
    assert!(!page.frames.iter().any(|f| f.kind() == "prompt"), "{:#?}", page.frames);
    assert!(s.server.requests().is_empty(), "the model was asked");

    let same = json!({"op": "set_mode", "mode": "plan"});
    let accepted = web.op(same.clone());
    assert_eq!(accepted.status, 202, "{accepted:?}");
    assert_eq!(accepted.json(), json!({}));
    let fetched = web
        .page("POST", "/api/op")
        .header("Origin", &web.origin())
        .header("Sec-Fetch-Site", "same-origin")
        .json(&json!({"op": "set_mode", "mode": "react"}))
        .send();
    assert_eq!(fetched.status, 202, "{fetched:?}");
    let bearer = web
        .anonymous("POST", "/api/op")
        .header("Authorization", &format!("Bearer {}", web.token))
        .json(&same)
        .send();
    assert_eq!(bearer.status, 202, "a program's bearer token needs no Origin: {bearer:?}");
    // Issue 30 §2.9: what a browser sends needs its Origin, whatever the
    // credential.
    let from_browser = web
        .anonymous("POST", "/api/op")
        .header("Authorization", &format!("Bearer {}", web.token))
        .header("Sec-Fetch-Mode", "cors")
        .json(&same)
        .send();
    assert_eq!(from_browser.status, 403, "{from_browser:?}");
    let with_cookie = web
        .page("POST", "/api/op")
        .header("Authorization", &format!("Bearer {}", web.token))
        .json(&same)
        .send();
    assert_eq!(with_cookie.status, 403, "{with_cookie:?}");
}

#[test]
fn operations_and_prompts_are_bounded_with_a_clear_error() {
    // Issue 30 §2.12: 30 MB prompts pushed the server to 1.8 GB.
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let post = || web.page("POST", "/api/op").header("Origin", &web.origin());
    let long = "x".repeat(300 * 1024);
    let prompt = post().json(&json!({"op": "user_turn", "text": long})).send();
    assert_eq!(prompt.status, 413, "{prompt:?}");
    assert!(prompt.error().contains("@path"), "{prompt:?}");
    let huge = "y".repeat(9 * 1024 * 1024);
    let body = post().json(&json!({"op": "user_turn", "text": huge})).send();
    assert_eq!(body.status, 413, "{body:?}");
    assert!(body.error().contains("larger than 8 MB"), "{body:?}");
    assert!(s.server.requests().is_empty(), "the model was asked");
}

#[test]
fn an_operation_must_be_json_of_an_op_and_never_shutdown() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let post = || web.page("POST", "/api/op").header("Origin", &web.origin());

    let text = post().body("text/plain", br#"{"op":"cancel"}"#).send();
    assert_eq!(text.status, 415, "{text:?}");
    assert!(text.error().contains("application/json"), "{text:?}");

    let unknown = post().json(&json!({"op": "teleport"})).send();
    assert_eq!(unknown.status, 400, "{unknown:?}");
    assert!(unknown.error().contains("teleport"), "{unknown:?}");
    let missing = post().json(&json!({"op": "user_turn"})).send();
    assert_eq!(missing.status, 400, "{missing:?}");
    assert!(missing.error().contains("text"), "{missing:?}");
    let garbage = post().body("application/json", b"{not json").send();
    assert_eq!(garbage.status, 400, "{garbage:?}");
    assert!(!garbage.error().is_empty());

    let shutdown = web.op(json!({"op": "shutdown"}));
    assert_eq!(shutdown.status, 400, "{shutdown:?}");
    assert!(shutdown.error().contains("cannot end the session"), "{shutdown:?}");
    // Still serving, with the session open.
    let mut page = web.events(None);
    page.until("the session", |f| f.kind() == "session_started");
    assert_eq!(web.get("/api/files").status, 200);
}

#[test]
fn the_event_stream_replays_the_log_streams_a_turn_and_resumes_after_the_last_id() {
    let model = "gpt-4.1-mini";
    let s = setup(vec![Reply::text("hello from the model"), Reply::text("hello again")]);
    let web = Web::start(&s, &["--model", model]);
    let mut page = web.events(None);
    assert_eq!(page.response.header("content-type"), Some("text/event-stream"));
    page.until("the session", |f| f.kind() == "session_started");
    assert_eq!(page.frames[0].event, "reset", "{:#?}", page.frames);
    assert_eq!(page.frames[0].data, "{}");
    let shown = page.shown();
    assert_eq!(shown[0].kind(), "header", "{shown:#?}");
    // In the replay, or live just after it when the page connected before
    // the session's first event reached the log (seen in CI under load).
    let started = shown.iter().find(|f| f.kind() == "session_started").unwrap().json();
    let workspace = s.workspace.path().canonicalize().unwrap();
    assert_eq!(started["workspace"], json!(workspace.display().to_string()), "{started}");
    assert_eq!(started["model"], model, "{started}");
    // Every event of the log has its id, in order (the server's own
    // markers around a replay may have none).
    let logged = shown.iter().filter(|f| f.event == "message");
    let ids: Vec<Option<u64>> = logged.map(|f| f.id).collect();
    assert!(ids.iter().all(Option::is_some), "{shown:#?}");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    assert_eq!(web.op(json!({"op": "user_turn", "text": "say hello"})).status, 202);
    let completed = page.until("the turn's end", |f| f.kind() == "turn_completed");
    assert_eq!(completed.json()["stop_reason"], "end_turn", "{completed:?}");
    // Merging the answer's pieces never made the live page start over.
    let resets = page.frames.iter().filter(|f| f.event == "reset").count();
    assert_eq!(resets, 1, "{:#?}", page.frames);
    let shown = page.shown();
    let at = |pred: &dyn Fn(&Frame) -> bool| shown.iter().position(pred);
    let prompt = at(&|f| f.kind() == "prompt").unwrap_or_else(|| panic!("{shown:#?}"));
    assert_eq!(shown[prompt].json()["text"], "say hello");
    let turn = at(&|f| f.kind() == "turn_started").unwrap_or_else(|| panic!("{shown:#?}"));
    let first_token = at(&|f| f.kind() == "token").unwrap_or_else(|| panic!("{shown:#?}"));
    let end = at(&|f| f.kind() == "turn_completed").unwrap();
    assert!(turn < prompt && prompt < first_token && first_token < end, "{shown:#?}");
    let tokens: String = shown[..end]
        .iter()
        .filter(|f| f.kind() == "token")
        .map(|f| f.json()["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tokens, "hello from the model");

    // A page opened now gets the log: the answer is one token entry.
    let mut late = web.events(None);
    let end_id = completed.id.unwrap();
    late.until("the turn's end", |f| f.id.is_some_and(|id| id >= end_id));
    assert_eq!(late.frames[0].event, "reset", "{:#?}", late.frames);
    let tokens: Vec<Value> =
        late.shown().iter().filter(|f| f.kind() == "token").map(Frame::json).collect();
    assert_eq!(tokens, vec![json!({"type": "token", "text": "hello from the model"})]);
    let prompts = late.shown().iter().filter(|f| f.kind() == "prompt").count();
    assert_eq!(prompts, 1, "{:#?}", late.frames);

    // A reconnect with the last id it saw gets only what came after.
    let seen = late.last_id();
    let mut back = web.events(Some(&late.last_event_id()));
    assert_eq!(web.op(json!({"op": "user_turn", "text": "say it again"})).status, 202);
    back.until("the second prompt", |f| f.kind() == "prompt" && f.json()["text"] == "say it again");
    back.until("the second turn's end", |f| f.kind() == "turn_completed");
    assert!(!back.frames.iter().any(|f| f.event == "reset"), "{:#?}", back.frames);
    let ids = back.frames.iter().filter_map(|f| f.id);
    assert!(ids.clone().all(|id| id > seen), "after {seen}: {:#?}", back.frames);
    assert!(ids.count() > 0, "{:#?}", back.frames);
    let again: String = back
        .frames
        .iter()
        .filter(|f| f.kind() == "token")
        .map(|f| f.json()["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(again, "hello again");

    // An id of another server run (a page left open across a restart)
    // starts over instead of continuing at the same number.
    let number = late.last_id();
    let mut stranger = web.events(Some(&format!("0.{number}")));
    stranger.until("the session", |f| f.kind() == "session_started");
    assert_eq!(stranger.frames[0].event, "reset", "{:#?}", stranger.frames);
}

/// The ids `axon sessions list` gives in `dir`.
fn listed_in(s: &Setup, dir: &std::path::Path) -> Vec<String> {
    let output = s.axon().current_dir(dir).args(["sessions", "list"]).assert().success();
    let text = String::from_utf8_lossy(&output.get_output().stdout).into_owned();
    text.lines().filter_map(|l| l.split_whitespace().next().map(String::from)).collect()
}

fn ids_of(list: &Response) -> Vec<String> {
    let list = list.json();
    let entries = list.as_array().unwrap_or_else(|| panic!("{list}"));
    entries.iter().map(|e| e["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sessions_are_listed_exported_and_deleted_but_never_the_open_one_or_another_workspaces() {
    let s = setup(vec![Reply::text("elsewhere"), Reply::text("the saved answer")]);
    let other = tempfile::tempdir().unwrap();
    s.axon().current_dir(other.path()).args(["run", "in another folder"]).assert().success();
    let foreign = listed_in(&s, other.path());
    assert_eq!(foreign.len(), 1, "{foreign:?}");
    let foreign = &foreign[0];

    let web = Web::start(&s, &[]);
    let mut page = web.events(None);
    assert_eq!(web.op(json!({"op": "user_turn", "text": "remember-this-prompt"})).status, 202);
    let saved = page.until("the saved session", |f| f.kind() == "session_saved");
    let id = saved.json()["session_id"].as_str().unwrap().to_string();
    page.until("the turn's end", |f| f.kind() == "turn_completed");

    let list = web.get("/api/sessions");
    assert_eq!(list.status, 200, "{list:?}");
    assert_eq!(ids_of(&list), vec![id.clone()], "only this workspace's: {list:?}");
    let entry = &list.json()[0];
    for key in ["title", "model", "created_at", "updated_at", "messages", "tokens"] {
        assert!(entry.get(key).is_some(), "{key}: {entry}");
    }
    assert_eq!(entry["messages"], 2, "{entry}");

    let open = web.page("DELETE", &format!("/api/sessions/{id}")).header("Origin", &web.origin());
    let open = open.send();
    assert_eq!(open.status, 409, "{open:?}");
    assert!(!open.error().is_empty());

    assert_eq!(web.op(json!({"op": "new_conversation"})).status, 202);
    let fresh = page.until("the new conversation", |f| f.kind() == "session_started");
    assert_ne!(fresh.json()["session_id"], json!(id), "{fresh:?}");
    // A page opened now shows the new conversation only.
    let mut late = web.events(None);
    late.until("the session", |f| f.kind() == "session_started");
    assert!(!late.frames.iter().any(|f| f.kind() == "prompt"), "{:#?}", late.frames);

    let export = web.get(&format!("/api/sessions/{id}/export"));
    assert_eq!(export.status, 200, "{export:?}");
    assert!(export.header("content-type").unwrap().starts_with("text/markdown"), "{export:?}");
    let disposition = export.header("content-disposition").unwrap_or_default();
    assert!(disposition.starts_with("attachment"), "{export:?}");
    assert!(export.body.contains("remember-this-prompt"), "{}", export.body);
    assert!(export.body.contains("the saved answer"), "{}", export.body);

    let delete = |path: &str| {
        web.page("DELETE", &format!("/api/sessions/{path}")).header("Origin", &web.origin()).send()
    };
    let deleted = delete(&id);
    assert_eq!(deleted.status, 204, "{deleted:?}");
    assert!(!ids_of(&web.get("/api/sessions")).contains(&id));
    let again = delete(&id);
    assert_eq!(again.status, 404, "{again:?}");
    assert!(!again.error().is_empty());

    for path in [foreign.as_str(), "..%2F..", "..%2F..%2Fconfig.toml", ".."] {
        let gone = delete(path);
        assert_eq!(gone.status, 404, "DELETE {path}: {gone:?}");
        let export = web.get(&format!("/api/sessions/{path}/export"));
        assert_eq!(export.status, 404, "export {path}: {export:?}");
        assert!(!export.body.contains("in another folder"), "{export:?}");
    }
    assert_eq!(listed_in(&s, other.path()), vec![foreign.clone()], "another workspace's was hit");
}

#[test]
fn the_files_list_is_the_workspaces_without_ignored_ones() {
    let s = setup(vec![]);
    let root = s.workspace.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::create_dir_all(root.join("private")).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(root.join(".ignore"), "private/\n").unwrap();
    std::fs::write(root.join("README.md"), "# readme\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "// lib\n").unwrap();
    std::fs::write(root.join("build/out.txt"), "built\n").unwrap();
    std::fs::write(root.join("private/key.txt"), "secret\n").unwrap();
    let web = Web::start(&s, &[]);
    let files = web.get("/api/files");
    assert_eq!(files.status, 200, "{files:?}");
    let files: Vec<String> = serde_json::from_value(files.json()).unwrap();
    assert!(files.contains(&"README.md".to_string()), "{files:?}");
    assert!(files.contains(&"src/lib.rs".to_string()), "{files:?}");
    let ignored = files.iter().filter(|f| f.starts_with("build/") || f.starts_with("private/"));
    assert_eq!(ignored.count(), 0, "{files:?}");
}

#[test]
fn assets_are_served_with_their_type_and_never_from_outside() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let script = web.get("/assets/app.js");
    assert_eq!(script.status, 200, "is assets/app.js there? {script:?}");
    assert!(script.header("content-type").unwrap().starts_with("text/javascript"), "{script:?}");
    assert_secure(&script, "app.js");
    for path in [
        "/assets/../../Cargo.toml",
        "/assets/../../../Cargo.toml",
        "/assets/%2e%2e/%2e%2e/Cargo.toml",
        "/assets/..%2F..%2FCargo.toml",
        "/assets/../build.rs",
        "/assets//etc/passwd",
    ] {
        let escaped = web.get(path);
        assert_eq!(escaped.status, 404, "{path}: {escaped:?}");
        assert!(!escaped.body.contains("[package]") && !escaped.body.contains("root:"));
        assert!(!escaped.body.contains("fn main"), "{path}: {escaped:?}");
    }
}

#[test]
fn an_address_beyond_loopback_needs_a_token_of_32_characters() {
    let s = setup(vec![]);
    let refused = s.axon().args(["web", "--listen", "0.0.0.0:0"]).assert().failure();
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(stderr.contains("--token-env"), "{stderr}");

    let short = "a".repeat(20);
    let refused = s
        .axon()
        .env("AXON_WEB_TOKEN", &short)
        .args(["web", "--listen", "0.0.0.0:0", "--token-env", "AXON_WEB_TOKEN"])
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(stderr.contains("32"), "{stderr}");
    assert!(!stderr.contains(&short), "the token was printed: {stderr}");

    let long = "0123456789abcdef0123456789abcdef01234567";
    let web = Web::start_with(
        &s,
        &["--listen", "0.0.0.0:0", "--token-env", "AXON_WEB_TOKEN"],
        &[("AXON_WEB_TOKEN", long)],
    );
    assert_eq!(web.token, long);
    let bearer = format!("Bearer {long}");
    let files = web.anonymous("GET", "/api/files").header("Authorization", &bearer).send();
    assert_eq!(files.status, 200, "{files:?}");
    let wrong = format!("Bearer {}", long.replace('0', "1"));
    let files = web.anonymous("GET", "/api/files").header("Authorization", &wrong).send();
    assert_eq!(files.status, 401, "{files:?}");
}

/// Every process whose parent chain leads to `root`, with its command line.
fn descendants(root: u32) -> Vec<(u32, Vec<u8>)> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        // A process may end while it is read; then it is not there.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, after_name)) = stat.rsplit_once(") ") else { continue };
        let Some(parent) = after_name.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        parents.push((pid, parent));
    }
    let mut found = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, parent) in &parents {
            if found.contains(parent) && !found.contains(pid) {
                found.push(*pid);
                grew = true;
            }
        }
    }
    found.retain(|pid| *pid != root);
    found.into_iter().map(|pid| (pid, cmdline(pid))).collect()
}

/// A process's command line; empty once it ended (or is a zombie).
fn cmdline(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// Sends SIGTERM to `web` and waits for it to exit; its status, or
/// `None` if it still runs after [`PATIENCE`].
fn terminate(web: &mut Web) -> Option<std::process::ExitStatus> {
    let pid = web.child.id();
    // SAFETY: kill(2) on the child this test started and has not reaped.
    #[allow(unsafe_code)]
    let signalled = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(signalled, 0, "{}", std::io::Error::last_os_error());
    let mut status = None;
    eventually(|| {
        status = web.child.try_wait().unwrap();
        status.is_some()
    });
    status
}

#[test]
fn sigterm_ends_the_server_with_a_page_connected() {
    let s = setup(vec![]);
    let mut web = Web::start(&s, &[]);
    let mut page = web.events(None);
    page.until("the session", |f| f.kind() == "session_started");
    let children = descendants(web.child.id());
    let status = terminate(&mut web);
    assert!(status.is_some(), "axon web still runs after SIGTERM; stderr: {}", web.stderr());
    assert_eq!(status.and_then(|s| s.code()), Some(0), "stderr: {}", web.stderr());
    // The page's stream ended with the server.
    let deadline = Instant::now() + PATIENCE;
    while page.reader.fill("the end of the event stream", deadline) {}
    let left: Vec<_> = children.iter().filter(|(pid, line)| cmdline(*pid) == *line).collect();
    assert!(left.iter().all(|(_, line)| line.is_empty()), "left running: {left:?}");
}

#[test]
fn sigterm_during_a_running_command_ends_the_server_and_the_command() {
    // The marker is sleep's own argument (a unique fraction of a second),
    // so it is on the command line whether or not a shell stays in between.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let marker = format!("1000.{}{:09}", std::process::id(), nanos.subsec_nanos());
    let s = setup(vec![Reply::tool("shell", json!({"command": format!("sleep {marker}")}))]);
    let mut web = Web::start(&s, &["-y"]);
    let mut page = web.events(None);
    page.until("the session", |f| f.kind() == "session_started");
    assert_eq!(web.op(json!({"op": "user_turn", "text": "wait a while"})).status, 202);
    let pid = web.child.id();
    let running = |children: &[(u32, Vec<u8>)]| {
        children.iter().any(|(_, line)| String::from_utf8_lossy(line).contains(&marker))
    };
    let mut children = Vec::new();
    let started = eventually(|| {
        children = descendants(pid);
        running(&children)
    });
    assert!(started, "the command never started; events: {:#?}", page.frames);

    let status = terminate(&mut web);
    let left = || -> Vec<u32> {
        let alive =
            children.iter().filter(|(pid, line)| !line.is_empty() && cmdline(*pid) == *line);
        alive.map(|(pid, _)| *pid).collect()
    };
    // A server still running still holds the command: no use waiting on it.
    let gone = status.is_some() && eventually(|| left().is_empty());
    // Whatever happened, end what this test started before judging.
    let still = left();
    for pid in &still {
        // SAFETY: kill(2) on a process this test's server started.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(*pid as libc::pid_t, libc::SIGKILL)
        };
    }
    assert!(status.is_some(), "axon web still runs after SIGTERM; stderr: {}", web.stderr());
    assert_eq!(status.and_then(|s| s.code()), Some(0), "stderr: {}", web.stderr());
    assert!(gone, "left running: {still:?} of {children:?}");
}

/// The signals are caught before the address is printed: a SIGTERM the
/// moment it is read stops the server in order (exit 0, its token page
/// removed) instead of killing it.
#[test]
fn sigterm_as_soon_as_the_address_is_printed_stops_the_server_in_order() {
    let s = setup(vec![]);
    let mut web = Web::start(&s, &[]);
    let status = terminate(&mut web);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "stderr: {}", web.stderr());
}

#[test]
fn open_hands_the_page_to_the_desktops_opener_without_the_token_on_a_command_line() {
    let s = setup(vec![]);
    let bin = tempfile::tempdir().unwrap();
    let seen = bin.path().join("opened.txt");
    let opener = bin.path().join("xdg-open");
    std::fs::write(&opener, format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", seen.display()))
        .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let mut web = Web::start_with(&s, &["--open"], &[("PATH", path.as_str())]);
    let deadline = Instant::now() + PATIENCE;
    while std::fs::read_to_string(&seen).map_or(true, |t| t.is_empty()) {
        assert!(Instant::now() < deadline, "the opener was not called; stderr: {}", web.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    // The opener got a file only this user can read, which leads to the
    // page: the token is never on a command line.
    let page = std::path::PathBuf::from(std::fs::read_to_string(&seen).unwrap());
    assert!(!page.display().to_string().contains(&web.token), "{}", page.display());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&page).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{page:?}");
    assert!(std::fs::read_to_string(&page).unwrap().contains(&format!("url={}", web.url())));
    // The page holds the token: the server removes it when it stops.
    let status = terminate(&mut web);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "stderr: {}", web.stderr());
    assert!(!page.exists(), "{} is left behind after the server stopped", page.display());
}
