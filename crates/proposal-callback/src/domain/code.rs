//! Every error code the service answers with (problem+json's `code`), records on a receipt
//! or a registration attempt, and counts in `/metrics` (docs/contract.md, "The callback";
//! docs/proposal-callback.md, "Outcomes"). One spelling each: the console's wording matches
//! on [`ErrorCode`] exhaustively, so a new code cannot go without its text.

use crate::domain::status::Outcome;

common::text_enum! {
    /// A failure's stable `code`.
    pub enum ErrorCode {
        /// A bad query or path parameter, or a bad field of a JSON body (shared extractors).
        InvalidParameter = "invalid_parameter",
        /// A body that is not JSON, or not of the insurer's shape.
        InvalidPayload = "invalid_payload",
        /// A field the insurer's payload must carry is missing.
        MissingField = "missing_field",
        UnknownInsurer = "unknown_insurer",
        Unauthorized = "unauthorized",
        Forbidden = "forbidden",
        /// Too many failed `/callback/auth` attempts from one client.
        TooManyRequests = "too_many_requests",
        /// The tenant has no such proposal.
        ProposalNotFound = "proposal_not_found",
        /// The transition table refuses the move.
        InvalidTransition = "invalid_transition",
        /// No such receipt or integration for this tenant.
        NotFound = "not_found",
        /// The body is larger than the route takes.
        PayloadTooLarge = "payload_too_large",
        /// The body did not arrive in time.
        RequestTimeout = "request_timeout",
        /// The body is not `application/json`.
        UnsupportedMediaType = "unsupported_media_type",
        /// Registration with this insurer is not configured in this service.
        NotConfigured = "not_configured",
        RegistrationInProgress = "registration_in_progress",
        RegistrationSuperseded = "registration_superseded",
        /// The insurer answered the registration with something other than 200.
        InsurerRejected = "insurer_rejected",
        InsurerTimeout = "insurer_timeout",
        InsurerUnreachable = "insurer_unreachable",
        /// The connection to the insurer broke before its answer.
        InsurerError = "insurer_error",
        /// Only an email the relay refused for good (`failed`) can be sent again by hand.
        EmailNotFailed = "email_not_failed",
        /// The receipt's raw body was erased after its tenant's retention: nothing is left
        /// to process again.
        BodyErased = "body_erased",
        /// The database is unavailable (or an identity provider did not answer).
        Unavailable = "unavailable",
        Internal = "internal",
    }
}

/// How a processed callback ended, in one word for reports and metrics: its outcome
/// (`processed`, `duplicate`, ...), or the code of the failure the sender caused.
pub fn outcome_or_code(ended: Result<Outcome, ErrorCode>) -> &'static str {
    match ended {
        Ok(outcome) => outcome.as_str(),
        Err(code) => code.as_str(),
    }
}

/// How a callback ended: its outcome, or the code of the failure the sender caused; written
/// as its one word ([`outcome_or_code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended(pub Result<Outcome, ErrorCode>);

impl Ended {
    /// Its one word: the outcome, or the failure's code.
    pub fn as_str(self) -> &'static str {
        outcome_or_code(self.0)
    }
}

impl serde::Serialize for Ended {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;
    use common::Problem;
    use common::auth::TokenError;

    /// `Error::Problem` carries the shared extractors' problems: each of their codes is one
    /// of ours.
    #[test]
    fn the_shared_problems_codes_are_known() {
        let shared = [
            Problem::invalid_parameter("f", "m"),
            Problem::invalid_payload(None, "m"),
            Problem::not_found("m"),
            Problem::unauthorized("m"),
            Problem::forbidden("m"),
            Problem::payload_too_large(1),
            Problem::body_timeout(std::time::Duration::from_secs(1)),
            Problem::unsupported_media_type(),
            Problem::unavailable(),
            Problem::internal(),
            Problem::from(TokenError::Expired),
            Problem::from(TokenError::ProviderUnavailable),
        ];
        for p in shared {
            assert!(ErrorCode::parse(&p.code).is_some(), "{}", p.code);
        }
    }
}
