//! A socket's outgoing frames (docs/dispatch-realtime.md, "Flow control: sockets that keep
//! up"): one queue per socket, filled by the hub (events) and by the socket's task (answers,
//! pings, pongs, the close), and read by the HTTP connection itself as the response's body,
//! which writes the frames to the network in the order they were queued.
//!
//! The hub encodes an event's frame once and queues the same bytes for every follower, so a
//! delivery costs a push and, when the connection was waiting, waking it: no serialisation,
//! copy or task of its own per socket. The socket's task is woken only when it asked to be:
//! to learn that its own frames were taken (flow control of its answers) or that a socket
//! the hub holds events back for has room again.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::web::{Bytes, BytesMut};

/// The opcodes of the frames the server sends: actix-http's, whose frame writer actix-ws
/// itself uses.
pub use actix_http::ws::OpCode as Opcode;

/// One unfragmented, unmasked frame, as a server sends it (RFC 6455, section 5.2), written by
/// actix-http's frame writer.
pub fn frame(opcode: Opcode, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + 10);
    actix_http::ws::Parser::write_message(&mut out, payload, opcode, true, false);
    out.freeze()
}

/// The connection dropped the socket: nothing queued will be written.
#[derive(Debug)]
pub struct Gone;

struct State {
    /// Encoded frames not yet taken by the connection, oldest first; `true` marks an event.
    frames: VecDeque<(Bytes, bool)>,
    /// Events among `frames`: the hub's offers are refused from `capacity` on.
    events: usize,
    capacity: usize,
    /// An offer was refused since the last [`Outbox::clear_behind`].
    behind: bool,
    /// Frames queued and taken since the socket opened.
    queued: u64,
    taken: u64,
    /// The last time the connection took a frame, or the queue went from empty to not.
    progress: Instant,
    /// The connection, waiting for a frame.
    connection: Option<Waker>,
    /// The socket's task, waiting for its frames up to `flush` to be taken, or for room.
    task: Option<Waker>,
    flush: Option<u64>,
    /// Nothing more will be queued (a close frame was, or the task ended): the body ends
    /// once the queue is empty.
    closing: bool,
    /// The connection dropped the body.
    gone: bool,
}

impl State {
    fn push(&mut self, frame: Bytes, event: bool) {
        if self.frames.is_empty() {
            self.progress = Instant::now();
        }
        self.frames.push_back((frame, event));
        self.queued += 1;
        if event {
            self.events += 1;
        }
        if let Some(w) = self.connection.take() {
            w.wake();
        }
    }

    /// Whether the task waits for something that now holds.
    fn task_may_go(&self) -> bool {
        self.flush.is_some_and(|mark| self.taken >= mark)
            || (self.behind && self.events < self.capacity)
    }
}

/// Cheap to clone: every clone is the same queue.
#[derive(Clone)]
pub struct Outbox(Arc<Mutex<State>>);

