//! Getting one page: redirects followed one hop at a time, each hop's
//! address checked, the body read in chunks up to a cap, then converted.
//!
//! Guarantees: only `http` and `https` URLs without credentials are
//! fetched; at most [`MAX_REDIRECTS`] hops are followed and a loop is named
//! as one; a redirect to another host is not followed but reported, so the
//! model asks for that URL itself and the permission rules judge its
//! domain; at most `max_body_bytes` of a body are held in memory, however
//! large the page or its `Content-Length`; a PDF is read whole or not at
//! all (one cut at the cap is refused, never parsed in part) and its
//! pages' text kept; any other binary body is named, never decoded; every
//! request ends within the client's timeout.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use url::Url;

use crate::address::AddressPolicy;
use crate::client;
use crate::extract::{self, Kind};

/// Hops followed after the first request.
pub const MAX_REDIRECTS: usize = 10;

/// How big and how long a fetch may be.
#[derive(Debug, Clone)]
pub struct FetchLimits {
    /// Bytes of a body read; the rest is never downloaded.
    pub max_body_bytes: usize,
    /// Time for one request, from connecting to the body's last byte.
    pub timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits { max_body_bytes: 10 * 1024 * 1024, timeout: Duration::from_secs(30) }
    }
}

/// What a fetch found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fetched {
    /// Readable content.
    Page(Page),
    /// A PDF: every page's text, for `web_fetch` to show a range of.
    Pdf { url: String, pages: Vec<String> },
    /// The server sent the request to another host; not followed.
    Elsewhere { from: String, to: String, status: u16 },
}

/// A page's content, ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    /// The URL the content came from, after same-host redirects.
    pub url: String,
    pub title: Option<String>,
    /// What the content is and how it was read (`main content of an HTML
    /// page, as Markdown`, `text/plain, as sent`).
    pub description: String,
    pub content: String,
    /// Bytes of the body that were not read (past the cap).
    pub truncated: bool,
}

/// Fetches pages with one guarded client.
pub(crate) struct Fetcher {
    client: reqwest::Client,
    policy: Arc<AddressPolicy>,
    limits: FetchLimits,
}

impl Fetcher {
    pub(crate) fn new(policy: AddressPolicy, limits: FetchLimits) -> Result<Fetcher, String> {
        let policy = Arc::new(policy);
        let client = client::guarded(Arc::clone(&policy), limits.timeout)?;
        Ok(Fetcher { client, policy, limits })
    }

