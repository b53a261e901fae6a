//! src/meter_units.rs: the conversion between P4Runtime's meter configuration and the
//! switch's rates.

use sdnperf_p4rt::meter_units::{meter_config, meter_rates};
use sdnperf_p4rt::proto::p4::v1 as p4;

/// A Read derives P4Runtime's integers from the switch's per-microsecond rates: they
/// come back exactly as written, up to 2^51 per second.
#[test]
fn meter_configs_survive_the_switchs_units() {
    let mut values: Vec<i64> = vec![0, 1, 3, 999, 999_999, 1_000_001, 123_456_789];
    values.extend((0..=51).map(|b| 1i64 << b));
    values.extend((1..=51).map(|b| (1i64 << b) - 1));
    values.extend([10_000_000_000, 2_251_799_813_685_247, 987_654_321_987]);
    for &v in &values {
        let c = p4::MeterConfig {
            cir: v,
            cburst: v,
            pir: v - v / 4,
            pburst: v / 3,
            eburst: v / 5,
        };
        assert_eq!(meter_config(&meter_rates(&c)), c, "{}", v);
    }
}
