//! `read_file` on a PDF (issue 35 §3): the text of a page range, pages
//! numbered, from PDFs these tests write with lopdf; a scan's empty pages,
//! a damaged file and a page range past the end are clear results.

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
