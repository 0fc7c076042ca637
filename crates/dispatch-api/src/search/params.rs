//! The search routes' query parameters: `?q=&limit=&offset=` of every search and
//! `/incident/mask`'s, each checked (400 naming the parameter) into the search the store
//! runs.

use chrono::{DateTime, Duration, Utc};
use common::Problem;
use common::problem::FieldError;
use serde::Deserialize;
use utoipa::IntoParams;

use super::fold::fold;
use super::term::{MaskTerm, like_escape};
use crate::domain::incident::State;
use crate::domain::queue::QUEUES;

/// Longest accepted search term, in characters. Longer is 400: no name is that long, and
/// the cap bounds the work of one request.
pub const MAX_TERM_CHARS: usize = 100;
/// A search returns at most 20 items (docs/dispatch-routes.md, "Routes").
pub const MAX_LIMIT: i64 = 20;
/// Deepest `offset` accepted; lazy-loading lists never scroll that far.
pub const MAX_OFFSET: i64 = 10_000;

/// `?q=&limit=&offset=` of every search route except `/employee/search`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// Part of the name, any case, accents optional; at most 100 characters.
    pub q: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
}

/// A checked search: `term` is folded and trimmed, `None` lists everything in name order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    pub term: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

impl SearchParams {
    pub fn check(self) -> Result<Search, Problem> {
        Search::new("q", self.q, self.limit, self.offset)
    }
}

/// `GET /health-unit`'s parameters: a search and a city.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HealthUnitParams {
    /// Words of the name, in any order, any case, accents optional (`hosp sao` finds
    /// "Hospital Municipal São José"); at most 100 characters.
    pub q: Option<String>,
    /// Only the units of this city (its whole name, any case, accents optional: `sao jose
    /// dos campos`); a city with no unit gives `[]`.
    pub city: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
}

impl HealthUnitParams {
    /// The search and the folded city, each checked (400 naming the parameter).
    pub fn check(self) -> Result<(Search, Option<String>), Problem> {
        let city = folded_term("city", self.city)?;
        Ok((Search::new("q", self.q, self.limit, self.offset)?, city))
    }
}

/// A typed term (`name` is its parameter), checked: at most 100 characters, no control
/// characters; answered folded and trimmed, `None` when blank.
pub fn folded_term(name: &str, term: Option<String>) -> Result<Option<String>, Problem> {
    match term {
        Some(t) if t.chars().count() > MAX_TERM_CHARS => Err(Problem::invalid_parameter(
            name,
            format!("must be at most {MAX_TERM_CHARS} characters"),
        )),
        // A NUL cannot reach PostgreSQL's text at all, and no name has control characters.
        Some(t) if t.chars().any(char::is_control) => Err(Problem::invalid_parameter(
            name,
            "must not contain control characters",
        )),
        Some(t) => Ok(Some(fold(t.trim())).filter(|t| !t.is_empty())),
        None => Ok(None),
    }
}

impl Search {
    pub fn new(
        term_name: &str,
        term: Option<String>,
        limit: Option<i64>,
        offset: Option<i64>,
    ) -> Result<Self, Problem> {
        let term = folded_term(term_name, term)?;
        let limit = limit.unwrap_or(MAX_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(Problem::invalid_parameter(
                "limit",
                format!("must be between 1 and {MAX_LIMIT}"),
            ));
        }
        let offset = offset.unwrap_or(0);
        if !(0..=MAX_OFFSET).contains(&offset) {
            return Err(Problem::invalid_parameter(
                "offset",
                format!("must be between 0 and {MAX_OFFSET}"),
            ));
        }
        Ok(Self {
            term,
            limit,
            offset,
        })
    }

    /// LIKE patterns of the term: one infix pattern per word (a name matches when it holds
    /// every word, in any order: "andre teixeira" finds "André Damasceno Teixeira"), and the
    /// whole term as a prefix (those names first); wildcards in the term escaped.
    pub fn like_patterns(&self) -> Option<(Vec<String>, String)> {
        self.term.as_ref().map(|t| {
            let words = t
                .split_whitespace()
                .map(|w| format!("%{}%", like_escape(w)))
                .collect();
            (words, format!("{}%", like_escape(t)))
        })
    }
}

/// How far back `/incident/mask` looks by default: open incidents of any age, and the others
/// created in the last 7 days (docs/dispatch-routes.md, "Incident search").
pub const RECENT_DAYS: i64 = 7;
/// The longest `since`..`until` window one request may ask for.
pub const MAX_WINDOW_DAYS: i64 = 31;

