//! `axon web` in a real browser: Debian's Chromium, headless, driven over
//! WebDriver (`axon_testkit::webdriver`), against the real binary and a
//! scripted model. Each test is one thing a user does in the panel; each
//! saves screenshots of what it saw under `target/web-screenshots/`
//! (looked at by a person, not committed).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::browser::{console_is_clean, open, send, shot};
use crate::common::setup;
use crate::common::web::{PATIENCE, Web};
use axon_testkit::Reply;
use axon_testkit::webdriver::Browser;
use serde_json::json;

/// A browser on the panel, waited until its first replay is shown.
fn record_requests(listener: std::net::TcpListener) -> std::sync::mpsc::Receiver<String> {
    use std::io::{Read, Write};
    let (sender, heads) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let sender = sender.clone();
            // A browser may open a connection it never uses: one thread each.
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(PATIENCE));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
                let _ = sender.send(String::from_utf8_lossy(&head).into_owned());
            });
        }
    });
    heads
}

/// Opens the sidebar if it is closed and waits until it has slid fully in.
/// Whether it is open is read from the toggle's `aria-expanded`, not from
/// the list: the list may not have loaded yet, and clicking the toggle of an
/// open sidebar would close it (seen failing in CI).
fn open_sidebar(browser: &Browser) {
    let open = browser
        .execute(
            "return document.querySelector('#sidebar-toggle').getAttribute('aria-expanded') === 'true'",
            json!([]),
        )
        .unwrap();
    if open != json!(true) {
        browser.click("#sidebar-toggle").unwrap();
    }
    browser
        .wait_for(
            "getComputedStyle(document.querySelector('#sidebar')).visibility === 'visible' && document.querySelector('#sidebar').getBoundingClientRect().left === 0",
            PATIENCE,
        )
        .unwrap();
}

/// Opens the sidebar if it is closed and resumes session `id` from it.
fn resume_from_sidebar(browser: &Browser, id: &str) {
    open_sidebar(browser);
    let resume = format!("#sessions .session[data-id=\"{id}\"] button.resume");
    browser
        .wait_for(&format!("document.querySelector('{}')", resume.replace('\'', "\\'")), PATIENCE)
        .unwrap();
    browser.click(&resume).unwrap();
}

#[test]
fn a_prompt_streams_into_the_page_and_a_read_tool_card_completes() {
    let s = setup(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text(
            "The notes say **hello**.\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        ),
    ]);
    std::fs::write(s.workspace.path().join("notes.txt"), "hello\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    shot(&browser, "01-empty-light");
    send(&browser, "what do my notes say?");
    browser
        .wait_for("document.querySelector('.msg.user .body')?.textContent.includes('what do my notes say?')", PATIENCE)
        .unwrap();
    browser
        .wait_for(
            "document.querySelector('.card[data-state=\"done\"] .tool-name')?.textContent.includes('read_file')",
            PATIENCE,
        )
        .unwrap();
    let answer = browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant .body')].map(e => e.textContent).join(' ').includes('The notes say hello') && document.querySelector('#stop').hidden && document.querySelector('.msg.assistant .body strong')?.textContent",
            PATIENCE,
        )
        .unwrap();
    assert_eq!(answer, "hello", "bold text is rendered as markdown");
    // The code block is highlighted, the table is a table.
    browser.wait_for("document.querySelector('.msg.assistant pre code span')", PATIENCE).unwrap();
    browser.wait_for("document.querySelector('.msg.assistant table td')", PATIENCE).unwrap();
    // The read tool's result is on its card.
    browser
        .wait_for(
            "document.querySelector('.card .result')?.textContent.includes('hello')",
            PATIENCE,
        )
        .unwrap();
    shot(&browser, "02-answer-light");
    console_is_clean(&browser);
}

#[test]
fn an_edit_is_approved_after_its_diff_is_seen() {
    let s = setup(vec![
        Reply::tool(
            "edit_file",
            json!({"path": "app.txt", "old_str": "colour = red", "new_str": "colour = blue"}),
        ),
        Reply::text("Changed the colour."),
    ]);
    std::fs::write(s.workspace.path().join("app.txt"), "name = demo\ncolour = red\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, true);
    send(&browser, "make it blue");
    let diff = browser
        .wait_for(
            "document.querySelector('.card[data-state=\"waiting\"] .diff .add')?.textContent",
            PATIENCE,
        )
        .unwrap();
    assert!(diff.as_str().unwrap().contains("colour = blue"), "{diff}");
    let removed = browser
        .execute("return document.querySelector('.card .diff .del')?.textContent", json!([]))
        .unwrap();
    assert!(removed.as_str().unwrap_or_default().contains("colour = red"), "{removed}");
    // Nothing was written before the approval.
    assert!(std::fs::read_to_string(s.workspace.path().join("app.txt")).unwrap().contains("red"));
    shot(&browser, "03-approval-dark");
    browser.click("button[data-decision=\"once\"]").unwrap();
    browser.wait_for("document.querySelector('.card[data-state=\"done\"]')", PATIENCE).unwrap();
    browser
        .wait_for("[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('Changed the colour.'))", PATIENCE)
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("app.txt")).unwrap(),
        "name = demo\ncolour = blue\n"
    );
    shot(&browser, "04-approved-dark");
    console_is_clean(&browser);
}

