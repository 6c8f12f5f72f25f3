//! PDF files for `read_file` (and `web_fetch`, through [`page_texts`] and
//! [`render_pages`]): the text of a page range, each page headed by its
//! number, by the `pdf-extract` crate (over `lopdf`).
//!
//! Guarantees: a PDF larger than [`MAX_PDF_BYTES`] is refused before it is
//! parsed; at most [`MAX_PAGES`] pages are given per call, within the same
//! output budget as text, and the result says which pages it holds and how
//! to read on; an encrypted PDF that opens without a password is read, one
//! that needs one is refused with the reason; pages with no text layer (a
//! scan) are said to have none, never shown as empty text without a word;
//! a malformed file is an error, and a panic inside the parser is caught
//! and reported as one, never the end of the session.

use crate::error::ToolError;

/// The largest PDF read (the whole file is parsed in memory).
pub(crate) const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;
/// Pages given by one call; the default range is the first
/// [`DEFAULT_PAGES`].
pub(crate) const MAX_PAGES: usize = 20;
const DEFAULT_PAGES: usize = 10;

/// Whether `head` (a file's first bytes) is a PDF's.
pub(crate) fn is_pdf(head: &[u8]) -> bool {
    head.starts_with(b"%PDF-")
}

/// The text of `pages` (`"3"`, `"2-5"`; the first ten when `None`) of the
/// PDF `bytes`, the file `rel`, within `budget` bytes of output.
pub(crate) fn read_pages(
    bytes: &[u8],
    rel: &str,
    pages: Option<&str>,
    budget: usize,
) -> Result<String, ToolError> {
    render_pages(&page_texts(bytes, rel)?, rel, pages, budget)
}

/// Every page's text of the PDF `bytes` (named `rel` in errors). With
/// [`render_pages`], what `read_file` does, for a PDF that comes from
/// elsewhere (`web_fetch` keeps the texts and renders a range per call).
pub fn page_texts(bytes: &[u8], rel: &str) -> Result<Vec<String>, ToolError> {
    if bytes.len() as u64 > MAX_PDF_BYTES {
        return Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF is {} MB, over the {} MB limit",
            bytes.len() / (1024 * 1024),
            MAX_PDF_BYTES / (1024 * 1024)
        )));
    }
    extract(bytes, rel)
}

/// `pages` of the page `texts` of the PDF `rel`, numbered, within
/// `budget` bytes, with how to read on.
pub fn render_pages(
    texts: &[String],
    rel: &str,
    pages: Option<&str>,
    budget: usize,
) -> Result<String, ToolError> {
    let total = texts.len();
    if total == 0 {
        return Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF has no pages whose text could be read"
        )));
    }
    let (first, last) = match pages {
        Some(spec) => page_range(spec, total)?,
        None => (1, total.min(DEFAULT_PAGES)),
    };
    let mut out = format!("PDF '{rel}', {total} page{}", if total == 1 { "" } else { "s" });
    let mut shown_last = first - 1;
    let mut blank = Vec::new();
    let mut body = String::new();
    for number in first..=last {
        let text = texts[number - 1].trim();
        let page = if text.is_empty() {
            blank.push(number);
            format!("--- page {number} ---\n(no text on this page)\n")
        } else {
            format!("--- page {number} ---\n{text}\n")
        };
        if !body.is_empty() && body.len() + page.len() > budget {
            break;
        }
        body.push_str(&page);
        shown_last = number;
    }
    out.push_str(&format!("; pages {first}-{shown_last}:\n{body}"));
    if blank.len() == shown_last + 1 - first {
        out.push_str(
            "\nNone of these pages has a text layer (a scanned document?): the text would need \
             OCR, e.g. `ocrmypdf` or `pdftoppm` with `tesseract` through shell if installed.",
        );
    }
    if shown_last < total {
        let next_last = total.min(shown_last + MAX_PAGES);
        out.push_str(&format!(
            "\n[pages {}-{total} not shown; read on with pages: \"{}-{next_last}\"]",
            shown_last + 1,
            shown_last + 1
        ));
    }
    Ok(out)
}

