//! When to send a failed request again, and after how long.
//!
//! Connection failures and 5xx answers are retried 3 times, rate limits and
//! overload (429, 503, 529) 5 times, with exponential backoff and jitter. A
//! `Retry-After` or `retry-after-ms` header is honoured: the next attempt is
//! never earlier than the server asked. Only the request is retried, before
//! any of the answer has arrived; a stream that breaks later is the agent's
//! business (it retries the whole turn).

use std::time::Duration;

/// What kind of failure a retry follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryClass {
    /// The connection failed or timed out, or the server answered 5xx.
    Connection,
    /// 429, 503 or 529: the provider asks us to slow down.
    RateLimit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub connection_retries: u32,
    pub rate_limit_retries: u32,
    /// Delay before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// Longest backoff chosen by us.
    pub max_delay: Duration,
    /// Longest wait a server may ask for; asking for more fails at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            connection_retries: 3,
            rate_limit_retries: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first) after a
    /// failure of `class`, or `None` to give up. `retry_after` is what the
    /// server asked for, if anything.
    pub fn delay(
        &self,
        class: RetryClass,
        retry: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let allowed = match class {
            RetryClass::Connection => self.connection_retries,
            RetryClass::RateLimit => self.rate_limit_retries,
        };
        if retry == 0 || retry > allowed {
            return None;
        }
        if let Some(asked) = retry_after {
            if asked > self.max_retry_after {
                return None;
            }
            // Never earlier than asked; a little later so that many clients
            // told the same moment do not all return at once.
            return Some(asked + jitter(asked / 10));
        }
        let exponent = (retry - 1).min(20);
        let backoff = self.base_delay.saturating_mul(1 << exponent).min(self.max_delay);
        // Half fixed, half random: spreads clients without ever waiting less
        // than half the backoff.
        Some(backoff / 2 + jitter(backoff / 2))
    }
}

/// A random duration in `[0, max]`.
fn jitter(max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 { Duration::ZERO } else { Duration::from_nanos(fastrand::u64(0..=nanos)) }
}

/// The wait a response asks for: `retry-after-ms` (milliseconds, as
/// OpenAI and Anthropic send) or `retry-after` (seconds). HTTP dates are
/// not used by these APIs and are ignored.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = value("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && let Ok(wait) = Duration::try_from_secs_f64(ms / 1000.0)
    {
        return Some(wait);
    }
    let seconds = value("retry-after")?.parse::<f64>().ok()?;
    // Negative, infinite or absurd values are not a wait anyone can honour.
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn retry_counts_follow_the_class() {
        let policy = RetryPolicy::default();
        assert!(policy.delay(RetryClass::Connection, 3, None).is_some());
        assert!(policy.delay(RetryClass::Connection, 4, None).is_none());
        assert!(policy.delay(RetryClass::RateLimit, 5, None).is_some());
        assert!(policy.delay(RetryClass::RateLimit, 6, None).is_none());
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy::default();
        for retry in 1..=5 {
            let full = (policy.base_delay * (1 << (retry - 1))).min(policy.max_delay);
            let delay = policy.delay(RetryClass::RateLimit, retry, None).unwrap();
            assert!(delay >= full / 2 && delay <= full, "retry {retry}: {delay:?} vs {full:?}");
        }
    }

    #[test]
    fn retry_after_is_never_undercut() {
        let policy = RetryPolicy::default();
        let asked = Duration::from_secs(2);
        for _ in 0..100 {
            let delay = policy.delay(RetryClass::RateLimit, 1, Some(asked)).unwrap();
            assert!(delay >= asked && delay <= asked + asked / 10);
        }
        assert!(policy.delay(RetryClass::RateLimit, 1, Some(Duration::from_secs(600))).is_none());
    }

    #[test]
    fn retry_after_headers_parse() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        headers.clear();
        headers.insert("retry-after", HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("-2"));
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&headers), None);
    }
}
