//! Slows down token guessing on `/callback/auth`: after `max_failures` failed attempts from
//! one client address within `window`, that address is answered 429 until the window ends.
//!
//! Keyed by the TCP peer address. `X-Forwarded-For` is not trusted: any client can set it,
//! so trusting it would let an attacker pick a fresh key per attempt. Behind a proxy every
//! client shares the proxy's address; configure the proxy's own limit there.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct FailureLimiter {
    inner: Arc<Mutex<HashMap<Option<IpAddr>, Window>>>,
    max_failures: u32,
    window: Duration,
}

#[derive(Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

/// Entries kept before expired ones are swept, bounding memory under a spray of addresses.
const SWEEP_AT: usize = 10_000;

impl FailureLimiter {
    pub fn new(max_failures: u32, window: Duration) -> Self {
        Self {
            inner: Arc::new(Mutex::new(HashMap::new())),
            max_failures,
            window,
        }
    }

    /// `Err(seconds to wait)` while `client` is blocked.
    pub fn check(&self, client: Option<IpAddr>) -> Result<(), u32> {
        let now = Instant::now();
        let map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&client) {
            Some(w) if w.failures >= self.max_failures => {
                let left = self.window.saturating_sub(now.duration_since(w.started));
                if left.is_zero() {
                    Ok(())
                } else {
                    Err(left.as_secs_f64().ceil().max(1.0) as u32)
                }
            }
            _ => Ok(()),
        }
    }

    pub fn record_failure(&self, client: Option<IpAddr>) {
        let now = Instant::now();
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= SWEEP_AT {
            let window = self.window;
            map.retain(|_, w| now.duration_since(w.started) < window);
        }
        let w = map.entry(client).or_insert(Window {
            started: now,
            failures: 0,
        });
        if now.duration_since(w.started) >= self.window {
            *w = Window {
                started: now,
                failures: 0,
            };
        }
        w.failures += 1;
    }

    pub fn record_success(&self, client: Option<IpAddr>) {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_limit_per_address_until_the_window_ends() {
        let l = FailureLimiter::new(3, Duration::from_millis(200));
        let a = Some("10.0.0.1".parse().unwrap());
        let b = Some("10.0.0.2".parse().unwrap());
        for _ in 0..3 {
            assert_eq!(l.check(a), Ok(()));
            l.record_failure(a);
        }
        assert_eq!(l.check(a), Err(1));
        assert_eq!(l.check(b), Ok(()));
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(l.check(a), Ok(()));
        l.record_failure(a);
        assert_eq!(l.check(a), Ok(()), "a new window starts counting afresh");
    }

    #[test]
    fn success_clears_the_count() {
        let l = FailureLimiter::new(2, Duration::from_secs(60));
        l.record_failure(None);
        l.record_success(None);
        l.record_failure(None);
        assert_eq!(l.check(None), Ok(()));
    }
}
