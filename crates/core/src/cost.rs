//! What a session has spent on its model calls, and the budget that stops
//! it.
//!
//! Guarantees:
//! - A cost is known only when every call counted in it was priced
//!   ([`Cost::known`]); one unpriced call makes the total unknown, never a
//!   smaller number passed off as the whole.
//! - With a [`Budget`], no request goes to the model once the priced
//!   spending has reached the limit: the turn ends with an error saying
//!   what was spent and how to raise the limit. Unpriced calls cannot be
//!   counted against it (the front end warns of that when the session
//!   starts).

use std::sync::{Arc, Mutex, PoisonError};

/// Spending added up over model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// US dollars spent by the priced calls.
    pub usd: f64,
    pub priced_calls: u64,
    pub unpriced_calls: u64,
}

impl Cost {
    /// Counts one call: `cost` is `None` when its model has no price.
    pub fn add(&mut self, cost: Option<f64>) {
        match cost {
            Some(usd) => {
                self.usd += usd;
                self.priced_calls += 1;
            }
            None => self.unpriced_calls += 1,
        }
    }

    /// The total, when there was a call and every call was priced.
    pub fn known(&self) -> Option<f64> {
        (self.unpriced_calls == 0 && self.priced_calls > 0).then_some(self.usd)
    }
}

/// A session's spending so far, shared by whoever counts and whoever
/// checks it.
#[derive(Debug, Default)]
pub struct Spend(Mutex<Cost>);

impl Spend {
    pub fn add(&self, cost: Option<f64>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).add(cost);
    }

    /// Starts the count again from `cost`: a resumed session's earlier
    /// spending, or a new conversation's nothing.
    pub fn set(&self, cost: Cost) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = cost;
    }

    pub fn get(&self) -> Cost {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The most a session may spend before it stops asking the model.
#[derive(Debug, Clone)]
pub struct Budget {
    pub limit_usd: f64,
    pub spend: Arc<Spend>,
}

impl Budget {
    /// Why the next request must not go out, once the limit is reached.
    pub fn refusal(&self) -> Option<String> {
        let spent = self.spend.get().usd;
        (spent >= self.limit_usd).then(|| {
            format!(
                "the budget of ${:.4} is spent (${spent:.4} so far); no further request was sent \
                 (raise it with --max-budget-usd or `max_budget_usd` in the config)",
                self.limit_usd
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_unpriced_call_makes_the_total_unknown() {
        let mut cost = Cost::default();
        assert_eq!(cost.known(), None);
        cost.add(Some(0.5));
        assert_eq!(cost.known(), Some(0.5));
        cost.add(None);
        assert_eq!(cost.known(), None);
        assert_eq!(cost.usd, 0.5);
    }

    #[test]
    fn the_budget_refuses_once_reached() {
        let budget = Budget { limit_usd: 1.0, spend: Arc::new(Spend::default()) };
        assert_eq!(budget.refusal(), None);
        budget.spend.add(Some(0.6));
        assert_eq!(budget.refusal(), None);
        budget.spend.add(Some(0.4));
        let message = budget.refusal().unwrap_or_default();
        assert!(message.contains("$1.0000") && message.contains("--max-budget-usd"), "{message}");
    }
}
