//! The echo controller: answers every PACKET_IN with a PACKET_OUT (same buffer id, or the
//! whole frame back when unbuffered), does the minimal OpenFlow 1.3 handshake and answers
//! echo requests. It measures the probe's ceiling: no real controller can be measured
//! faster than the probe can drive this one.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::of13::{self, t};

const LISTENER: Token = Token(usize::MAX);
const RBUF: usize = 256 * 1024;

struct Conn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    xid: u32,
    alive: bool,
}

#[derive(Default)]
pub struct EchoStats {
    pub packet_ins: AtomicU64,
    pub connections: AtomicU64,
}

impl Conn {
    fn flush(&mut self) -> bool {
        while self.wpos < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return false,
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos > 1 << 20 {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        true
    }

    fn read(&mut self, stats: &EchoStats) -> bool {
        loop {
            if self.rend == self.rbuf.len() {
                if self.rstart == 0 {
                    return false;
                }
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            }
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return false,
                Ok(n) => {
                    self.rend += n;
                    if !self.parse(stats) {
                        return false;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    fn parse(&mut self, stats: &EchoStats) -> bool {
        let mut n_pi = 0;
        while self.rend - self.rstart >= 8 {
            let len = u16::from_be_bytes([self.rbuf[self.rstart + 2], self.rbuf[self.rstart + 3]])
                as usize;
            if len < 8 {
                return false;
            }
            if self.rend - self.rstart < len {
                break;
            }
            let msg = &self.rbuf[self.rstart..self.rstart + len];
            self.rstart += len;
            let xid = u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
            match msg[1] {
                t::PACKET_IN => {
                    if let Some(pi) = of13::parse_packet_in(msg) {
                        let in_port = pi.in_port.unwrap_or(of13::PORT_CONTROLLER);
                        let data: &[u8] = if pi.buffer_id == of13::NO_BUFFER {
                            pi.data
                        } else {
                            &[]
                        };
                        of13::packet_out(
                            &mut self.wbuf,
                            self.xid,
                            pi.buffer_id,
                            in_port,
                            of13::PORT_FLOOD,
                            data,
                        );
                        self.xid = self.xid.wrapping_add(1);
                        n_pi += 1;
                    }
                }
                t::ECHO_REQUEST => of13::echo_reply(&mut self.wbuf, xid, &msg[8..]),
                _ => {}
            }
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        if n_pi > 0 {
            stats.packet_ins.fetch_add(n_pi, Ordering::Relaxed);
        }
        true
    }
}

/// Serve until `stop` is set or `max_time` has passed.
pub fn serve(
    listener: std::net::TcpListener,
    stop: Arc<AtomicBool>,
    stats: Arc<EchoStats>,
    max_time: Option<Duration>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = TcpListener::from_std(listener);
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && max_time.is_none_or(|m| started.elapsed() < m) {
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_millis(50))) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for ev in events.iter() {
            if ev.token() == LISTENER {
                loop {
                    match listener.accept() {
                        Ok((mut s, _)) => {
                            let _ = s.set_nodelay(true);
                            let k = conns
                                .iter()
                                .position(|c| c.is_none())
                                .unwrap_or(conns.len());
                            if poll
                                .registry()
                                .register(&mut s, Token(k), Interest::READABLE | Interest::WRITABLE)
                                .is_err()
                            {
                                continue;
                            }
                            let mut c = Conn {
                                stream: s,
                                rbuf: vec![0; RBUF],
                                rstart: 0,
                                rend: 0,
                                wbuf: Vec::with_capacity(1 << 20),
                                wpos: 0,
                                xid: 1,
                                alive: true,
                            };
                            of13::hello(&mut c.wbuf, 1);
                            of13::simple(&mut c.wbuf, t::FEATURES_REQUEST, 2);
                            c.alive = c.flush();
                            stats.connections.fetch_add(1, Ordering::Relaxed);
                            if k == conns.len() {
                                conns.push(Some(c));
                            } else {
                                conns[k] = Some(c);
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(_) => break,
                    }
                }
                continue;
            }
            let k = ev.token().0;
            let Some(Some(c)) = conns.get_mut(k) else {
                continue;
            };
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                c.alive = c.read(&stats) && c.alive;
            }
            if c.alive && c.wpos < c.wbuf.len() {
                c.alive = c.flush();
            }
            if !c.alive {
                if let Some(mut c) = conns[k].take() {
                    let _ = poll.registry().deregister(&mut c.stream);
                }
            }
        }
    }
    Ok(())
}

/// Bind (loopback only) and serve in the calling thread.
pub fn run(listen: SocketAddr, max_time: Option<Duration>) -> std::io::Result<()> {
    let l = std::net::TcpListener::bind(listen)?;
    eprintln!(
        "sdnperf-probe echo-controller listening on {}",
        l.local_addr()?
    );
    serve(
        l,
        Arc::new(AtomicBool::new(false)),
        Arc::new(EchoStats::default()),
        max_time,
    )
}
