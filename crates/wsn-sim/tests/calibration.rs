//! Calibration of the lower layers against the numbers of the radio/MAC/routing spec (§8).

mod common;
use common::*;

/// Single-hop saturation throughput, unicast with ACK, clean channel (spec §8.3): each preset
/// within 15 % of the table. Payload L = 28 bytes of TinyOS data (14 collection, 6 best-effort
/// and 8 application bytes); the 1.x column of the table is the raw stack, without the SPI/RX
/// processing costs the `tinyos1_tenet` preset adds, so those are switched off here.
#[test]
fn single_hop_saturation_matches_spec_table() {
    // (preset, overrides, packets/s from §8.3 for L = 28)
    let cases: [(&str, &[&str], f64); 3] = [
        ("tinyos2", &[], 133.0),
        ("tossim", &[], 137.0),
        (
            "tinyos1_tenet",
            &["mac.txfifo_load_base_ns=0", "mac.txfifo_load_per_byte_ns=0", "mac.rx_process_ns=0"],
            210.0,
        ),
    ];
    for (preset, extra, expect) in cases {
        let r = one_hop(preset, 8, extra);
        let got = r.summary.flows[0].goodput_pps;
        let err = (got - expect).abs() / expect;
        eprintln!("{preset}: {got:.1} pkt/s (spec {expect})");
        assert!(err <= 0.15, "{preset}: {got:.1} pkt/s vs spec {expect} (error {:.0} %)", err * 100.0);
    }
}

/// The `cc1000` preset over one clean hop, saturated: each frame costs the mean initial backoff
/// (16.5 byte times), the turnaround, its air time (18 + 28 bytes) and the stock stack's ACK
/// handshake (the ACK word heard 14 byte times after the frame, `CC1000SendReceiveP.nc`), about
/// 32.1 ms, i.e. 31.1 pkt/s (spec-gbn §15 estimates ≈ 29.8 ms for an 18-byte payload with
/// "roughly 20 byte times" of handshake; with 6 byte times, as before session 14, it was 34.7).
#[test]
fn single_hop_cc1000_waits_for_the_stock_ack() {
    let byte_ms = 8.0 / 19.2;
    let frame_ms = (1.0 + 32.0) / 2.0 * byte_ms + 0.25 + (18.0 + 28.0) * byte_ms + 14.0 * byte_ms;
    let expect = 1000.0 / frame_ms;
    let got = one_hop("cc1000", 8, &[]).summary.flows[0].goodput_pps;
    eprintln!("cc1000 one hop, L = 28: {got:.1} pkt/s (expected {expect:.1})");
    assert!((got / expect - 1.0).abs() <= 0.05, "{got:.1} pkt/s vs {expect:.1}");
}

/// The `tinyos2` preset over one clean hop, saturated, against its own constants (a tighter
/// check than the spec table's 15 %): each frame costs the mean initial backoff, the 7-jiffy
/// guard before the second CCA, the 192-µs turnaround, its air time and the software ACK's
/// 0.75 ms, about 7.71 ms, i.e. 129.7 pkt/s. The spec table's 133 assumes a hardware ACK's
/// 0.544 ms, hence its 3 % gap.
#[test]
fn single_hop_tinyos2_adds_up_its_constants() {
    let mac = wsn_sim::mac::MacConfig::tinyos2();
    let frame_ns = mac.initial_backoff.mean().as_nanos()
        + mac.cca_guard_ns
        + mac.turnaround_ns
        + mac.airtime(28).as_nanos()
        + mac.ack_latency_ns;
    let expect = 1e9 / frame_ns as f64;
    let got = one_hop("tinyos2", 8, &[]).summary.flows[0].goodput_pps;
    eprintln!("tinyos2 one hop, L = 28: {got:.1} pkt/s (expected {expect:.1})");
    assert!((got / expect - 1.0).abs() <= 0.02, "{got:.1} pkt/s vs {expect:.1}");
}