#[test]
fn a_command_outside_the_sandbox_says_so_and_always_names_its_rule() {
    let s = setup(vec![
        Reply::tool("shell", json!({"command": "echo hi", "unsandboxed": true})),
        Reply::tool("write_file", json!({"path": "notes.md", "content": "hi\n"})),
        Reply::text("Said hi."),
    ]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "say hi outside the sandbox, then note it");
    let workdir = browser
        .wait_for(
            "document.querySelector('.card[data-state=\"waiting\"] .preview.command .workdir')?.textContent",
            PATIENCE,
        )
        .unwrap();
    assert_eq!(workdir, json!("not sandboxed: runs with your full rights"));
    // No rule can let a command out of the sandbox unasked: no "Always".
    let offered = browser
        .execute(
            "return [...document.querySelectorAll('.card[data-state=\"waiting\"] button[data-decision]')].map(b => b.dataset.decision).join(' ')",
            json!([]),
        )
        .unwrap();
    assert_eq!(offered, json!("once deny"));
    shot(&browser, "15-unsandboxed-light");
    browser.click(".card[data-state=\"waiting\"] button[data-decision=\"once\"]").unwrap();
    // The write offers its rule, named on the card.
    let always = browser
        .wait_for(
            "document.querySelector('.card[data-state=\"waiting\"] button[data-decision=\"always\"]')?.title",
            PATIENCE,
        )
        .unwrap();
    // Named with what "always" does: saved, not for this session only.
    let saved = format!("allow write_file on notes.md ({})", axon_protocol::ALWAYS_SAVES);
    assert_eq!(always, json!(saved));
    let said = browser
        .execute("return document.querySelector('.approval-rule')?.textContent", json!([]))
        .unwrap();
    assert_eq!(said, json!(format!("Always: {saved}")));
    shot(&browser, "15b-always-saves-light");
    browser.click(".card[data-state=\"waiting\"] button[data-decision=\"always\"]").unwrap();
    browser
        .wait_for("[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('Said hi.'))", PATIENCE)
        .unwrap();
    // Saved under the user's data folder, not in the repository.
    let trust = s.home.path().join("data").join("trust");
    let saved: String = std::fs::read_dir(&trust)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(saved.contains("write_file(notes.md)"), "{saved}");
    assert!(!s.workspace.path().join(".axon").exists());
    console_is_clean(&browser);
}

#[test]
fn stop_ends_a_stalled_answer_and_keeps_its_text() {
    let s = setup(vec![Reply::Stall("Here is the first half of".into())]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "tell me a long story");
    browser
        .wait_for("document.querySelector('.msg.assistant.streaming .body')?.textContent.includes('first half of')", PATIENCE)
        .unwrap();
    browser.wait_for("!document.querySelector('#stop').hidden", PATIENCE).unwrap();
    browser.click("#stop").unwrap();
    browser.wait_for("document.querySelector('#stop').hidden", PATIENCE).unwrap();
    let kept = browser
        .wait_for("document.querySelector('.msg.assistant.stopped .body')?.textContent", PATIENCE)
        .unwrap();
    assert!(kept.as_str().unwrap().contains("Here is the first half of"), "{kept}");
    shot(&browser, "05-stopped-light");
    console_is_clean(&browser);
}

#[test]
fn a_session_is_resumed_from_the_sidebar() {
    let s = setup(vec![
        Reply::text("The answer of the first session."),
        Reply::text("A second session."),
    ]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "first question");
    browser
        .wait_for("document.querySelector('#stop').hidden && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('first session'))", PATIENCE)
        .unwrap();
    browser.click("#new-session").unwrap();
    browser
        .wait_for(
            "!document.querySelector('#transcript').textContent.includes('first session')",
            PATIENCE,
        )
        .unwrap();
    send(&browser, "second question");
    browser
        .wait_for("[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('A second session.')) && document.querySelector('#stop').hidden", PATIENCE)
        .unwrap();
    // The sidebar lists both; the first one is not the current one.
    open_sidebar(&browser);
    browser
        .wait_for("document.querySelectorAll('#sessions .session').length >= 2 && document.querySelectorAll('#sessions .session.current').length === 1", PATIENCE)
        .unwrap();
    shot(&browser, "06-sidebar-light");
    browser.click("#sessions .session:not(.current) button.resume").unwrap();
    browser
        .wait_for("[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('The answer of the first session.'))", PATIENCE)
        .unwrap();
    browser
        .wait_for(
            "document.querySelector('.msg.user .body')?.textContent.includes('first question')",
            PATIENCE,
        )
        .unwrap();
    shot(&browser, "07-resumed-light");
    console_is_clean(&browser);
}

