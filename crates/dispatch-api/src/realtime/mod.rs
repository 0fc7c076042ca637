//! Real-time updates instead of polling: the per-process hub that fans events out to its
//! sockets, and what it speaks. The socket's task is the route `routes::ws` (`GET /ws`); the
//! one `LISTEN` connection per process that brings every replica's committed changes to the
//! hub (and the caches) is `crate::listener`. Both drive the hub from above `state`, which
//! holds it.
//!
//! `protocol` (the messages), `outbox` (each socket's queue of encoded frames, which the HTTP
//! connection reads as its body), `settings` (socket timing) and `authority` (when a
//! socket's authority ends, and its close code) sit below `hub` (the fan-out). `watch` is the task
//! every replica runs to raise the hospital offload alerts nobody's write would.

pub mod authority;
pub mod hub;
pub mod notice;
pub mod outbox;
pub mod protocol;
pub mod settings;
pub mod watch;

pub use hub::Hub;
pub use settings::WsSettings;