/// A single source one hop from the sink, best effort, 64-byte application payload, the
/// RCRT-era preset as shipped (with its SPI-load and RX-processing costs), saturated, against
/// its own constants: each frame costs the mean initial backoff (8.5 × 10 jiffies), the TXFIFO
/// load of its L = 84 bytes (14 collection, 6 best-effort, 64 application; 0.5 ms + 8 µs per
/// byte of the 101 on the air), the 192-µs turnaround, its air time and the hardware ACK's
/// 0.544 ms, about 7.87 ms, i.e. 127.1 pkt/s. The receiver's 1.5-ms RX processing adds
/// nothing: it ends before the next frame can start. Over 20 seeds the ~6,350 frames of a run
/// gave 127.01 ± 0.37 pkt/s (0.29 %, against 0.22 % from the backoff's 1.4-ms spread alone),
/// so 1.5 % is five of those; a TXFIFO load charged twice costs 14 %. The issue's acceptance
/// band, 70–130 pkt/s ("testbed: 95"), is checked as well; the testbed's 95 is only reported
/// (its harness capped a source at 102.4 pkt/s: docs/simulator.md).
#[test]
fn single_hop_tinyos1_tenet_adds_up_its_constants() {
    let mac = wsn_sim::mac::MacConfig::tinyos1_tenet();
    let l = wsn_wire::collection::HEADER_LEN + wsn_wire::besteffort::HEADER_LEN + 64;
    assert_eq!(l, 84);
    let b = &mac.initial_backoff;
    // From the end of one frame to the start of the next, at the least: its ACK, the shortest
    // backoff, the load and the turnaround; the receiver is busy for `rx_process_ns` after it.
    let min_gap_ns =
        mac.ack_latency_ns + b.min_units as u64 * b.unit_ns + mac.txfifo_load(l).as_nanos() + mac.turnaround_ns;
    assert!(mac.rx_process_ns < min_gap_ns, "RX processing {} ns vs gap {min_gap_ns} ns", mac.rx_process_ns);
    let frame_ns = b.mean().as_nanos()
        + mac.txfifo_load(l).as_nanos()
        + mac.turnaround_ns
        + mac.airtime(l).as_nanos()
        + mac.ack_latency_ns;
    let expect = 1e9 / frame_ns as f64;
    let r = one_hop("tinyos1_tenet", 64, &[]);
    let (got, n) = (r.summary.flows[0].goodput_pps, r.summary.flows[0].delivered);
    eprintln!("tinyos1_tenet one hop, 64 B: {got:.2} pkt/s over {n} packets (expected {expect:.2}; testbed 95)");
    assert!((got / expect - 1.0).abs() <= 0.015, "{got:.1} pkt/s vs {expect:.1}");
    assert!((70.0..=130.0).contains(&got), "{got:.1} pkt/s outside the issue's band");
}

/// TOSSIM's TestSimComm regression (spec §8.4): hidden terminals, ACK asymmetry, unequal
/// powers; the ACKed fractions over 20,000 periods within the spec's ±0.02 of TOSSIM's README.
#[test]
fn tossim_hidden_terminal_regression() {
    let cases = [("equal", 0.519, 0.522), ("asym", 0.121, 0.122), ("unequal", 0.681, 0.518)];
    for (case, a, b) in cases {
        let gains = format!("topology.gains_file=gains-{case}.txt");
        let r = go(&load("tossim/testsimcomm.toml", &[&gains, "duration_s=2570"]));
        let frac = |i: usize| {
            let s = r.network.node_stats(i);
            s.acked as f64 / s.data_tx as f64
        };
        let (f1, f3) = (frac(1), frac(2));
        eprintln!("{case}: {f1:.3} / {f3:.3} (TOSSIM {a} / {b})");
        assert!((f1 - a).abs() <= 0.02 && (f3 - b).abs() <= 0.02, "{case}: {f1:.3}/{f3:.3} vs {a}/{b}");
    }
}

