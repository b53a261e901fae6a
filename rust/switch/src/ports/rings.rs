//! Ring sizing shared by both back ends (its own module so that `afpacket` and `afxdp`
//! use it without using their parent `ports`, which uses them).

/// Receive ring of a port, in 2 KiB frames, for both back ends (`--rx-frames`). Ring memory
/// is resident for the switch's whole life (the kernel maps every AF_PACKET ring page at
/// mmap; the AF_XDP UMEM is populated), so it is sized by what a port needs, not
/// generously: 2048 frames = 4 MiB = ~2 ms of 64-byte line rate at 1 Mpps, or ~8 ms of
/// MTU-sized TCP at 3 Gbit/s, while the loop drains it every batch. (It was 8192 = 16 MiB
/// per port: an idle 2-port switch held 40 MB resident, twice BMv2's simple_switch.)
/// Benchmarks that want a deeper ring say so (bench/switch's 64-byte runs: 32768).
pub const RX_FRAMES_DEFAULT: usize = 2048;

/// `--rx-frames` is a power of two in this range (the AF_XDP rings require a power of two).
pub fn check_rx_frames(name: &str, rx_frames: usize) -> Result<(), String> {
    if !rx_frames.is_power_of_two() || !(64..=1 << 20).contains(&rx_frames) {
        return Err(format!(
            "{}: rx ring of {} frames (--rx-frames): expected a power of two in 64..=1048576",
            name, rx_frames
        ));
    }
    Ok(())
}
