//! `GET /shared/...` and `GET /unallocated`: the lookup lists with the caller, pages.

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::user::Profile;
use crate::store::read::{Lookups, UnallocatedEntry, UserOption};

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnallocatedPage {
    pub items: Vec<UnallocatedEntry>,
    pub page: i64,
    pub page_size: i64,
    pub total: i64,
}

/// `GET /shared/default-values`: the caller and the lookup lists.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DefaultValues {
    pub user: UserOption,
    /// The caller's profile title.
    pub profile: Profile,
    #[serde(flatten)]
    pub lookups: Lookups,
}

/// `GET /shared/possible-values` (deprecated): the default values plus `employee`, every
/// active employee, kept until the client stops reading it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PossibleValues {
    pub user: UserOption,
    pub profile: Profile,
    #[serde(flatten)]
    pub lookups: Lookups,
    pub employee: Vec<UserOption>,
}