/// `GET /incident/mask`'s parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MaskParams {
    /// Part of the number, caller's or patient's name, phone or address, any case, accents
    /// optional; at most 100 characters. A complete incident number (`2026-000123`) or phone
    /// (10 or 11 digits, `+55` optional) finds its incidents of any age.
    pub q: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
    /// Only incidents in these states: repeated (`state=a&state=b`) or comma-separated.
    #[param(value_type = Option<Vec<State>>, style = Form, explode = true)]
    pub state: Option<String>,
    /// `true`: only incidents assigned to the caller (its regulator or the person it was
    /// transferred to). The caller is the token's user.
    pub mine: Option<bool>,
    /// Created at or after this moment (RFC 3339). With `since` or `until` the search covers
    /// exactly that window, any state, instead of the default scope. Default: `until` minus
    /// 7 days.
    pub since: Option<DateTime<Utc>>,
    /// Created before this moment (RFC 3339). Default: now. `until - since` is at most 31
    /// days (400 naming both beyond).
    pub until: Option<DateTime<Utc>>,
    /// `queue`: priority (critical first, none last), then the longest waiting in its state
    /// first (`waiting_since`); `newest`: newest first. Default `queue` for a work queue
    /// (`state` naming open states only, without `q`, `since` or `until`), else `newest`;
    /// `queue` for anything but a work queue is 400 naming `order`.
    pub order: Option<Order>,
}

common::text_enum! {
    /// How `/incident/mask` orders its rows (docs/dispatch-routes.md, "Work queues").
    pub enum Order {
        /// Newest first (`created_at`, then id); with a term, the best matches first.
        Newest = "newest",
        /// A work queue: priority (critical first, none last), then `waiting_since` (oldest
        /// first), then id.
        Queue = "queue",
    }
}

/// Which incidents a mask search looks at (identifiers excepted: they reach any age).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The default: open incidents of any age, and every incident created since `since`.
    Recent { since: DateTime<Utc> },
    /// Incidents created in `[since, until)`, whatever their state.
    Between {
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    },
}

/// A checked mask search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    pub term: Option<MaskTerm>,
    /// `None`: every state.
    pub states: Option<Vec<State>>,
    pub mine: bool,
    pub scope: Scope,
    pub order: Order,
    pub limit: i64,
    pub offset: i64,
}

impl MaskParams {
    /// Checks every parameter (400 naming it); `now` anchors the default scope.
    pub fn check(self, now: DateTime<Utc>) -> Result<Mask, Problem> {
        let page = Search::new("q", self.q, self.limit, self.offset)?;
        let states = self.state.as_deref().map(parse_states).transpose()?;
        let scope = match (self.since, self.until) {
            (None, None) => Scope::Recent {
                since: now - Duration::days(RECENT_DAYS),
            },
            (since, until) => {
                let until = until.unwrap_or(now);
                let since = since.unwrap_or(until - Duration::days(RECENT_DAYS));
                if since >= until {
                    return Err(window_problem("`since` must be before `until`"));
                }
                if until - since > Duration::days(MAX_WINDOW_DAYS) {
                    return Err(window_problem(&format!(
                        "the window from `since` to `until` (default: now) must be at most \
                         {MAX_WINDOW_DAYS} days"
                    )));
                }
                Scope::Between { since, until }
            }
        };
        // A work queue: open states only, the default scope, no term. Its incidents are all
        // in the default scope (it keeps open incidents of any age).
        let queue = page.term.is_none()
            && self.since.is_none()
            && self.until.is_none()
            && states
                .as_ref()
                .is_some_and(|s| s.iter().all(|s| QUEUES.contains(s)));
        let order = match self.order {
            None if queue => Order::Queue,
            None => Order::Newest,
            Some(Order::Queue) if !queue => {
                return Err(Problem::invalid_parameter(
                    "order",
                    "`queue` orders a work queue: `state` naming open states only \
                     (registering, awaiting_regulation, regulated, dispatched), without `q`, \
                     `since` or `until`",
                ));
            }
            Some(order) => order,
        };
        Ok(Mask {
            term: page.term.as_deref().map(MaskTerm::of),
            states,
            mine: self.mine.unwrap_or(false),
            scope,
            order,
            limit: page.limit,
            offset: page.offset,
        })
    }
}

/// 400 naming both ends of the window.
fn window_problem(message: &str) -> Problem {
    Problem::new(
        actix_web::http::StatusCode::BAD_REQUEST,
        "invalid_parameter",
        format!("parameters `since`, `until`: {message}"),
    )
    .with_errors(
        ["since", "until"]
            .into_iter()
            .map(|field| FieldError {
                field: field.into(),
                message: message.into(),
            })
            .collect(),
    )
}

