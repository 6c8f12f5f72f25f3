//! Pages fetched in the last 15 minutes, by the URL asked for.
//!
//! Guarantees: an entry older than its time to live is never returned; at
//! most `capacity` entries are held (the oldest goes first), so the cache's
//! memory is bounded by the capacity times the output budget of a page.
//! Only readable pages are kept: an error is asked again next time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::fetch::Fetched;

/// How long a page is reused.
pub const TTL: Duration = Duration::from_secs(15 * 60);

pub(crate) struct Cache {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<String, (Instant, Fetched)>>,
}

impl Cache {
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Cache {
        Cache { ttl, capacity, entries: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn get(&self, url: &str) -> Option<Fetched> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        entries.retain(|_, (at, _)| now.duration_since(*at) < self.ttl);
        entries.get(url).map(|(_, fetched)| fetched.clone())
    }

    pub(crate) fn put(&self, url: &str, fetched: Fetched) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        while entries.len() >= self.capacity && !entries.contains_key(url) {
            let oldest = entries.iter().min_by_key(|(_, (at, _))| *at).map(|(k, _)| k.clone());
            match oldest {
                Some(key) => entries.remove(&key),
                None => break,
            };
        }
        entries.insert(url.to_string(), (Instant::now(), fetched));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::Fetched;

    fn page(n: u16) -> Fetched {
        Fetched::Elsewhere { from: "a".into(), to: "b".into(), status: n }
    }

    #[test]
    fn entries_expire_and_the_oldest_goes_first() {
        let cache = Cache::new(TTL, 2);
        cache.put("1", page(1));
        cache.put("2", page(2));
        cache.put("3", page(3));
        assert!(cache.get("1").is_none(), "the oldest was evicted");
        assert_eq!(cache.get("3"), Some(page(3)));
        let expired = Cache::new(Duration::ZERO, 2);
        expired.put("1", page(1));
        assert!(expired.get("1").is_none());
    }
}
