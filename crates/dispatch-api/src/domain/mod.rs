//! The rules of the dispatch centre, with no HTTP and no SQL in them: the incident and
//! dispatch state machines, each one table that every write consults and the tests enumerate.

pub mod dispatch;
pub mod incident;