#[test]
fn plan_mode_proposes_a_plan_that_runs_once_approved() {
    let s = setup(vec![
        Reply::submit_plan(&["read the notes", "write the summary"]),
        Reply::text("read them"),
        Reply::text("wrote it"),
    ]);
    let web = Web::start(&s, &["--yes"]);
    let browser = open(&web, 1280, 900, true);
    browser.click("#mode-plan").unwrap();
    browser
        .wait_for(
            "document.querySelector('#mode-plan').getAttribute('aria-pressed') === 'true'",
            PATIENCE,
        )
        .unwrap();
    send(&browser, "summarise my notes");
    browser.wait_for("document.querySelectorAll('#plan .step').length === 2 && !document.querySelector('#plan').hidden", PATIENCE).unwrap();
    let steps = browser
        .execute("return [...document.querySelectorAll('#plan .step')].map(s => s.textContent).join('|')", json!([]))
        .unwrap();
    assert!(steps.as_str().unwrap().contains("read the notes"), "{steps}");
    shot(&browser, "08-plan-dark");
    browser.click("#plan-approve").unwrap();
    browser
        .wait_for("[...document.querySelectorAll('#plan .step')].every(s => s.dataset.status === 'completed')", PATIENCE)
        .unwrap();
    shot(&browser, "09-plan-done-dark");
    // The same page at phone width.
    browser.resize(390, 844).unwrap();
    // The sidebar becomes a closed drawer; the picture waits for its slide.
    browser
        .wait_for(
            "document.documentElement.clientWidth <= 400 && !document.querySelector('#app').classList.contains('sidebar-open') && document.getAnimations().length === 0",
            PATIENCE,
        )
        .unwrap();
    shot(&browser, "11-plan-phone-dark");
    console_is_clean(&browser);
}

#[test]
fn mcp_servers_show_their_state_and_a_failed_ones_error() {
    let s = setup(vec![]);
    std::fs::write(
        s.home.path().join("config.toml"),
        "[mcp_servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo cannot find the database >&2; exit 3\"]\n",
    )
    .unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    let state = browser
        .wait_for("document.querySelector('#servers .server[data-name=\"broken\"]')?.dataset.state === 'error' && document.querySelector('#servers .server[data-name=\"broken\"]').textContent", PATIENCE)
        .unwrap();
    assert!(state.as_str().unwrap().contains("broken"), "{state}");
    // Its error is on the page, one click away.
    browser.click("#servers .server[data-name=\"broken\"]").unwrap();
    browser
        .wait_for("[...document.querySelectorAll('body *')].some(e => e.offsetParent !== null && e.children.length === 0 && e.textContent.includes('cannot find the database'))", PATIENCE)
        .unwrap();
    shot(&browser, "12-mcp-error-light");
    console_is_clean(&browser);
}

#[test]
fn a_hostile_answer_runs_nothing() {
    let hostile = "Look: <img src=x onerror=\"window.__pwned=1\"> and <script>window.__pwned=2</script>\n\n\
                   [click me](javascript:window.__pwned=3) and ![img](javascript:window.__pwned=4)\n\n\
                   <svg onload=\"window.__pwned=5\"></svg> <a href=\"javascript:window.__pwned=6\">raw</a>\n\n\
                   <iframe src=\"javascript:window.__pwned=7\"></iframe> [ok](https://example.com)";
    let s =
        setup(vec![Reply::tool("read_file", json!({"path": "evil.html"})), Reply::text(hostile)]);
    std::fs::write(
        s.workspace.path().join("evil.html"),
        "<img src=x onerror=\"window.__pwned=8\"><script>window.__pwned=9</script>",
    )
    .unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "read evil.html");
    browser
        .wait_for("document.querySelector('#stop').hidden && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('click me'))", PATIENCE)
        .unwrap();
    browser.wait_for("document.querySelector('.card .result')", PATIENCE).unwrap();
    // Give a would-be handler every chance: click the link that was a
    // javascript: URL, if it became one at all.
    let _ = browser.execute(
        "for (const a of document.querySelectorAll('.msg.assistant a')) { if (!a.href.startsWith('http')) a.click(); } return 1",
        json!([]),
    );
    let verdict = browser
        .execute(
            "return {pwned: window.__pwned === undefined ? null : window.__pwned,
                     scripts: document.querySelectorAll('#transcript script, #transcript iframe, #transcript svg[onload]').length,
                     handlers: [...document.querySelectorAll('#transcript *')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
                     jsLinks: [...document.querySelectorAll('#transcript [href], #transcript [src]')].filter(e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || '')).length,
                     imgs: document.querySelectorAll('#transcript .msg img').length,
                     shownAsText: document.querySelector('.card .result').textContent.includes('<script>')}",
            json!([]),
        )
        .unwrap();
    assert_eq!(
        verdict,
        json!({"pwned": null, "scripts": 0, "handlers": 0, "jsLinks": 0, "imgs": 0, "shownAsText": true}),
        "the hostile answer or file did something"
    );
    shot(&browser, "10-hostile-light");
}

