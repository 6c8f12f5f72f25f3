//! Images pasted or dropped into the prompt box: attached as removable
//! thumbnails, sent with the prompt as its image parts (what the model is
//! sent, read at the scripted server), shown in the user's own message;
//! another type, an image past the limit or a corrupt one refused with a
//! message the user sees.

use std::io::Cursor;

use axon_testkit::Reply;
use axon_testkit::webdriver::Browser;
use base64::Engine as _;
use serde_json::json;

use crate::common::{PATIENCE, Panel, console_is_clean, shot};

/// A real PNG of `width`×`height`, base64.
fn png(width: u32, height: u32) -> String {
    let pixels = image::RgbaImage::from_fn(width, height, |x, y| {
        image::Rgba([(x * 40) as u8, (y * 60) as u8, 200, 255])
    });
    let mut out = Cursor::new(Vec::new());
    pixels.write_to(&mut out, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(out.into_inner())
}

/// Defines `file(name, type, base64)` and `give(kind, files)` in the page:
/// a paste on the prompt or a drop on its box, as the browser dispatches
/// them (a `DataTransfer` holding the files).
const HELPERS: &str = "
window.file = (name, type, b64) =>
  new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type });
window.give = (kind, files, text) => {
  const dt = new DataTransfer();
  for (const f of files) dt.items.add(f);
  if (text) dt.setData('text/plain', text);
  if (kind === 'paste') {
    document.querySelector('#prompt').dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  } else {
    const box = document.querySelector('.composer-box');
    for (const type of ['dragover', 'drop']) {
      box.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }
};";

fn helpers(browser: &Browser) {
    browser.execute(HELPERS, json!([])).unwrap();
}

fn send(browser: &Browser, text: &str) {
    browser.click("#prompt").unwrap();
    browser.type_into("#prompt", &format!("{text}\u{E007}")).unwrap();
}

#[test]
fn a_pasted_image_is_sent_to_the_model_and_shown_in_the_users_message() {
    let panel = Panel::start(vec![Reply::text("A small gradient.")]);
    let browser = panel.open();
    helpers(&browser);
    let image = png(5, 3);
    browser
        .execute("give('paste', [file('shot.png', 'image/png', arguments[0])])", json!([image]))
        .unwrap();
    let chip = browser
        .wait_for(
            "!document.querySelector('#attached').hidden && document.querySelector('#attached .image-chip img')?.getAttribute('alt')",
            PATIENCE,
        )
        .unwrap();
    assert_eq!(chip, json!("shot.png"));
    send(&browser, "what is in this picture?");
    // The user's message shows the image it sent.
    let shown = browser
        .wait_for(
            "document.querySelector('.msg.user .prompt-image')?.getAttribute('src')",
            PATIENCE,
        )
        .unwrap();
    assert_eq!(shown, json!(format!("data:image/png;base64,{image}")));
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('A small gradient.'))",
            PATIENCE,
        )
        .unwrap();
    // The tray emptied when the prompt went.
    assert_eq!(
        browser.execute("return document.querySelector('#attached').hidden", json!([])).unwrap(),
        json!(true)
    );
    // The model was sent the image with the text, as the user's message.
    let requests = panel.server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let user = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .clone();
    shot(&browser, "images-01-pasted");
    let content = user["content"].as_array().unwrap();
    assert!(content.iter().any(|p| p["text"] == "what is in this picture?"), "{user}");
    let url = format!("data:image/png;base64,{image}");
    assert!(content.iter().any(|p| p["image_url"]["url"] == url.as_str()), "{user}");
    console_is_clean(&browser);
}

