//! PacketIn / PacketOut: the controller header between the CPU port and P4Runtime.

use super::*;

impl Device {
    /// A packet the switch sent to the CPU port -> PacketIn (controller header parsed).
    pub fn packet_in(&self, bytes: &[u8]) -> Option<p4::PacketIn> {
        let pipe = self.pipe.as_ref()?;
        match &pipe.packet_in {
            Some(cpm) => {
                let n = cpm.bytes();
                if bytes.len() < n {
                    return None;
                }
                let mut off = 0;
                let mut md = vec![];
                for &(id, w) in &cpm.fields {
                    md.push(p4::PacketMetadata {
                        metadata_id: id,
                        value: u128_to_bytes(get_bits(bytes, off, w)),
                    });
                    off += w as usize;
                }
                Some(p4::PacketIn {
                    payload: bytes[n..].to_vec(),
                    metadata: md,
                })
            }
            None => Some(p4::PacketIn {
                payload: bytes.to_vec(),
                metadata: vec![],
            }),
        }
    }

    /// PacketOut -> the bytes to inject at the CPU port (controller header prepended).
    pub fn packet_out_bytes(&self, po: &p4::PacketOut) -> R<Vec<u8>> {
        let Some(pipe) = &self.pipe else {
            return err(
                Code::FailedPrecondition,
                "no forwarding pipeline config set",
            );
        };
        let Some(cpm) = &pipe.packet_out else {
            return Ok(po.payload.clone());
        };
        let n = cpm.bytes();
        let mut out = vec![0u8; n];
        let mut off = 0;
        for md in &po.metadata {
            if !cpm.fields.iter().any(|f| f.0 == md.metadata_id) {
                return inval(format!(
                    "packet-out: unknown metadata id {}",
                    md.metadata_id
                ));
            }
        }
        for &(id, w) in &cpm.fields {
            let v = match po.metadata.iter().find(|m| m.metadata_id == id) {
                Some(m) => bytes_to_u128(&m.value, w)
                    .map_err(|e| ia(format!("packet-out metadata {}: {}", id, e)))?,
                None => 0,
            };
            set_bits(&mut out, off, w, v);
            off += w as usize;
        }
        out.extend_from_slice(&po.payload);
        Ok(out)
    }
}
