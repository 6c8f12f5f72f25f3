//! axon's web tools, for the one tool registry (`axon_tools`).
//!
//! - [`WebFetch`] (`web_fetch {url, prompt?}`): a page's main content as
//!   Markdown with its title and final URL. It reaches public addresses
//!   only, unless the user's [`AddressPolicy`] opens private ones; the
//!   check is made where the connection is (the client's own resolver,
//!   `client.rs`), on every redirect hop, and on IP literals before any
//!   request.
//! - [`WebSearch`] (`web_search {query}`): results from the search API
//!   the user configured ([`Backend`]: Brave Search, Tavily, SearXNG).
//!
//! Both send data off the machine (a URL, a query), so neither is
//! read-only: ask mode asks (unless a rule such as
//! `web_fetch(domain:docs.rs)` allows the call), read-only and plan mode do
//! not offer them. They use the workspace's one HTTP stack (reqwest,
//! rustls, tokio); no proxy is used, so no one else resolves names.
//! Guarantees: no call panics, hangs past its timeout or holds more than
//! its caps (10 MB of a page, 2 MB of a search answer) in memory.

mod address;
mod cache;
mod client;
mod extract;
mod fetch;
mod search;
mod web_fetch;

pub use address::{AddressPolicy, non_public};
pub use fetch::{FetchLimits, MAX_REDIRECTS};
pub use search::{Backend, Hit, MAX_ANSWER_BYTES, SearchConfig, WebSearch, WebSearchArgs};
pub use web_fetch::{WebFetch, WebFetchArgs, WebFetchConfig};

/// Adds `web_fetch`, and `web_search` when a search API is configured, to
/// `registry`.
pub fn register(
    registry: &mut axon_tools::ToolRegistry,
    fetch: WebFetchConfig,
    search: Option<SearchConfig>,
) {
    registry.register(WebFetch::new(fetch));
    if let Some(search) = search {
        registry.register(WebSearch::new(search));
    }
}