    /// Fetches `url`, following same-host redirects.
    pub(crate) async fn fetch(&self, start: &Url) -> Result<Fetched, String> {
        let mut url = start.clone();
        let mut seen: HashSet<String> = HashSet::new();
        for _ in 0..=MAX_REDIRECTS {
            check_url(&url)?;
            if let Some(refusal) = client::check_literal(&self.policy, &url) {
                return Err(refusal);
            }
            seen.insert(url.to_string());
            let response = self
                .client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,\
                     application/json;q=0.8,*/*;q=0.1",
                )
                .send()
                .await
                .map_err(|e| {
                    client::refusal(&e).unwrap_or_else(|| {
                        format!("Cannot fetch {}: {}", shown(&url), client::describe(&e))
                    })
                })?;
            let status = response.status();
            if status.is_redirection() {
                let Some(next) = location(&response, &url) else {
                    return Err(format!(
                        "{} answered {status} without a usable Location header",
                        shown(&url)
                    ));
                };
                if !same_site(&url, &next) {
                    return Ok(Fetched::Elsewhere {
                        from: url.to_string(),
                        to: next.to_string(),
                        status: status.as_u16(),
                    });
                }
                if seen.contains(next.as_str()) {
                    return Err(format!(
                        "Redirect loop: {} leads back to {} (seen before); the page cannot be \
                         fetched",
                        shown(&url),
                        shown(&next)
                    ));
                }
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(format!(
                    "{} answered HTTP {status}; the page was not fetched",
                    shown(&url)
                ));
            }
            return self.read(url, response).await;
        }
        Err(format!(
            "Too many redirects: {} was redirected more than {MAX_REDIRECTS} times; the page \
             cannot be fetched",
            shown(start)
        ))
    }

    /// Reads the body up to the cap and turns it into content.
    async fn read(&self, url: Url, mut response: reqwest::Response) -> Result<Fetched, String> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let cap = self.limits.max_body_bytes;
        let mut body: Vec<u8> = Vec::new();
        let mut truncated = false;
        let mut judged = false;
        loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| format!("Cannot read {}: {}", shown(&url), client::describe(&e)))?;
            let Some(chunk) = chunk else { break };
            let room = cap - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
            // Binaries are named, not read: their first bytes say so.
            if !judged && (body.len() >= 1024 || body.len() == cap) {
                judged = true;
                let kind = extract::kind(content_type.as_deref(), &body);
                if kind == Kind::Binary {
                    return Err(unreadable(&url, content_type.as_deref()));
                }
            }
        }
        drop(response);
        let kind = extract::kind(content_type.as_deref(), &body);
        if kind == Kind::Binary {
            return Err(unreadable(&url, content_type.as_deref()));
        }
        if kind == Kind::Pdf {
            return read_pdf(url, body, truncated, cap).await;
        }
        let shown_type = content_type
            .as_deref()
            .and_then(|t| t.split(';').next())
            .unwrap_or("no content type")
            .trim()
            .to_string();
        let final_url = url.to_string();
        tokio::task::spawn_blocking(move || {
            let text = decode(&body, content_type.as_deref(), kind == Kind::Html);
            Fetched::Page(match kind {
                Kind::Html => {
                    let page = extract::html_to_markdown(&text, &final_url);
                    Page {
                        url: final_url,
                        title: Some(page.title).filter(|t| !t.trim().is_empty()),
                        description: format!("{} of an HTML page, as Markdown", page.method),
                        content: page.markdown,
                        truncated,
                    }
                }
                _ => Page {
                    url: final_url,
                    title: None,
                    description: format!("{shown_type}, as sent"),
                    content: text,
                    truncated,
                },
            })
        })
        .await
        .map_err(|e| format!("reading the page stopped unexpectedly: {e}"))
    }
}

/// A PDF's pages, by the PDF reader `read_file` uses; off the async
/// threads, as parsing is work.
async fn read_pdf(url: Url, body: Vec<u8>, truncated: bool, cap: usize) -> Result<Fetched, String> {
    if truncated {
        return Err(format!(
            "{} is a PDF larger than web_fetch downloads ({} MB); download it into the \
             workspace (e.g. `curl -L -o doc.pdf URL` through shell) and read it with read_file",
            shown(&url),
            cap / (1024 * 1024)
        ));
    }
    let name = shown(&url);
    tokio::task::spawn_blocking(move || {
        axon_tools::pdf::page_texts(&body, &name)
            .map(|pages| Fetched::Pdf { url: url.to_string(), pages })
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("reading the PDF stopped unexpectedly: {e}"))?
}

/// Why a binary body is not read.
fn unreadable(url: &Url, content_type: Option<&str>) -> String {
    let shown_type = content_type.unwrap_or("no content type");
    format!(
        "{} is not text ({shown_type}); web_fetch reads HTML pages, PDFs, text, Markdown and \
         JSON only.",
        shown(url)
    )
}

/// `http` or `https`, with a host and without credentials.
pub(crate) fn check_url(url: &Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "Cannot fetch {}: only http:// and https:// URLs can be fetched (this one is {}:)",
            shown(url),
            url.scheme()
        ));
    }
    if url.host().is_none() {
        return Err(format!("Cannot fetch {}: the URL has no host", shown(url)));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "Cannot fetch {}: the URL holds a user name or password; web_fetch sends no \
             credentials",
            shown(url)
        ));
    }
    Ok(())
}

/// Where a redirect points, made absolute.
fn location(response: &reqwest::Response, base: &Url) -> Option<Url> {
    let value = response.headers().get(reqwest::header::LOCATION)?.to_str().ok()?;
    base.join(value).ok()
}

/// Whether a redirect stays on the site: the same scheme family and host,
/// `www.` added or removed (what sites do to canonical URLs).
fn same_site(from: &Url, to: &Url) -> bool {
    let strip = |url: &Url| {
        url.host_str()
            .map(|h| h.trim_start_matches("www.").to_ascii_lowercase())
            .unwrap_or_default()
    };
    matches!(to.scheme(), "http" | "https") && strip(from) == strip(to) && from.port() == to.port()
}

/// A URL for messages, bounded (a URL can be megabytes long).
pub(crate) fn shown(url: &Url) -> String {
    let text = url.as_str();
    if text.len() <= 300 {
        return text.to_string();
    }
    let mut end = 300;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A body as text, in the encoding its BOM, its `Content-Type` charset or
/// (HTML) its `<meta>` charset names, else UTF-8; bytes that do not decode
/// become U+FFFD.
fn decode(body: &[u8], content_type: Option<&str>, html: bool) -> String {
    let named = content_type
        .and_then(charset_in)
        .or_else(|| if html { meta_charset(body) } else { None })
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()));
    let encoding = named.unwrap_or(encoding_rs::UTF_8);
    // A BOM wins over any label, as browsers do.
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// `charset=…` in a `Content-Type` value.
fn charset_in(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The charset an HTML page's first 1024 bytes declare in a `<meta>`.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn bodies_are_read_in_the_encoding_they_name() {
        let latin1 = b"caf\xe9";
        assert_eq!(decode(latin1, Some("text/plain; charset=ISO-8859-1"), false), "café");
        let page = b"<html><head><meta charset=\"windows-1252\"></head><body>na\xefve</body>";
        assert!(decode(page, Some("text/html"), true).contains("naïve"));
        let page =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\xe0";
        assert!(decode(page, None, true).ends_with('à'));
        assert_eq!(decode("\u{feff}é".as_bytes(), Some("text/plain; charset=latin1"), false), "é");
        assert_eq!(decode("plain é".as_bytes(), None, false), "plain é");
        assert_eq!(
            decode(b"bad \xff", Some("text/plain; charset=nonsense"), false),
            "bad \u{fffd}"
        );
    }
}
