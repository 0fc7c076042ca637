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
use crate::store::integrations;
use crate::store::receipts::{self, NewReceipt, Receipt};

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
    let receipt = receipts::insert(conn, &new_receipt(clock, arrival, &sha)).await?;
    processed(conn, clock, receipt).await
}

/// [`receive`] for a callback whose JWT was issued at `token_issued_at` (its `iat`): stored
/// only while its integration is still the token's tenant's and insurer's and holds the Basic
/// token the JWT was issued with, checked by the receipt's own insert
/// (docs/proposal-callback.md, "The callback, in order", step 6, and "Authentication");
/// otherwise 401, nothing stored.
pub async fn receive_for_token(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    arrival: &Arrival<'_>,
    token_issued_at: i64,
) -> Result<Received, Error> {
    let sha: [u8; 32] = Sha256::digest(arrival.body).into();
    let new = new_receipt(clock, arrival, &sha);
    match receipts::insert_for_token(conn, &new, token_issued_at).await? {
        Some(receipt) => processed(conn, clock, receipt).await,
        None => Err(refusal(conn, arrival, token_issued_at).await?),
    }
}

fn new_receipt<'a>(clock: &Clock, arrival: &Arrival<'a>, sha: &'a [u8; 32]) -> NewReceipt<'a> {
    NewReceipt {
        tenant_id: arrival.tenant,
        received_at: clock.now(),
        insurer: arrival.insurer,
        integration_id: Some(arrival.integration_id),
        headers: arrival.headers.clone(),
        body: arrival.body,
        body_sha256: sha,
    }
}

async fn processed(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    receipt: Receipt,
) -> Result<Received, Error> {
    let processed = process(conn, clock, &receipt).await?;
    Ok(Received {
        receipt_id: receipt.id,
        processed,
    })
}

/// Why [`receive_for_token`] stored nothing: the JWT names an integration that is not its
/// tenant's with its insurer, or one whose Basic token was revoked or replaced since the JWT
/// was issued (or that no longer exists).
async fn refusal(
    conn: &mut AsyncPgConnection,
    arrival: &Arrival<'_>,
    token_issued_at: i64,
) -> Result<Error, Error> {
    let binding =
        integrations::token_binding(conn, arrival.integration_id, token_issued_at).await?;
    Ok(match binding {
        Some(b) if b.tenant_id != arrival.tenant || b.insurer != arrival.insurer => {
            Error::Unauthorized("this token was not issued for this tenant's integration")
        }
        Some(_) | None => Error::Unauthorized(
            "the integration's Basic token was revoked or replaced after this token was issued; authenticate again at /callback/auth",
        ),
    })
}