/// One link at about −1 dB SNR under the `ieee802154` preset, no retries, no contention: the
/// share of attempts that end acknowledged follows each reception model's arithmetic. `ns3`
/// charges the noise once over the whole PPDU (57-byte data frame, 11-byte ACK); `tossim` draws
/// a full-frame coin at the first and at the last bit (51 bytes after the PHY header) and a
/// 5-byte ACK coin. The two differ by about 0.2 here; this is one of the two changes (with the
/// CCA that reads busy while receiving) that took lrwpan40's delivery from 0.956 to ns-3's 0.99.
#[test]
fn reception_models_charge_noise_as_documented() {
    use wsn_sim::radio::dbm_to_mw;
    use wsn_sim::radio::prr::{oqpsk_ber, prr_oqpsk};
    let text = one_link(7.33, "ieee802154", "prr_curve = \"ieee802154\"");
    let rx_dbm = -27.0 - 55.0 - 30.0 * 7.33f64.log10();
    let snr_db = rx_dbm + 107.0;
    let snr = dbm_to_mw(rx_dbm) / dbm_to_mw(-107.0);
    let ok = |bits: i32| (1.0 - oqpsk_ber(snr)).powi(bits);
    // 20 B payload + 14 collection + 6 best-effort header + 17 B of PHY/MAC overhead = 57 B.
    let expect_ns3 = ok(8 * 57) * ok(8 * 11);
    let expect_tossim = prr_oqpsk(snr_db, 51).powi(2) * prr_oqpsk(snr_db, 5);
    for (model, expect) in [("ns3", expect_ns3), ("tossim", expect_tossim)] {
        let r = go(&scenario(&text, &[&format!("radio.reception=\"{model}\"")]));
        acked_share_is(&r, expect, model);
    }
    assert!(expect_ns3 - expect_tossim > 0.15, "{expect_ns3} vs {expect_tossim}");
}

/// Two nodes `spacing_m` apart at −27 dBm over a constant −107 dBm floor, no shadowing and no
/// hardware variance, preset `preset` without retries, node 1 sending 5 pkt/s of 20-byte
/// payloads to node 0 from 20 s to 620 s; `radio` adds keys to the `[radio]` table.
fn one_link(spacing_m: f64, preset: &str, radio: &str) -> String {
    format!(
        r#"
name = "one-link"
duration_s = 620.0
[topology]
layout = {{ kind = "chain", nodes = 2, spacing_m = {spacing_m:?} }}
[radio]
noise_offsets = false
false_ack_prob = 0.0
{radio}
[radio.link]
tx_power_dbm = -27.0
path_loss_exponent = 3.0
shadowing_sigma_db = 0.0
pl_d0_db = 55.0
d0_m = 1.0
noise_floor_dbm = -107.0
s11 = 0.0
s12 = 0.0
s22 = 0.0
[radio.noise]
model = "constant"
floor_dbm = -107.0
[mac]
preset = "{preset}"
max_retries = 0
[routing]
kind = "static"
tree_file = "tossim/tree2.csv"
mhlqi = {{ beacon_period_binary_ms = 100000000 }}
[[flows]]
sources = [1]
rate_pps = 5.0
start_s = 20.0
payload_bytes = 20
[output]
plots = false
"#
    )
}

/// Node 1's share of attempts acknowledged is `expect` within 4 standard deviations, over at
/// least 2,900 attempts.
#[track_caller]
fn acked_share_is(r: &wsn_sim::runner::RunResult, expect: f64, what: &str) {
    let s = r.network.node_stats(1);
    let got = s.acked as f64 / s.data_tx as f64;
    let sd = (expect * (1.0 - expect) / s.data_tx as f64).sqrt();
    eprintln!("{what}: {got:.3} acked per attempt over {} attempts (expected {expect:.3} ± {sd:.3})", s.data_tx);
    assert!(s.data_tx >= 2900, "{what}: {} attempts", s.data_tx);
    assert!((got - expect).abs() <= 4.0 * sd, "{what}: {got:.3} vs {expect:.3}");
}