#[test]
fn a_dropped_image_can_be_removed_and_other_files_are_refused_with_a_message() {
    let panel = Panel::start(vec![Reply::text("Two images.")]);
    let browser = panel.open();
    helpers(&browser);
    let image = png(2, 2);
    // Not an image: refused, said so, nothing attached.
    browser
        .execute("give('drop', [file('notes.txt', 'text/plain', btoa('hello'))])", json!([]))
        .unwrap();
    let said = browser
        .wait_for("document.querySelector('#toasts .toast-text')?.textContent", PATIENCE)
        .unwrap();
    assert!(
        said.as_str().unwrap().contains("Cannot attach notes.txt: only PNG, JPEG, GIF and WebP"),
        "{said}"
    );
    assert_eq!(
        browser.execute("return document.querySelector('#attached').hidden", json!([])).unwrap(),
        json!(true)
    );
    // Past what one operation may carry: refused before it is read.
    browser
        .execute(
            "give('drop', [new File([new Uint8Array(7 * 1024 * 1024)], 'huge.png', { type: 'image/png' })])",
            json!([]),
        )
        .unwrap();
    let said = browser
        .wait_for(
            "[...document.querySelectorAll('#toasts .toast-text')].map(t => t.textContent).find(t => t.includes('huge.png'))",
            PATIENCE,
        )
        .unwrap();
    assert!(said.as_str().unwrap().contains("a prompt carries at most"), "{said}");
    // Text that comes with a picture of itself (a spreadsheet's cells) is
    // a text paste, left to the browser.
    let pasted = browser
        .execute(
            "const box = document.querySelector('#prompt'); let prevented = null; \
             box.addEventListener('paste', (e) => { prevented = e.defaultPrevented; }, { once: true }); \
             give('paste', [file('cells.png', 'image/png', arguments[0])], 'a\\tb'); return prevented",
            json!([image]),
        )
        .unwrap();
    assert_eq!(pasted, json!(false), "the text paste is the browser's");
    // (Nor is its picture attached: exactly the two dropped below are.)
    // Two dropped at once; the first removed again.
    browser
        .execute(
            "give('drop', [file('a.png', 'image/png', arguments[0]), file('b.png', 'image/png', arguments[0])])",
            json!([image]),
        )
        .unwrap();
    browser
        .wait_for("document.querySelectorAll('#attached .image-chip').length === 2", PATIENCE)
        .unwrap();
    shot(&browser, "images-02-two-attached");
    browser.click("#attached .image-chip button[aria-label=\"Remove a.png\"]").unwrap();
    let left = browser
        .wait_for(
            "document.querySelectorAll('#attached .image-chip').length === 1 && document.querySelector('#attached .image-chip img').alt",
            PATIENCE,
        )
        .unwrap();
    assert_eq!(left, json!("b.png"));
    // The messages dismissed (they cover the send button), an image alone
    // is a prompt.
    while browser
        .execute("return document.querySelector('#toasts .toast-close') !== null", json!([]))
        .unwrap()
        == json!(true)
    {
        browser.click("#toasts .toast-close").unwrap();
    }
    browser.click("#send").unwrap();
    browser
        .wait_for("document.querySelectorAll('.msg.user .prompt-image').length === 1", PATIENCE)
        .unwrap();
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant .body')].some(e => e.textContent.includes('Two images.'))",
            PATIENCE,
        )
        .unwrap();
    let sent = panel.server.requests()[0].to_string();
    assert_eq!(sent.matches("data:image/png;base64,").count(), 1, "one image went: {sent}");
    console_is_clean(&browser);
}

#[test]
fn a_corrupt_image_is_refused_by_the_server_with_an_error_the_page_shows() {
    let panel = Panel::start(vec![]);
    let browser = panel.open();
    helpers(&browser);
    // Says PNG, is not one: the runtime checks the bytes, not the label.
    browser
        .execute(
            "give('paste', [file('fake.png', 'image/png', btoa('not a png at all'))])",
            json!([]),
        )
        .unwrap();
    browser.wait_for("document.querySelector('#attached .image-chip')", PATIENCE).unwrap();
    send(&browser, "look");
    let error = browser
        .wait_for("document.querySelector('.notice.error .notice-text')?.textContent", PATIENCE)
        .unwrap();
    assert!(error.as_str().unwrap().contains("not a PNG, JPEG, GIF or WebP"), "{error}");
    assert!(panel.server.requests().is_empty(), "nothing was sent to the model");
    // The message still shows what was sent; a broken image logs nothing.
    browser.wait_for("document.querySelector('.msg.user .prompt-image')", PATIENCE).unwrap();
    console_is_clean(&browser);
}