/// Every page's text, or why there is none.
fn extract(bytes: &[u8], rel: &str) -> Result<Vec<String>, ToolError> {
    // The parser is a third party's, and PDFs are hostile input: a panic
    // in it is this call's failure, not the session's end.
    let parsed = std::panic::catch_unwind(|| texts_of(bytes));
    match parsed {
        Ok(Ok(texts)) => Ok(texts),
        Ok(Err(Unread::Locked)) => Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF is encrypted and needs a password; ask the user for \
             a decrypted copy"
        ))),
        Ok(Err(Unread::Cipher)) => Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF is encrypted in a way the PDF reader cannot decrypt; \
             try `qpdf --decrypt` or `pdftotext` through shell if installed"
        ))),
        Ok(Err(Unread::Malformed(why))) => Err(ToolError::failed(format!(
            "Cannot read '{rel}': it is not a PDF that can be parsed ({why})"
        ))),
        Err(_) => Err(ToolError::failed(format!(
            "Cannot read '{rel}': the PDF reader failed on this file (it may be damaged or use \
             a feature the reader lacks); try `pdftotext` through shell if installed"
        ))),
    }
}

/// Why a PDF gave no text.
enum Unread {
    /// Encrypted, and the empty password does not open it.
    Locked,
    /// Encrypted, opened by the empty password, in a scheme lopdf lacks.
    Cipher,
    Malformed(String),
}

/// Every page's text, read from the document lopdf loaded. lopdf decrypts
/// a PDF that opens with the empty password (most "protected" PDFs: only
/// the owner's permissions are limited) as it loads it; pdf-extract's
/// `extract_text_*` functions then decrypt it a second time, into noise
/// that reads as pages without text. So the pages are read here, from the
/// document as loaded.
fn texts_of(bytes: &[u8]) -> Result<Vec<String>, Unread> {
    let doc =
        pdf_extract::Document::load_mem(bytes).map_err(|e| Unread::Malformed(e.to_string()))?;
    if doc.is_encrypted() && doc.encryption_state.is_none() {
        return Err(if doc.authenticate_password("").is_ok() {
            Unread::Cipher
        } else {
            Unread::Locked
        });
    }
    let mut texts = Vec::new();
    // Pages are numbered from 1; the first page that cannot be read ends
    // the document, as in pdf-extract's own reading.
    for number in 1..=u32::try_from(doc.get_pages().len()).unwrap_or(u32::MAX) {
        let mut text = String::new();
        let mut output = pdf_extract::PlainTextOutput::new(&mut text);
        if pdf_extract::output_doc_page(&doc, &mut output, number).is_err() {
            break;
        }
        texts.push(text);
    }
    Ok(texts)
}

/// `"N"` or `"N-M"` (1-based, inclusive) checked against `total` pages and
/// [`MAX_PAGES`].
fn page_range(spec: &str, total: usize) -> Result<(usize, usize), ToolError> {
    let bad = || {
        ToolError::failed(format!(
            "pages must be a page number or a range such as \"3\" or \"2-5\" (the PDF has \
             {total} pages), not {spec:?}"
        ))
    };
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|n| *n >= 1);
    let (first, last) = match spec.split_once('-') {
        Some((a, b)) => (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?),
        None => {
            let n = number(spec).ok_or_else(bad)?;
            (n, n)
        }
    };
    if first > last {
        return Err(bad());
    }
    if first > total {
        return Err(ToolError::failed(format!(
            "page {first} is past the end: the PDF has {total} pages"
        )));
    }
    let last = last.min(total);
    if last + 1 - first > MAX_PAGES {
        return Err(ToolError::failed(format!(
            "at most {MAX_PAGES} pages per call: ask for \"{first}-{}\" first",
            first + MAX_PAGES - 1
        )));
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ranges_are_checked_against_the_document() {
        assert_eq!(page_range("3", 5).ok(), Some((3, 3)));
        assert_eq!(page_range(" 2 - 4 ", 5).ok(), Some((2, 4)));
        assert_eq!(page_range("4-9", 5).ok(), Some((4, 5)), "clamped to the end");
        for bad in ["0", "x", "3-2", "-2", "1-"] {
            assert!(page_range(bad, 5).is_err(), "{bad}");
        }
        let past = page_range("7", 5).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(past.contains("has 5 pages"), "{past}");
        let many = page_range("1-30", 40).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(many.contains("\"1-20\""), "{many}");
    }

    #[test]
    fn garbage_after_a_pdf_header_is_an_error_not_a_panic() {
        let error = read_pages(b"%PDF-1.7\n\x00\x01garbage", "x.pdf", None, 1000)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("Cannot read 'x.pdf'"), "{error}");
    }
}
