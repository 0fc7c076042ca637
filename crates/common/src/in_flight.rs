//! The HTTP requests a process is serving now: counted by the service's `App`
//! (`http::service_app`, when the service asks for it) from the moment a request reaches the
//! middleware until its answer is ready. dispatch-api's access log reads it to stop gathering a
//! batch once every request in flight is already waiting for a commit (as PostgreSQL's
//! `commit_siblings` does for `commit_delay`): docs/dispatch-access-log.md, "The linger".

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// The count, and a wake for whoever watches it fall.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    /// Someone waits for a request to end: only then does an ending one wake them.
    watched: AtomicBool,
    left: Notify,
}

/// One request in flight, until dropped.
#[derive(Debug)]
pub struct Request(Arc<InFlight>);

impl InFlight {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// A request begins; it ends when the guard is dropped.
    pub fn enter(self: &Arc<Self>) -> Request {
        self.count.fetch_add(1, SeqCst);
        Request(self.clone())
    }

    /// The requests in flight now.
    pub fn count(&self) -> usize {
        self.count.load(SeqCst)
    }

    /// Says whether someone waits for requests to end ([`InFlight::left`]); while nobody does,
    /// an ending request wakes nobody.
    pub fn watch(&self, on: bool) {
        self.watched.store(on, SeqCst);
    }

    /// Completes when a request ends after this call (while [`InFlight::watch`] is on).
    /// `enable` it before reading [`InFlight::count`], so that an end between the two is not
    /// missed.
    pub fn left(&self) -> Notified<'_> {
        self.left.notified()
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, SeqCst);
        if self.0.watched.load(SeqCst) {
            self.0.left.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counts_requests_and_wakes_the_watcher_when_one_ends() {
        let flight = InFlight::new();
        let a = flight.enter();
        let b = flight.enter();
        assert_eq!(flight.count(), 2);
        flight.watch(true);
        let left = flight.left();
        tokio::pin!(left);
        left.as_mut().enable();
        drop(a);
        assert_eq!(flight.count(), 1);
        tokio::time::timeout(std::time::Duration::from_secs(1), left)
            .await
            .expect("the end of a request wakes the watcher");
        flight.watch(false);
        drop(b);
        assert_eq!(flight.count(), 0);
    }
}
