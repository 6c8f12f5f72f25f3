//! `/rewind` in the web panel (issue 31 §2), in Debian's Chromium over
//! WebDriver and over raw HTTP: `/rewind` lists the session's turns (which
//! changed files), `/rewind N` shows the runtime's preview with Confirm
//! and Cancel in the page; Cancel changes nothing, Confirm sends the
//! runtime's `rewind` Op, after which the file the turn wrote is gone and
//! the transcript (live, and after a reload) shows the conversation as it
//! now is with the rewind's notice. The list and preview endpoints are
//! behind the same guard as the rest of the API and check what they are
//! given.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::browser::{console_is_clean, open, send, shot};
use crate::common::setup;
use crate::common::web::{PATIENCE, Web};
use axon_testkit::Reply;
use axon_testkit::webdriver::Browser;
use serde_json::json;

fn wait_answer(browser: &Browser, text: &str) {
    browser
        .wait_for(
            &format!(
                "document.querySelector('#stop').hidden && \
                 document.querySelector('#transcript').textContent.includes({text:?})"
            ),
            PATIENCE,
        )
        .unwrap();
}

const USER_MESSAGES: &str = "return [...document.querySelectorAll('#transcript .msg.user .body')]
    .map(m => m.textContent.trim())";

#[test]
fn rewind_lists_the_turns_previews_and_acts_only_on_confirm() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "made.txt", "content": "turn one\n"})),
        Reply::text("Wrote made.txt."),
        Reply::text("Second answer."),
    ]);
    let made = s.workspace.path().join("made.txt");
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 800, false);
    send(&browser, "write made.txt");
    browser
        .wait_for("document.querySelector('.card[data-state=\"waiting\"] .approval')", PATIENCE)
        .unwrap();
    browser.click("button[data-decision=\"once\"]").unwrap();
    wait_answer(&browser, "Wrote made.txt.");
    send(&browser, "say more");
    wait_answer(&browser, "Second answer.");
    assert!(made.exists());

    // `/rewind`: the turns, newest first, with what each did to the files.
    send(&browser, "/rewind");
    browser.wait_for("document.querySelector('.rewind-list tr')", PATIENCE).unwrap();
    let rows = browser
        .execute(
            "return [...document.querySelectorAll('.rewind-list tr')].map(r =>
               [...r.querySelectorAll('td')].slice(0, 3).map(td => td.textContent))",
            json!([]),
        )
        .unwrap();
    assert_eq!(
        rows,
        json!([["2", "no file changes", "say more"], ["1", "changed files", "write made.txt"]])
    );
    shot(&browser, "25-rewind-list-light");

    // `/rewind 1`: the runtime's preview, answered in the page. Cancel
    // changes nothing.
    send(&browser, "/rewind 1");
    browser.wait_for("document.querySelector('.rewind-preview .rewind-cancel')", PATIENCE).unwrap();
    let lines = browser
        .execute(
            "return document.querySelector('.rewind-preview .rewind-lines').textContent",
            json!([]),
        )
        .unwrap();
    let lines = lines.as_str().unwrap();
    assert!(lines.starts_with("Rewind to before turn 1: write made.txt"), "{lines}");
    assert!(lines.contains("files: 1 put back") && lines.contains("made.txt"), "{lines}");
    assert!(lines.contains("messages taken back, turn 1 to the latest"), "{lines}");
    shot(&browser, "26-rewind-preview-light");
    browser.click(".rewind-preview .rewind-cancel").unwrap();
    browser
        .wait_for(
            "document.querySelector('.rewind-preview .rewind-answer')?.textContent === 'Not rewound: nothing was changed.'",
            PATIENCE,
        )
        .unwrap();
    assert!(made.exists(), "cancelled: the file stays");
    let users = browser.execute(USER_MESSAGES, json!([])).unwrap();
    assert_eq!(users, json!(["write made.txt", "say more"]));

    // The list's button previews its turn the same way.
    browser.click(".rewind-list tr[data-turn=\"2\"] button").unwrap();
    browser
        .wait_for(
            "[...document.querySelectorAll('.rewind-preview .rewind-lines')].pop()?.textContent.startsWith('Rewind to before turn 2: say more')",
            PATIENCE,
        )
        .unwrap();
    browser.click(".rewind-preview .rewind-cancel").unwrap();
    browser
        .wait_for("!document.querySelector('.rewind-preview .rewind-cancel')", PATIENCE)
        .unwrap();
    console_is_clean(&browser);

    // Again, and confirmed: the file goes, turn 1 and all after it leave
    // the transcript, and the rewind's notice says what was done.
    send(&browser, "/rewind 1");
    browser
        .wait_for(
            "document.querySelectorAll('.rewind-preview .rewind-confirm').length === 1",
            PATIENCE,
        )
        .unwrap();
    browser.click(".rewind-preview .rewind-confirm").unwrap();
    browser
        .wait_for(
            "document.querySelector('#transcript').textContent.includes('rewound to before turn 1')",
            PATIENCE,
        )
        .unwrap();
    assert!(common::eventually(|| !made.exists()), "confirmed: the file is gone");
    let shown = || {
        browser
            .execute(
                "return {users: [...document.querySelectorAll('#transcript .msg.user')].length,
                         text: document.querySelector('#transcript').textContent,
                         model: document.querySelector('#model .model-name').textContent}",
                json!([]),
            )
            .unwrap()
    };
    let live = shown();
    assert_eq!(live["users"], json!(0), "{live}");
    let text = live["text"].as_str().unwrap();
    assert!(!text.contains("Wrote made.txt.") && !text.contains("Second answer."), "{text}");
    assert!(!text.contains("Rewind?"), "the preview went with the old transcript: {text}");
    shot(&browser, "27-rewound-light");

    // A page opened now shows the same, and still knows the session.
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body && document.body.dataset.ready === '1'", PATIENCE).unwrap();
    browser
        .wait_for(
            "document.querySelector('#transcript').textContent.includes('rewound to before turn 1')",
            PATIENCE,
        )
        .unwrap();
    let reloaded = shown();
    assert_eq!(reloaded["users"], json!(0), "{reloaded}");
    assert_ne!(reloaded["model"], json!("no model"), "{reloaded}");
    send(&browser, "/rewind");
    browser
        .wait_for(
            "document.querySelector('#transcript').textContent.includes('Nothing to rewind')",
            PATIENCE,
        )
        .unwrap();
    console_is_clean(&browser);
}

