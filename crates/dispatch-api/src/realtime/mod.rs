//! Real-time updates instead of polling: the WebSocket at `GET /ws`, the per-process hub
//! that fans events out to its sockets, and the one `LISTEN` connection per process that
//! brings every replica's committed changes to its hub (and its caches).

pub mod hub;
pub mod listener;
pub mod notice;
pub mod ws;

pub use hub::Hub;