#[test]
fn a_missing_token_and_a_foreign_page_get_nothing() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let browser = Browser::start(1000, 800, false).unwrap();
    // Without the token: 401 and the way back.
    browser.goto(&web.page_url()).unwrap();
    let text = browser.wait_for("document.body.innerText", PATIENCE).unwrap();
    assert!(text.as_str().unwrap().contains("token"), "{text}");
    // A page of another origin (the model server's) cannot read the stream
    // nor send an operation, even after the browser has the cookie.
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body.dataset.ready === '1'", PATIENCE).unwrap();
    // Issue 30 §2.9: cookies ignore ports. Another local server the browser
    // visits must not receive the panel's cookie.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other_url = format!("http://{}/visit", other.local_addr().unwrap());
    let heads = record_requests(other);
    browser.goto(&other_url).unwrap();
    let head = loop {
        let head = heads.recv_timeout(PATIENCE).expect("the browser reached the other server");
        if head.starts_with("GET /visit") {
            break head;
        }
    };
    assert!(
        !head.to_ascii_lowercase().contains("axon_web"),
        "the cookie went to another port: {head}"
    );
    browser.goto(&format!("{}/elsewhere", s.server.url)).unwrap();
    let script = format!(
        "const done = arguments[0];
         Promise.all([
           fetch('{origin}/api/events', {{credentials: 'include'}}).then(r => r.status, e => 'blocked'),
           fetch('{origin}/api/op', {{method: 'POST', credentials: 'include', headers: {{'content-type': 'application/json'}}, body: '{{\"op\":\"compact\"}}'}}).then(r => r.status, e => 'blocked'),
         ]).then(done);",
        origin = format!("{}{}", web.origin(), web.base)
    );
    let results = browser.execute_async(&script).unwrap();
    for result in results.as_array().unwrap() {
        assert!(
            result == "blocked" || result == 401 || result == 403,
            "a foreign page got {result}"
        );
    }
}

