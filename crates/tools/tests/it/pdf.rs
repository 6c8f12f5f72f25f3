//! `read_file` on a PDF (issue 35 §3): the text of a page range, pages
//! numbered, from PDFs these tests write with lopdf; a scan's empty pages,
//! a damaged file, an encrypted file and a page range past the end are clear
//! results.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::common::TestWorkspace;
use crate::pdf_fixture::pdf;

#[test]
fn a_pdf_gives_the_text_of_its_pages_numbered() {
    let ws = TestWorkspace::code();
    ws.write(
        "report.pdf",
        pdf(&["Quarterly revenue rose", "Costs fell sharply", "Outlook stable"]),
    );
    let out = ws.call("read_file", json!({"path": "report.pdf"}));
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.starts_with("PDF 'report.pdf', 3 pages; pages 1-3:"), "{text}");
    let first = text.find("--- page 1 ---").unwrap();
    let second = text.find("--- page 2 ---").unwrap();
    assert!(first < text.find("Quarterly revenue rose").unwrap());
    assert!(second < text.find("Costs fell sharply").unwrap());
    assert!(text.contains("Outlook stable"), "{text}");

    let out = ws.call("read_file", json!({"path": "report.pdf", "pages": "2"}));
    let text = out.text_content();
    assert!(text.contains("Costs fell sharply") && !text.contains("Quarterly"), "{text}");
    assert!(text.contains("[pages 3-3 not shown; read on with pages: \"3-3\"]"), "{text}");
}

#[test]
fn a_long_pdf_shows_ten_pages_and_says_how_to_read_on() {
    let ws = TestWorkspace::code();
    let pages: Vec<String> = (1..=25).map(|n| format!("Chapter {n} text")).collect();
    let refs: Vec<&str> = pages.iter().map(String::as_str).collect();
    ws.write("book.pdf", pdf(&refs));
    let text = ws.call("read_file", json!({"path": "book.pdf"})).text_content();
    assert!(text.contains("Chapter 10 text") && !text.contains("Chapter 11 text"), "{text}");
    assert!(text.contains("read on with pages: \"11-25\""), "{text}");
    let out = ws.call("read_file", json!({"path": "book.pdf", "pages": "1-25"}));
    assert!(
        out.is_error && out.text_content().contains("at most 20 pages"),
        "{}",
        out.text_content()
    );
    let out = ws.call("read_file", json!({"path": "book.pdf", "pages": "30"}));
    assert!(out.is_error && out.text_content().contains("has 25 pages"), "{}", out.text_content());
}

#[test]
fn a_scan_a_damaged_file_and_pages_on_text_are_clear() {
    let ws = TestWorkspace::code();
    ws.write("scan.pdf", pdf(&["", ""]));
    let text = ws.call("read_file", json!({"path": "scan.pdf"})).text_content();
    assert!(text.contains("has a text layer (a scanned document?)"), "{text}");
    ws.write("broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\ntrailer\n");
    let out = ws.call("read_file", json!({"path": "broken.pdf"}));
    assert!(
        out.is_error && out.text_content().contains("Cannot read 'broken.pdf'"),
        "{}",
        out.text_content()
    );
    ws.write("notes.txt", "plain\n");
    let out = ws.call("read_file", json!({"path": "notes.txt", "pages": "1"}));
    assert!(out.is_error && out.text_content().contains("not a PDF"), "{}", out.text_content());
}

/// `pdf(texts)` encrypted by lopdf (RC4, 128-bit key, the standard security
/// handler) with `user_password`; an empty one opens without asking, as
/// many "protected" PDFs do (only the owner's permissions are limited).
fn encrypted_pdf(texts: &[&str], user_password: &str) -> Vec<u8> {
    let mut doc = lopdf::Document::load_mem(&pdf(texts)).unwrap();
    // The key is derived from the file's identifier, which encryption needs.
    let id = lopdf::Object::String(b"axon-test-pdf-id".to_vec(), lopdf::StringFormat::Literal);
    doc.trailer.set("ID", lopdf::Object::Array(vec![id.clone(), id]));
    let version = lopdf::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner-secret",
        user_password,
        key_length: 128,
        permissions: lopdf::Permissions::all(),
    };
    let state = lopdf::EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn an_encrypted_pdf_is_read_without_a_password_or_refused_saying_it_needs_one() {
    let ws = TestWorkspace::code();
    let locked = encrypted_pdf(&["Board minutes"], "open-sesame");
    // The text is really encrypted: it is not in the file as written.
    assert!(!locked.windows(13).any(|w| w == b"Board minutes"));
    ws.write("locked.pdf", &locked);
    let out = ws.call("read_file", json!({"path": "locked.pdf"}));
    let text = out.text_content();
    assert!(out.is_error, "{text}");
    assert!(
        text.contains("Cannot read 'locked.pdf': the PDF is encrypted and needs a password"),
        "{text}"
    );
    assert!(text.contains("ask the user for a decrypted copy"), "{text}");
    assert!(text.len() < 1000, "bounded: {text}");

    ws.write("open.pdf", encrypted_pdf(&["Public notice"], ""));
    let out = ws.call("read_file", json!({"path": "open.pdf"}));
    let text = out.text_content();
    assert!(!out.is_error, "{text}");
    assert!(text.contains("--- page 1 ---\nPublic notice"), "{text}");
}