impl Outbox {
    /// A queue holding at most `capacity` events not yet taken.
    pub fn new(capacity: usize) -> Self {
        Outbox(Arc::new(Mutex::new(State {
            frames: VecDeque::new(),
            events: 0,
            capacity,
            behind: false,
            queued: 0,
            taken: 0,
            progress: Instant::now(),
            connection: None,
            task: None,
            flush: None,
            closing: false,
            gone: false,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an event without waiting; false (and the socket marked behind) when
    /// `capacity` events are already waiting, false too once the socket is closing or gone.
    pub fn offer(&self, frame: &Bytes) -> bool {
        let mut s = self.lock();
        if s.closing || s.gone {
            return false;
        }
        if s.events >= s.capacity {
            s.behind = true;
            return false;
        }
        s.push(frame.clone(), true);
        true
    }

    /// Queues one of the task's own frames (an answer, a ping, a pong) behind every event
    /// already queued. It is not bounded by `capacity`: the task waits for it to be taken
    /// ([`Outbox::flushed`]) before reading the client's next request.
    pub fn push(&self, frame: Bytes) -> Result<(), Gone> {
        let mut s = self.lock();
        if s.gone {
            return Err(Gone);
        }
        if !s.closing {
            s.push(frame, false);
        }
        Ok(())
    }

    /// Queues the close frame: nothing is queued after it, and the body ends once it is
    /// taken.
    pub fn close(&self, frame: Bytes) {
        let mut s = self.lock();
        if !s.closing && !s.gone {
            s.push(frame, false);
        }
        s.closing = true;
        if let Some(w) = s.connection.take() {
            w.wake();
        }
    }

    /// Resolves once every frame queued so far has been taken by the connection.
    pub async fn flushed(&self) -> Result<(), Gone> {
        let mark = self.lock().queued;
        let done = poll_fn(|cx| {
            let mut s = self.lock();
            if s.gone {
                return Poll::Ready(Err(Gone));
            }
            if s.taken >= mark {
                return Poll::Ready(Ok(()));
            }
            s.flush = Some(mark);
            s.task = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
        self.lock().flush = None;
        done
    }

    /// Resolves when the socket is behind (an offer was refused) and has room again.
    pub async fn room(&self) {
        poll_fn(|cx| {
            let mut s = self.lock();
            if s.behind && s.events < s.capacity {
                return Poll::Ready(());
            }
            if !s.task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                s.task = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    pub fn is_behind(&self) -> bool {
        self.lock().behind
    }

    pub fn set_behind(&self, behind: bool) {
        self.lock().behind = behind;
    }

    /// How long frames have waited without the connection taking any (zero when none
    /// waits): the client stopped reading and every buffer on the way is full.
    pub fn stalled_for(&self) -> Duration {
        let s = self.lock();
        if s.frames.is_empty() {
            Duration::ZERO
        } else {
            s.progress.elapsed()
        }
    }

    /// The response's body: the frames, in order, as the connection asks for them. `keep`
    /// is held as long as the body (the upgrade's own body, whose end tells the socket's
    /// reader that the connection is gone).
    pub fn body(&self, keep: BoxBody) -> BoxBody {
        BoxBody::new(Body {
            outbox: self.clone(),
            _keep: keep,
        })
    }

    fn take(&self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let mut s = self.lock();
        if let Some((frame, event)) = s.frames.pop_front() {
            s.taken += 1;
            if event {
                s.events -= 1;
            }
            s.progress = Instant::now();
            if s.task_may_go()
                && let Some(w) = s.task.take()
            {
                w.wake();
            }
            return Poll::Ready(Some(frame));
        }
        if s.closing {
            return Poll::Ready(None);
        }
        if !s
            .connection
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            s.connection = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The connection dropped the body: nothing queued will be written.
    fn gone(&self) {
        let mut s = self.lock();
        s.gone = true;
        s.frames.clear();
        s.events = 0;
        if let Some(w) = s.task.take() {
            w.wake();
        }
    }

    /// The task ended: the body ends once what is queued is taken.
    pub fn finish(&self) {
        let mut s = self.lock();
        s.closing = true;
        if let Some(w) = s.connection.take() {
            w.wake();
        }
    }

    /// The next frame's payload as text, taken as the connection would (tests of the hub).
    #[cfg(test)]
    pub fn try_recv(&self) -> Option<String> {
        let mut s = self.lock();
        let (frame, event) = s.frames.pop_front()?;
        s.taken += 1;
        if event {
            s.events -= 1;
        }
        let (head, len) = match frame[1] {
            126 => (4, usize::from(u16::from_be_bytes([frame[2], frame[3]]))),
            127 => (
                10,
                usize::try_from(u64::from_be_bytes(frame[2..10].try_into().unwrap())).unwrap(),
            ),
            n => (2, usize::from(n)),
        };
        assert_eq!(frame.len(), head + len, "one whole frame");
        Some(String::from_utf8(frame[head..].to_vec()).unwrap())
    }
}

struct Body {
    outbox: Outbox,
    _keep: BoxBody,
}

impl MessageBody for Body {
    type Error = Infallible;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        self.outbox.take(cx).map(|f| f.map(Ok))
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        self.outbox.gone();
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;

    use super::*;

    #[test]
    fn frames_are_encoded_as_rfc_6455_shows_them() {
        // Section 5.7: a single-frame unmasked text message containing "Hello".
        assert_eq!(
            &frame(Opcode::Text, b"Hello")[..],
            &[0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
        );
        // 256 bytes: the 16-bit length; 64 KiB: the 64-bit length.
        let f = frame(Opcode::Text, &[b'a'; 256]);
        assert_eq!((&f[..4], f.len()), (&[0x81, 0x7E, 0x01, 0x00][..], 260));
        let f = frame(Opcode::Text, &vec![b'a'; 65536]);
        assert_eq!(
            (&f[..10], f.len()),
            (&[0x81, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0][..], 65546)
        );
        assert_eq!(&frame(Opcode::Ping, b"")[..], &[0x89, 0x00]);
        assert_eq!(&frame(Opcode::Pong, b"x")[..], &[0x8A, 0x01, b'x']);
        assert_eq!(
            &frame(Opcode::Close, &[0x03, 0xE8])[..],
            &[0x88, 0x02, 0x03, 0xE8]
        );
        assert_eq!(frame(Opcode::Text, &[b'a'; 125])[1], 125);
        assert_eq!(frame(Opcode::Text, &[b'a'; 126])[1], 126);
    }

    fn noop() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    fn text(s: &str) -> Bytes {
        frame(Opcode::Text, s.as_bytes())
    }

    #[test]
    fn events_beyond_the_capacity_are_refused_and_the_socket_marked_behind() {
        let out = Outbox::new(2);
        assert!(out.offer(&text("1")) && out.offer(&text("2")));
        assert!(!out.is_behind());
        assert!(!out.offer(&text("3")));
        assert!(out.is_behind());
        // The task's own frames are never refused, and come after the events.
        out.push(text("answer")).unwrap();
        let mut cx = noop();
        let mut taken = Vec::new();
        while let Poll::Ready(Some(f)) = out.take(&mut cx) {
            taken.push(f);
        }
        assert_eq!(taken, vec![text("1"), text("2"), text("answer")]);
        assert!(out.offer(&text("4")));
    }

    #[test]
    fn the_body_ends_after_the_close_frame_and_nothing_is_queued_after_it() {
        let out = Outbox::new(4);
        assert!(out.offer(&text("1")));
        out.close(frame(Opcode::Close, &[0x03, 0xE8]));
        assert!(!out.offer(&text("2")));
        let mut cx = noop();
        assert_eq!(out.take(&mut cx), Poll::Ready(Some(text("1"))));
        assert!(matches!(out.take(&mut cx), Poll::Ready(Some(f)) if f[0] == 0x88));
        assert_eq!(out.take(&mut cx), Poll::Ready(None));
    }

    /// Counts the times it is woken.
    struct Count(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn the_task_is_woken_when_its_answer_is_taken_and_when_room_returns_only() {
        let out = Outbox::new(1);
        let count = Arc::new(Count(0.into()));
        let woken = || count.0.load(std::sync::atomic::Ordering::SeqCst);
        let waker = Waker::from(count.clone());
        let mut task = Context::from_waker(&waker);
        let mut connection = noop();

        // Events alone never wake the task.
        let mut room = Box::pin(out.room());
        assert!(room.as_mut().poll(&mut task).is_pending());
        assert!(out.offer(&text("1")));
        assert_eq!(out.take(&mut connection), Poll::Ready(Some(text("1"))));
        assert_eq!(woken(), 0);
        // Behind: woken once the connection takes an event, and the room is there.
        assert!(out.offer(&text("2")) && !out.offer(&text("3")));
        assert!(room.as_mut().poll(&mut task).is_pending());
        assert_eq!(out.take(&mut connection), Poll::Ready(Some(text("2"))));
        assert_eq!(woken(), 1);
        assert!(room.as_mut().poll(&mut task).is_ready());
        out.set_behind(false);

        // An answer: woken once the connection has taken it.
        out.push(text("answer")).unwrap();
        let mut flushed = Box::pin(out.flushed());
        assert!(flushed.as_mut().poll(&mut task).is_pending());
        assert_eq!(out.take(&mut connection), Poll::Ready(Some(text("answer"))));
        assert_eq!(woken(), 2);
        assert!(matches!(
            flushed.as_mut().poll(&mut task),
            Poll::Ready(Ok(()))
        ));
    }

    #[test]
    fn a_gone_connection_refuses_everything() {
        let out = Outbox::new(4);
        let body = out.body(BoxBody::new(()));
        assert!(out.offer(&text("1")));
        drop(body);
        assert!(!out.offer(&text("2")));
        assert!(out.push(text("3")).is_err());
        assert_eq!(out.stalled_for(), Duration::ZERO);
    }
}
