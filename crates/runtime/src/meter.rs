//! What a session's model calls cost: each call's usage priced by the
//! model that answered it (`axon_llm::Prices`, the config's `[prices]` over
//! the built-in ones), added to the running turn's tally and to the
//! session's spending, which the budget (`max_budget_usd`) is checked
//! against before each request.
//!
//! The session's spending is the whole session's: resumed, it starts from
//! what its file recorded before (each call priced at today's prices,
//! like `axon sessions show`), so the totals every front end shows and the
//! budget go on from there; a new conversation starts from nothing.
//!
//! Guarantees: every model call the session makes is counted here once,
//! the agent's and its subagents' (through the turn's event sink) and MCP
//! sampling's (`mcp_host.rs`); a call whose model has no known price makes
//! the turn's cost unknown (`axon_core::Cost::known`), never zero.

use std::sync::{Arc, Mutex, PoisonError};

use axon_core::{Budget, Cost, Spend};
use axon_llm::Prices;
use axon_protocol::Usage;

use crate::config::ConfigFile;

/// One turn's usage and cost, added up.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    pub(crate) usage: Usage,
    pub(crate) cost: Cost,
}

/// Prices calls and counts the session's spending.
#[derive(Debug)]
pub(crate) struct Meter {
    prices: Prices,
    spend: Arc<Spend>,
    /// The tokens the session's calls used, beside `spend`'s cost.
    used: Mutex<Usage>,
    limit_usd: Option<f64>,
}

impl Meter {
    /// The config's prices, and the budget: `limit_usd` (a flag) over the
    /// config's `max_budget_usd`.
    pub(crate) fn new(file: &ConfigFile, limit_usd: Option<f64>) -> Meter {
        Meter {
            prices: Prices::new(file.prices.clone()),
            spend: Arc::new(Spend::default()),
            used: Mutex::new(Usage::default()),
            limit_usd: limit_usd.or(file.max_budget_usd),
        }
    }

    /// The budget the agent checks before each request, when one is set.
    pub(crate) fn budget(&self) -> Option<Budget> {
        self.limit_usd.map(|limit_usd| Budget { limit_usd, spend: Arc::clone(&self.spend) })
    }

    /// Why a budget set for a session of `model` cannot be held to, when
    /// it cannot: the model has no known price.
    pub(crate) fn unenforceable(&self, model: &str) -> Option<String> {
        let limit = self.limit_usd?;
        self.prices.price(model).is_none().then(|| {
            format!(
                "the budget of ${limit:.2} cannot be enforced: {model} has no known price (add \
                 `[prices.\"{model}\"] input = …, cached_input = …, output = …`, US dollars per \
                 million tokens, to your config)"
            )
        })
    }

    /// Counts one call of `model` that used `usage`, in `turn` when a turn
    /// is running.
    pub(crate) fn count(&self, turn: Option<&Mutex<Tally>>, model: Option<&str>, usage: &Usage) {
        let cost = model.and_then(|model| self.prices.cost(model, usage));
        self.spend.add(cost);
        self.used.lock().unwrap_or_else(PoisonError::into_inner).add(usage);
        if let Some(turn) = turn {
            let mut tally = turn.lock().unwrap_or_else(PoisonError::into_inner);
            tally.usage.add(usage);
            tally.cost.add(cost);
        }
    }
}

impl Meter {
    /// The session's spending starts again from `calls` (a resumed
    /// session's recorded ones, each with its model; none for a new
    /// conversation).
    pub(crate) fn restore(&self, calls: &[(String, Usage)]) {
        let mut cost = Cost::default();
        let mut used = Usage::default();
        for (model, usage) in calls {
            cost.add(self.prices.cost(model, usage));
            used.add(usage);
        }
        self.spend.set(cost);
        *self.used.lock().unwrap_or_else(PoisonError::into_inner) = used;
    }

    /// The session's tokens and cost so far (`None` when a call's model
    /// has no known price, or there was no call).
    pub(crate) fn totals(&self) -> (Usage, Option<f64>) {
        (*self.used.lock().unwrap_or_else(PoisonError::into_inner), self.spend.get().known())
    }
}

/// What a saved session's recorded calls cost, each priced by the model it
/// ran with, at the prices of `file` (the user's config); `None` when a
/// call's model has no known price, or there was no call.
pub fn recorded_cost(session: &axon_store::Session, file: &ConfigFile) -> Option<f64> {
    let prices = Prices::new(file.prices.clone());
    let mut cost = Cost::default();
    for (model, usage) in session.calls() {
        cost.add(prices.cost(model, &usage));
    }
    cost.known()
}
