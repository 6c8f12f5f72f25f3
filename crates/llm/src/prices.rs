//! What a model call costs, in US dollars, from its token counts.
//!
//! Guarantees:
//! - A model has a price only when the user's config gives one
//!   (`[prices."MODEL"]`) or the built-in table below does, and every
//!   built-in figure names the provider's own pricing page it was read
//!   from. A model with no known price has no cost (`None`): never a
//!   guessed one.
//! - The user's entry for a model wins over the built-in one.
//! - Both wire formats report `input_tokens` with the cached ones included
//!   (`anthropic.rs` adds cache reads and writes to it; OpenAI's
//!   `prompt_tokens` includes `cached_tokens`), so cached tokens are priced
//!   at the cached price and only the rest at the input price. Anthropic's
//!   cache writes, billed a little above the input price, are priced at the
//!   input price: the figure is an estimate, not an invoice.

use std::collections::BTreeMap;

use axon_protocol::Usage;
use serde::Deserialize;

/// A model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens not read from the provider's cache.
    pub input: f64,
    /// Input tokens read from the cache; the input price when not given.
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

impl Price {
    const fn of(input: f64, cached_input: f64, output: f64) -> Price {
        Price { input, cached_input: Some(cached_input), output }
    }

    /// What a call that used `usage` costs.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let per_token = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1e6;
        per_token(uncached, self.input)
            + per_token(cached, self.cached_input.unwrap_or(self.input))
            + per_token(usage.output_tokens, self.output)
    }
}

/// Built-in prices, as the providers published them. Prices change: a
/// `[prices."MODEL"]` table in the config overrides any of these, and a
/// model missing here is priced only by the config.
const BUILT_IN: &[(&str, Price)] = &[
    // https://api-docs.deepseek.com/quick_start/pricing (input = cache
    // miss, cached_input = cache hit): both names serve DeepSeek-V3.2 at
    // one price since its September 2025 cut. The stored copy of the page
    // read here is older (V3.1's $0.56/$0.07/$1.68); the V3.2 figures are
    // those an April 2026 summary of that page gives. A user who sees
    // another figure on the page sets `[prices."deepseek-chat"]`.
    ("deepseek-chat", Price::of(0.28, 0.028, 0.42)),
    ("deepseek-reasoner", Price::of(0.28, 0.028, 0.42)),
    // https://platform.claude.com/docs/en/about-claude/pricing
    // (cached_input = "cache hits and refreshes").
    ("claude-opus-4-5", Price::of(5.0, 0.50, 25.0)),
    // https://docs.anthropic.com/en/docs/about-claude/pricing
    ("claude-opus-4-1", Price::of(15.0, 1.50, 75.0)),
    ("claude-opus-4-0", Price::of(15.0, 1.50, 75.0)),
    ("claude-opus-4", Price::of(15.0, 1.50, 75.0)),
    ("claude-sonnet-4-0", Price::of(3.0, 0.30, 15.0)),
    ("claude-sonnet-4", Price::of(3.0, 0.30, 15.0)),
    ("claude-3-7-sonnet", Price::of(3.0, 0.30, 15.0)),
    ("claude-3-5-haiku", Price::of(0.80, 0.08, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 0.03, 1.25)),
];

/// The prices in effect: the user's over the built-in ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    configured: BTreeMap<String, Price>,
}

impl Prices {
    /// The built-in prices, with `configured` (the config's `[prices]`)
    /// taking precedence.
    pub fn new(configured: BTreeMap<String, Price>) -> Prices {
        Prices { configured }
    }

    /// `model`'s price: the configured one, else the built-in one; a model
    /// id with a date or `-latest` suffix (`claude-sonnet-4-20250514`) is
    /// also found by its base name.
    pub fn price(&self, model: &str) -> Option<Price> {
        let lookup = |name: &str| {
            self.configured.get(name).copied().or_else(|| {
                BUILT_IN.iter().find(|(known, _)| *known == name).map(|(_, price)| *price)
            })
        };
        lookup(model).or_else(|| lookup(base_name(model)?))
    }

    /// What a call of `model` that used `usage` costs; `None` when the
    /// model has no known price.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price(model).map(|price| price.cost(usage))
    }
}

/// `model` without a trailing `-YYYYMMDD` or `-latest`, when it has one.
fn base_name(model: &str) -> Option<&str> {
    if let Some(base) = model.strip_suffix("-latest") {
        return Some(base);
    }
    let (base, date) = model.rsplit_once('-')?;
    (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            reasoning_tokens: 0,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn cached_tokens_are_priced_at_the_cached_price_and_the_rest_at_the_input_price() {
        let price = Price::of(2.0, 0.5, 10.0);
        // 1M input of which 400k cached, 100k output.
        let cost = price.cost(&usage(1_000_000, 400_000, 100_000));
        assert!(close(cost, 0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 10.0), "{cost}");
        // Without a cached price, cached tokens cost the input price.
        let plain = Price { cached_input: None, ..price };
        assert!(close(plain.cost(&usage(1_000_000, 400_000, 0)), 2.0));
        // A report with more cached than input tokens never goes negative.
        assert!(close(price.cost(&usage(10, 20, 0)), 10.0 * 0.5 / 1e6));
    }

    #[test]
    fn a_model_without_a_known_price_has_no_cost() {
        let prices = Prices::default();
        assert_eq!(prices.cost("some-local-model", &usage(1000, 0, 1000)), None);
        assert_eq!(prices.price("gpt-unknown-20250101"), None);
    }

    #[test]
    fn the_configured_price_wins_over_the_built_in_one() {
        let built_in = Prices::default().price("deepseek-chat").map(|p| p.input);
        assert_eq!(built_in, Some(0.28));
        let mine = Price::of(1.0, 0.1, 2.0);
        let prices = Prices::new(BTreeMap::from([
            ("deepseek-chat".to_string(), mine),
            ("my-model".to_string(), mine),
        ]));
        assert_eq!(prices.price("deepseek-chat"), Some(mine));
        assert_eq!(prices.price("my-model"), Some(mine));
        assert!(close(prices.cost("my-model", &usage(1_000_000, 0, 0)).unwrap_or(-1.0), 1.0));
    }

    #[test]
    fn dated_and_latest_ids_find_their_base_name() {
        let prices = Prices::default();
        assert_eq!(prices.price("claude-sonnet-4-20250514"), prices.price("claude-sonnet-4"));
        assert!(prices.price("claude-3-5-haiku-latest").is_some());
        assert_eq!(base_name("model-2025"), None);
    }
}
