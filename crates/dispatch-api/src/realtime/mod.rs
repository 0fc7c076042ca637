//! Real-time updates instead of polling: the WebSocket at `GET /ws`, the per-process hub
//! that fans events out to its sockets, and the one `LISTEN` connection per process that
//! brings every replica's committed changes to its hub (and its caches).
//!
//! `protocol` (the frames), `settings` (socket timing) and `authority` (when a socket's
//! authority ends, and its close code) sit below `hub` (the fan-out), which `ws` (one task
//! per socket) and `listener` (the one `LISTEN`) drive.

pub mod authority;
pub mod hub;
pub mod listener;
pub mod notice;
pub mod protocol;
pub mod settings;
pub mod ws;

pub use hub::Hub;
pub use settings::WsSettings;
