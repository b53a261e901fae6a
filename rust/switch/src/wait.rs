//! How the data-plane loop sleeps, so that an idle or lightly loaded switch costs no CPU:
//! one poll() over the ports, the front end's wake fd, a stop eventfd the signal handler
//! writes, a timerfd armed for the next shaping/delay deadline (poll's own timeout has
//! millisecond resolution and timer slack; a timerfd expires on time) and an rtnetlink
//! socket that reports vanished interfaces. Nothing here wakes on a period: a switch
//! with no packets, no deadline and no front-end work sleeps until something happens.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

/// poll()'s timeout for front-end work due `ns` from now (None: none, wait forever):
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

pub struct Waiter {
    pollfds: Vec<libc::pollfd>,
    ports: usize,
    timer: i32,
    /// engine-clock deadline the timer is armed for
    armed: Option<u64>,
    /// the front ends' eventfds (one per switch the loop serves)
    wakes: Vec<i32>,
    link: Option<i32>,
}

impl Waiter {
    /// `port_fds` in port order; `wakes` the front ends' eventfds (drained here).
    pub fn new(port_fds: &[i32], wakes: &[i32]) -> Result<Waiter, String> {
        let timer = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if timer < 0 {
            return Err(format!(
                "timerfd_create: {}",
                std::io::Error::last_os_error()
            ));
        }
        let link = link_socket();
        let stop = stop_fd();
        let mut fds: Vec<i32> = port_fds.to_vec();
        fds.push(timer);
        fds.push(stop);
        fds.extend_from_slice(wakes);
        fds.extend(link);
        let pollfds = fds
            .into_iter()
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        Ok(Waiter {
            pollfds,
            ports: port_fds.len(),
            timer,
            armed: None,
            wakes: wakes.to_vec(),
            link,
        })
    }

    /// Sleeps until a port or fd is readable, `deadline` (engine clock, `now` = the
    /// engine's time now) passes, or `tick_ns` from now (front-end periodic work).
    pub fn sleep(&mut self, now: u64, deadline: Option<u64>, tick_ns: Option<u64>) -> Woken {
        self.arm(now, deadline);
        // without link messages, vanished ports are noticed once a second (as before)
        let tick_ns = match (self.link, tick_ns) {
            (None, None) => Some(1_000_000_000),
            (_, t) => t,
        };
        let ms = poll_timeout_ms(tick_ns);
        let r = unsafe {
            libc::poll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                ms,
            )
        };
        let mut woken = Woken::default();
        if r <= 0 {
            woken.check_ports = self.link.is_none();
            return woken;
        }
        for i in 0..self.pollfds.len() {
            let p = self.pollfds[i];
            if p.revents == 0 {
                continue;
            }
            if i < self.ports {
                if p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                    // ENETDOWN after the link went down or away: reading SO_ERROR clears
                    // it (else poll would report it forever)
                    clear_socket_error(p.fd);
                    woken.check_ports = true;
                }
            } else if p.fd == self.timer {
                drain(p.fd);
                self.armed = None;
            } else if Some(p.fd) == self.link {
                drain_socket(p.fd);
                woken.check_ports = true;
            } else if self.wakes.contains(&p.fd) {
                drain(p.fd);
            }
            // the stop eventfd is left readable: STOP is set, and every data-plane thread
            // of the process (`--dataplane-threads`) must see it, not only the first
        }
        woken
    }

    /// Arms the timer for `deadline` (or disarms it); no system call when unchanged.
    fn arm(&mut self, now: u64, deadline: Option<u64>) {
        if deadline == self.armed {
            return;
        }
        let value = match deadline {
            Some(t) => relative_timespec(t.saturating_sub(now)),
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
        unsafe { libc::close(self.timer) };
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

    fn engine_clock() -> u64 {
        static T0: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        T0.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    }

    #[test]
    fn wakes_at_the_deadline_not_before() {
        let mut w = Waiter::new(&[], &[]).unwrap();
        for gap in [200_000u64, 2_000_000] {
            let now = engine_clock();
            w.sleep(now, Some(now + gap), None);
            let slept = engine_clock() - now;
            assert!(slept >= gap, "woke after {} ns, deadline {} ns", slept, gap);
            // generous: a loaded shared machine delays the wake-up, never advances it
            assert!(
                slept < gap + 50_000_000,
                "slept {} ns for {} ns",
                slept,
                gap
            );
        }
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
        w.sleep(engine_clock(), None, None);
        assert!(t0.elapsed() >= std::time::Duration::from_millis(40));
        t.join().unwrap();
        // a stop request stays readable for every loop; this one was only a test
        drain(STOP_FD.load(Ordering::SeqCst));
    }
}
