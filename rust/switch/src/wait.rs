//! How the data-plane loop sleeps, so that an idle or lightly loaded switch costs no CPU:
//! one epoll instance over the ports, the front ends' wake fds, a stop eventfd the signal
//! handler writes, a timerfd armed for the next shaping/delay deadline (epoll's own
//! timeout has millisecond resolution and timer slack; a timerfd expires on time) and an
//! rtnetlink socket that reports vanished interfaces. Every fd is registered once, so a
//! wake-up costs what is ready, not the number of ports (poll() asked every socket of
//! every switch on every wake-up). Nothing here wakes on a period: a switch
//! with no packets, no deadline and no front-end work sleeps until something happens.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

pub static STOP: AtomicBool = AtomicBool::new(false);
/// eventfd made readable by `request_stop` (the loop polls it; -1 before it exists)
static STOP_FD: AtomicI32 = AtomicI32::new(-1);

/// Sets STOP and wakes a sleeping loop. Async-signal-safe (an atomic store and a write).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
    let fd = STOP_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

extern "C" fn on_signal(_: i32) {
    request_stop();
}

/// SIGINT/SIGTERM stop the loop (whichever thread the signal lands on: the eventfd wakes
/// the loop's poll); SIGPIPE is ignored.
pub fn install_signal_handlers() {
    stop_fd();
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

fn stop_fd() -> i32 {
    let fd = STOP_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        return fd;
    }
    let new = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    match STOP_FD.compare_exchange(-1, new, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => new,
        Err(other) => {
            unsafe { libc::close(new) };
            other
        }
    }
}

/// The timerfd setting for a deadline `ns` from now: never zero (a zero it_value
/// disarms the timer instead of firing at once).
pub fn relative_timespec(ns: u64) -> libc::timespec {
    let ns = ns.max(1);
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// epoll_wait's timeout for front-end work due `ns` from now (None: none, wait forever):
/// rounded up, so the loop never wakes just before the work is due.
pub fn poll_timeout_ms(ns: Option<u64>) -> i32 {
    match ns {
        None => -1,
        Some(ns) => ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32,
    }
}

/// What woke the loop, beyond packets (which the loop reads from the rings anyway).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Woken {
    /// an interface changed (link messages) or a port socket reported an error: check
    /// whether a port vanished
    pub check_ports: bool,
}

/// Which registered fds a wait reported: the caller serves only these (plus what it
/// already knows is pending), so a wake-up costs O(ready), not O(ports).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ready {
    /// indices into `Waiter::new`'s `port_fds` (readable, or an error was cleared)
    pub ports: Vec<usize>,
    /// indices into `Waiter::new`'s `wakes` (the eventfd was drained)
    pub wakes: Vec<usize>,
}

impl Ready {
    pub fn clear(&mut self) {
        self.ports.clear();
        self.wakes.clear();
    }
}

// epoll data of the fds the waiter handles itself; ports are 0.., wakes WAKE_BASE + i
const TOKEN_TIMER: u64 = u64::MAX;
const TOKEN_STOP: u64 = u64::MAX - 1;
const TOKEN_LINK: u64 = u64::MAX - 2;
const WAKE_BASE: u64 = 1 << 32;
/// events taken per epoll_wait (more stay ready for the next call: level-triggered)
const MAX_EVENTS: usize = 256;

/// One epoll instance over every fd the loop sleeps on, each registered once. Written on
/// `libc` (already a dependency) rather than `mio`: mio registers edge-triggered only,
/// and the loop relies on level-triggered readiness (a port left with packets after one
/// batch is reported again by the next wait, whatever the loop remembers).
pub struct Waiter {
    epfd: i32,
    timer: i32,
    /// the instant the timer is armed for (re-armed only when the next deadline changes)
    armed: Option<Instant>,
    port_fds: Vec<i32>,
    /// per port: in the epoll set (`watch`)
    watched: Vec<bool>,
    wakes: Vec<i32>,
    link: Option<i32>,
    events: Vec<libc::epoll_event>,
}

