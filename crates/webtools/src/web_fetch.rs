//! `web_fetch`: a web page's main content as Markdown, with its title and
//! final URL.
//!
//! Guarantees: the URL is checked (scheme, credentials, literal address)
//! before anything is sent, and again at every hop and every connection
//! (`fetch`, `client`); a page asked for again within 15 minutes comes from
//! the cache; the result is at most `max_output_bytes` of content, and when
//! a page is longer and the call has a `prompt`, the sections that share
//! most words with the prompt are the ones kept (in page order, the others
//! named by their headings); every failure is an error result saying what
//! happened and what to do, never a panic or a hang.

use std::time::Duration;

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use url::Url;

use crate::address::AddressPolicy;
use crate::cache::{Cache, TTL};
use crate::fetch::{FetchLimits, Fetched, Fetcher, Page, check_url, shown};

/// Pages the cache holds at most.
const CACHE_PAGES: usize = 64;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The page's full URL, http:// or https://.
    pub url: String,
    /// What you are looking for on the page. When the page is longer than the result can hold, the sections that match these words best are the ones kept.
    #[serde(default)]
    pub prompt: Option<String>,
    /// For a PDF: the pages to read, "3" or "2-5" (the first ten when left out; at most 20 per call).
    #[serde(default)]
    pub pages: Option<String>,
}

/// How `web_fetch` is set up: where it may connect, and its bounds.
#[derive(Debug, Clone)]
pub struct WebFetchConfig {
    pub policy: AddressPolicy,
    pub limits: FetchLimits,
    /// Bytes of content in one result.
    pub max_output_bytes: usize,
    /// How long a fetched page is reused.
    pub cache_ttl: Duration,
}

impl Default for WebFetchConfig {
    fn default() -> Self {
        WebFetchConfig {
            policy: AddressPolicy::default(),
            limits: FetchLimits::default(),
            max_output_bytes: 100 * 1024,
            cache_ttl: TTL,
        }
    }
}

/// The `web_fetch` tool.
pub struct WebFetch {
    fetcher: Result<Fetcher, String>,
    cache: Cache,
    max_output_bytes: usize,
}

impl WebFetch {
    /// The tool under `config`. A client that cannot be built (no TLS
    /// roots) is reported by each call, not here: the registry stays whole.
    pub fn new(config: WebFetchConfig) -> WebFetch {
        WebFetch {
            fetcher: Fetcher::new(config.policy, config.limits),
            cache: Cache::new(config.cache_ttl, CACHE_PAGES),
            max_output_bytes: config.max_output_bytes,
        }
    }
}

/// `url` parsed and checked, or the error the call gives.
fn parse(url: &str) -> Result<Url, String> {
    let url = Url::parse(url.trim()).map_err(|e| {
        format!("Invalid URL '{}': {e}; give a full http:// or https:// URL", clip(url, 300))
    })?;
    check_url(&url)?;
    Ok(url)
}

impl TypedTool for WebFetch {
    type Args = WebFetchArgs;
    const NAME: &'static str = "web_fetch";

    fn description(&self) -> String {
        "Fetch a web page (http or https) and read its main content as Markdown, with its title \
         and final URL. Text, Markdown and JSON come back as sent; a PDF's text comes back by \
         page (`pages` picks the range); other binary files are not read. Pages are cached for 15 minutes. A redirect to another host is reported, \
         not followed: fetch that URL to continue. Local and private network addresses are \
         refused unless the user allowed them. Pass `prompt` with what you are looking for, so \
         a long page is cut to the parts that matter."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        // It sends the URL (which can carry workspace data) off the machine:
        // not read-only, so ask mode asks unless a rule allows the domain.
        ToolAnnotations { read_only: false, destructive: false, idempotent: true }
    }

    async fn run(&self, ctx: &ToolContext, args: WebFetchArgs) -> Result<ToolOutput, ToolError> {
        let url = parse(&args.url).map_err(ToolError::Failed)?;
        let fetcher = self.fetcher.as_ref().map_err(|e| ToolError::failed(e.clone()))?;
        let key = url.to_string();
        let (fetched, cached) = match self.cache.get(&key) {
            Some(fetched) => (fetched, true),
            None => {
                ctx.report_progress(format!("fetching {}", shown(&url)));
                let fetched = fetcher.fetch(&url).await.map_err(ToolError::Failed)?;
                self.cache.put(&key, fetched.clone());
                (fetched, false)
            }
        };
        Ok(ToolOutput::text(match fetched {
            Fetched::Page(page) => {
                render(&page, &url, args.prompt.as_deref(), cached, self.max_output_bytes)
            }
            Fetched::Pdf { url: from, pages } => {
                let text = axon_tools::pdf::render_pages(
                    &pages,
                    &from,
                    args.pages.as_deref(),
                    self.max_output_bytes,
                )?;
                let mut out = format!("URL: {from}\n");
                if from != url.as_str() {
                    out.push_str(&format!("(redirected from {})\n", shown(&url)));
                }
                out.push_str("Content: a PDF's text, by page");
                if cached {
                    out.push_str(" (from the 15-minute cache)");
                }
                out.push_str(&format!("\n\n{text}"));
                out
            }
            Fetched::Elsewhere { from, to, status } => format!(
                "{from} redirects (HTTP {status}) to another host: {to}\n\
                 It was not followed. To read it, call web_fetch with that URL."
            ),
        }))
    }

