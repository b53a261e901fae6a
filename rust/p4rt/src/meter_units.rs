//! P4Runtime's meter configuration (integers per second) against the switch's meter
//! rates (per microsecond): the one conversion both directions use, so a Read shows what
//! the switch runs whichever front end configured it.

use crate::proto::p4::v1 as p4;
use sdnperf_switch::control::MeterRates;

/// P4Runtime's rates are per second; the switch's per microsecond.
pub fn meter_rates(m: &p4::MeterConfig) -> MeterRates {
    MeterRates {
        cir: m.cir as f64 / 1e6,
        cbs: m.cburst as f64,
        pir: m.pir as f64 / 1e6,
        pbs: m.pburst as f64,
        ebs: m.eburst as f64,
    }
}

/// The switch's meter configuration as P4Runtime writes it (the inverse of `meter_rates`):
/// what a Read shows, whichever front end configured the meter. Rounding gives back the
/// integers written exactly up to 2^51 per second (and 2^53 units of burst); beyond that
/// a Read shows the nearest value the switch's meter runs with.
pub fn meter_config(r: &MeterRates) -> p4::MeterConfig {
    p4::MeterConfig {
        cir: (r.cir * 1e6).round() as i64,
        cburst: r.cbs.round() as i64,
        pir: (r.pir * 1e6).round() as i64,
        pburst: r.pbs.round() as i64,
        eburst: r.ebs.round() as i64,
    }
}
