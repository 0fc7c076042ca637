//! Users and their staff records.

use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::user::{ACTIVE, Profile};
use crate::schema::dispatch::*;
use crate::search::Search;
use crate::store::{opt_ref, user_option};
use crate::store::{search_key, search_order};
use crate::views::*;

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

type UserRow = (
    i64,
    String,
    String,
    String,
    (i32, String, String),
    Option<i32>,
    Option<String>,
    Option<i32>,
    Option<String>,
);

/// Users with profile, professional type and team, in one statement.
#[diesel::dsl::auto_type(no_type_alias)]
fn user_records() -> _ {
    users::table
        .inner_join(profiles::table)
        .left_join(professional_types::table)
        .left_join(teams::table)
        .select((
            users::id,
            users::descriptive_name,
            users::status,
            users::login,
            (profiles::id, profiles::title, profiles::text),
            professional_types::id.nullable(),
            professional_types::name.nullable(),
            teams::id.nullable(),
            teams::name.nullable(),
        ))
}

/// `with_login` decides whether the login leaves the service (ADMIN callers only).
fn user_record(row: UserRow, with_login: bool) -> UserRecord {
    let (id, descriptive_name, status, login, (pid, title, text), pt_id, pt_name, t_id, t_name) =
        row;
    UserRecord {
        id,
        descriptive_name,
        status,
        name: with_login.then_some(login),
        profile: ProfileView {
            id: pid,
            title,
            text,
        },
        professional_type: opt_ref(pt_id, pt_name),
        team: opt_ref(t_id, t_name),
    }
}

/// `GET /user`: every user, in name order.
pub async fn all(mut conn: &AsyncPgConnection, with_login: bool) -> Result<Vec<UserRecord>, Error> {
    let rows: Vec<UserRow> = user_records()
        .order_by((search_order(users::descriptive_name), users::id))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| user_record(r, with_login))
        .collect())
}

pub async fn by_id(
    mut conn: &AsyncPgConnection,
    id: i64,
    with_login: bool,
) -> Result<Option<UserRecord>, Error> {
    let row: Option<UserRow> = user_records()
        .filter(users::id.eq(id))
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(|r| user_record(r, with_login)))
}

/// `GET /user/search`: "Send to" candidates, active regulating physicians.
pub async fn search_regulators(
    mut conn: &AsyncPgConnection,
    search: &Search,
) -> Result<Vec<UserOption>, Error> {
    let mut query = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq(Profile::MedicoRegulador.title()))
        .filter(users::status.eq(ACTIVE))
        .select((users::id, users::descriptive_name))
        .into_boxed();
    if let Some((infix, prefix)) = search.like_patterns() {
        query = query
            .filter(search_key(users::descriptive_name).like(infix))
            .order_by(search_key(users::descriptive_name).like(prefix).desc());
    }
    let rows: Vec<(i64, String)> = query
        .then_order_by(search_order(users::descriptive_name))
        .then_order_by(users::id)
        .limit(search.limit)
        .offset(search.offset)
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(user_option).collect())
}

/// `GET /employee/search`: "Transfer to" candidates, active employees of active users,
/// as `{id: user id, descriptive_name}` (the spec's planned select-option shape).
pub async fn search_employees(
    mut conn: &AsyncPgConnection,
    search: &Search,
) -> Result<Vec<UserOption>, Error> {
    let mut query = employees::table
        .inner_join(users::table)
        .filter(employees::active.and(users::status.eq(ACTIVE)))
        .select((users::id, users::descriptive_name))
        .into_boxed();
    if let Some((infix, prefix)) = search.like_patterns() {
        query = query
            .filter(search_key(users::descriptive_name).like(infix))
            .order_by(search_key(users::descriptive_name).like(prefix).desc());
    }
    let rows: Vec<(i64, String)> = query
        .then_order_by(search_order(users::descriptive_name))
        .then_order_by(users::id)
        .limit(search.limit)
        .offset(search.offset)
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(user_option).collect())
}

/// Every active employee: only the deprecated `/shared/possible-values` still sends this.
pub async fn all_active_employees(mut conn: &AsyncPgConnection) -> Result<Vec<UserOption>, Error> {
    let rows: Vec<(i64, String)> = employees::table
        .inner_join(users::table)
        .filter(employees::active.and(users::status.eq(ACTIVE)))
        .select((users::id, users::descriptive_name))
        .order_by((search_order(users::descriptive_name), users::id))
        .load(&mut conn)
        .await?;
    Ok(rows.into_iter().map(user_option).collect())
}

/// `GET /employee/user_id/{id}`.
pub async fn employee_of(
    mut conn: &AsyncPgConnection,
    user_id: i64,
) -> Result<Option<EmployeeRecord>, Error> {
    type Row = (
        i64,
        i64,
        String,
        String,
        Option<String>,
        bool,
        Option<i32>,
        Option<String>,
        Option<i32>,
        Option<String>,
    );
    let row: Option<Row> = employees::table
        .inner_join(
            users::table
                .left_join(professional_types::table)
                .left_join(teams::table),
        )
        .filter(employees::user_id.eq(user_id))
        .select((
            employees::id,
            users::id,
            users::descriptive_name,
            employees::registration,
            employees::phone,
            employees::active,
            professional_types::id.nullable(),
            professional_types::name.nullable(),
            teams::id.nullable(),
            teams::name.nullable(),
        ))
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(
        |(
            id,
            user_id,
            descriptive_name,
            registration,
            phone,
            active,
            pt_id,
            pt_name,
            t_id,
            t_name,
        )| EmployeeRecord {
            id,
            user_id,
            descriptive_name,
            registration,
            phone,
            active,
            professional_type: opt_ref(pt_id, pt_name),
            team: opt_ref(t_id, t_name),
        },
    ))
}
