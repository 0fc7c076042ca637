//! The service's own tokens this replica has accepted, with the user each names: the cache
//! `auth` reads a token through before verifying it in full.
//!
//! A client sends one token with every request of its session, and every rule of
//! docs/dispatch-routes.md ("Authentication") depends on the token's bytes and the key alone,
//! except the clock. So a token accepted before is accepted again on its exact bytes while
//! the clock is between the moment it was verified (`nbf` and `iat` only pass more as time
//! goes on) and its `exp`; outside that it is verified again in full, which decides with the
//! exact rule and message (the leeway after `exp`, say). Only accepted tokens are kept, so a
//! refused one is verified on every request; the user is still looked up on every request (a
//! deactivated user is refused at once). The identity provider's tokens are not kept: its
//! keys can be withdrawn.
//!
//! The cache is `moka`'s, bounded by entry count (the least recently used token goes first)
//! and dropping each token when its life, from its verification to its `exp`, is over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

/// More tokens than a replica's users hold at once.
pub const MAX_VERIFIED_TOKENS: u64 = 10_000;

/// Accepted tokens by signature: a token's last part, which tells accepted tokens apart and
/// is short to hash. Cheap to clone; clones share the tokens. A state given other keys needs
/// a new one.
#[derive(Clone)]
pub struct VerifiedTokens {
    tokens: Cache<Box<str>, Arc<Grant>>,
}

impl Default for VerifiedTokens {
    fn default() -> Self {
        Self::with_capacity(MAX_VERIFIED_TOKENS)
    }
}

fn signature(token: &str) -> &str {
    token
        .rsplit_once('.')
        .map_or(token, |(_, signature)| signature)
}

/// An accepted token, what it names, and when it may be accepted on its bytes.
struct Grant {
    /// The whole token.
    token: Box<str>,
    user_id: i64,
    /// When the token was verified (seconds since the epoch).
    verified_at: i64,
    /// The token's `exp`.
    expires_at: i64,
}

/// Each token leaves the cache at its `exp`: as long after it is stored as the token had
/// left to live when it was verified.
struct UntilExp;

impl UntilExp {
    fn life(grant: &Grant) -> Option<Duration> {
        let left = grant.expires_at.saturating_sub(grant.verified_at);
        Some(Duration::from_secs(u64::try_from(left).unwrap_or(0)))
    }
}

impl Expiry<Box<str>, Arc<Grant>> for UntilExp {
    fn expire_after_create(
        &self,
        _signature: &Box<str>,
        grant: &Arc<Grant>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Self::life(grant)
    }

    fn expire_after_update(
        &self,
        _signature: &Box<str>,
        grant: &Arc<Grant>,
        _updated_at: Instant,
        _until_now: Option<Duration>,
    ) -> Option<Duration> {
        Self::life(grant)
    }
}

impl VerifiedTokens {
    /// At most `capacity` tokens.
    pub fn with_capacity(capacity: u64) -> Self {
        Self {
            tokens: Cache::builder()
                .max_capacity(capacity)
                .eviction_policy(EvictionPolicy::lru())
                .expire_after(UntilExp)
                .build(),
        }
    }

    /// The user id and `exp` of `token` if it was accepted before and `now` lies in
    /// `[verified_at, exp)`.
    pub fn get(&self, token: &str, now: i64) -> Option<(i64, i64)> {
        let grant = self.tokens.get(signature(token))?;
        (*grant.token == *token && grant.verified_at <= now && now < grant.expires_at)
            .then_some((grant.user_id, grant.expires_at))
    }

    /// Remembers a token verified at `verified_at` (read after the verification).
    pub fn put(&self, token: &str, user_id: i64, expires_at: i64, verified_at: i64) {
        let grant = Grant {
            token: token.into(),
            user_id,
            verified_at,
            expires_at,
        };
        self.tokens.insert(signature(token).into(), Arc::new(grant));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a.b.c`, user 7, verified at 1,000 and expiring at 2,000.
    fn one_token() -> VerifiedTokens {
        let tokens = VerifiedTokens::default();
        tokens.put("a.b.c", 7, 2_000, 1_000);
        tokens
    }

    #[test]
    fn a_token_never_verified_is_not_known() {
        let tokens = VerifiedTokens::default();
        assert_eq!(tokens.get("a.b.c", 1_000), None, "never verified");
    }

    #[test]
    fn a_verified_token_is_accepted_on_its_bytes_from_its_verification_until_its_exp() {
        let tokens = one_token();
        assert_eq!(tokens.get("a.b.c", 1_000), Some((7, 2_000)));
        assert_eq!(tokens.get("a.b.c", 1_999), Some((7, 2_000)));
    }

    #[test]
    fn a_verified_token_is_verified_again_from_its_exp_and_before_its_verification() {
        let tokens = one_token();
        // From `exp` on (the leeway included) and before the verification (a clock set
        // back), the token is verified again in full.
        assert_eq!(tokens.get("a.b.c", 2_000), None);
        assert_eq!(tokens.get("a.b.c", 999), None);
    }

    #[test]
    fn only_the_very_bytes_of_a_verified_token_are_accepted() {
        let tokens = one_token();
        // Another signature, a prefix, an extension, other claims or header under the same
        // signature.
        for other in ["a.b.d", "a.b.", "a.b.cc", "A.b.c", "a.x.c", "b.c", "c"] {
            assert_eq!(tokens.get(other, 1_500), None, "{other}");
        }
    }

    #[test]
    fn verified_tokens_are_bounded_and_the_least_recently_used_goes_first() {
        let tokens = VerifiedTokens::default();
        for n in 0..MAX_VERIFIED_TOKENS {
            tokens.put(&format!("t{n}"), 1, 2_000, 1_000);
        }
        tokens.tokens.run_pending_tasks();
        assert_eq!(tokens.get("t1", 1_500), Some((1, 2_000)));
        assert_eq!(tokens.tokens.entry_count(), MAX_VERIFIED_TOKENS);
        tokens.put("one more", 1, 2_000, 1_000);
        tokens.tokens.run_pending_tasks();
        assert_eq!(
            tokens.get("t0", 1_500),
            None,
            "the least recently used is gone"
        );
        assert_eq!(
            tokens.get("t1", 1_500),
            Some((1, 2_000)),
            "a recent one stays"
        );
        assert_eq!(tokens.get("one more", 1_500), Some((1, 2_000)));
        assert_eq!(tokens.tokens.entry_count(), MAX_VERIFIED_TOKENS);
    }

    #[test]
    fn a_token_leaves_the_cache_at_its_exp() {
        let tokens = VerifiedTokens::default();
        // Verified with one second left to live.
        tokens.put("a.b.c", 7, 1_001, 1_000);
        assert_eq!(tokens.get("a.b.c", 1_000), Some((7, 1_001)));
        std::thread::sleep(Duration::from_millis(1_100));
        tokens.tokens.run_pending_tasks();
        assert_eq!(tokens.tokens.entry_count(), 0);
        assert!(tokens.tokens.get("c").is_none());
    }
}