#[test]
fn the_input_completes_files_and_commands_and_recalls_history() {
    let s = setup(vec![Reply::text("Read it."), Reply::text("Second answer.")]);
    std::fs::write(s.workspace.path().join("notes.txt"), "the secret word is kumquat\n").unwrap();
    std::fs::create_dir(s.workspace.path().join("src")).unwrap();
    std::fs::write(s.workspace.path().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    // `@` offers the workspace's files; Tab picks one.
    browser.click("#prompt").unwrap();
    browser.type_into("#prompt", "summarise @note").unwrap();
    let offered = browser
        .wait_for("!document.querySelector('#complete').hidden && [...document.querySelectorAll('#complete [role=option]')].map(o => o.textContent).join('|')", PATIENCE)
        .unwrap();
    assert!(offered.as_str().unwrap().contains("notes.txt"), "{offered}");
    shot(&browser, "13-complete-file-light");
    browser.type_into("#prompt", "\u{E004}").unwrap();
    let text = browser
        .wait_for("document.querySelector('#prompt').value.includes('@notes.txt')", PATIENCE);
    assert!(text.is_ok(), "{text:?}");
    // Shift-Enter is a new line, Enter sends; the mentioned file goes along.
    browser.type_into("#prompt", "please\u{E008}\u{E007}\u{E000}in one line\u{E007}").unwrap();
    browser
        .wait_for("document.querySelector('.msg.user .body')?.textContent.includes('in one line') && document.querySelector('#prompt').value === ''", PATIENCE)
        .unwrap();
    browser.wait_for("document.querySelector('#stop').hidden && document.querySelectorAll('.msg.assistant').length === 1", PATIENCE).unwrap();
    let sent = s.server.requests();
    let request = sent.last().unwrap().to_string();
    assert!(request.contains("kumquat"), "the mentioned file went with the prompt: {request}");
    assert!(request.contains("please\\nin one line"), "Shift-Enter made a new line: {request}");
    // `/` offers commands, including ones that answer without the model.
    browser.type_into("#prompt", "/comp").unwrap();
    let commands = browser
        .wait_for("!document.querySelector('#complete').hidden && [...document.querySelectorAll('#complete [role=option]')].map(o => o.textContent).join('|')", PATIENCE)
        .unwrap();
    assert!(commands.as_str().unwrap().contains("/compact"), "{commands}");
    shot(&browser, "14-complete-command-light");
    // Esc closes the list; clearing the box and ArrowUp recalls the prompt.
    browser.type_into("#prompt", "\u{E00C}").unwrap();
    browser.wait_for("document.querySelector('#complete').hidden", PATIENCE).unwrap();
    browser.execute("const p = document.querySelector('#prompt'); p.value = ''; p.dispatchEvent(new Event('input')); return 1", json!([])).unwrap();
    browser.type_into("#prompt", "\u{E013}").unwrap();
    browser
        .wait_for("document.querySelector('#prompt').value.includes('in one line')", PATIENCE)
        .unwrap();
    console_is_clean(&browser);
}

#[test]
fn reasoning_folds_away_and_errors_are_visible() {
    let s = setup(vec![
        Reply::Reasoning {
            reasoning: "Let me think about the question.".into(),
            text: "Forty-two.".into(),
        },
        Reply::error(400, r#"{"error":{"message":"the model refuses this request"}}"#),
    ]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, true);
    send(&browser, "what is the answer?");
    browser
        .wait_for("document.querySelector('#stop').hidden && document.querySelector('.msg.assistant .body')?.textContent.includes('Forty-two.')", PATIENCE)
        .unwrap();
    let folded = browser
        .execute("const d = document.querySelector('details.thought'); return d ? {open: d.open, text: d.textContent} : null", json!([]))
        .unwrap();
    assert_eq!(folded["open"], json!(false), "{folded}");
    assert!(folded["text"].as_str().unwrap().contains("Let me think"), "{folded}");
    send(&browser, "and now?");
    let error =
        browser.wait_for("document.querySelector('.notice.error')?.textContent", PATIENCE).unwrap();
    assert!(error.as_str().unwrap().contains("the model refuses this request"), "{error}");
    shot(&browser, "15-reasoning-error-dark");
}

#[test]
fn a_session_of_5000_messages_is_all_there() {
    use axon_protocol::Message;
    use axon_store::{Record, Redactor, SessionStore};
    let s = setup(vec![]);
    let root = std::fs::canonicalize(s.workspace.path()).unwrap();
    let store = SessionStore::new(&s.home.path().join("data"));
    let mut writer =
        store.create("a long talk", &root, "openai", "gpt-4.1", Redactor::default()).unwrap();
    for i in 0..2500 {
        writer.append(&Record::message(Message::user(format!("question {i}")))).unwrap();
        let answer = format!("Answer **{i}**:\n\n```rust\nlet n = {i};\n```\n");
        writer.append(&Record::message(Message::assistant(answer))).unwrap();
    }
    writer.sync().unwrap();
    let id = writer.id().to_string();
    drop(writer);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    resume_from_sidebar(&browser, &id);
    browser
        .wait_for("document.body.dataset.ready === '1' && document.querySelectorAll('#transcript .msg').length === 5000", PATIENCE)
        .unwrap();
    // The newest is shown; the oldest is there when scrolled to.
    browser
        .wait_for("[...document.querySelectorAll('.msg.assistant .body')].pop().textContent.includes('Answer 2499')", PATIENCE)
        .unwrap();
    browser
        .execute("document.querySelector('#transcript .msg').scrollIntoView(); return 1", json!([]))
        .unwrap();
    browser
        .wait_for("document.querySelector('#transcript .msg.user .body').textContent.includes('question 0') && document.querySelectorAll('#transcript .msg.assistant')[0].querySelector('strong')", PATIENCE)
        .unwrap();
    shot(&browser, "16-long-session-top-light");
    console_is_clean(&browser);
}

/// A session resumed from the sidebar shows what it spent before in the
/// context meter, not $0 (issue 35).
#[test]
fn a_resumed_session_s_cost_is_in_the_meter() {
    use axon_protocol::{Message, Usage};
    use axon_store::{Record, Redactor, SessionStore};
    let s = setup(vec![]);
    // Each recorded call (12 input, 7 output tokens) costs $0.026 here.
    std::fs::write(
        s.home.path().join("config.toml"),
        "model = \"priced-model\"\n[prices.\"priced-model\"]\ninput = 1000.0\noutput = 2000.0\n",
    )
    .unwrap();
    let root = std::fs::canonicalize(s.workspace.path()).unwrap();
    let store = SessionStore::new(&s.home.path().join("data"));
    let mut writer =
        store.create("spent", &root, "openai", "priced-model", Redactor::default()).unwrap();
    let usage = Usage { input_tokens: 12, output_tokens: 7, ..Usage::default() };
    for i in 0..2 {
        writer.append(&Record::message(Message::user(format!("question {i}")))).unwrap();
        writer.append(&Record::Usage { usage }).unwrap();
        writer.append(&Record::message(Message::assistant(format!("answer {i}")))).unwrap();
    }
    writer.sync().unwrap();
    let id = writer.id().to_string();
    drop(writer);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    resume_from_sidebar(&browser, &id);
    let shown = browser
        .wait_for(
            "document.querySelector('#context-text').textContent.includes('$0.0520') && document.querySelector('#context-text').textContent",
            PATIENCE,
        )
        .unwrap();
    assert!(shown.as_str().unwrap().contains("$0.0520"), "{shown}");
    console_is_clean(&browser);
}

/// The messages and tool cards `#transcript` shows, in order: "user:TEXT",
/// "assistant:TEXT", "card:ID:TOOL:STATE" (notices left out).
fn items(browser: &Browser) -> Vec<String> {
    let shown = browser
        .execute(
            "return [...document.querySelectorAll('#transcript > .msg, #transcript > .card')].map(e =>
               e.matches('.msg.user') ? 'user:' + (e.querySelector('.body')?.textContent ?? '')
               : e.matches('.msg.assistant') ? 'assistant:' + e.querySelector('.body').textContent.trim()
               : `card:${e.dataset.callId}:${e.querySelector('.tool-name').textContent}:${e.dataset.state}`)",
            json!([]),
        )
        .unwrap();
    serde_json::from_value(shown).unwrap()
}

#[test]
fn a_call_id_used_again_by_the_next_model_call_gets_its_own_card_and_approval() {
    // The text protocol numbers its blocks afresh in every reply: both
    // calls below are `block_1`.
    let block = |call: serde_json::Value| format!("```json:tool\n{call}\n```");
    let s = setup(vec![
        Reply::text(&format!(
            "Reading first.\n{}",
            block(json!({"tool": "read_file", "params": {"path": "notes.txt"}}))
        )),
        Reply::text(&format!(
            "Now writing.\n{}",
            block(
                json!({"tool": "write_file", "params": {"path": "out.txt", "content": "written\n"}})
            )
        )),
        Reply::text("All done."),
    ]);
    std::fs::write(
        s.home.path().join("config.toml"),
        "[providers.openai]\ntool_protocol = \"text\"\n",
    )
    .unwrap();
    std::fs::write(s.workspace.path().join("notes.txt"), "hello from the notes\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "copy my notes");
    // The second block_1 is a new card, waiting, with its diff and buttons.
    let diff = browser
        .wait_for(
            "document.querySelectorAll('.card[data-call-id=\"block_1\"]').length === 2 && document.querySelectorAll('.card[data-call-id=\"block_1\"]')[1].matches('[data-state=\"waiting\"]') && document.querySelectorAll('.card[data-call-id=\"block_1\"]')[1].querySelector('.diff .add')?.textContent",
            PATIENCE,
        )
        .unwrap();
    assert!(diff.as_str().unwrap().contains("written"), "{diff}");
    let first = browser
        .execute("const c = document.querySelector('.card[data-call-id=\"block_1\"]'); return [c.dataset.state, c.querySelector('.tool-name').textContent, c.querySelector('.result').textContent, !!c.querySelector('.diff, button[data-decision]')]", json!([]))
        .unwrap();
    assert_eq!(first[0], "done", "{first}");
    assert_eq!(first[1], "read_file", "{first}");
    assert!(first[2].as_str().unwrap().contains("hello from the notes"), "{first}");
    assert_eq!(first[3], false, "the read's card got the write's diff or buttons: {first}");
    shot(&browser, "17-repeated-id-approval-light");
    browser.click(".card[data-call-id=\"block_1\"][data-state=\"waiting\"] button[data-decision=\"once\"]").unwrap();
    browser
        .wait_for("document.querySelector('#stop').hidden && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('All done.'))", PATIENCE)
        .unwrap();
    assert_eq!(std::fs::read_to_string(s.workspace.path().join("out.txt")).unwrap(), "written\n");
    let expected = vec![
        "user:copy my notes".to_string(),
        "assistant:Reading first.".into(),
        "card:block_1:read_file:done".into(),
        "assistant:Now writing.".into(),
        "card:block_1:write_file:done".into(),
        "assistant:All done.".into(),
    ];
    assert_eq!(items(&browser), expected);
    // A reload replays the session's events: the same two cards.
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body.dataset.ready === '1'", PATIENCE).unwrap();
    assert_eq!(items(&browser), expected);
    let results = browser
        .execute(
            "return [...document.querySelectorAll('.card .result')].map(r => r.textContent)",
            json!([]),
        )
        .unwrap();
    assert!(results[0].as_str().unwrap().contains("hello from the notes"), "{results}");
    assert!(!results[1].as_str().unwrap().contains("hello from the notes"), "{results}");
    shot(&browser, "18-repeated-id-replayed-light");
    console_is_clean(&browser);
}

#[test]
fn a_prompt_sent_during_a_turn_shows_when_its_own_turn_starts() {
    let s = setup(vec![
        Reply::ToolCalls {
            text: "Let me write it.".into(),
            calls: vec![(
                "write_file".into(),
                json!({"path": "out.txt", "content": "one\n"}).to_string(),
            )],
        },
        Reply::text("The first answer."),
        Reply::text("The second answer."),
    ]);
    std::fs::write(s.workspace.path().join("notes.txt"), "a note\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "first @notes.txt");
    // The turn waits on the approval: it is surely running.
    browser.wait_for("document.querySelector('.card[data-state=\"waiting\"] button[data-decision=\"once\"]')", PATIENCE).unwrap();
    send(&browser, "second question");
    // Sent (the page remembers a prompt once the server took it).
    browser
        .wait_for("Object.keys(localStorage).some(k => k.startsWith('axon:history:') && localStorage.getItem(k).includes('second question'))", PATIENCE)
        .unwrap();
    browser.click("button[data-decision=\"once\"]").unwrap();
    browser
        .wait_for("document.querySelector('#stop').hidden && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('The second answer.'))", PATIENCE)
        .unwrap();
    let card = browser
        .execute("return document.querySelector('.card').dataset.callId", json!([]))
        .unwrap();
    let expected = vec![
        "user:first @notes.txt".to_string(),
        "assistant:Let me write it.".into(),
        format!("card:{}:write_file:done", card.as_str().unwrap()),
        "assistant:The first answer.".into(),
        "user:second question".into(),
        "assistant:The second answer.".into(),
    ];
    assert_eq!(items(&browser), expected);
    // The mentioned file is a chip under the user's message.
    let chips = browser
        .execute(
            "return [...document.querySelectorAll('.msg.user .chip')].map(c => c.textContent)",
            json!([]),
        )
        .unwrap();
    assert_eq!(chips, json!(["notes.txt"]));
    shot(&browser, "19-queued-prompt-light");
    // Another tab (a reload) shows the same.
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body.dataset.ready === '1'", PATIENCE).unwrap();
    assert_eq!(items(&browser), expected);
    console_is_clean(&browser);
}

#[test]
fn the_mode_and_approval_follow_the_runtime_whoever_switched_them() {
    let s = setup(vec![]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    let shown = "[document.querySelector('#mode-plan').getAttribute('aria-pressed'), document.querySelector('#mode-react').getAttribute('aria-pressed'), document.querySelector('#approval').value].join(' ')";
    assert_eq!(browser.execute(&format!("return {shown}"), json!([])).unwrap(), "false true ask");
    // Another front end (a tab, a script) switches both.
    assert_eq!(web.op(json!({"op": "set_mode", "mode": "plan"})).status, 202);
    assert_eq!(web.op(json!({"op": "set_approval", "approval": "auto"})).status, 202);
    browser.wait_for(&format!("{shown} === 'true false auto'"), PATIENCE).unwrap();
    shot(&browser, "20-mode-followed-light");
    // A reload shows the runtime's state, not the page's default.
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body.dataset.ready === '1'", PATIENCE).unwrap();
    assert_eq!(browser.execute(&format!("return {shown}"), json!([])).unwrap(), "true false auto");
    // This page's own switch is the runtime's too: it survives a reload.
    browser.click("#mode-react").unwrap();
    browser.wait_for(&format!("{shown} === 'false true auto'"), PATIENCE).unwrap();
    // Reloaded once the runtime has taken the switch (its mode_changed).
    let taken = browser
        .execute_async(
            "const done = arguments[0];
             const es = new EventSource('api/events');
             es.onmessage = (e) => {
               const ev = JSON.parse(e.data);
               if (ev.type === 'mode_changed' && ev.mode === 'react') { es.close(); done(ev.approval); }
             };",
        )
        .unwrap();
    assert_eq!(taken, "auto");
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body.dataset.ready === '1'", PATIENCE).unwrap();
    assert_eq!(browser.execute(&format!("return {shown}"), json!([])).unwrap(), "false true auto");
    console_is_clean(&browser);
}

#[test]
fn a_resumed_session_shows_attachments_by_name_and_pairs_repeated_call_ids() {
    use axon_protocol::Message;
    use axon_store::{Record, Redactor, SessionStore};
    let s = setup(vec![]);
    let root = std::fs::canonicalize(s.workspace.path()).unwrap();
    let store = SessionStore::new(&s.home.path().join("data"));
    let mut writer =
        store.create("attachments", &root, "openai", "gpt-4.1", Redactor::default()).unwrap();
    // As the runtime writes them: the user's text, then each attachment.
    let messages = json!([
        {"role": "user", "content": [
            {"type": "text", "text": "compare these"},
            {"type": "text", "text": "\n<attachment name=\"src/lib.rs\">\npub fn f() {}\n</attachment>"},
            {"type": "text", "text": "\n<attachment name=\"clipboard \\\"1\\\"\">\nQUOTED TEXT\n</attachment>"},
            {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
        ]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"id": "call_0", "name": "read_file", "arguments": {"path": "src/lib.rs"}}
        ]},
        {"role": "tool", "tool_call_id": "call_0", "content": [{"type": "text", "text": "first result"}]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"id": "call_0", "name": "list_dir", "arguments": {"path": "."}}
        ]},
        {"role": "tool", "tool_call_id": "call_0", "is_error": true, "content": [{"type": "text", "text": "second result"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "They differ."}]}
    ]);
    for message in messages.as_array().unwrap() {
        let message: Message = serde_json::from_value(message.clone()).unwrap();
        writer.append(&Record::message(message)).unwrap();
    }
    writer.sync().unwrap();
    let id = writer.id().to_string();
    drop(writer);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, true);
    resume_from_sidebar(&browser, &id);
    browser
        .wait_for("document.body.dataset.ready === '1' && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('They differ.'))", PATIENCE)
        .unwrap();
    assert_eq!(
        items(&browser),
        vec![
            "user:compare these".to_string(),
            "card:call_0:read_file:done".into(),
            "card:call_0:list_dir:error".into(),
            "assistant:They differ.".into(),
        ]
    );
    let chips = browser
        .execute(
            "return [...document.querySelectorAll('.msg.user .chip')].map(c => c.textContent)",
            json!([]),
        )
        .unwrap();
    assert_eq!(chips, json!(["src/lib.rs", "clipboard \"1\"", "image/png"]));
    let quoted = browser
        .execute("return document.querySelector('#transcript').textContent", json!([]))
        .unwrap();
    assert!(!quoted.as_str().unwrap().contains("QUOTED TEXT"), "an attachment's content is shown");
    assert!(!quoted.as_str().unwrap().contains("<attachment"), "an attachment's quote is shown");
    let results = browser
        .execute(
            "return [...document.querySelectorAll('.card .result')].map(r => r.textContent)",
            json!([]),
        )
        .unwrap();
    assert_eq!(results, json!(["first result", "second result"]));
    shot(&browser, "21-resumed-attachments-dark");
    console_is_clean(&browser);
}

