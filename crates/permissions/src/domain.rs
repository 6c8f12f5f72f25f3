//! `web_fetch(domain:HOST)` rules: which pages a fetch may reach without
//! asking (Claude Code's `WebFetch(domain:…)`).
//!
//! Guarantees: a domain rule matches a call only through the host of its
//! `url` argument as the URL parser reads it (lower case, IDNA, no port,
//! no credentials), so `https://docs.rs.evil.test/` never matches
//! `domain:docs.rs`; `domain:*.example.com` matches the subdomains of
//! example.com and not example.com itself; a call whose URL does not parse
//! matches no domain rule (deny and ask rules on the whole tool still do).

/// The host a `domain:` rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DomainPattern {
    /// Exactly this host.
    Exact(String),
    /// Any host below this domain (`*.example.com`).
    Below(String),
}

impl DomainPattern {
    pub(crate) fn matches(&self, host: &str) -> bool {
        match self {
            DomainPattern::Exact(domain) => host == domain,
            DomainPattern::Below(domain) => {
                host.len() > domain.len() + 1
                    && host.ends_with(domain.as_str())
                    && host[..host.len() - domain.len()].ends_with('.')
            }
        }
    }
}

/// The argument of `web_fetch(...)`: `domain:HOST` or `domain:*.HOST`.
pub(crate) fn domain_pattern(pattern: &str) -> Result<DomainPattern, String> {
    let Some(domain) = pattern.strip_prefix("domain:") else {
        return Err("a web_fetch rule names a domain, as in `web_fetch(domain:docs.rs)`".into());
    };
    let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
    let (below, name) = match domain.strip_prefix("*.") {
        Some(rest) => (true, rest.to_string()),
        None => (false, domain),
    };
    let valid = !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    let literal_v6 = name.starts_with('[') && name.ends_with(']') && !below;
    if !valid && !literal_v6 {
        return Err(format!(
            "`{name}` is not a domain; write a host such as `docs.rs`, or `*.rust-lang.org` for \
             its subdomains"
        ));
    }
    Ok(if below { DomainPattern::Below(name) } else { DomainPattern::Exact(name) })
}

/// The host of a fetch's `url` argument, as rules compare it.
pub(crate) fn url_host(args: &serde_json::Value) -> Option<String> {
    let url = url::Url::parse(args.get("url")?.as_str()?.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    Some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_match_hosts_not_strings() {
        let exact = domain_pattern("domain:Docs.rs").unwrap();
        assert!(exact.matches("docs.rs"));
        assert!(!exact.matches("www.docs.rs"));
        assert!(!exact.matches("docs.rs.evil.test"));
        let below = domain_pattern("domain:*.rust-lang.org").unwrap();
        assert!(below.matches("doc.rust-lang.org"));
        assert!(below.matches("a.b.rust-lang.org"));
        assert!(!below.matches("rust-lang.org"));
        assert!(!below.matches("evilrust-lang.org"));
        for bad in ["docs.rs", "domain:", "domain:a b", "domain:a..b", "domain:*.", "domain:x/y"] {
            assert!(domain_pattern(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_host_is_the_parsers() {
        let host = |url: &str| url_host(&serde_json::json!({ "url": url }));
        assert_eq!(host("https://Docs.RS:443/std"), Some("docs.rs".into()));
        assert_eq!(host("https://docs.rs@evil.test/"), Some("evil.test".into()));
        assert_eq!(host("https://docs.rs.evil.test/"), Some("docs.rs.evil.test".into()));
        assert_eq!(host("file:///etc/passwd"), None);
        assert_eq!(host("not a url"), None);
    }

    #[test]
    fn rule_sets_decide_fetches_by_domain_and_always_saves_the_domain() {
        use crate::{Kind, RuleSet, Source, Verdict, suggest};
        let mut rules = RuleSet::new();
        let source = Source::new("config");
        rules.parse_list(Kind::Allow, &["web_fetch(domain:docs.rs)"], &source).unwrap();
        rules.parse_list(Kind::Deny, &["WebFetch(domain:*.evil.test)"], &source).unwrap();
        let root = std::path::Path::new("/ws");
        let decide =
            |url: &str| rules.decide("web_fetch", &serde_json::json!({ "url": url }), root);
        assert!(matches!(decide("https://docs.rs/serde"), Verdict::Allow { .. }));
        assert!(matches!(decide("https://a.evil.test/"), Verdict::Deny { .. }));
        assert_eq!(
            decide("https://docs.rs.evil.test/"),
            Verdict::Deny { rule: "WebFetch(domain:*.evil.test)".into(), source: "config".into() }
        );
        assert_eq!(decide("https://crates.io/"), Verdict::None);
        let args = serde_json::json!({ "url": "https://Crates.io/crates/url" });
        let suggestion = suggest("web_fetch", &args, root).unwrap();
        assert_eq!(suggestion.rules, ["web_fetch(domain:crates.io)"]);
        rules.parse_list(Kind::Allow, &suggestion.rules, &source).unwrap();
        assert!(matches!(rules.decide("web_fetch", &args, root), Verdict::Allow { .. }));
        assert!(suggest("web_fetch", &serde_json::json!({ "url": "nonsense" }), root).is_none());
        assert!(crate::Rule::parse("web_fetch(src/**)").is_err());
    }
}