/// `registering,awaiting_regulation`: each a known state (400 naming the unknown one).
fn parse_states(list: &str) -> Result<Vec<State>, Problem> {
    let mut states = Vec::new();
    for name in list.split(',').map(str::trim) {
        let state = State::parse(name).ok_or_else(|| {
            let known: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
            Problem::invalid_parameter(
                "state",
                format!("`{name}` is not a state (one of: {})", known.join(", ")),
            )
        })?;
        if !states.contains(&state) {
            states.push(state);
        }
    }
    Ok(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(q: &str) -> Search {
        Search::new("q", Some(q.into()), None, None).unwrap()
    }

    #[test]
    fn the_mask_window_is_bounded() {
        let now = DateTime::parse_from_rfc3339("2026-11-24T12:00:00Z")
            .unwrap()
            .to_utc();
        let check = |since: Option<i64>, until: Option<i64>| {
            MaskParams {
                since: since.map(|d| now - Duration::days(d)),
                until: until.map(|d| now - Duration::days(d)),
                ..MaskParams::default()
            }
            .check(now)
            .map(|m| m.scope)
            .map_err(|p| p.errors.into_iter().map(|e| e.field).collect::<Vec<_>>())
        };
        let days = |d: i64| now - Duration::days(d);
        assert_eq!(check(None, None), Ok(Scope::Recent { since: days(7) }));
        assert_eq!(
            check(Some(40), Some(9)),
            Ok(Scope::Between {
                since: days(40),
                until: days(9)
            })
        );
        assert_eq!(
            check(None, Some(100)),
            Ok(Scope::Between {
                since: days(107),
                until: days(100)
            })
        );
        assert_eq!(
            check(Some(3), None),
            Ok(Scope::Between {
                since: days(3),
                until: now
            })
        );
        for (since, until) in [
            (Some(40), Some(8)),
            (Some(32), None),
            (Some(1), Some(2)),
            (Some(1), Some(1)),
        ] {
            assert_eq!(
                check(since, until),
                Err(vec!["since".into(), "until".into()])
            );
        }
    }

    #[test]
    fn a_work_queue_is_ordered_as_one_unless_asked_otherwise() {
        let check = |state: Option<&str>, q: Option<&str>, order: Option<Order>| {
            MaskParams {
                state: state.map(Into::into),
                q: q.map(Into::into),
                order,
                ..MaskParams::default()
            }
            .check(Utc::now())
            .map(|m| m.order)
            .map_err(|p| p.errors[0].field.clone())
        };
        assert_eq!(
            check(Some("awaiting_regulation"), None, None),
            Ok(Order::Queue)
        );
        assert_eq!(
            check(Some("regulated,dispatched"), None, None),
            Ok(Order::Queue)
        );
        assert_eq!(
            check(Some("awaiting_regulation"), None, Some(Order::Newest)),
            Ok(Order::Newest)
        );
        // Not a queue: a final state, no state, a term.
        assert_eq!(
            check(Some("regulated,closed"), None, None),
            Ok(Order::Newest)
        );
        assert_eq!(check(None, None, None), Ok(Order::Newest));
        assert_eq!(
            check(Some("regulated"), Some("silva"), None),
            Ok(Order::Newest)
        );
        for (state, q) in [
            (Some("closed"), None),
            (None, None),
            (Some("regulated"), Some("x")),
        ] {
            assert_eq!(check(state, q, Some(Order::Queue)), Err("order".into()));
        }
    }

    #[test]
    fn states_are_named_when_unknown() {
        let check = |state: &str| {
            MaskParams {
                state: Some(state.into()),
                ..MaskParams::default()
            }
            .check(Utc::now())
        };
        assert_eq!(
            check("closed, awaiting_regulation,closed").unwrap().states,
            Some(vec![State::Closed, State::AwaitingRegulation])
        );
        let refused = check("closed,open").unwrap_err();
        assert_eq!(refused.errors[0].field, "state");
        assert!(refused.detail.contains("`open`"), "{}", refused.detail);
    }

    #[test]
    fn bounds_are_checked() {
        let p = |q: Option<&str>, l: Option<i64>, o: Option<i64>| {
            Search::new("q", q.map(Into::into), l, o).map_err(|e| e.errors[0].field.clone())
        };
        assert_eq!(p(None, Some(0), None).unwrap_err(), "limit");
        assert_eq!(p(None, Some(21), None).unwrap_err(), "limit");
        assert_eq!(p(None, None, Some(-1)).unwrap_err(), "offset");
        assert_eq!(p(Some(&"x".repeat(101)), None, None).unwrap_err(), "q");
        assert!(p(Some(&"é".repeat(100)), Some(20), Some(0)).is_ok());
        for control in ["a\u{0}b", "\u{7}", "x\ny"] {
            assert_eq!(
                p(Some(control), None, None).unwrap_err(),
                "q",
                "{control:?}"
            );
        }
        assert_eq!(p(Some("  "), None, None).unwrap().term, None);
    }

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(
            search("50%_a").like_patterns().unwrap(),
            (vec!["%50\\%\\_a%".to_owned()], "50\\%\\_a%".to_owned())
        );
        // One infix pattern per word, the whole term as the prefix.
        assert_eq!(
            search("andre teixeira").like_patterns().unwrap(),
            (
                vec!["%andre%".to_owned(), "%teixeira%".to_owned()],
                "andre teixeira%".to_owned()
            )
        );
    }
}
