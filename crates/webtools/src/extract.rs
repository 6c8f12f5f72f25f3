//! A fetched body turned into what the model reads: the main content of an
//! HTML page as Markdown (readability.js's algorithm, `dom_smoothie`, whose
//! `dom_query` writes the Markdown), text, Markdown and JSON as they are.
//!
//! Guarantees: never panics on any input; a page readability cannot find an
//! article in still gives its body as Markdown (scripts, styles, navigation
//! and forms left out), so a list page or an app shell is not an empty
//! result; a page with too many elements to score is converted whole rather
//! than scored, which bounds the time a hostile page can take.

use dom_smoothie::{Config, Readability, TextMode};

/// Elements scored at most; past this the body is converted unscored.
const MAX_ELEMENTS_TO_SCORE: usize = 60_000;

/// What a body is, as far as `web_fetch` is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Html,
    /// Text the model reads as it is: plain text, Markdown, JSON, XML, CSV, code.
    Text,
    Pdf,
    /// Anything else (images, archives, audio): not read.
    Binary,
}

/// The kind of a body, from its `Content-Type` and, when that is missing
/// or generic, its first bytes.
pub(crate) fn kind(content_type: Option<&str>, head: &[u8]) -> Kind {
    let mime = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if head.starts_with(b"%PDF-") || mime == "application/pdf" {
        return Kind::Pdf;
    }
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => return Kind::Html,
        m if m.starts_with("text/") => return Kind::Text,
        m if m.ends_with("json") || m.ends_with("+xml") || m == "application/xml" => {
            return Kind::Text;
        }
        "application/javascript"
        | "application/x-javascript"
        | "application/toml"
        | "application/yaml"
        | "application/x-yaml"
        | "application/x-sh" => return Kind::Text,
        "" | "application/octet-stream" => {}
        _ => return Kind::Binary,
    }
    // No useful type: look at the bytes.
    let sample = &head[..head.len().min(1024)];
    if sample.contains(&0) {
        return Kind::Binary;
    }
    let text = String::from_utf8_lossy(sample).to_ascii_lowercase();
    let start = text.trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") || text.contains("<body") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// An HTML page read for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    pub title: String,
    pub markdown: String,
    /// How the content was found, for the header the model reads.
    pub method: &'static str,
}

/// The main content of `html` (found at `url`, which makes its links
/// absolute) as Markdown.
pub(crate) fn html_to_markdown(html: &str, url: &str) -> Page {
    let config = Config {
        text_mode: TextMode::Markdown,
        max_elements_to_parse: MAX_ELEMENTS_TO_SCORE,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(config)).and_then(|mut r| r.parse());
    if let Ok(article) = article {
        let markdown = tidy(&article.text_content);
        // Readability found something too small to be the page (a cookie
        // banner, a caption): the body says more.
        if markdown.chars().filter(|c| !c.is_whitespace()).count() >= 200 {
            return Page { title: article.title, markdown, method: "main content" };
        }
    }
    let document = dom_query::Document::from(html);
    let title = document.select("title").text().trim().to_string();
    let skip = [
        "script", "style", "meta", "head", "noscript", "nav", "footer", "form", "svg", "iframe",
        "template", "button",
    ];
    let markdown = match document.body() {
        Some(body) => body.md(Some(&skip)),
        None => document.md(Some(&skip)),
    };
    Page { title, markdown: tidy(&markdown), method: "whole page" }
}

/// Runs of blank lines folded to one and trailing blanks dropped: pages
/// are full of empty wrappers, and every byte is the model's context.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0usize;
    for line in markdown.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_type_then_the_bytes() {
        assert_eq!(kind(Some("text/html; charset=utf-8"), b""), Kind::Html);
        assert_eq!(kind(Some("text/markdown"), b"# x"), Kind::Text);
        assert_eq!(kind(Some("application/json"), b"{}"), Kind::Text);
        assert_eq!(kind(Some("application/ld+json"), b"{}"), Kind::Text);
        assert_eq!(kind(Some("application/pdf"), b""), Kind::Pdf);
        assert_eq!(kind(Some("application/octet-stream"), b"%PDF-1.7"), Kind::Pdf);
        assert_eq!(kind(Some("image/png"), b"\x89PNG"), Kind::Binary);
        assert_eq!(kind(None, b"<!DOCTYPE html><html>"), Kind::Html);
        assert_eq!(kind(None, b"plain words"), Kind::Text);
        assert_eq!(kind(None, b"\x00\x01\x02"), Kind::Binary);
    }

    #[test]
    fn an_article_keeps_its_text_and_drops_the_chrome() {
        let para = "Ferris the crab explains ownership, borrowing and lifetimes in detail. ";
        let html = format!(
            "<html><head><title>Ownership</title><script>var x=1;</script></head><body>\
             <nav><a href='/'>Home</a> <a href='/about'>About us menu</a></nav>\
             <article><h1>Ownership</h1><p>{}</p><p>{}</p><h2>Borrowing</h2>\
             <p>See <a href='/docs/borrow'>the borrowing chapter</a>.</p></article>\
             <footer>Copyright footer text</footer></body></html>",
            para.repeat(5),
            para.repeat(4)
        );
        let page = html_to_markdown(&html, "https://example.com/book/");
        assert_eq!(page.title, "Ownership");
        assert_eq!(page.method, "main content");
        assert!(page.markdown.contains("Ferris the crab"), "{}", page.markdown);
        assert!(page.markdown.contains("## Borrowing"), "{}", page.markdown);
        assert!(
            page.markdown.contains("(https://example.com/docs/borrow)"),
            "links are made absolute: {}",
            page.markdown
        );
        assert!(!page.markdown.contains("var x"), "{}", page.markdown);
        assert!(!page.markdown.contains("Copyright footer"), "{}", page.markdown);
    }

    #[test]
    fn a_page_without_an_article_gives_its_body() {
        let html = "<html><head><title>Index</title></head><body><nav>menu</nav>\
                    <ul><li><a href='a'>First item</a></li><li>Second item</li></ul></body></html>";
        let page = html_to_markdown(html, "https://example.com/");
        assert_eq!(page.title, "Index");
        assert_eq!(page.method, "whole page");
        assert!(page.markdown.contains("Second item"), "{}", page.markdown);
        assert!(!page.markdown.contains("menu"), "{}", page.markdown);
    }

    #[test]
    fn garbage_is_not_a_panic() {
        for html in ["", "<", "<<<>>>", "<html><body><div><div><div>", "\u{0}\u{1}"] {
            let _ = html_to_markdown(html, "https://example.com/");
        }
    }
}
