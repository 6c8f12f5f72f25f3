//! The web panel keeps the user on what needs them (issue 31 §2), in
//! Debian's Chromium over WebDriver: a new request brings the view to the
//! latest activity even when the reader had scrolled up; a call waiting
//! for approval is on screen, and while it is scrolled away the header and
//! the tab's title say so (the header's flag goes back to it); an approved
//! edit shows its diff once, and arguments a preview shows are not
//! repeated as JSON under the card.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::browser::{open, send, shot};
use crate::common::setup;
use crate::common::web::{PATIENCE, Web};
use axon_testkit::Reply;
use axon_testkit::webdriver::Browser;
use serde_json::json;

/// Whether the element `selector` names is inside the transcript's view.
const IN_VIEW: &str = "const el = document.querySelector(arguments[0]);
    if (!el) return false;
    const r = el.getBoundingClientRect(), t = document.querySelector('#transcript').getBoundingClientRect();
    return r.top >= t.top - 1 && r.bottom <= t.bottom + 1;";

fn in_view(browser: &Browser, selector: &str) -> bool {
    browser.execute(IN_VIEW, json!([selector])).unwrap() == json!(true)
}

#[test]
fn a_waiting_approval_is_shown_and_flagged_while_scrolled_away() {
    let long: String = (1..=120).map(|n| format!("Line {n} of a long answer.\n\n")).collect();
    let s = setup(vec![
        Reply::text(&long),
        Reply::tool("write_file", json!({"path": "out.txt", "content": "hello\n"})),
        Reply::text("Written."),
    ]);
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 700, false);
    send(&browser, "tell me a lot");
    browser
        .wait_for("document.querySelector('#stop').hidden && document.querySelector('#transcript').textContent.includes('Line 120 of')", PATIENCE)
        .unwrap();
    // The reader scrolls back to the start of the answer.
    browser.execute("document.querySelector('#transcript').scrollTop = 0", json!([])).unwrap();
    browser.wait_for("!document.querySelector('#to-bottom').hidden", PATIENCE).unwrap();

    // A request sent from elsewhere (another tab) is new activity: the view
    // goes to it, and to the approval it waits on.
    browser
        .execute(
            "fetch('api/op', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'},
               body: JSON.stringify({op: 'user_turn', text: 'write out.txt'})})",
            json!([]),
        )
        .unwrap();
    browser
        .wait_for("document.querySelector('.card[data-state=\"waiting\"] .approval')", PATIENCE)
        .unwrap();
    browser
        .wait_for(
            &format!(
                "(() => {{ {} }})()",
                IN_VIEW.replace("arguments[0]", "'.card[data-state=\"waiting\"] .approval'")
            ),
            PATIENCE,
        )
        .unwrap();
    assert!(in_view(&browser, ".card[data-state=\"waiting\"] .approval"));
    let flag_hidden = browser
        .execute("return document.querySelector('#approval-flag').hidden", json!([]))
        .unwrap();
    assert_eq!(flag_hidden, json!(true), "on screen: nothing to flag");

    // Scrolled away from it, the header and the title say it waits.
    browser.execute("document.querySelector('#transcript').scrollTop = 0", json!([])).unwrap();
    browser.wait_for("!document.querySelector('#approval-flag').hidden", PATIENCE).unwrap();
    let title = browser.execute("return document.title", json!([])).unwrap();
    assert!(title.as_str().unwrap().starts_with("● Approval needed"), "{title}");
    shot(&browser, "23-approval-flagged-light");
    browser.click("#approval-flag").unwrap();
    browser.wait_for("document.querySelector('#approval-flag').hidden", PATIENCE).unwrap();
    assert!(in_view(&browser, ".card[data-state=\"waiting\"] .approval"));
    browser.click("button[data-decision=\"once\"]").unwrap();
    browser
        .wait_for(
            "document.querySelector('#transcript').textContent.includes('Written.')",
            PATIENCE,
        )
        .unwrap();
    let title = browser.execute("return document.title", json!([])).unwrap();
    assert!(!title.as_str().unwrap().contains("Approval needed"), "{title}");
}

#[test]
fn an_approved_edit_shows_its_diff_once_and_no_repeated_arguments() {
    let s = setup(vec![
        Reply::tool(
            "edit_file",
            json!({"path": "app.txt", "old_str": "colour = red", "new_str": "colour = blue"}),
        ),
        Reply::tool("write_file", json!({"path": "notes.txt", "content": "a note\n"})),
        Reply::text("Changed the colour."),
    ]);
    std::fs::write(s.workspace.path().join("app.txt"), "name = demo\ncolour = red\n").unwrap();
    let web = Web::start(&s, &[]);
    let browser = open(&web, 1280, 700, false);
    send(&browser, "make it blue");
    browser
        .wait_for("document.querySelector('.card[data-state=\"waiting\"] .diff')", PATIENCE)
        .unwrap();
    browser.click("button[data-decision=\"once\"]").unwrap();
    browser
        .wait_for(
            "document.querySelector('.card[data-tool=\"write_file\"][data-state=\"waiting\"]')",
            PATIENCE,
        )
        .unwrap();
    browser.click(".card[data-tool=\"write_file\"] button[data-decision=\"once\"]").unwrap();
    browser
        .wait_for(
            "document.querySelector('#transcript').textContent.includes('Changed the colour.')",
            PATIENCE,
        )
        .unwrap();
    let edit = browser
        .execute(
            "const card = document.querySelector('.card[data-tool=\"edit_file\"]');
             return {
               diffs: card.querySelectorAll('.diff').length,
               result: card.querySelector('.result').textContent,
               args: [...card.querySelectorAll('pre.args')].filter(p => !p.closest('[hidden]')).length,
             }",
            json!([]),
        )
        .unwrap();
    assert_eq!(edit["diffs"], json!(1), "{edit}");
    let result = edit["result"].as_str().unwrap();
    assert!(result.starts_with("Edited 'app.txt'"), "{edit}");
    assert!(!result.contains("colour = blue"), "the result does not repeat the diff: {edit}");
    assert_eq!(edit["args"], json!(0), "{edit}");
    // Every card shows its arguments at most once: in a preview, or as JSON.
    let twice = browser
        .execute(
            "return [...document.querySelectorAll('.card')].filter(card =>
               [...card.querySelectorAll('pre.args, .preview.arguments, .diff')].filter(e => !e.closest('[hidden]')).length > 1
             ).map(card => card.dataset.tool)",
            json!([]),
        )
        .unwrap();
    assert_eq!(twice, json!([]));
    shot(&browser, "24-edit-diff-once-light");
}
