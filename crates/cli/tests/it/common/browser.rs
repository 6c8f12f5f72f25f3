//! The web panel in Debian's Chromium (over WebDriver), as the browser
//! tests drive it: opened once the page says it is ready, prompts typed
//! and sent with Enter, screenshots taken once animations settled, and
//! the console checked for script errors and CSP violations.

use std::path::PathBuf;

use axon_testkit::webdriver::Browser;

use super::web::{PATIENCE, Web};

/// The panel of `web` in a `width`×`height` window, once it is ready.
pub fn open(web: &Web, width: u32, height: u32, dark: bool) -> Browser {
    let browser = Browser::start(width, height, dark).unwrap();
    browser.goto(&web.url()).unwrap();
    browser.wait_for("document.body && document.body.dataset.ready === '1'", PATIENCE).unwrap();
    browser
}

/// Types a prompt and sends it with Enter, as a user does.
pub fn send(browser: &Browser, text: &str) {
    browser.click("#prompt").unwrap();
    browser.type_into("#prompt", &format!("{text}\u{E007}")).unwrap();
}

/// A screenshot into `target/web-screenshots/NAME.png`.
pub fn shot(browser: &Browser, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots");
    browser.settled_screenshot(&dir.join(format!("{name}.png")), PATIENCE).unwrap();
}

/// No script error and no CSP violation was logged.
pub fn console_is_clean(browser: &Browser) {
    let problems = browser.console_problems().unwrap();
    assert!(problems.is_empty(), "the console has problems: {problems:#?}");
}
