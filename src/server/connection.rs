//! One connection's transport, and what bounds it whatever the client does:
//!
//! - a whole request (head and body) must arrive within `clientTimeout` of its first byte;
//!   a client still sending its head then gets `408 Request Timeout` and is closed (the
//!   server answers a late body the same way, through hyper);
//! - a keep-alive connection that stays idle that long is closed;
//! - a client that takes nothing of its answer for that long (every write waits on it) is
//!   dropped, so an answer nobody reads cannot hold memory or a connection slot;
//! - when every slot is taken and a connection waits to be accepted, the connection that has
//!   waited longest on its client (for its request, or to take its answer) is closed
//!   (`Open`), so clients slow to send or to read cannot keep out one that is quick; but a
//!   newcomer whose address holds more than an even split of the slots among the addresses
//!   holding them is refused at once (429) instead, closing nobody, so a crowd that reconnects
//!   as fast as it is closed drains from the kernel's queue quickly (`Share::beyond_fair`);
//! - one address holds at most `maxConnectionsPerAddress` of the `maxConnections` slots, and
//!   the addresses of one IPv6 /64 together at most a quarter of them (`network_share`): one
//!   host has a whole /64 to choose addresses from, but on a home LAN the /64 is also every
//!   other device of the house, so when the /64 holds its quarter, a newcomer whose address
//!   holds less than an even split of it among the /64's addresses takes the place of the
//!   connection that has waited longest on its client of the address holding the most
//!   (`Shares::crowd_within`, `Open::close_slowest_of`), as event streams do; `trustedProxies`
//!   are exempt, since a proxy carries everyone.
//!
//! [`Timed`] wraps the socket and keeps the deadlines; the server tells its [`Tracker`] where
//! the connection is in a request's life (head read, body read, answer done). It knows
//! nothing of HTTP beyond the canned 408 it writes itself.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use crate::auth::identity::Network;

/// Where a connection is in the life of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request since then (connected, or the last answer ended).
    Idle(Instant),
    /// A request's first bytes arrived then; its head is not complete yet.
    Head(Instant),
    /// The server has the head of a request whose first bytes arrived then, and reads the
    /// body (it keeps the deadline itself).
    Serving(Instant),
    /// The request is in; its answer is being made or written.
    Answering,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    /// When the first bytes of the next request arrived while an answer was under way
    /// (pipelining).
    next: Option<Instant>,
    /// Since when every write has waited on the client (an answer it does not read).
    stalled: Option<Instant>,
}

/// What the server and the socket wrapper share about one connection.
#[derive(Debug)]
pub struct Tracker {
    timeout: Duration,
    state: Mutex<State>,
    /// Told when the connection is to be closed to make room for another.
    closing: Notify,
    /// Set once it was told, so that it is not chosen twice.
    chosen: AtomicBool,
}

impl Tracker {
    pub fn new(timeout: Duration) -> Arc<Tracker> {
        Arc::new(Tracker {
            timeout,
            state: Mutex::new(State {
                phase: Phase::Idle(Instant::now()),
                next: None,
                stalled: None,
            }),
            closing: Notify::new(),
            chosen: AtomicBool::new(false),
        })
    }

    /// Since when the connection has waited on its client: for a whole request (idle, or a
    /// head or a body under way), or to take its answer; `None` while its answer is made or
    /// taken, which is the server's work, not the client's.
    fn waiting_since(&self) -> Option<Instant> {
        let s = self.state();
        match s.phase {
            Phase::Idle(since) | Phase::Head(since) | Phase::Serving(since) => Some(since),
            Phase::Answering => s.stalled,
        }
    }

    /// A write began to wait on the client (`Some`), or got somewhere (`None`).
    fn write_stalled(&self, since: Option<Instant>) {
        self.state().stalled = since;
    }

