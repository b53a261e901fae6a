//! The bpf(2) system call, used without libbpf: maps, program loading, XDP attachment
//! and test runs. Shared by the AF_XDP port, the XDP generator and the XDP fast path.

use std::io;

const SYS_BPF: libc::c_long = 321;
pub const BPF_MAP_CREATE: u32 = 0;
pub const BPF_MAP_LOOKUP_ELEM: u32 = 1;
pub const BPF_MAP_UPDATE_ELEM: u32 = 2;
pub const BPF_MAP_DELETE_ELEM: u32 = 3;
pub const BPF_PROG_LOAD: u32 = 5;
pub const BPF_PROG_TEST_RUN: u32 = 10;
pub const BPF_LINK_CREATE: u32 = 28;
pub const BPF_LINK_UPDATE: u32 = 29;
pub const BPF_PROG_TYPE_XDP: u32 = 6;
pub const BPF_XDP: u32 = 37;

pub const BPF_MAP_TYPE_HASH: u32 = 1;
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
pub const BPF_MAP_TYPE_PROG_ARRAY: u32 = 3;
pub const BPF_MAP_TYPE_LPM_TRIE: u32 = 11;
pub const BPF_MAP_TYPE_DEVMAP: u32 = 14;
pub const BPF_MAP_TYPE_XSKMAP: u32 = 17;
pub const BPF_F_NO_PREALLOC: u32 = 1;

pub fn bpf(cmd: u32, attr: &mut [u8; 128]) -> io::Result<i32> {
    let r = unsafe { libc::syscall(SYS_BPF, cmd as libc::c_long, attr.as_mut_ptr(), 128usize) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i32)
    }
}

pub fn put32(a: &mut [u8; 128], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}
pub fn put64(a: &mut [u8; 128], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

pub fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    (code as u64)
        | (((src << 4 | dst) as u64) << 8)
        | (((off as u16) as u64) << 16)
        | (((imm as u32) as u64) << 32)
}

/// Attaches an XDP program to an interface through a BPF link and returns the link fd:
/// the program stays attached until that fd is closed (or the process exits).
pub fn attach_xdp(prog_fd: i32, ifindex: u32) -> io::Result<i32> {
    let mut a = [0u8; 128];
    put32(&mut a, 0, prog_fd as u32);
    put32(&mut a, 4, ifindex);
    put32(&mut a, 8, BPF_XDP);
    bpf(BPF_LINK_CREATE, &mut a)
}

/// A file descriptor closed on drop (maps, programs, links).
#[derive(Debug)]
pub struct Fd(pub i32);
impl Fd {
    /// Gives up ownership: the caller closes the descriptor.
    pub fn into_raw(self) -> i32 {
        let fd = self.0;
        std::mem::forget(self);
        fd
    }
}
impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            unsafe { libc::close(self.0) };
        }
    }
}

pub fn map_create(
    map_type: u32,
    key: u32,
    value: u32,
    max_entries: u32,
    flags: u32,
) -> io::Result<Fd> {
    let mut a = [0u8; 128];
    put32(&mut a, 0, map_type);
    put32(&mut a, 4, key);
    put32(&mut a, 8, value);
    put32(&mut a, 12, max_entries);
    put32(&mut a, 16, flags);
    bpf(BPF_MAP_CREATE, &mut a).map(Fd)
}

fn elem_attr(map: &Fd, key: &[u8], value: u64, flags: u64) -> [u8; 128] {
    let mut a = [0u8; 128];
    put32(&mut a, 0, map.0 as u32);
    put64(&mut a, 8, key.as_ptr() as u64);
    put64(&mut a, 16, value);
    put64(&mut a, 24, flags);
    a
}

pub fn map_update(map: &Fd, key: &[u8], value: &[u8]) -> io::Result<()> {
    let mut a = elem_attr(map, key, value.as_ptr() as u64, 0);
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
}

pub fn map_delete(map: &Fd, key: &[u8]) -> io::Result<()> {
    let mut a = elem_attr(map, key, 0, 0);
    bpf(BPF_MAP_DELETE_ELEM, &mut a).map(|_| ())
}

