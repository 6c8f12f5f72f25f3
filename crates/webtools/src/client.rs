//! The HTTP client `web_fetch` connects with: every name it resolves is
//! checked against the [`AddressPolicy`] at the moment of connection.
//!
//! Guarantees: the client connects only to addresses its own resolver
//! returned, and the resolver refuses a name when any address it resolves
//! to is not public (unless the policy opens that host), so a name that
//! resolves to loopback, or that a rebinding server switches to a private
//! address between two lookups, is refused where the connection is made.
//! IP literals never reach a resolver; [`check_literal`] judges them before
//! any request. No proxy is used (a proxy would resolve the name itself,
//! past this check), redirects are never followed by the client (the
//! caller follows them one hop at a time, each hop checked again), and
//! every request has a connect and a total timeout.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::address::AddressPolicy;

/// A name refused at resolution; found again in a request's error chain
/// to tell the model why.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Resolves with the system resolver, then applies the policy to every
/// address.
struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?
                .collect();
            // One private address is enough to refuse: a name whose answers
            // mix public and private ones is how rebinding attacks start.
            if let Some(refusal) = addrs.iter().find_map(|a| policy.refusal(&host, a.ip())) {
                return Err(Box::new(Refused(refusal)) as Box<dyn std::error::Error + Send + Sync>);
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// `Some(refusal)` when `url`'s host is an IP literal the policy refuses.
pub(crate) fn check_literal(policy: &AddressPolicy, url: &url::Url) -> Option<String> {
    let ip = match url.host()? {
        url::Host::Ipv4(v4) => IpAddr::V4(v4),
        url::Host::Ipv6(v6) => IpAddr::V6(v6),
        url::Host::Domain(_) => return None,
    };
    policy.refusal(&ip.to_string(), ip)
}

/// The client for fetching pages under `policy`.
pub(crate) fn guarded(
    policy: Arc<AddressPolicy>,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    build(
        base(timeout)
            .dns_resolver(GuardedResolver { policy })
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy(),
    )
}

/// The client for a search API the user configured (their own address,
/// perhaps a SearXNG on this machine: not guarded). Redirects are not
/// followed: the key travels in a header reqwest would carry to any host.
pub(crate) fn plain(timeout: Duration) -> Result<reqwest::Client, String> {
    build(base(timeout).redirect(reqwest::redirect::Policy::none()))
}

fn base(timeout: Duration) -> reqwest::ClientBuilder {
    // rustls needs a process-wide crypto provider. Installing it again (or
    // after the embedding program chose one) fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("axon/", env!("CARGO_PKG_VERSION"), " (web tools)"))
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .read_timeout(timeout)
        .timeout(timeout)
}

fn build(builder: reqwest::ClientBuilder) -> Result<reqwest::Client, String> {
    match builder.build() {
        Ok(client) => Ok(client),
        Err(e) => Err(format!(
            "cannot set up the HTTP client: {e}. If the system has no CA certificates, install \
             them (Debian/Ubuntu: `apt-get install ca-certificates`)"
        )),
    }
}

/// The policy's refusal, when the resolver refused the request's name.
pub(crate) fn refusal(error: &reqwest::Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refused) = current.downcast_ref::<Refused>() {
            return Some(refused.0.clone());
        }
        source = current.source();
    }
    None
}

/// What went wrong with a request, in words: the policy's refusal when the
/// resolver refused, else the error and its causes.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    if let Some(refused) = refusal(error) {
        return refused;
    }
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        let text = inner.to_string();
        if !detail.contains(&text) {
            detail = format!("{detail}: {text}");
        }
        source = inner.source();
    }
    if error.is_timeout() {
        detail = format!("timed out ({detail})");
    }
    detail
}