    /// Resolves once the connection was chosen to be closed (`Open::close_slowest`).
    pub async fn closed(&self) {
        self.closing.notified().await;
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server got a request's head. Returns the instant by which its body must be in.
    pub fn serving(&self) -> Instant {
        let mut s = self.state();
        let first = match s.phase {
            Phase::Head(first) => first,
            // The head was already buffered (it came with the previous request's bytes).
            _ => s.next.take().unwrap_or_else(Instant::now),
        };
        s.phase = Phase::Serving(first);
        first + self.timeout
    }

    /// The body is read (or given up on): from now on only the answer's writes are timed.
    pub fn body_read(&self) {
        let mut s = self.state();
        if matches!(s.phase, Phase::Serving(_)) {
            s.phase = Phase::Answering;
        }
    }

    /// The answer's body has been handed over whole (or dropped): the connection waits for
    /// its next request, which may have begun already.
    pub fn answered(&self) {
        let mut s = self.state();
        s.phase = match s.next.take() {
            Some(first) => Phase::Head(first),
            None => Phase::Idle(Instant::now()),
        };
    }

    fn got_bytes(&self) {
        let mut s = self.state();
        match s.phase {
            Phase::Idle(_) => s.phase = Phase::Head(Instant::now()),
            Phase::Answering => {
                s.next.get_or_insert_with(Instant::now);
            }
            Phase::Head(_) | Phase::Serving(_) => {}
        }
    }

    /// When reading must have got somewhere, and what happens then.
    fn read_deadline(&self) -> Option<(Instant, Late)> {
        match self.state().phase {
            Phase::Idle(since) => Some((since + self.timeout, Late::Idle)),
            Phase::Head(first) => Some((first + self.timeout, Late::Head)),
            Phase::Serving(_) | Phase::Answering => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Late {
    /// No request began: close quietly.
    Idle,
    /// A head is unfinished: answer 408, then close.
    Head,
}

/// The answer to a head that did not arrive in time, written straight to the socket (hyper
/// closes such a connection without an answer).
fn request_timeout(timeout: Duration) -> Vec<u8> {
    let body = format!(
        "{{\"code\":\"deadline_exceeded\",\"message\":\"the request did not arrive within \
         clientTimeout ({} s)\",\"details\":[]}}",
        timeout.as_secs()
    );
    format!(
        "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A socket with the deadlines of its [`Tracker`].
pub struct Timed<S> {
    io: S,
    tracker: Arc<Tracker>,
    read_timer: Option<Pin<Box<Sleep>>>,
    write_timer: Option<Pin<Box<Sleep>>>,
    /// Since when every write has waited on the client.
    stalled: Option<Instant>,
    /// When a write last got somewhere: a connection still taking in its last answer is not
    /// idle yet.
    wrote: Option<Instant>,
    /// A deadline passed: every further read and write fails.
    dead: bool,
}

impl<S> Timed<S> {
    pub fn new(io: S, tracker: Arc<Tracker>) -> Timed<S> {
        Timed {
            io,
            tracker,
            read_timer: None,
            write_timer: None,
            stalled: None,
            wrote: None,
            dead: false,
        }
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_string())
}

/// Whether `deadline` has passed; if not, `timer` is set to wake the task at it.
fn passed(timer: &mut Option<Pin<Box<Sleep>>>, deadline: Instant, cx: &mut Context<'_>) -> bool {
    let sleep = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
    if sleep.deadline() != deadline {
        sleep.as_mut().reset(deadline);
    }
    sleep.as_mut().poll(cx).is_ready()
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Timed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.dead {
            return Poll::Ready(Err(timed_out("the connection timed out")));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.tracker.got_bytes();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let Some((mut deadline, late)) = this.tracker.read_deadline() else {
                    this.read_timer = None;
                    return Poll::Pending;
                };
                if let (Late::Idle, Some(wrote)) = (late, this.wrote) {
                    deadline = deadline.max(wrote + this.tracker.timeout);
                }
                if !passed(&mut this.read_timer, deadline, cx) {
                    return Poll::Pending;
                }
                this.dead = true;
                match late {
                    // An end of input: hyper closes an idle connection without a word.
                    Late::Idle => Poll::Ready(Ok(())),
                    Late::Head => {
                        // Best effort: a client that sends nothing may read nothing either,
                        // and the socket is closed either way.
                        let answer = request_timeout(this.tracker.timeout);
                        let _ = Pin::new(&mut this.io).poll_write(cx, &answer);
                        Poll::Ready(Err(timed_out("the request head did not arrive in time")))
                    }
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Timed<S> {
    /// Bookkeeping around one write: progress clears the stall, waiting starts or checks it.
    fn track_write(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match result {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    if self.stalled.take().is_some() {
                        self.tracker.write_stalled(None);
                    }
                    self.write_timer = None;
                    self.wrote = Some(Instant::now());
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let since = *self.stalled.get_or_insert_with(|| {
                    let now = Instant::now();
                    self.tracker.write_stalled(Some(now));
                    now
                });
                if passed(&mut self.write_timer, since + self.tracker.timeout, cx) {
                    self.dead = true;
                    return Poll::Ready(Err(timed_out("the client took none of its answer")));
                }
                Poll::Pending
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Timed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.dead {
            return Poll::Ready(Err(timed_out("the connection timed out")));
        }
        let result = Pin::new(&mut self.io).poll_write(cx, buf);
        self.track_write(cx, result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.dead {
            return Poll::Ready(Err(timed_out("the connection timed out")));
        }
        let result = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.track_write(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = ready!(Pin::new(&mut self.io).poll_flush(cx));
        Poll::Ready(result)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The connections each address holds, and each network (an IPv6 /64; an IPv4 address is its
/// own).
#[derive(Debug, Default)]
pub struct Shares {
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    by_address: HashMap<IpAddr, usize>,
    by_network: HashMap<Network, usize>,
}

/// One counted connection; dropping it gives the place back.
pub struct Share {
    shares: Arc<Shares>,
    address: IpAddr,
    network: Network,
}

/// Why a connection has no place in its share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Its address holds this many, its most.
    Address(usize),
    /// The addresses of its IPv6 /64 together hold this many, their most.
    Network(usize),
}

/// How many connections the addresses of one IPv6 /64 may hold together when one address may
/// hold `most` of `slots`: a quarter of the slots, never less than one address's share. On a
/// home LAN the /64 is the whole household, so one device is held to its address's share;
/// a device taking many addresses of its /64 is held to this, and the other three quarters
/// stay for everyone else.
pub fn network_share(most: usize, slots: usize) -> usize {
    (slots / 4).max(most)
}

impl Shares {
    /// When a connection from `ip` finds its IPv6 /64 holding `network_most`: the address of
    /// the /64 holding the most, if `ip`'s address holds less than an even split of
    /// `network_most` among the /64's addresses (its own counted) and that address more. One
    /// of that address's connections gives way, so one device of a household cannot keep the
    /// others out; an address at its even split is refused.
    pub fn crowd_within(&self, ip: IpAddr, network_most: usize) -> Option<IpAddr> {
        let address = ip.to_canonical();
        let network = Network::of(ip);
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let own = held.by_address.get(&address).copied().unwrap_or(0);
        let mut holders = usize::from(own == 0);
        let mut crowd: Option<(usize, IpAddr)> = None;
        for (&a, &count) in held
            .by_address
            .iter()
            .filter(|(a, _)| Network::of(**a) == network)
        {
            holders += 1;
            // Of addresses holding as many, the lowest: the choice never rests on a map's order.
            if crowd.is_none_or(|(most, at)| {
                (count, std::cmp::Reverse(a)) > (most, std::cmp::Reverse(at))
            }) {
                crowd = Some((count, a));
            }
        }
        let fair = (network_most / holders.max(1)).max(1);
        let (most, at) = crowd?;
        (own < fair && most > fair && at != address).then_some(at)
    }

    /// Counts a connection from `ip` if its address holds fewer than `most` and its network
    /// fewer than `network_most`.
    pub fn admit(
        self: &Arc<Shares>,
        ip: IpAddr,
        most: usize,
        network_most: usize,
    ) -> Result<Share, Over> {
        let address = ip.to_canonical();
        let network = Network::of(ip);
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.by_address.get(&address).copied().unwrap_or(0) >= most {
            return Err(Over::Address(most));
        }
        // An IPv4 address is its own network: its address's share is the one that counts.
        if matches!(network, Network::V6(_))
            && held.by_network.get(&network).copied().unwrap_or(0) >= network_most
        {
            return Err(Over::Network(network_most));
        }
        drop(held);
        Ok(self.count(ip))
    }

    /// Counts a connection from `ip` beyond its /64's share: one of the /64's connections
    /// was just told to close for it (`crowd_within`), and gives its place back as it goes.
    pub fn admit_for_crowd(self: &Arc<Shares>, ip: IpAddr) -> Share {
        self.count(ip)
    }

    fn count(self: &Arc<Shares>, ip: IpAddr) -> Share {
        let address = ip.to_canonical();
        let network = Network::of(ip);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        *held.by_address.entry(address).or_insert(0) += 1;
        *held.by_network.entry(network).or_insert(0) += 1;
        Share {
            shares: Arc::clone(self),
            address,
            network,
        }
    }
}

impl Share {
    /// When every one of `slots` is taken: the even split of them among the networks holding
    /// them, if this share's network holds more than that (this connection included).
    pub fn beyond_fair(&self, slots: usize) -> Option<usize> {
        let held = self
            .shares
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let fair = (slots / held.by_network.len().max(1)).max(1);
        let mine = held.by_network.get(&self.network).copied().unwrap_or(0);
        (mine > fair).then_some(fair)
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = self
            .shares
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let held = &mut *held;
        give_back(&mut held.by_address, &self.address);
        give_back(&mut held.by_network, &self.network);
    }
}

fn give_back<K: std::hash::Hash + Eq>(table: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = table.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            table.remove(key);
        }
    }
}

/// Every connection being served, so that when all slots are taken the one that has waited
/// longest on its client can be closed for a newcomer: a client slow to send its request
/// (or sending nothing) must not keep out one that sends at once.
#[derive(Debug, Default)]
pub struct Open {
    conns: Mutex<Conns>,
}

/// The connections by id, and the next id. The counter lives under the same lock because
/// armel (ARMv5) has no 64-bit atomics.
#[derive(Debug, Default)]
struct Conns {
    /// Each connection's tracker and its client's address.
    by_id: HashMap<u64, (Arc<Tracker>, IpAddr)>,
    next: u64,
}

/// A connection's place in `Open`; dropping it takes the connection out.
pub struct Registered {
    open: Arc<Open>,
    id: u64,
}

impl Open {
    pub fn register(self: &Arc<Open>, tracker: &Arc<Tracker>, peer: IpAddr) -> Registered {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        let id = conns.next;
        conns.next += 1;
        conns
            .by_id
            .insert(id, (Arc::clone(tracker), peer.to_canonical()));
        drop(conns);
        Registered {
            open: Arc::clone(self),
            id,
        }
    }

    /// Closes the connection that has waited on its client the longest, if one has for at
    /// least `min_age` (younger ones are requests simply under way); true when one was told to
    /// close. Its slot comes back once its task has dropped it.
    pub fn close_slowest(&self, min_age: Duration) -> bool {
        self.close_slowest_where(min_age, |_| true)
    }

    /// `close_slowest`, among the connections of `address` only.
    pub fn close_slowest_of(&self, address: IpAddr, min_age: Duration) -> bool {
        let address = address.to_canonical();
        self.close_slowest_where(min_age, |a| a == address)
    }

    fn close_slowest_where(&self, min_age: Duration, of: impl Fn(IpAddr) -> bool) -> bool {
        let now = Instant::now();
        let conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        let slowest = conns
            .by_id
            .values()
            .filter(|(_, address)| of(*address))
            .map(|(t, _)| t)
            .filter(|t| !t.chosen.load(Ordering::Relaxed))
            .filter_map(|t| t.waiting_since().map(|since| (since, t)))
            .filter(|(since, _)| now.saturating_duration_since(*since) >= min_age)
            .min_by_key(|(since, _)| *since);
        match slowest {
            Some((_, tracker)) => {
                tracker.chosen.store(true, Ordering::Relaxed);
                // notify_one keeps the wake-up for a task not waiting yet.
                tracker.closing.notify_one();
                true
            }
            None => false,
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open
            .conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_id
            .remove(&self.id);
    }
}

/// The answer to a connection that came when every slot was taken, from an address holding
/// more than `fair` of them; written before it is closed.
pub fn over_fair_share(fair: usize) -> Vec<u8> {
    canned_429(&format!(
        "every connection slot of this service is taken and your address holds more than \
         {fair}, its even share of them (maxConnections split among the addresses holding \
         them): close some, or try again later"
    ))
}

/// A 429 with a Connect error body saying `message` (JSON-safe text), closing the connection.
fn canned_429(message: &str) -> Vec<u8> {
    let body =
        format!("{{\"code\":\"resource_exhausted\",\"message\":\"{message}\",\"details\":[]}}");
    format!(
        "HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The answer to a connection beyond its address's or its network's share, written before it
/// is closed.
pub fn over_share(over: Over) -> Vec<u8> {
    canned_429(&match over {
        Over::Address(most) => format!(
            "your address holds {most} connections to this service already, the most one \
             address may (maxConnectionsPerAddress): close some and try again"
        ),
        Over::Network(most) => format!(
            "the addresses of your IPv6 network (its /64) hold {most} connections to this \
             service already, the most one network may (a quarter of maxConnections): close \
             some and try again"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn shares_count_per_address_and_each_ipv6_64_together() {
        let shares = Arc::new(Shares::default());
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let first = shares.admit(a, 2, 3).expect("first");
        let second = shares.admit(a, 2, 3).expect("second");
        assert_eq!(shares.admit(a, 2, 3).err(), Some(Over::Address(2)));
        assert!(shares.admit(b, 2, 3).is_ok(), "another address");
        // The same client as IPv4-mapped IPv6 is the same holder.
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped());
        assert_eq!(shares.admit(mapped, 2, 3).err(), Some(Over::Address(2)));
        drop(first);
        assert!(shares.admit(mapped, 2, 3).is_ok(), "a place came back");
        drop(second);
        // One device of a /64 holding its address's share leaves room for the others of the
        // /64 (the household); the /64 together holds at most its network share.
        let v6 = |s: &str| IpAddr::V6(s.parse::<Ipv6Addr>().unwrap());
        let x = shares.admit(v6("2001:db8:0:1::bad"), 1, 3).expect("first");
        assert_eq!(
            shares.admit(v6("2001:db8:0:1::bad"), 1, 3).err(),
            Some(Over::Address(1))
        );
        let _y = shares
            .admit(v6("2001:db8:0:1::a11c"), 1, 3)
            .expect("same /64");
        let _z = shares.admit(v6("2001:db8:0:1::3"), 1, 3).expect("same /64");
        assert_eq!(
            shares.admit(v6("2001:db8:0:1::4"), 1, 3).err(),
            Some(Over::Network(3))
        );
        assert!(
            shares.admit(v6("2001:db8:0:2::1"), 1, 3).is_ok(),
            "another /64"
        );
        drop(x);
        assert!(shares.admit(v6("2001:db8:0:1::4"), 1, 3).is_ok());
    }

    #[test]
    fn inside_a_full_64_an_address_under_its_even_split_finds_the_crowd() {
        let v6 = |n: u16| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, n));
        let shares = Arc::new(Shares::default());
        // The /64 holds 8 (its share), from two addresses of one device: 5 and 3.
        let mut held: Vec<Share> = (0..5).map(|_| shares.admit(v6(1), 8, 8).unwrap()).collect();
        held.extend((0..3).map(|_| shares.admit(v6(2), 8, 8).unwrap()));
        assert_eq!(shares.admit(v6(3), 8, 8).err(), Some(Over::Network(8)));
        // (newcomer, the /64's share) -> the address giving way. Three holders with the
        // newcomer: an even split of 8 is 2.
        let table = [
            (v6(3), 8, Some(v6(1))),
            // Two holders: a split of 4, which the one holding 3 is under, 5 beyond.
            (v6(2), 8, Some(v6(1))),
            (v6(1), 8, None),
            // Nobody beyond an even split (16 among 3 is 5).
            (v6(3), 16, None),
            // Another /64, or IPv4: not this /64's business.
            (
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 2, 0, 0, 0, 1)),
                8,
                None,
            ),
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 8, None),
        ];
        for (newcomer, share, want) in table {
            assert_eq!(
                shares.crowd_within(newcomer, share),
                want,
                "{newcomer} {share}"
            );
        }
        // Tied: the lower address gives way, whatever the map's order.
        held.extend((0..2).map(|_| shares.admit(v6(2), 8, 16).unwrap()));
        assert_eq!(shares.crowd_within(v6(3), 10), Some(v6(1)));
        // The newcomer is counted beyond the share while the one told to close goes.
        let extra = shares.admit_for_crowd(v6(3));
        assert_eq!(shares.crowd_within(v6(4), 10), Some(v6(1)));
        drop(extra);
        drop(held);
        assert!(shares.held.lock().unwrap().by_address.is_empty());
    }

    #[test]
    fn the_slowest_of_an_address_is_the_one_closed() {
        let open = Arc::new(Open::default());
        let timeout = Duration::from_secs(10);
        let (a, b) = (
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        );
        let oldest = Tracker::new(timeout);
        std::thread::sleep(Duration::from_millis(20));
        let of_a = Tracker::new(timeout);
        let _held = [open.register(&oldest, b), open.register(&of_a, a)];
        assert!(open.close_slowest_of(a, Duration::ZERO));
        assert!(of_a.chosen.load(Ordering::Relaxed));
        assert!(!oldest.chosen.load(Ordering::Relaxed), "another address's");
        assert!(!open.close_slowest_of(a, Duration::ZERO), "none left of a");
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 2).to_ipv6_mapped());
        assert!(
            open.close_slowest_of(mapped, Duration::ZERO),
            "b as IPv4-mapped"
        );
    }

    #[test]
    fn a_64_holds_a_quarter_of_the_slots_and_never_less_than_an_address() {
        for (most, slots, share) in [(32, 256, 64), (32, 64, 32), (4, 8, 4), (1, 1, 1)] {
            assert_eq!(network_share(most, slots), share, "{most} of {slots}");
        }
    }

    #[test]
    fn the_phases_of_a_request_give_its_deadlines() {
        let t = Tracker::new(Duration::from_secs(10));
        assert!(matches!(t.read_deadline(), Some((_, Late::Idle))));
        t.got_bytes();
        let Some((head_deadline, Late::Head)) = t.read_deadline() else {
            panic!("a head under way")
        };
        // The body's deadline counts from the same first byte.
        assert_eq!(t.serving(), head_deadline);
        assert_eq!(t.read_deadline(), None);
        t.body_read();
        // Bytes while answering belong to the next request (pipelining).
        t.got_bytes();
        assert_eq!(t.read_deadline(), None);
        t.answered();
        assert!(matches!(t.read_deadline(), Some((_, Late::Head))));
        t.serving();
        t.body_read();
        t.answered();
        assert!(matches!(t.read_deadline(), Some((_, Late::Idle))));
    }

    /// The connection that has waited longest on its client goes first: idle, head or body
    /// under way, or an answer it does not take; never one whose answer is being made, nor
    /// one younger than the bound, nor one already told.
    #[test]
    fn the_slowest_connection_is_the_one_closed() {
        let open = Arc::new(Open::default());
        let timeout = Duration::from_secs(10);
        let chosen = |t: &Tracker| t.chosen.load(Ordering::Relaxed);
        let oldest = Tracker::new(timeout);
        std::thread::sleep(Duration::from_millis(20));
        let body = Tracker::new(timeout);
        body.got_bytes();
        body.serving();
        std::thread::sleep(Duration::from_millis(20));
        let answering = Tracker::new(timeout);
        answering.got_bytes();
        answering.serving();
        answering.body_read();
        let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let held: Vec<Registered> = [&oldest, &body, &answering]
            .iter()
            .map(|t| open.register(t, peer))
            .collect();
        assert!(
            !open.close_slowest(Duration::from_secs(3600)),
            "none is that old"
        );
        assert!(open.close_slowest(Duration::ZERO));
        assert!(chosen(&oldest) && !chosen(&body));
        assert!(open.close_slowest(Duration::ZERO));
        assert!(chosen(&body));
        assert!(
            !open.close_slowest(Duration::ZERO),
            "the answer is being made"
        );
        answering.write_stalled(Some(Instant::now()));
        assert!(
            open.close_slowest(Duration::ZERO),
            "the answer is not taken"
        );
        assert!(chosen(&answering));
        drop(held);
        assert!(open.conns.lock().unwrap().by_id.is_empty());
    }

    #[test]
    fn the_canned_answers_are_whole_http() {
        for answer in [
            request_timeout(Duration::from_secs(10)),
            over_share(Over::Address(32)),
            over_share(Over::Network(64)),
        ] {
            let text = String::from_utf8(answer).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(
                head.contains(&format!("content-length: {}", body.len())),
                "{text}"
            );
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert!(v["message"].as_str().unwrap().contains("Timeout") || v["code"].is_string());
        }
    }
}