/// Reads an element into `value` (for per-CPU maps: one value per possible CPU, each
/// rounded up to 8 bytes). Ok(false) when the key is absent.
pub fn map_lookup(map: &Fd, key: &[u8], value: &mut [u8]) -> io::Result<bool> {
    let mut a = elem_attr(map, key, value.as_mut_ptr() as u64, 0);
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut a) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Loads an XDP program; on failure the error carries the verifier's log (its tail).
/// `expected_attach` = BPF_XDP for links; kernels before 5.9 want 0 (see `load_xdp_any`).
/// The verifier is asked for its log only after a refusal, to explain it: writing the
/// log (every instruction's state on every path) took most of a load's time (a study's
/// network loads one fast-path program per port: ~75 ms each with the log).
pub fn load_xdp(prog: &[u64], expected_attach: u32) -> Result<Fd, String> {
    prog_load(prog, expected_attach, &mut [])
        .or_else(|_| prog_load(prog, expected_attach, &mut vec![0u8; 1 << 20]))
}

/// One BPF_PROG_LOAD of an XDP program, the verifier's log written to `log` unless empty.
fn prog_load(prog: &[u64], expected_attach: u32, log: &mut [u8]) -> Result<Fd, String> {
    let license = b"GPL\0";
    let mut a = [0u8; 128];
    put32(&mut a, 0, BPF_PROG_TYPE_XDP);
    put32(&mut a, 4, prog.len() as u32);
    put64(&mut a, 8, prog.as_ptr() as u64);
    put64(&mut a, 16, license.as_ptr() as u64);
    if !log.is_empty() {
        put32(&mut a, 24, 1);
        put32(&mut a, 28, log.len() as u32);
        put64(&mut a, 32, log.as_mut_ptr() as u64);
    }
    put32(&mut a, 68, expected_attach);
    bpf(BPF_PROG_LOAD, &mut a).map(Fd).map_err(|e| {
        let l = String::from_utf8_lossy(log);
        let l = l.trim_end_matches('\0').trim();
        let tail: Vec<&str> = l.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "BPF_PROG_LOAD: {} ({} instructions); verifier: {}",
            e,
            prog.len(),
            tail.join("\n")
        )
    })
}

/// Loads an XDP program for attachment through a link: with expected attach type
/// BPF_XDP, or without one where the kernel does not know that field yet.
pub fn load_xdp_any(prog: &[u64]) -> Result<Fd, String> {
    load_xdp(prog, BPF_XDP).or_else(|_| load_xdp(prog, 0))
}

/// Runs an XDP program once on `data` (BPF_PROG_TEST_RUN, no live frames: a redirect
/// is only returned, not performed). Returns (XDP action, packet after the program).
pub fn test_run_xdp(prog: &Fd, data: &[u8]) -> io::Result<(u32, Vec<u8>)> {
    let mut out = vec![0u8; data.len() + 256];
    let mut a = [0u8; 128];
    put32(&mut a, 0, prog.0 as u32);
    put32(&mut a, 8, data.len() as u32);
    put32(&mut a, 12, out.len() as u32);
    put64(&mut a, 16, data.as_ptr() as u64);
    put64(&mut a, 24, out.as_mut_ptr() as u64);
    put32(&mut a, 32, 1);
    bpf(BPF_PROG_TEST_RUN, &mut a)?;
    let retval = u32::from_ne_bytes(a[4..8].try_into().unwrap());
    let size_out = u32::from_ne_bytes(a[12..16].try_into().unwrap()) as usize;
    out.truncate(size_out);
    Ok((retval, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_program_is_explained_by_the_verifier_log() {
        // loaded without a log; a refusal is loaded again with one, to say why
        let no_exit = [insn(0xb7, 0, 0, 0, 0)]; // r0 = 0, and no exit
        let err = match load_xdp(&no_exit, BPF_XDP) {
            Ok(_) => panic!("the verifier accepted a program without an exit"),
            Err(e) => e,
        };
        assert!(err.contains("verifier:") && err.contains("exit"), "{}", err);
        let pass = [insn(0xb7, 0, 0, 0, 2), insn(0x95, 0, 0, 0, 0)]; // return XDP_PASS
        assert!(load_xdp(&pass, BPF_XDP).is_ok());
    }
}