#[test]
fn the_rewind_endpoints_are_guarded_and_check_the_turn_and_scope() {
    let s = setup(vec![Reply::text("ok")]);
    let web = Web::start(&s, &[]);

    let anonymous = web.anonymous("GET", "/api/rewind").send();
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    let anonymous = web.anonymous("GET", "/api/rewind/1").send();
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    let evil = web.page("GET", "/api/rewind").header("Origin", "http://evil.example").send();
    assert_eq!(evil.status, 403, "{evil:?}");
    let cross = web.page("GET", "/api/rewind/1").header("Sec-Fetch-Site", "cross-site").send();
    assert_eq!(cross.status, 403, "{cross:?}");
    let host = web.page("GET", "/api/rewind").header("Host", "attacker.example").send();
    assert_eq!(host.status, 403, "{host:?}");

    // Nothing said yet: nothing to list or rewind.
    let empty = web.get("/api/rewind");
    assert_eq!(empty.status, 200, "{empty:?}");
    assert_eq!(empty.json(), json!({"turns": [], "total": 0}));
    let nothing = web.get("/api/rewind/1");
    assert_eq!(nothing.status, 409, "{nothing:?}");
    assert!(nothing.error().contains("Nothing to rewind"), "{nothing:?}");

    let mut page = web.events(None);
    assert_eq!(web.op(json!({"op": "user_turn", "text": "hello there"})).status, 202);
    page.until("the turn's end", |f| f.kind() == "turn_completed");
    let listed = web.get("/api/rewind");
    assert_eq!(
        listed.json(),
        json!({"turns": [{"turn": 1, "changed_files": false, "prompt": "hello there"}], "total": 1})
    );
    let preview = web.get("/api/rewind/1?scope=conversation");
    assert_eq!(preview.status, 200, "{preview:?}");
    let preview = preview.json();
    assert_eq!(preview["scope"], json!("conversation"));
    let lines = preview["lines"].as_array().unwrap();
    assert_eq!(lines[0], json!("Rewind to before turn 1: hello there"), "{preview}");
    assert!(lines.iter().all(|l| !l.as_str().unwrap().starts_with("files:")), "{preview}");

    let bad = web.get("/api/rewind/one");
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(bad.error().contains("a turn number, not `one`"), "{bad:?}");
    let bad = web.get("/api/rewind/1?scope=all");
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(bad.error().contains("`files`, `conversation` or `both`, not `all`"), "{bad:?}");
    let beyond = web.get("/api/rewind/7");
    assert_eq!(beyond.status, 409, "{beyond:?}");
    assert!(beyond.error().starts_with("Cannot rewind"), "{beyond:?}");
    // Previews change nothing: the turn is still there.
    assert_eq!(web.get("/api/rewind").json()["total"], json!(1));
}