#[test]
fn a_resumed_session_shows_a_refused_call_as_refused_and_an_edit_as_its_diff() {
    // Issue 31 §1: a denied call replayed as "Failed", an edit as its JSON.
    use axon_protocol::Message;
    use axon_store::{Record, Redactor, SessionStore};
    let s = setup(vec![]);
    let root = std::fs::canonicalize(s.workspace.path()).unwrap();
    let store = SessionStore::new(&s.home.path().join("data"));
    let mut writer =
        store.create("refused", &root, "openai", "gpt-4.1", Redactor::default()).unwrap();
    let messages = json!([
        {"role": "user", "content": [{"type": "text", "text": "fix the greeting"}]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"id": "call_0", "name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}
        ]},
        {"role": "tool", "tool_call_id": "call_0", "is_error": true, "refused": true,
         "content": [{"type": "text", "text": "The user did not allow write_file: no"}]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"id": "call_1", "name": "edit_file", "arguments":
                {"path": "src/hello.rs", "old_str": "    hello();\n    world();", "new_str": "    goodbye();"}}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "Edited src/hello.rs"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Changed it."}]}
    ]);
    for message in messages.as_array().unwrap() {
        let message: Message = serde_json::from_value(message.clone()).unwrap();
        writer.append(&Record::message(message)).unwrap();
    }
    writer.sync().unwrap();
    let id = writer.id().to_string();
    drop(writer);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    resume_from_sidebar(&browser, &id);
    browser
        .wait_for("document.body.dataset.ready === '1' && [...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('Changed it.'))", PATIENCE)
        .unwrap();
    assert_eq!(
        items(&browser),
        vec![
            "user:fix the greeting".to_string(),
            "card:call_0:write_file:refused".into(),
            "card:call_1:edit_file:done".into(),
            "assistant:Changed it.".into(),
        ]
    );
    let label = browser
        .execute("return document.querySelector('.card[data-call-id=\"call_0\"] .state-label').textContent", json!([]))
        .unwrap();
    assert_eq!(label, json!("Refused"));
    let edit = browser
        .execute(
            "const card = document.querySelector('.card[data-call-id=\"call_1\"]');
             return {
               lines: [...card.querySelectorAll('.diff-lines > div')].map(d => d.className + ':' + d.textContent),
               args: [...card.querySelectorAll('pre.args')].filter(p => p.offsetParent !== null).length,
             }",
            json!([]),
        )
        .unwrap();
    assert_eq!(
        edit["lines"],
        json!(["del:-    hello();", "del:-    world();", "add:+    goodbye();"]),
        "{edit}"
    );
    assert_eq!(edit["args"], json!(0), "the arguments are not shown again as JSON: {edit}");
    shot(&browser, "22-resumed-refused-and-diff-light");
    console_is_clean(&browser);
}