/// The CC2420 curve over one link at about 5 dB SNR, constant noise, no retries (spec §8.1,
/// §4.2): a frame passes the start-of-frame and the end-of-frame coin, and its ACK one more on
/// the reverse link, so the share of attempts acknowledged is PRR(SNR)³. (Spec §8.1's "50 % at
/// N + 4.6 dB" is the curve's own point; a frame's two coins put its 50 % at 4.87 dB, and with
/// its ACK at 5.01 dB.)
#[test]
fn cc2420_link_passes_two_coins_and_an_ack() {
    use wsn_sim::radio::prr::prr;
    let snr_db = -27.0 - 55.0 - 30.0 * 4.64f64.log10() + 107.0;
    let expect = prr(snr_db).powi(3);
    assert!((0.3..0.7).contains(&expect), "the link sits in the transition: {expect}");
    let r = go(&scenario(&one_link(4.64, "tinyos2", ""), &[]));
    acked_share_is(&r, expect, &format!("cc2420 at {snr_db:.2} dB"));
}

/// `reception = "ns3"` charges errors with ns-3's O-QPSK model, so it needs that curve.
#[test]
fn ns3_reception_needs_the_oqpsk_curve() {
    let err = wsn_sim::scenario::Scenario::load("office40", &["radio.reception=\"ns3\"".to_string()]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("radio.reception") && msg.contains("ieee802154"), "{msg}");
}

/// TOSSIM's sendDone comes 11 symbols after the frame's extended end (data plus the 34-symbol
/// ACK allowance), acknowledged or not (spec §5.9): for TestSimComm's 28-byte frames,
/// 2·(28 + 13) + 12 + 34 + 11 = 139 symbols after the transmission starts. (A review found 128
/// symbols for acknowledged frames and 173 for the others.)
#[test]
fn tossim_send_done_is_eleven_symbols_after_the_extended_frame() {
    let sc =
        load("tossim/testsimcomm.toml", &["topology.gains_file=gains-equal.txt", "duration_s=20", "output.trace=true"]);
    let (_, trace) = go_traced(&sc, "tossim-senddone");
    let sym = 1e9 / 65_536.0;
    let mut tx_at = std::collections::HashMap::new();
    let (mut acked, mut unacked) = (0, 0);
    for line in trace.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let t: f64 = f[0].parse().unwrap();
        match f[1] {
            "tx" => {
                tx_at.insert(f[2].to_string(), t);
            }
            "send_done" => {
                let gap = (t - tx_at[f[2]]) / sym;
                assert!((gap - 139.0).abs() < 0.5, "node {}: sendDone {gap:.1} symbols after tx: {line}", f[2]);
                if f[4] == "1" {
                    acked += 1;
                } else {
                    unacked += 1;
                }
            }
            _ => {}
        }
    }
    assert!(acked > 50 && unacked > 50, "both outcomes checked: {acked} acked, {unacked} not");
}

/// Under `tossim` a broadcast (a beacon) ends with its sendDone after the 11-symbol delay and is
/// never retransmitted, whatever `max_retries` says (a review found each beacon sent 1 +
/// max_retries times).
#[test]
fn tossim_broadcasts_are_not_retransmitted() {
    let beacons = |retries: &str| {
        let sc = load("office40", &["mac.preset=\"tossim\"", retries, "duration_s=300", "flows.0.rate_pps=0.2"]);
        go(&sc).summary.totals.beacon_frames
    };
    let (none, three) = (beacons("mac.max_retries=0"), beacons("mac.max_retries=3"));
    assert!(none > 300 && none == three, "beacons {none} with no retries, {three} with 3");
}

/// A gain file must name as many nodes as the layout places (it used to be read as the layout's
/// size, so a 3-node file under a 40-node chain ran with 37 nodes unlinked).
#[test]
fn a_gain_file_of_another_size_is_refused() {
    let sc = load(
        "tossim/testsimcomm.toml",
        &["topology.gains_file=gains-equal.txt", "topology.layout={kind=\"chain\", nodes=40, spacing_m=2.0}"],
    );
    let e = wsn_sim::runner::run(&sc, wsn_sim::runner::RunOptions { seed: None, out_dir: None, progress: None })
        .err()
        .expect("a 3-node gain file under a 40-node layout is refused")
        .to_string();
    assert!(e.contains("the file names 3 nodes (its largest id + 1) but the layout has 40"), "{e}");
}
