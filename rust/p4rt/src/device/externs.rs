//! Indirect counters, meters and registers.

use super::*;
use crate::meter_units::{meter_config, meter_rates};

impl Device {
    pub(super) fn write_counter(&mut self, ty: p4::update::Type, c: &p4::CounterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("counter entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let ci = pipe.counters.get(&c.counter_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown counter id {}", c.counter_id),
        })?;
        let d = c.data.unwrap_or_default();
        let (pk, by) = (d.packet_count as u64, d.byte_count as u64);
        match &c.index {
            Some(i) => {
                if i.index < 0 || i.index as usize >= ci.size {
                    return err(
                        Code::OutOfRange,
                        format!("counter {} index {} out of range", ci.name, i.index),
                    );
                }
                sw.counter_write(ci.sw, Some(i.index as usize), pk, by)?;
            }
            None => sw.counter_write(ci.sw, None, pk, by)?,
        }
        Ok(())
    }

    pub(super) fn write_meter(&mut self, ty: p4::update::Type, m: &p4::MeterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("meter entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let mi = pipe.meters.get(&m.meter_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown meter id {}", m.meter_id),
        })?;
        let idx: Vec<usize> = match &m.index {
            Some(i) if i.index < 0 || i.index as usize >= mi.size => {
                return err(
                    Code::OutOfRange,
                    format!("meter {} index {} out of range", mi.name, i.index),
                )
            }
            Some(i) => vec![i.index as usize],
            None => (0..mi.size).collect(),
        };
        for i in idx {
            sw.set_meter(mi.sw, i, m.config.as_ref().map(meter_rates))?;
        }
        Ok(())
    }

    pub(super) fn write_register(&mut self, ty: p4::update::Type, r: &p4::RegisterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("register entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let ri = pipe.registers.get(&r.register_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown register id {}", r.register_id),
        })?;
        let v = match r.data.as_ref().and_then(|d| d.data.as_ref()) {
            Some(p4::p4_data::Data::Bitstring(b)) => bytes_to_u128(b, ri.bitwidth)
                .map_err(|e| ia(format!("register {}: {}", ri.name, e)))?,
            _ => return inval(format!("register {}: data must be a bitstring", ri.name)),
        };
        match &r.index {
            Some(i) => {
                if i.index < 0 || sw.register_write(ri.sw, i.index as usize, v).is_err() {
                    return err(
                        Code::OutOfRange,
                        format!("register {} index {} out of range", ri.name, i.index),
                    );
                }
            }
            None => sw.register_fill(ri.sw, v),
        }
        Ok(())
    }

    pub(super) fn read_counters(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::CounterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let mut ids: Vec<&u32> = pipe
            .counters
            .keys()
            .filter(|&&id| q.counter_id == 0 || q.counter_id == id)
            .collect();
        if ids.is_empty() && q.counter_id != 0 {
            return err(
                Code::NotFound,
                format!("unknown counter id {}", q.counter_id),
            );
        }
        ids.sort();
        for id in ids {
            let ci = &pipe.counters[id];
            let c = sw.counter(ci.sw);
            let range: Vec<usize> = match &q.index {
                Some(i) if i.index < 0 || i.index as usize >= ci.size => {
                    return err(Code::OutOfRange, "counter index out of range")
                }
                Some(i) => vec![i.index as usize],
                None => (0..ci.size).collect(),
            };
            for i in range {
                out.push(wrap(E::CounterEntry(p4::CounterEntry {
                    counter_id: *id,
                    index: Some(p4::Index { index: i as i64 }),
                    data: Some(p4::CounterData {
                        packet_count: c.packets[i] as i64,
                        byte_count: c.bytes[i] as i64,
                    }),
                })));
            }
        }
        Ok(())
    }

    pub(super) fn read_meters(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::MeterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let mut ids: Vec<&u32> = pipe
            .meters
            .keys()
            .filter(|&&id| q.meter_id == 0 || q.meter_id == id)
            .collect();
        if ids.is_empty() && q.meter_id != 0 {
            return err(Code::NotFound, format!("unknown meter id {}", q.meter_id));
        }
        ids.sort();
        for id in ids {
            let mi = &pipe.meters[id];
            let range: Vec<usize> = match &q.index {
                Some(i) if i.index < 0 || i.index as usize >= mi.size => {
                    return err(Code::OutOfRange, "meter index out of range")
                }
                Some(i) => vec![i.index as usize],
                None => (0..mi.size).collect(),
            };
            for i in range {
                out.push(wrap(E::MeterEntry(p4::MeterEntry {
                    meter_id: *id,
                    index: Some(p4::Index { index: i as i64 }),
                    config: sw.meter_rates(mi.sw, i).map(|r| meter_config(&r)),
                    counter_data: None,
                })));
            }
        }
        Ok(())
    }

    pub(super) fn read_registers(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::RegisterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let mut ids: Vec<&u32> = pipe
            .registers
            .keys()
            .filter(|&&id| q.register_id == 0 || q.register_id == id)
            .collect();
        if ids.is_empty() && q.register_id != 0 {
            return err(
                Code::NotFound,
                format!("unknown register id {}", q.register_id),
            );
        }
        ids.sort();
        for id in ids {
            let ri = &pipe.registers[id];
            let r = sw.register_values(ri.sw);
            let range: Vec<usize> = match &q.index {
                Some(i) if i.index < 0 || i.index as usize >= ri.size => {
                    return err(Code::OutOfRange, "register index out of range")
                }
                Some(i) => vec![i.index as usize],
                None => (0..ri.size).collect(),
            };
            for i in range {
                out.push(wrap(E::RegisterEntry(p4::RegisterEntry {
                    register_id: *id,
                    index: Some(p4::Index { index: i as i64 }),
                    data: Some(p4::P4Data {
                        data: Some(p4::p4_data::Data::Bitstring(u128_to_bytes(r[i]))),
                    }),
                })));
            }
        }
        Ok(())
    }
}