#[test]
fn ps_lists_the_background_commands() {
    let s = setup(vec![
        Reply::tool("shell", json!({"command": "sleep 300", "background": true})),
        Reply::text("started it"),
    ]);
    let web = Web::start(&s, &["--yes"]);
    let browser = open(&web, 1280, 900, false);
    send(&browser, "start the server");
    browser
        .wait_for("document.body.textContent.includes('started it') && !document.body.classList.contains('running')", PATIENCE)
        .unwrap();
    send(&browser, "/ps");
    let line = browser
        .wait_for("[...document.querySelectorAll('body *')].find(e => e.offsetParent !== null && e.children.length === 0 && e.textContent.includes('bg1  sleep 300'))?.textContent", PATIENCE)
        .unwrap();
    assert!(line.as_str().unwrap().contains("running"), "{line}");
    shot(&browser, "25-ps");
    console_is_clean(&browser);
}

#[test]
fn an_unfocused_page_gets_a_desktop_notification_when_a_call_waits() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
        Reply::text("written"),
    ]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 900, false);
    // The browser's side, as a user who allowed notifications and looked
    // away would have it: what the page asks of `Notification` is recorded.
    browser
        .execute(
            "window.shown = []; \
             window.Notification = class { constructor(title, options) { window.shown.push([title, options.body, options.tag]); } close() {} }; \
             window.Notification.permission = 'granted'; \
             document.hasFocus = () => false;",
            json!([]),
        )
        .unwrap();
    send(&browser, "write a");
    let shown = browser
        .wait_for("window.shown.length >= 1 && JSON.stringify(window.shown)", PATIENCE)
        .unwrap();
    assert!(
        shown.as_str().unwrap().contains("axon needs your permission to use write_file"),
        "{shown}"
    );
    console_is_clean(&browser);
}
