//! `--pcap DIR`: per-port capture files of the packets each port received and sent, named
//! as BMv2's simple_switch names them: `<iface>_in.pcap` and `<iface>_out.pcap` (Ethernet
//! link type, microsecond stamps; format written by the `pcap-file` crate). The data-plane
//! loop touches this only when it is enabled; files are flushed after every batch, so a
//! reader sees the packets while the switch runs.

use pcap_file::pcap::{PcapPacket, PcapWriter};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A buffered file the pcap writer writes into and we flush after a batch (the writer
/// itself has no flush).
#[derive(Clone)]
struct Buffered(Rc<RefCell<BufWriter<File>>>);

impl Write for Buffered {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

type Writer = (PcapWriter<Buffered>, Buffered);

/// One received and one sent file per port, indexed like the loop's ports.
pub struct PcapDump {
    ports: Vec<(Writer, Writer)>,
    dirty: bool,
}

impl PcapDump {
    /// Creates (truncates) `DIR/<iface>_in.pcap` and `DIR/<iface>_out.pcap` per interface.
    pub fn open(dir: &Path, ifaces: &[&str]) -> Result<PcapDump, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("--pcap {}: {}", dir.display(), e))?;
        let open = |name: String| -> Result<Writer, String> {
            let path = dir.join(name);
            let f = File::create(&path).map_err(|e| format!("{}: {}", path.display(), e))?;
            let file = Buffered(Rc::new(RefCell::new(BufWriter::new(f))));
            let w =
                PcapWriter::new(file.clone()).map_err(|e| format!("{}: {}", path.display(), e))?;
            Ok((w, file))
        };
        let ports = ifaces
            .iter()
            .map(|i| {
                Ok((
                    open(format!("{}_in.pcap", i))?,
                    open(format!("{}_out.pcap", i))?,
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok(PcapDump {
            ports,
            dirty: false,
        })
    }

    /// A packet port `i` received.
    pub fn received(&mut self, i: usize, data: &[u8]) {
        Self::write(&mut self.ports[i].0, data);
        self.dirty = true;
    }

    /// A packet port `i` sent.
    pub fn sent(&mut self, i: usize, data: &[u8]) {
        Self::write(&mut self.ports[i].1, data);
        self.dirty = true;
    }

    fn write(w: &mut Writer, data: &[u8]) {
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        // a full disk loses captures, never packets
        let _ =
            w.0.write_packet(&PcapPacket::new(ts, data.len() as u32, data));
    }

    /// Writes what the last batch captured to the files.
    pub fn flush(&mut self) {
        if !std::mem::take(&mut self.dirty) {
            return;
        }
        for (i, o) in &mut self.ports {
            let _ = i.1.flush();
            let _ = o.1.flush();
        }
    }
}