    fn preview(&self, _ctx: &ToolContext, args: &WebFetchArgs) -> Option<Preview> {
        parse(&args.url).err().map(|message| Preview::Invalid { message })
    }
}

/// The result the model reads: a header, then the content, bounded.
fn render(page: &Page, asked: &Url, prompt: Option<&str>, cached: bool, budget: usize) -> String {
    let mut out = String::new();
    if let Some(title) = &page.title {
        out.push_str(&format!("# {}\n", clip(title, 300)));
    }
    out.push_str(&format!("URL: {}\n", page.url));
    if page.url != asked.as_str() {
        out.push_str(&format!("(redirected from {})\n", shown(asked)));
    }
    out.push_str(&format!("Content: {}", page.description));
    if cached {
        out.push_str(" (from the 15-minute cache)");
    }
    out.push('\n');
    if page.truncated {
        out.push_str(
            "Note: the page is larger than web_fetch downloads; only its beginning was read.\n",
        );
    }
    out.push('\n');
    if page.content.trim().is_empty() {
        out.push_str("(The page has no readable text: it may be built by JavaScript.)\n");
        return out;
    }
    out.push_str(&fit(&page.content, prompt, budget));
    out
}

/// `content` within `budget` bytes: whole when it fits; else, with a
/// prompt, the best-matching sections in page order; else its beginning.
/// Either way a note says what was left out.
fn fit(content: &str, prompt: Option<&str>, budget: usize) -> String {
    if content.len() <= budget {
        return content.to_string();
    }
    let words = prompt.map(prompt_words).unwrap_or_default();
    if !words.is_empty() {
        let sections = sections(content);
        let mut ranked: Vec<(usize, usize)> = sections
            .iter()
            .enumerate()
            .map(|(i, s)| (score(s, &words), i))
            .filter(|(score, _)| *score > 0)
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut keep = vec![false; sections.len()];
        let mut used = 0usize;
        for (_, i) in ranked {
            if used + sections[i].len() <= budget {
                keep[i] = true;
                used += sections[i].len();
            }
        }
        if used > 0 {
            let mut out = String::new();
            let mut left: Vec<String> = Vec::new();
            for (i, section) in sections.iter().enumerate() {
                if keep[i] {
                    out.push_str(section);
                } else {
                    left.push(heading(section));
                }
            }
            let shown_left: Vec<&str> = left.iter().take(30).map(String::as_str).collect();
            out.push_str(&format!(
                "\n\n[The page is {} bytes; these sections matched the prompt best. Left out \
                 ({} sections): {}{}]",
                content.len(),
                left.len(),
                shown_left.join("; "),
                if left.len() > shown_left.len() { "; …" } else { "" }
            ));
            return out;
        }
    }
    let mut end = budget;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[… {} more bytes of the page cut: web_fetch returns at most {} KiB. Call it again \
         with a `prompt` naming what you need, to keep the sections about it.]",
        &content[..end],
        content.len() - end,
        budget / 1024
    )
}

/// The words of a prompt worth matching: lower case, three letters or more.
fn prompt_words(prompt: &str) -> Vec<String> {
    let mut words: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The Markdown split before each heading (each piece keeps its heading).
fn sections(content: &str) -> Vec<&str> {
    let mut starts = vec![0usize];
    let mut offset = 0usize;
    for line in content.split_inclusive('\n') {
        if offset > 0 && line.starts_with('#') {
            starts.push(offset);
        }
        offset += line.len();
    }
    starts.push(content.len());
    starts.windows(2).map(|w| &content[w[0]..w[1]]).collect()
}

/// How many times the prompt's words occur in a section.
fn score(section: &str, words: &[String]) -> usize {
    let lower = section.to_lowercase();
    words.iter().map(|w| lower.matches(w.as_str()).count()).sum()
}

/// A section's heading line (or its first words), for the list of what was left out.
fn heading(section: &str) -> String {
    let first = section.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    clip(first.trim_start_matches('#').trim(), 80)
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_content_is_whole_and_long_content_is_cut_with_a_note() {
        assert_eq!(fit("abc", None, 10), "abc");
        let long = "é".repeat(100);
        let cut = fit(&long, None, 51);
        assert!(cut.starts_with(&"é".repeat(25)), "{cut}");
        assert!(cut.contains("more bytes of the page cut"), "{cut}");
    }

    #[test]
    fn a_prompt_keeps_the_matching_sections() {
        let filler = "lorem ipsum dolor sit amet ".repeat(20);
        let content = format!(
            "# Intro\n{filler}\n## Installation\nRun cargo install axon to install.\n\
             ## History\n{filler}\n## Licence\n{filler}\n"
        );
        let kept = fit(&content, Some("how do I install it?"), 200);
        assert!(kept.contains("## Installation"), "{kept}");
        assert!(!kept.contains("## History\n"), "{kept}");
        assert!(kept.contains("Left out (3 sections): Intro; History; Licence"), "{kept}");
    }

    #[test]
    fn urls_are_checked_before_anything_is_sent() {
        for (url, why) in [
            ("ftp://example.com/x", "only http:// and https://"),
            ("file:///etc/passwd", "only http:// and https://"),
            ("javascript:alert(1)", "only http:// and https://"),
            ("not a url", "Invalid URL"),
            ("https://user:pw@example.com/", "user name or password"),
        ] {
            let error = parse(url).unwrap_err();
            assert!(error.contains(why), "{url}: {error}");
        }
        assert!(parse(" https://docs.rs/ ").is_ok());
    }
}
