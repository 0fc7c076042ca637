//! People as the reads show them: users, employees, the options of a person picker.

use serde::Serialize;
use utoipa::ToSchema;

/// An entry of a small reference list: `{id, name}`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq, Eq)]
pub struct RefOption {
    pub id: i32,
    pub name: String,
}

/// A person in a select field: the "Send to" and "Transfer to" options, authors of records.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct UserOption {
    pub id: i64,
    pub descriptive_name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProfileView {
    pub id: i32,
    pub title: String,
    pub text: String,
}

/// `GET /user`, `GET /user/{id}`. `name` (the login) is present only for ADMIN callers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserRecord {
    pub id: i64,
    pub descriptive_name: String,
    /// `ativo` means active.
    pub status: String,
    /// The login. Only ADMIN callers get this key; for everyone else it is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub profile: ProfileView,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
    #[schema(required = true)]
    pub team: Option<RefOption>,
}

/// `GET /employee/search`: one option of the "Transfer to" picker, with what a person
/// picker shows beside the name. `id` is the user id (what the transfer takes).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct EmployeeOption {
    pub id: i64,
    pub descriptive_name: String,
    #[schema(required = true)]
    pub team: Option<RefOption>,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
}

/// `GET /employee/user_id/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EmployeeRecord {
    pub id: i64,
    pub user_id: i64,
    pub descriptive_name: String,
    pub registration: String,
    #[schema(required = true)]
    pub phone: Option<String>,
    pub active: bool,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
    #[schema(required = true)]
    pub team: Option<RefOption>,
}
