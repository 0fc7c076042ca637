//! How long a socket may stay silent, how large a client frame may be, and how long a frame
//! may take to be written (docs/dispatch-realtime.md, "WebSocket protocol").

use std::time::Duration;

/// Socket timing; the defaults suit browsers behind a load balancer.
#[derive(Debug, Clone, Copy)]
pub struct WsSettings {
    /// A socket silent this long is pinged.
    pub ping_interval: Duration,
    /// A socket silent this long (no frame, no pong) is dropped as dead.
    pub idle_timeout: Duration,
    /// Largest client frame accepted.
    pub max_frame: usize,
    /// A frame the socket cannot take within this (the client stopped reading and every
    /// buffer on the way is full) ends the socket: it has stopped reading for long.
    pub send_timeout: Duration,
}

impl Default for WsSettings {
    fn default() -> Self {
        Self {
            ping_interval: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(45),
            max_frame: 4096,
            send_timeout: Duration::from_secs(10),
        }
    }
}
