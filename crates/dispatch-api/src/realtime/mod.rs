//! Real-time updates instead of polling: the WebSocket at `GET /ws`, the per-process hub
//! that fans events out to its sockets, and the one `LISTEN` connection per process that
//! brings every replica's committed changes to its hub (and its caches).

/// `NOTIFY` channel of incident changes: payload `<id>:<version>:<group,...>`.
pub const INCIDENT_CHANNEL: &str = "dispatch_incident";
/// `NOTIFY` channel of reference-data changes (a trigger sends the table's name).
pub const REFERENCE_CHANNEL: &str = "dispatch_reference";

pub mod hub;
pub mod listener;
pub mod ws;

pub use hub::Hub;