impl Waiter {
    /// `port_fds` in the caller's port order; `wakes` the front ends' eventfds (drained
    /// here; each fd once).
    pub fn new(port_fds: &[i32], wakes: &[i32]) -> Result<Waiter, String> {
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(format!(
                "epoll_create1: {}",
                std::io::Error::last_os_error()
            ));
        }
        let timer = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if timer < 0 {
            let e = format!("timerfd_create: {}", std::io::Error::last_os_error());
            unsafe { libc::close(epfd) };
            return Err(e);
        }
        let mut w = Waiter {
            epfd,
            timer,
            armed: None,
            port_fds: port_fds.to_vec(),
            watched: vec![true; port_fds.len()],
            wakes: wakes.to_vec(),
            link: link_socket(),
            events: vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS],
        };
        w.add(timer, TOKEN_TIMER)?;
        w.add(stop_fd(), TOKEN_STOP)?;
        if let Some(l) = w.link {
            w.add(l, TOKEN_LINK)?;
        }
        for (i, &fd) in port_fds.iter().enumerate() {
            w.add(fd, i as u64)
                .map_err(|e| format!("port socket {}: {}", fd, e))?;
        }
        for (i, &fd) in wakes.iter().enumerate() {
            w.add(fd, WAKE_BASE + i as u64)?;
        }
        Ok(w)
    }

    fn add(&mut self, fd: i32, token: u64) -> Result<(), String> {
        // level-triggered (no EPOLLET): readable stays reported until drained
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        let r = unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r < 0 {
            return Err(format!(
                "epoll_ctl add fd {}: {}",
                fd,
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }

    /// Puts port `i` into the epoll set or takes it out (no system call when unchanged).
    /// A registered socket's wait queue is never empty, so the kernel runs the wake-up
    /// path (wait-queue lock, ep_poll_callback) for every event of it, including the
    /// write-space wake of every transmitted packet (sock_wfree, once per skb freed): a
    /// busy loop that reads the rings anyway takes its ports out, and puts them back
    /// before it sleeps (epoll looks at a port as it is added: nothing is missed).
    /// Returns whether the port is now as asked.
    pub fn watch(&mut self, i: usize, on: bool) -> bool {
        if self.watched[i] == on {
            return true;
        }
        let fd = self.port_fds[i];
        let r = if on {
            self.add(fd, i as u64)
        } else {
            let r = unsafe {
                libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut())
            };
            if r < 0 {
                Err(std::io::Error::last_os_error().to_string())
            } else {
                Ok(())
            }
        };
        // a failure leaves the port as it was (still watched, or read every round)
        if r.is_ok() {
            self.watched[i] = on;
        }
        r.is_ok()
    }

    /// Whether port `i` is in the epoll set.
    pub fn watched(&self, i: usize) -> bool {
        self.watched[i]
    }

    /// Collects what is ready into `ready`. With `block`, sleeps until a port or fd is
    /// readable, `deadline` passes (a timerfd: poll-style timeouts have millisecond
    /// resolution and timer slack) or `tick_ns` from now (front-end periodic work);
    /// without, only looks (no timer is armed).
    pub fn wait(
        &mut self,
        block: bool,
        deadline: Option<Instant>,
        tick_ns: Option<u64>,
        ready: &mut Ready,
    ) -> Woken {
        let ms = if block {
            self.arm(deadline);
            // without link messages, vanished ports are noticed once a second (as before)
            let tick_ns = match (self.link, tick_ns) {
                (None, None) => Some(1_000_000_000),
                (_, t) => t,
            };
            poll_timeout_ms(tick_ns)
        } else {
            0
        };
        let r = unsafe {
            libc::epoll_wait(
                self.epfd,
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                ms,
            )
        };
        let mut woken = Woken::default();
        if r <= 0 {
            woken.check_ports = block && self.link.is_none();
            return woken;
        }
        for k in 0..r as usize {
            let (bits, token) = (self.events[k].events, self.events[k].u64);
            match token {
                TOKEN_TIMER => {
                    drain(self.timer);
                    self.armed = None;
                }
                TOKEN_LINK => {
                    if let Some(l) = self.link {
                        drain_socket(l);
                    }
                    woken.check_ports = true;
                }
                // the stop eventfd is left readable: STOP is set, and every data-plane
                // thread of the process (`--dataplane-threads`) must see it
                TOKEN_STOP => {}
                t if t >= WAKE_BASE => {
                    let i = (t - WAKE_BASE) as usize;
                    drain(self.wakes[i]);
                    ready.wakes.push(i);
                }
                t => {
                    let i = t as usize;
                    if bits & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                        // ENETDOWN after the link went down or away: reading SO_ERROR
                        // clears it (else every wait would report it again)
                        clear_socket_error(self.port_fds[i]);
                        woken.check_ports = true;
                    }
                    ready.ports.push(i);
                }
            }
        }
        woken
    }

    /// Arms the timer for `deadline` (or disarms it); no system call when unchanged.
    fn arm(&mut self, deadline: Option<Instant>) {
        if deadline == self.armed {
            return;
        }
        let value = match deadline {
            Some(t) => {
                relative_timespec(t.saturating_duration_since(Instant::now()).as_nanos() as u64)
            }
            None => libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        unsafe { libc::timerfd_settime(self.timer, 0, &spec, std::ptr::null_mut()) };
        self.armed = deadline;
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        unsafe {
            libc::close(self.epfd);
            libc::close(self.timer);
        }
        if let Some(l) = self.link {
            unsafe { libc::close(l) };
        }
    }
}

/// An rtnetlink socket subscribed to link changes (None if it cannot be opened).
fn link_socket() -> Option<i32> {
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return None;
    }
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    addr.nl_groups = libc::RTMGRP_LINK as u32;
    let r = unsafe {
        libc::bind(
            fd,
            &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if r < 0 {
        unsafe { libc::close(fd) };
        return None;
    }
    Some(fd)
}

fn drain(fd: i32) {
    let mut v = 0u64;
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
}

fn drain_socket(fd: i32) {
    let mut buf = [0u8; 8192];
    // bounded: a flood of link messages (a network being built) is read at most this
    // much per wake-up; the rest wakes the next poll
    for _ in 0..64 {
        let r = unsafe {
            libc::recv(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if r <= 0 {
            break;
        }
    }
}

fn clear_socket_error(fd: i32) {
    let mut err: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut err as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_splits_seconds_and_never_disarms() {
        let t = relative_timespec(0);
        assert_eq!((t.tv_sec, t.tv_nsec), (0, 1));
        let t = relative_timespec(120_000);
        assert_eq!((t.tv_sec, t.tv_nsec), (0, 120_000));
        let t = relative_timespec(2_500_000_001);
        assert_eq!((t.tv_sec, t.tv_nsec), (2, 500_000_001));
    }

    #[test]
    fn poll_timeout_rounds_up() {
        assert_eq!(poll_timeout_ms(None), -1);
        assert_eq!(poll_timeout_ms(Some(0)), 0);
        assert_eq!(poll_timeout_ms(Some(1)), 1);
        assert_eq!(poll_timeout_ms(Some(1_000_000)), 1);
        assert_eq!(poll_timeout_ms(Some(1_000_001)), 2);
        assert_eq!(poll_timeout_ms(Some(u64::MAX)), i32::MAX);
    }

    #[test]
    fn wakes_at_the_deadline_not_before() {
        let mut w = Waiter::new(&[], &[]).unwrap();
        let mut ready = Ready::default();
        for gap in [200_000u64, 2_000_000] {
            let t0 = Instant::now();
            let gap_d = std::time::Duration::from_nanos(gap);
            w.wait(true, Some(t0 + gap_d), None, &mut ready);
            let slept = t0.elapsed();
            assert!(
                slept >= gap_d,
                "woke after {:?}, deadline {:?}",
                slept,
                gap_d
            );
            // generous: a loaded shared machine delays the wake-up, never advances it
            assert!(
                slept < gap_d + std::time::Duration::from_millis(50),
                "slept {:?} for {:?}",
                slept,
                gap_d
            );
        }
        assert_eq!(ready, Ready::default());
    }

    #[test]
    fn a_stop_request_wakes_a_sleeper_with_nothing_armed() {
        let mut w = Waiter::new(&[], &[]).unwrap();
        let t = std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let fd = STOP_FD.load(Ordering::SeqCst);
            let one: u64 = 1;
            // what request_stop writes, without setting the process-wide STOP flag
            unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
        });
        let t0 = std::time::Instant::now();
        w.wait(true, None, None, &mut Ready::default());
        assert!(t0.elapsed() >= std::time::Duration::from_millis(40));
        t.join().unwrap();
        // a stop request stays readable for every loop; this one was only a test
        drain(STOP_FD.load(Ordering::SeqCst));
    }

    fn eventfd() -> i32 {
        unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) }
    }

    fn poke(fd: i32) {
        let one: u64 = 1;
        unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    #[test]
    fn only_the_ready_port_among_many_is_reported_until_it_is_drained() {
        // 64 "ports" (eventfds stand in for sockets: epoll treats them alike)
        let ports: Vec<i32> = (0..64).map(|_| eventfd()).collect();
        let wake = eventfd();
        let mut w = Waiter::new(&ports, &[wake]).unwrap();
        let mut ready = Ready::default();
        w.wait(false, None, None, &mut ready);
        assert_eq!(ready, Ready::default());
        poke(ports[63]);
        w.wait(true, None, None, &mut ready);
        assert_eq!(ready.ports, vec![63]);
        // level-triggered: not drained, so reported again (a port left with packets
        // after one batch is not forgotten)
        ready.clear();
        w.wait(false, None, None, &mut ready);
        assert_eq!(ready.ports, vec![63]);
        drain(ports[63]);
        ready.clear();
        w.wait(false, None, None, &mut ready);
        assert_eq!(ready, Ready::default());
        // a front end's wake fd is reported by index and drained by the waiter
        poke(wake);
        w.wait(true, None, None, &mut ready);
        assert_eq!((ready.ports.len(), ready.wakes.clone()), (0, vec![0]));
        ready.clear();
        w.wait(false, None, None, &mut ready);
        assert_eq!(ready, Ready::default());
        for fd in ports.into_iter().chain([wake]) {
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn an_unwatched_port_is_not_reported_and_a_rewatched_ready_one_is_at_once() {
        let ports: Vec<i32> = (0..2).map(|_| eventfd()).collect();
        let mut w = Waiter::new(&ports, &[]).unwrap();
        let mut ready = Ready::default();
        assert!(w.watch(1, false) && !w.watched(1) && w.watched(0));
        // unchanged: nothing to do, still true
        assert!(w.watch(1, false));
        poke(ports[1]);
        w.wait(false, None, None, &mut ready);
        assert_eq!(ready, Ready::default());
        // put back while readable: the next wait reports it (no wake-up is lost by a
        // loop that sleeps right after putting its ports back)
        assert!(w.watch(1, true) && w.watched(1));
        w.wait(true, None, None, &mut ready);
        assert_eq!(ready.ports, vec![1]);
        for fd in ports {
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn an_unchanged_deadline_keeps_the_timer_armed_once() {
        let mut w = Waiter::new(&[], &[]).unwrap();
        let at = Instant::now() + std::time::Duration::from_millis(20);
        w.arm(Some(at));
        let mut left = libc::itimerspec {
            it_interval: relative_timespec(1),
            it_value: relative_timespec(1),
        };
        unsafe { libc::timerfd_gettime(w.timer, &mut left) };
        let first = left.it_value.tv_nsec;
        std::thread::sleep(std::time::Duration::from_millis(5));
        // the same deadline again: not re-armed (the time left keeps running down)
        w.arm(Some(at));
        unsafe { libc::timerfd_gettime(w.timer, &mut left) };
        assert!(left.it_value.tv_nsec < first - 4_000_000, "re-armed");
        w.arm(None);
        unsafe { libc::timerfd_gettime(w.timer, &mut left) };
        assert_eq!((left.it_value.tv_sec, left.it_value.tv_nsec), (0, 0));
    }
}
