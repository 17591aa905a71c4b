//! A diagnostic of the RCRT baseline, not a check: the sink's counters that `summary.json`
//! does not carry (feedback triggers fired and sent, deferred and stale-when-due feedbacks,
//! expired and revived flows) and the live flows' RTT, r·RTT and congestion level C_i. The
//! arguments are `--set` overrides of the built-in `rcrt-baseline`:
//!
//! ```sh
//! cargo run --release -p wsn-sim --example rcrt_diagnostic -- duration_s=9000 'protocol.profile="paper"'
//! ```

use wsn_sim::runner::{run, RunOptions};
use wsn_sim::scenario::Scenario;

fn main() {
    let mut set: Vec<String> = vec!["output.plots=false".into()];
    set.extend(std::env::args().skip(1));
    let sc = match Scenario::load("rcrt-baseline", &set) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let r = match run(&sc, RunOptions { seed: None, out_dir: None, progress: None }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let s = &r.summary;
    let originated: u64 = s.flows.iter().map(|f| f.originated).sum();
    let goodput: Vec<f64> = s.flows.iter().map(|f| f.goodput_pps).collect();
    let complete = s.flows.iter().filter(|f| f.in_order_exactly_once == Some(true)).count();
    println!("set {set:?}");
    println!(
        "originated {originated}, feedback {:?} ({:.1} % of originated), decreases {:?}, complete {complete}/{}",
        s.totals.feedback_packets,
        100.0 * s.totals.feedback_packets.unwrap_or(0) as f64 / originated.max(1) as f64,
        s.totals.congestion_decreases,
        s.flows.len()
    );
    println!("goodput mean {:.3}", goodput.iter().sum::<f64>() / goodput.len().max(1) as f64);
    for &sink in r.network.sinks() {
        let Some(k) = r.network.rcrt_sink(sink) else { continue };
        let st = k.stats();
        println!(
            "sink {}: feedback {} syn-acks {} increases {} decreases {} opened {} closed {} expired {} replaced {} unknown-flow DATA {} dups {} recovered {}",
            sink.0, st.feedback_sent, st.syn_acks_sent, st.increases, st.decreases, st.flows_opened, st.flows_closed,
            st.flows_expired, st.flows_replaced, st.unknown_flow, st.duplicates, st.recovered
        );
        println!("  triggers fired {:?}", st.feedback_triggers);
        println!(
            "  sent by trigger {:?}; deferred sent {} (stale when due {}); revived {}",
            st.feedback_sent_by, st.feedback_sent_deferred, st.feedback_deferred_stale, st.flows_revived
        );
        let mut per: Vec<(u64, u64, u64, u64)> =
            st.per_flow.iter().map(|(n, f)| (f.feedback_sent, f.nacks_sent, f.unique, u64::from(n.0))).collect();
        per.sort();
        if !per.is_empty() {
            let q = |i: usize| per[(per.len() - 1) * i / 4];
            println!(
                "  per-flow feedback (sent, nacked seqnos, unique, node) min {:?} q1 {:?} med {:?} q3 {:?} max {:?}",
                q(0),
                q(1),
                q(2),
                q(3),
                q(4)
            );
        }
        let mut rows: Vec<(f64, f64, f64, f64)> = k
            .flows()
            .filter_map(|src| k.flow_info(src))
            .map(|i| {
                let rtt = i.rtt.map_or(f64::NAN, |d| d.as_secs_f64());
                (rtt, i.rate_pps, i.rate_pps * rtt, i.congestion)
            })
            .collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some(lo), Some(hi)) = (rows.first(), rows.last()) {
            let mid = rows[rows.len() / 2];
            println!(
                "  live flows {}: rtt s min/med/max {:.3}/{:.3}/{:.3}; r {:.3}; r·rtt med {:.3}",
                rows.len(),
                lo.0,
                mid.0,
                hi.0,
                mid.1,
                mid.2
            );
        }
    }
}
