//! A callback that passed the route's checks (token, path, insurer, binding, content type,
//! size, integration still live): its raw body is stored as a receipt and then processed
//! (docs/proposal-callback.md, "The callback, in order", steps 7 to 10). The callback route
//! calls [`receive`]; so does the demo seed for the callbacks of its history, so seeded
//! receipts, statuses, stories and emails have exactly the shapes a real callback leaves.

use common::Clock;
use diesel_async::AsyncPgConnection;
use sha2::{Digest, Sha256};

use crate::domain::insurer::Insurer;
use crate::error::Error;
use crate::flow::apply::Processed;
use crate::flow::pause::process;
use crate::store::receipts::{self, NewReceipt};

/// A callback as it arrived, from an authenticated integration.
#[derive(Debug, Clone)]
pub struct Arrival<'a> {
    /// The tenant of the URL (the token's own, checked by the route).
    pub tenant: &'a str,
    /// The insurer of the URL (the token's own).
    pub insurer: Insurer,
    /// The integration whose token it came with.
    pub integration_id: i64,
    /// The request headers a receipt keeps (never `Authorization`), and the peer address.
    pub headers: serde_json::Value,
    /// The body, exactly as received.
    pub body: &'a [u8],
}

/// What [`receive`] did with a callback it stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub receipt_id: i64,
    pub processed: Processed,
}

/// Stores `arrival` as a receipt received at `clock`'s now (its own statement: committed at
/// once unless the caller holds a transaction, so a body that breaks the parser is still
/// kept), then processes it ([`process`]: deferred while the integration is paused, applied
/// otherwise, a failure the sender caused recorded on the receipt). An error is the answer to
/// give; the receipt was stored unless the error is the database's.
pub async fn receive(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    arrival: &Arrival<'_>,
) -> Result<Received, Error> {
    let sha: [u8; 32] = Sha256::digest(arrival.body).into();
    let receipt = receipts::insert(
        conn,
        &NewReceipt {
            tenant_id: arrival.tenant,
            received_at: clock.now(),
            insurer: arrival.insurer,
            integration_id: Some(arrival.integration_id),
            headers: arrival.headers.clone(),
            body: arrival.body,
            body_sha256: &sha,
        },
    )
    .await?;
    let processed = process(conn, clock, &receipt).await?;
    Ok(Received {
        receipt_id: receipt.id,
        processed,
    })
}
