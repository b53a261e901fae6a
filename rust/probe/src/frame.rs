//! The frame every packet-in carries, whatever the protocol: Ethernet / IPv4 / TCP SYN
//! with a unique id in its payload, and the emulated hosts' MAC addresses.

/// Ethernet + IPv4 + TCP SYN + 12-byte payload ("SDNP" magic + 64-bit id); 4 bytes more
/// with an 802.1Q tag.
pub const FRAME_LEN: usize = 14 + 20 + 20 + 12;
pub const MAGIC: [u8; 4] = *b"SDNP";

/// The emulated host MAC: 02:SS:SS:HH:HH:HH (switch index, host index).
#[inline]
pub fn host_mac(switch: u32, host: u32) -> [u8; 6] {
    let s = (switch as u16).to_be_bytes();
    let h = host.to_be_bytes();
    [0x02, s[0], s[1], h[1], h[2], h[3]]
}

/// (switch, host) of one of our host MACs.
#[inline]
pub fn decode_host_mac(m: &[u8]) -> Option<(u32, u32)> {
    if m.len() < 6 || m[0] != 0x02 {
        return None;
    }
    Some((
        u16::from_be_bytes([m[1], m[2]]) as u32,
        u32::from_be_bytes([0, m[3], m[4], m[5]]),
    ))
}

/// Length of the L2 header: 14, or 18 with a VLAN tag.
#[inline]
fn l2_len(f: &[u8]) -> usize {
    if f.len() >= 14 && f[12..14] == [0x81, 0x00] {
        18
    } else {
        14
    }
}

/// Write a TCP SYN frame template (ids and MACs patched later by `patch_frame`),
/// 802.1Q-tagged when `vlan` is given.
pub fn frame_template(out: &mut Vec<u8>, vlan: Option<u16>) {
    out.extend_from_slice(&[0; 12]); // dst, src MAC
    if let Some(vid) = vlan {
        out.extend_from_slice(&0x8100u16.to_be_bytes());
        out.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    }
    out.extend_from_slice(&0x0800u16.to_be_bytes());
    // IPv4: v4, ihl 5, tos 0, total len, id, flags DF, ttl 64, proto TCP
    let ip_len = (20 + 20 + 12) as u16;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    out.extend_from_slice(&ip);
    let mut tcp = [0u8; 20];
    tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = 0x02; // SYN
    tcp[14..16].copy_from_slice(&65535u16.to_be_bytes());
    out.extend_from_slice(&tcp);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[0; 8]);
}

/// Patch MACs, addresses, id and the IPv4 checksum of a frame made by `frame_template`.
#[inline]
pub fn patch_frame(f: &mut [u8], dst: [u8; 6], src: [u8; 6], id: u64) {
    let l2 = l2_len(f);
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    let ip = l2;
    // IPs 10.S.H.H from the MACs, so an L3 controller sees distinct hosts too.
    f[ip + 12..ip + 16].copy_from_slice(&[10, src[2], src[4], src[5]]);
    f[ip + 16..ip + 20].copy_from_slice(&[10, dst[2], dst[4], dst[5]]);
    f[ip + 4..ip + 6].copy_from_slice(&(id as u16).to_be_bytes());
    f[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let c = ipv4_checksum(&f[ip..ip + 20]);
    f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    f[ip + 24..ip + 28].copy_from_slice(&(id as u32).to_be_bytes()); // TCP seq
    let id_off = ip + 20 + 20 + 4;
    f[id_off..id_off + 8].copy_from_slice(&id.to_be_bytes());
}

pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The 64-bit id embedded in one of our frames (tagged or not).
#[inline]
pub fn frame_id(f: &[u8]) -> Option<u64> {
    let l2 = l2_len(f);
    let id_off = l2 + 20 + 20 + 4;
    if f.len() < id_off + 8 || f[l2 - 2..l2] != [0x08, 0x00] || f[id_off - 4..id_off] != MAGIC {
        return None;
    }
    Some(u64::from_be_bytes(f[id_off..id_off + 8].try_into().ok()?))
}
