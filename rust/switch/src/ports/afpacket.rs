//! AF_PACKET port: a memory-mapped RX ring (TPACKET_V2, one status word per frame, so
//! a single packet is visible at once — TPACKET_V3's block-retire timer would add up to
//! its timeout to the latency of sparse traffic) and batched transmission with
//! `sendmmsg` (scatter-gather: vnet header, deparsed headers, payload; no copy).
//!
//! With `vnet` on (PACKET_VNET_HDR), every frame carries a `virtio_net_hdr`, so TSO/GSO
//! super-packets and partial checksums from veth peers pass through untouched (the kernel
//! segments or completes them on the way out). Without it the host must turn offloads
//! off (`ethtool -K IFACE tx off tso off gso off`) or TCP sees broken checksums.

use std::io;

const SOL_PACKET: i32 = 263;
const PACKET_ADD_MEMBERSHIP: i32 = 1;
const PACKET_RX_RING: i32 = 5;
const PACKET_STATISTICS: i32 = 6;
const PACKET_COPY_THRESH: i32 = 7;
const PACKET_VERSION: i32 = 10;
const PACKET_VNET_HDR: i32 = 15;
const PACKET_QDISC_BYPASS: i32 = 20;
const PACKET_IGNORE_OUTGOING: i32 = 23;
const PACKET_MR_PROMISC: u16 = 1;
const TPACKET_V2: i32 = 1;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_COPY: u32 = 1 << 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
pub const VNET_HDR_LEN: usize = 10;
pub const BATCH: usize = 64;

#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

#[repr(C)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

#[repr(C)]
struct PacketMreq {
    mr_ifindex: i32,
    mr_type: u16,
    mr_alen: u16,
    mr_address: [u8; 8],
}

pub struct AfPacketPort {
    pub name: String,
    pub fd: i32,
    pub vnet: bool,
    ring: *mut u8,
    ring_len: usize,
    frame_size: usize,
    frame_nr: usize,
    rx_idx: usize,
    scratch: Vec<u8>,
    // tx batch state
    tx_iov: Vec<libc::iovec>,
    tx_msgs: Vec<libc::mmsghdr>,
    tx_vnet: Vec<[u8; VNET_HDR_LEN]>,
    tx_n: usize,
    pub tx_dropped: u64,
    /// packets read through the copy path (larger than a ring frame)
    pub copied: u64,
    pub rx_count: u64,
    pub tx_count: u64,
}

unsafe impl Send for AfPacketPort {}

fn setsockopt<T>(fd: i32, level: i32, opt: i32, v: &T) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as u32,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad name"))?;
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface {}", name),
        ))
    } else {
        Ok(i as i32)
    }
}

impl AfPacketPort {
    pub fn open(name: &str, vnet: bool) -> Result<AfPacketPort, String> {
        Self::open_with(name, vnet, super::rings::RX_FRAMES_DEFAULT)
    }

