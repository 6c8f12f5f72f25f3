//! The page's files, embedded at build time from `assets/` (see
//! `build.rs`): served from memory with their content type, so `axon web`
//! works offline and from any folder.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `(path under assets/, bytes)`, sorted by path.
static FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The embedded file at `path` (relative to `assets/`).
pub fn find(path: &str) -> Option<&'static [u8]> {
    FILES.binary_search_by(|(name, _)| (*name).cmp(path)).ok().map(|at| FILES[at].1)
}

/// The content type a browser needs to use a file (module scripts must be
/// JavaScript; `nosniff` means no guessing).
pub fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("md" | "txt") | None => "text/plain; charset=utf-8",
        Some(_) => "application/octet-stream",
    }
}

/// The answer for an embedded file, or 404.
pub fn serve(path: &str) -> Response {
    let Some(bytes) = find(path) else {
        return crate::auth::refuse(StatusCode::NOT_FOUND, &format!("no file {path} here"));
    };
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(path)));
    // The files change with the binary only; revalidating keeps a rebuilt
    // axon from serving yesterday's script from the cache.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_modules_are_embedded_and_sorted() {
        assert!(find("index.html").is_some(), "assets/index.html is the page");
        let names: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        assert!(names.iter().any(|p| p.ends_with(".js")));
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "lookups are binary searches");
        assert_eq!(find("../Cargo.toml"), None);
    }

    /// The panel says what "always" does in the runtime's words: the rule
    /// is saved for later sessions, not kept for this one only.
    #[test]
    fn the_always_button_says_the_rule_is_saved_in_the_protocols_words() {
        let cards = find("cards.js").map(String::from_utf8_lossy).unwrap_or_default();
        assert!(
            cards.contains(&format!("const ALWAYS_SAVES = \"{}\";", axon_protocol::ALWAYS_SAVES)),
            "cards.js must word \"always\" as axon_protocol::ALWAYS_SAVES"
        );
        assert!(!cards.contains("this session"), "\"always\" is not for this session only");
    }

    #[test]
    fn scripts_are_served_as_javascript() {
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("vendor/purify.es.mjs"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("style.css"), "text/css; charset=utf-8");
    }
}
