//! The rules, with no HTTP and no database (docs/proposal-callback.md):
//!
//! - [`status`]: the statuses a proposal has and the outcomes a callback answers with;
//! - [`machine`]: which status a callback may move a proposal to;
//! - [`insurer`]: one parser per insurer, turning its payload into the internal callback;
//! - [`email`]: the message of a transition (pt-BR, `templates/email/`);
//! - [`registration`]: what an insurer receives when a callback is registered;
//! - [`silence`]: when an integration's silence is no longer its rhythm, and the operator's
//!   emails about it (pt-BR, `templates/email/silence.*`);
//! - [`sender`]: who a tenant's emails come from (its own address, or `EMAIL_FROM`);
//! - [`basic_token`]: the Basic tokens (made, hashed, compared; only hashes are stored);
//! - [`code`]: every error code the service answers or records.

pub mod basic_token;
pub mod code;
pub mod email;
pub mod insurer;
pub mod machine;
pub mod registration;
pub mod sender;
pub mod silence;
pub mod status;
pub mod zone;