    /// `rx_frames`: receive ring size in 2 KiB frames, a power of two (`--rx-frames`).
    pub fn open_with(name: &str, vnet: bool, rx_frames: usize) -> Result<AfPacketPort, String> {
        super::rings::check_rx_frames(name, rx_frames)?;
        let ctx = |what: &str, e: io::Error| format!("{}: {}: {}", name, what, e);
        let idx = ifindex(name).map_err(|e| ctx("if_nametoindex", e))?;
        let proto = (libc::ETH_P_ALL as u16).to_be() as i32;
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                proto,
            )
        };
        if fd < 0 {
            return Err(ctx("socket(AF_PACKET)", io::Error::last_os_error()));
        }
        let close_err = |e: String| {
            unsafe { libc::close(fd) };
            e
        };
        setsockopt(fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)
            .map_err(|e| close_err(ctx("PACKET_VERSION", e)))?;
        if vnet {
            setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &1i32)
                .map_err(|e| close_err(ctx("PACKET_VNET_HDR", e)))?;
        }
        let _ = setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32);
        let _ = setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32);
        let _ = setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &(8 << 20i32));
        // Frames hold one MTU-sized packet. Larger ones (TSO/GSO super-packets, up to 64 KiB)
        // do not fit: with PACKET_COPY_THRESH the kernel also queues them on the socket
        // and flags the frame TP_STATUS_COPY, and we read the whole packet with recv().
        let (frame_size, frame_nr) = (2048, rx_frames);
        let _ = setsockopt(fd, SOL_PACKET, PACKET_COPY_THRESH, &1i32);
        let _ = setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &(64 << 20i32));
        // blocks must be page multiples; frames are contiguous when block % frame == 0
        let block = if frame_size % 4096 == 0 {
            frame_size
        } else {
            65536
        };
        let per_block = block / frame_size;
        let req = TpacketReq {
            tp_block_size: block as u32,
            tp_block_nr: (frame_nr / per_block) as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: frame_nr as u32,
        };
        setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req)
            .map_err(|e| close_err(ctx("PACKET_RX_RING", e)))?;
        let ring_len = frame_size * frame_nr;
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                fd,
                0,
            )
        };
        let ring = if ring == libc::MAP_FAILED {
            // MAP_LOCKED may fail under RLIMIT_MEMLOCK; retry without it
            let r = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    ring_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if r == libc::MAP_FAILED {
                return Err(close_err(ctx("mmap ring", io::Error::last_os_error())));
            }
            r
        } else {
            ring
        };
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = idx;
        let r = unsafe {
            libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            unsafe { libc::munmap(ring, ring_len) };
            return Err(close_err(ctx("bind", io::Error::last_os_error())));
        }
        let mreq = PacketMreq {
            mr_ifindex: idx,
            mr_type: PACKET_MR_PROMISC,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        let _ = setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq);
        let mut p = AfPacketPort {
            name: name.to_string(),
            fd,
            vnet,
            ring: ring as *mut u8,
            ring_len,
            frame_size,
            frame_nr,
            rx_idx: 0,
            scratch: Vec::with_capacity(70_000),
            tx_iov: Vec::with_capacity(BATCH * 3),
            tx_msgs: Vec::with_capacity(BATCH),
            tx_vnet: vec![[0; VNET_HDR_LEN]; BATCH],
            tx_n: 0,
            tx_dropped: 0,
            copied: 0,
            rx_count: 0,
            tx_count: 0,
        };
        p.tx_iov.resize(
            BATCH * 3,
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            },
        );
        p.tx_msgs.resize(BATCH, unsafe { std::mem::zeroed() });
        // drain whatever arrived before we were ready
        Ok(p)
    }

    /// Delivers up to `max` received frames to `f(bytes, vnet_hdr)`; returns the count.
    #[inline]
    pub fn rx_burst(
        &mut self,
        max: usize,
        mut f: impl FnMut(&[u8], Option<[u8; VNET_HDR_LEN]>),
    ) -> usize {
        let mut n = 0;
        while n < max {
            let frame = unsafe { self.ring.add(self.rx_idx * self.frame_size) };
            let hdr = frame as *mut Tpacket2Hdr;
            let status = unsafe { std::ptr::read_volatile(&(*hdr).tp_status) };
            if status & TP_STATUS_USER == 0 {
                break;
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            let (mac, snap, tci, tpid) = unsafe {
                (
                    (*hdr).tp_mac as usize,
                    (*hdr).tp_snaplen as usize,
                    (*hdr).tp_vlan_tci,
                    (*hdr).tp_vlan_tpid,
                )
            };
            if status & TP_STATUS_COPY != 0 {
                // the full packet waits on the socket queue (vnet header first when enabled)
                self.scratch.resize(70_000, 0);
                let r = unsafe {
                    libc::recv(
                        self.fd,
                        self.scratch.as_mut_ptr() as *mut libc::c_void,
                        self.scratch.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                let hl = if self.vnet { VNET_HDR_LEN } else { 0 };
                if r as isize > hl as isize {
                    let r = r as usize;
                    let vnet = if self.vnet {
                        let mut v = [0u8; VNET_HDR_LEN];
                        v.copy_from_slice(&self.scratch[..VNET_HDR_LEN]);
                        Some(v)
                    } else {
                        None
                    };
                    self.copied += 1;
                    // (a VLAN tag moved into metadata is not restored on this rare path)
                    let data = std::mem::take(&mut self.scratch);
                    f(&data[hl..r], vnet);
                    self.scratch = data;
                }
            } else if mac + snap <= self.frame_size && mac >= VNET_HDR_LEN {
                let data = unsafe { std::slice::from_raw_parts(frame.add(mac), snap) };
                let vnet = if self.vnet {
                    let mut v = [0u8; VNET_HDR_LEN];
                    v.copy_from_slice(unsafe {
                        std::slice::from_raw_parts(frame.add(mac - VNET_HDR_LEN), VNET_HDR_LEN)
                    });
                    Some(v)
                } else {
                    None
                };
                if status & TP_STATUS_VLAN_VALID != 0 && data.len() >= 12 {
                    // re-insert the VLAN tag the kernel moved into metadata
                    let tpid = if status & TP_STATUS_VLAN_TPID_VALID != 0 && tpid != 0 {
                        tpid
                    } else {
                        0x8100
                    };
                    self.scratch.clear();
                    self.scratch.extend_from_slice(&data[..12]);
                    self.scratch.extend_from_slice(&tpid.to_be_bytes());
                    self.scratch.extend_from_slice(&tci.to_be_bytes());
                    self.scratch.extend_from_slice(&data[12..]);
                    let vnet = vnet.map(|mut v| {
                        adjust_vnet(&mut v, 4);
                        v
                    });
                    f(&self.scratch, vnet);
                } else {
                    f(data, vnet);
                }
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            unsafe { std::ptr::write_volatile(&mut (*hdr).tp_status, 0) };
            self.rx_idx = (self.rx_idx + 1) % self.frame_nr;
            n += 1;
            self.rx_count += 1;
        }
        n
    }

    /// Queues one packet (headers + payload, optionally truncated) for the next flush.
    /// `vnet` is the received virtio header; `delta` the change in header length made by
    /// the pipeline (offsets in the vnet header are shifted by it).
    pub fn queue(
        &mut self,
        hdrs: &[u8],
        payload: &[u8],
        trunc: Option<usize>,
        vnet: Option<[u8; VNET_HDR_LEN]>,
        delta: isize,
    ) {
        if self.tx_n == BATCH {
            self.flush();
        }
        let i = self.tx_n;
        let mut iovn = 0;
        let base = i * 3;
        if self.vnet {
            let mut v = vnet.unwrap_or([0; VNET_HDR_LEN]);
            if delta != 0 {
                adjust_vnet(&mut v, delta);
            }
            if trunc.is_some() {
                v = [0; VNET_HDR_LEN];
            }
            self.tx_vnet[i] = v;
            self.tx_iov[base] = libc::iovec {
                iov_base: self.tx_vnet[i].as_mut_ptr() as *mut libc::c_void,
                iov_len: VNET_HDR_LEN,
            };
            iovn += 1;
        }
        let total = hdrs.len() + payload.len();
        let limit = trunc.unwrap_or(total).min(total);
        let h = hdrs.len().min(limit);
        let pl = (limit - h).min(payload.len());
        self.tx_iov[base + iovn] = libc::iovec {
            iov_base: hdrs.as_ptr() as *mut libc::c_void,
            iov_len: h,
        };
        iovn += 1;
        self.tx_iov[base + iovn] = libc::iovec {
            iov_base: payload.as_ptr() as *mut libc::c_void,
            iov_len: pl,
        };
        iovn += 1;
        let m = &mut self.tx_msgs[i];
        m.msg_hdr.msg_name = std::ptr::null_mut();
        m.msg_hdr.msg_namelen = 0;
        m.msg_hdr.msg_iov = self.tx_iov[base..].as_mut_ptr();
        m.msg_hdr.msg_iovlen = iovn;
        m.msg_hdr.msg_control = std::ptr::null_mut();
        m.msg_hdr.msg_controllen = 0;
        m.msg_hdr.msg_flags = 0;
        m.msg_len = 0;
        self.tx_n += 1;
    }

    /// Sends all queued packets; never blocks (a full socket drops the rest).
    /// The buffers passed to `queue` must stay alive until this returns.
    pub fn flush(&mut self) {
        let mut off = 0;
        while off < self.tx_n {
            let r = unsafe {
                libc::sendmmsg(
                    self.fd,
                    self.tx_msgs[off..].as_mut_ptr(),
                    (self.tx_n - off) as u32,
                    libc::MSG_DONTWAIT,
                )
            };
            if r <= 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // EAGAIN/ENOBUFS: drop the rest; other errors (EMSGSIZE...): skip one packet
                if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS)) {
                    self.tx_dropped += (self.tx_n - off) as u64;
                    break;
                }
                self.tx_dropped += 1;
                off += 1;
                continue;
            }
            self.tx_count += r as u64;
            off += r as usize;
        }
        self.tx_n = 0;
    }
}

impl AfPacketPort {
    /// Kernel counters (packets seen, drops because the ring was full) since the last call.
    pub fn kernel_stats(&self) -> (u32, u32) {
        let mut st = [0u32; 2];
        let mut len = 8u32;
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                SOL_PACKET,
                PACKET_STATISTICS,
                st.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            (0, 0)
        } else {
            (st[0], st[1])
        }
    }
}

/// Shifts csum_start and hdr_len of a virtio_net_hdr by `delta` bytes.
fn adjust_vnet(v: &mut [u8; VNET_HDR_LEN], delta: isize) {
    let flags = v[0];
    let hdr_len = u16::from_le_bytes([v[2], v[3]]) as isize;
    if hdr_len != 0 {
        v[2..4].copy_from_slice(&((hdr_len + delta).max(0) as u16).to_le_bytes());
    }
    if flags & 1 != 0 {
        let cs = u16::from_le_bytes([v[6], v[7]]) as isize;
        v[6..8].copy_from_slice(&((cs + delta).max(0) as u16).to_le_bytes());
    }
}

impl Drop for AfPacketPort {
    fn drop(&mut self) {
        unsafe {
            libc::munmap(self.ring as *mut libc::c_void, self.ring_len);
            libc::close(self.fd);
        }
    }
}
