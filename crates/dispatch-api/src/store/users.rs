//! Users and their staff records.

use diesel::dsl::{Desc, Like};
use diesel::prelude::*;
use diesel::query_dsl::methods as q;
use diesel::result::Error;
use diesel_async::methods::LoadQuery;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::user::{Profile, UserStatus};
use crate::schema::dispatch::*;
use crate::search::Search;
use crate::store::opt_ref;
use crate::store::read::*;
use crate::store::{search_key, search_order};

/// Who a token names: enough to authenticate a request.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub struct Caller {
    pub id: i64,
    pub descriptive_name: String,
    pub status: String,
    #[diesel(select_expression = profiles::title)]
    pub profile: Profile,
}

/// The user a token names, with its profile; one statement.
pub async fn caller(mut conn: &AsyncPgConnection, id: i64) -> Result<Option<Caller>, Error> {
    users::table
        .inner_join(profiles::table)
        .filter(users::id.eq(id))
        .select(Caller::as_select())
        .first(&mut conn)
        .await
        .optional()
}

/// The users among `ids` that exist, as [`caller`] reads them; one statement.
pub async fn callers(mut conn: &AsyncPgConnection, ids: &[i64]) -> Result<Vec<Caller>, Error> {
    users::table
        .inner_join(profiles::table)
        .filter(users::id.eq_any(ids))
        .select(Caller::as_select())
        .load(&mut conn)
        .await
}

/// The user whose login is `login` (an identity provider's token names its user so), with
/// its profile; one statement on the login's unique index.
pub async fn caller_by_login(
    mut conn: &AsyncPgConnection,
    login: &str,
) -> Result<Option<Caller>, Error> {
    users::table
        .inner_join(profiles::table)
        .filter(users::login.eq(login))
        .select(Caller::as_select())
        .first(&mut conn)
        .await
        .optional()
}

/// A user as `GET /user` shows it: the row, its profile, professional type and team.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
struct UserRow {
    id: i64,
    descriptive_name: String,
    status: String,
    login: String,
    #[diesel(embed)]
    profile: ProfileRow,
    #[diesel(embed)]
    staff: StaffRefs,
}

/// A user's professional type and team (both left-joined), as `GET /user` and
/// `GET /employee/user_id/{id}` show them.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
struct StaffRefs {
    #[diesel(select_expression = professional_types::id.nullable())]
    professional_type_id: Option<i32>,
    #[diesel(select_expression = professional_types::name.nullable())]
    professional_type_name: Option<String>,
    #[diesel(select_expression = teams::id.nullable())]
    team_id: Option<i32>,
    #[diesel(select_expression = teams::name.nullable())]
    team_name: Option<String>,
}

impl StaffRefs {
    /// The professional type and the team, each where the user has one.
    fn into_refs(self) -> (Option<RefOption>, Option<RefOption>) {
        (
            opt_ref(self.professional_type_id, self.professional_type_name),
            opt_ref(self.team_id, self.team_name),
        )
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = profiles, check_for_backend(diesel::pg::Pg))]
struct ProfileRow {
    id: i32,
    title: String,
    text: String,
}

/// A user as a select option: `{id, descriptive_name}`.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
struct OptionRow {
    id: i64,
    descriptive_name: String,
}

impl From<OptionRow> for UserOption {
    fn from(row: OptionRow) -> Self {
        UserOption {
            id: row.id,
            descriptive_name: row.descriptive_name,
        }
    }
}

/// Users with profile, professional type and team, in one statement.
#[diesel::dsl::auto_type(no_type_alias)]
fn user_records() -> _ {
    users::table
        .inner_join(profiles::table)
        .left_join(professional_types::table)
        .left_join(teams::table)
}

impl UserRow {
    /// `with_login` decides whether the login leaves the service (ADMIN callers only).
    fn into_record(self, with_login: bool) -> UserRecord {
        let (professional_type, team) = self.staff.into_refs();
        UserRecord {
            id: self.id,
            descriptive_name: self.descriptive_name,
            status: self.status,
            name: with_login.then_some(self.login),
            profile: ProfileView {
                id: self.profile.id,
                title: self.profile.title,
                text: self.profile.text,
            },
            professional_type,
            team,
        }
    }
}

/// `GET /user`: every user, in name order.
pub async fn all(mut conn: &AsyncPgConnection, with_login: bool) -> Result<Vec<UserRecord>, Error> {
    let rows: Vec<UserRow> = user_records()
        .select(UserRow::as_select())
        .order_by((search_order(users::descriptive_name), users::id))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| r.into_record(with_login))
        .collect())
}

pub async fn by_id(
    mut conn: &AsyncPgConnection,
    id: i64,
    with_login: bool,
) -> Result<Option<UserRecord>, Error> {
    let row: Option<UserRow> = user_records()
        .filter(users::id.eq(id))
        .select(UserRow::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(|r| r.into_record(with_login)))
}

/// `GET /user/search`: "Send to" candidates, active regulating physicians other than the
/// caller (`caller`: nobody sends an incident to themself).
pub async fn search_regulators(
    conn: &AsyncPgConnection,
    search: &Search,
    caller: i64,
) -> Result<Vec<UserOption>, Error> {
    let query = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq(Profile::MedicoRegulador.title()))
        .filter(users::status.eq(UserStatus::Active))
        .filter(users::id.ne(caller))
        .select(OptionRow::as_select())
        .into_boxed();
    let rows: Vec<OptionRow> = pick(conn, query, search).await?;
    Ok(rows.into_iter().map(UserOption::from).collect())
}

/// A "Transfer to" option: the user, their team and professional type.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
struct EmployeeOptionRow {
    id: i64,
    descriptive_name: String,
    #[diesel(embed)]
    staff: StaffRefs,
}

/// `GET /employee/search`: "Transfer to" candidates, active employees of active users other
/// than the caller, as `{id: user id, descriptive_name, team, professional_type}`.
pub async fn search_employees(
    conn: &AsyncPgConnection,
    search: &Search,
    caller: i64,
) -> Result<Vec<EmployeeOption>, Error> {
    let query = employees::table
        .inner_join(
            users::table
                .left_join(professional_types::table)
                .left_join(teams::table),
        )
        .filter(employees::active.and(users::status.eq(UserStatus::Active)))
        .filter(users::id.ne(caller))
        .select(EmployeeOptionRow::as_select())
        .into_boxed();
    let rows: Vec<EmployeeOptionRow> = pick(conn, query, search).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let (professional_type, team) = r.staff.into_refs();
            EmployeeOption {
                id: r.id,
                descriptive_name: r.descriptive_name,
                team,
                professional_type,
            }
        })
        .collect())
}

/// A picker's test of a user's folded name against a `LIKE` pattern.
type NameLike = Like<search_key<users::descriptive_name>, String>;

/// A picker's page of users (`query`, boxed, selecting a row `R`): those whose name holds
/// every word of `search`'s term, in any order, the names that start with the term first,
/// then in name order.
async fn pick<'c, 'q, Q, R>(
    mut conn: &'c AsyncPgConnection,
    mut query: Q,
    search: &Search,
) -> Result<Vec<R>, Error>
where
    Q: q::FilterDsl<NameLike, Output = Q>
        + q::OrderDsl<Desc<NameLike>, Output = Q>
        + q::ThenOrderDsl<search_order<users::descriptive_name>, Output = Q>
        + q::ThenOrderDsl<users::id, Output = Q>
        + q::LimitDsl<Output = Q>
        + q::OffsetDsl<Output = Q>
        + LoadQuery<'q, &'c AsyncPgConnection, R>
        + 'q,
    R: Send + 'q,
{
    if let Some((words, prefix)) = search.like_patterns() {
        // Every word, in any order (docs/dispatch-routes.md, "Search").
        for word in words {
            query = query.filter(search_key(users::descriptive_name).like(word));
        }
        query = query.order(search_key(users::descriptive_name).like(prefix).desc());
    }
    query
        .then_order_by(search_order(users::descriptive_name))
        .then_order_by(users::id)
        .limit(search.limit)
        .offset(search.offset)
        .load(&mut conn)
        .await
}

/// Every active employee: only the deprecated `/shared/possible-values` still sends this.
pub async fn all_active_employees(mut conn: &AsyncPgConnection) -> Result<Vec<UserOption>, Error> {
    let rows: Vec<OptionRow> = employees::table
        .inner_join(users::table)
        .filter(employees::active.and(users::status.eq(UserStatus::Active)))
        .select(OptionRow::as_select())
        .order_by((search_order(users::descriptive_name), users::id))
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(UserOption::from).collect())
}

/// `GET /employee/user_id/{id}`.
pub async fn employee_of(
    mut conn: &AsyncPgConnection,
    user_id: i64,
) -> Result<Option<EmployeeRecord>, Error> {
    let row: Option<EmployeeRow> = employees::table
        .inner_join(
            users::table
                .left_join(professional_types::table)
                .left_join(teams::table),
        )
        .filter(employees::user_id.eq(user_id))
        .select(EmployeeRow::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(|r| {
        let (professional_type, team) = r.staff.into_refs();
        EmployeeRecord {
            id: r.id,
            user_id: r.user_id,
            descriptive_name: r.descriptive_name,
            registration: r.registration,
            phone: r.phone,
            active: r.active,
            professional_type,
            team,
        }
    }))
}

/// A staff record with its user's name, professional type and team.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = employees, check_for_backend(diesel::pg::Pg))]
struct EmployeeRow {
    id: i64,
    user_id: i64,
    #[diesel(select_expression = users::descriptive_name)]
    descriptive_name: String,
    registration: String,
    phone: Option<String>,
    active: bool,
    #[diesel(embed)]
    staff: StaffRefs,
}

/// The login of user `id` (a softphone's SIP account is named by it).
pub async fn login_of(
    mut conn: &AsyncPgConnection,
    id: i64,
) -> Result<Option<String>, diesel::result::Error> {
    users::table
        .find(id)
        .select(users::login)
        .first(&mut conn)
        .await
        .optional()
}
