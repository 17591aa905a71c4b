//! IFRC on simulated nodes: resolves the [`IfrcConfig`] a scenario's `[protocol]` table asks
//! for and builds every node's [`IfrcAgent`] (the stability bounds and burst tolerances the
//! reports print live in [`wsn_proto::ifrc`]).
//!
//! Sinks run the base-station role; every other node runs the node role on the tree of its
//! first flow's sink (or the first sink when it sources nothing: it still forwards and adapts
//! its rate, spec-ifrc §9.3). Flows are paced by the agents ([`wsn_proto::agent::AgentEvent::AppSlot`]).

use wsn_proto::forwarder::ForwarderConfig;
use wsn_proto::ifrc::{
    DeltaRule, IfrcAgent, IfrcConfig, Profile, QueueAverage, Role, Sharing, SlowStartExit, SlowStartRule,
    FIXED_POINT_SCALE,
};
use wsn_proto::time::Instant;
use wsn_wire::NodeId;

use crate::mac::MacConfig;
use crate::network::AgentFactory;
use crate::runner::RunError;
use crate::scenario::{IfrcScenario, RcrtProfile};

/// Bytes of the IFRC header carried after the collection header.
pub const IFRC_HEADER_LEN: usize = wsn_wire::ifrc::HEADER_LEN;

/// Largest weight of a node (weighted fairness, spec §9.2; the paper uses 2) [AMBIG → chosen:
/// 1000, far above any experiment, low enough that w·r stays a packet rate a radio could carry].
const MAX_WEIGHT: f64 = 1000.0;

/// The IFRC configuration a scenario asks for (profile values, then the scenario's overrides).
/// The queue bound follows the MAC preset's `queue_capacity`: all its slots under the paper
/// profile, all but one under the reference-code profile, whose ring buffer is full when the
/// next slot is the head [CODE usc-ifrc: QueuedSendM.nc, 64 slots of which 63 usable].
pub fn config(c: &IfrcScenario, mac: &MacConfig) -> Result<IfrcConfig, RunError> {
    let bad = |m: String| RunError::Config(m);
    let mut cfg = IfrcConfig::for_profile(match c.profile {
        RcrtProfile::Paper => Profile::Paper,
        RcrtProfile::ReferenceCode => Profile::ReferenceCode,
    });
    cfg.queue_capacity = match cfg.profile {
        Profile::Paper => mac.queue_capacity,
        Profile::ReferenceCode => mac.queue_capacity.saturating_sub(1).max(1),
    };
    let pos = |name: &str, v: f64| -> Result<f64, RunError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(RunError::Config(format!(
                "protocol.{name} = {}: must be a positive number",
                crate::scenario::short_num(v)
            )))
        }
    };
    if let Some(v) = c.epsilon {
        cfg.epsilon = pos("epsilon", v)?;
    }
    if let Some(v) = c.w_q {
        if !(v > 0.0 && v <= 1.0) {
            return Err(bad(format!("protocol.w_q = {}: must be within (0, 1]", crate::scenario::short_num(v))));
        }
        cfg.ewma_weight = v;
    }
    if let Some(v) = c.lower {
        cfg.lower_threshold = pos("lower", v)?;
    }
    if let Some(v) = c.u0 {
        cfg.upper_threshold = pos("u0", v)?;
    }
    if let Some(v) = c.increment {
        cfg.threshold_increment = pos("increment", v)?;
    }
    if cfg.lower_threshold >= cfg.upper_threshold {
        return Err(bad(format!(
            "protocol.lower ({}) must be below protocol.u0 ({})",
            cfg.lower_threshold, cfg.upper_threshold
        )));
    }
    if let Some(v) = c.r_init {
        cfg.initial_rate_pps = pos("r_init", v)?;
        // Every rate lives between the profile's floor and its cap.
        if !(cfg.min_rate_pps..=cfg.max_rate_pps).contains(&cfg.initial_rate_pps) && cfg.profile == Profile::Paper {
            return Err(bad(format!(
                "protocol.r_init = {}: outside the {} … {} pkt/s every rate is kept within (the paper profile's \
                 floor and nominal channel rate)",
                crate::scenario::short_num(v),
                cfg.min_rate_pps,
                cfg.max_rate_pps
            )));
        }
        if cfg.initial_rate_pps > cfg.max_rate_pps {
            return Err(bad(format!(
                "protocol.r_init = {}: above the {} pkt/s every rate is capped at (the reference-code profile's \
                 nominal channel rate)",
                crate::scenario::short_num(v),
                cfg.max_rate_pps
            )));
        }
        // φ = r_init / 8 [PAPER §5] unless set explicitly.
        cfg.slow_start_increment_pps = cfg.initial_rate_pps / 8.0;
        // The reference code's rate floor is r_init itself [CODE usc-ifrc: RateControlM.nc].
        if cfg.profile == Profile::ReferenceCode {
            cfg.min_rate_pps = cfg.initial_rate_pps;
        }
    }
    if let Some(v) = c.phi {
        cfg.slow_start_increment_pps = pos("phi", v)?;
    }
    if let Some(v) = c.bs_initial_rate {
        cfg.bs_initial_rate_pps = pos("bs_initial_rate", v)?;
        // Every rate is capped at the nominal channel rate: a larger r_b would be cut silently.
        if cfg.bs_initial_rate_pps > cfg.max_rate_pps {
            return Err(bad(format!(
                "protocol.bs_initial_rate = {}: above the {} pkt/s every rate is capped at (the {} profile's nominal \
                 channel rate)",
                crate::scenario::short_num(v),
                cfg.max_rate_pps,
                if cfg.profile == Profile::ReferenceCode { "reference-code" } else { "paper" }
            )));
        }
    }
    match c.delta_rule.as_deref() {
        None => {}
        Some("per_decrease") => cfg.delta_rule = DeltaRule::PerDecrease,
        Some("global") => {
            let r = c.global_r_min.ok_or_else(|| {
                bad("protocol.global_r_min (pkt/s) is required with protocol.delta_rule = \"global\"".into())
            })?;
            cfg.delta_rule = DeltaRule::Global { r_min_pps: pos("global_r_min", r)? };
        }
        Some(o) => return Err(bad(format!("protocol.delta_rule: unknown rule `{o}` (known: per_decrease, global)"))),
    }
    match c.slow_start_exit.as_deref() {
        None => {}
        Some("recommended") => cfg.slow_start_exit = SlowStartExit::Recommended,
        Some("literal") => cfg.slow_start_exit = SlowStartExit::Literal,
        Some(o) => {
            return Err(bad(format!("protocol.slow_start_exit: unknown rule `{o}` (known: recommended, literal)")))
        }
    }
    match c.slow_start_rule.as_deref() {
        None => {}
        Some("paper") => cfg.slow_start_rule = SlowStartRule::Paper,
        Some("ss_thresh") => cfg.slow_start_rule = SlowStartRule::SsThresh,
        Some(o) => return Err(bad(format!("protocol.slow_start_rule: unknown rule `{o}` (known: paper, ss_thresh)"))),
    }
    match c.sharing.as_deref() {
        None => {}
        Some("crossing") => cfg.sharing = Sharing::Crossing,
        Some("pinned") => cfg.sharing = Sharing::Pinned,
        Some(o) => return Err(bad(format!("protocol.sharing: unknown rule `{o}` (known: crossing, pinned)"))),
    }
    // The switches between the profiles' rules, each overriding the profile's value when set.
    for (set, rule) in [
        (c.skip_halving_after_sharing, &mut cfg.skip_halving_after_sharing),
        (c.rules_after_queue_check, &mut cfg.rules_after_queue_check),
        (c.start_with_traffic, &mut cfg.start_with_traffic),
        (c.bs_increase_at_control, &mut cfg.bs_increase_at_control),
        (c.bs_control_at_start, &mut cfg.bs_control_at_start),
        (c.code_first_tick, &mut cfg.code_first_tick),
    ] {
        if let Some(v) = set {
            *rule = v;
        }
    }
    // Both belong to the code's timer-paced control packets: the paper profile's base station
    // sends after m packets of its fastest child and has no control timer, so r_b would rise
    // only after cuts, and there is no start-up packet to send.
    if cfg.bs_trigger == wsn_proto::ifrc::BsTrigger::OriginatedPackets {
        for (key, on) in
            [("bs_increase_at_control", cfg.bs_increase_at_control), ("bs_control_at_start", cfg.bs_control_at_start)]
        {
            if on {
                return Err(bad(format!(
                    "protocol.{key} = true: needs the reference-code profile's timer-paced control packets (the paper \
                     profile's base station sends after m packets of its fastest child)"
                )));
            }
        }
    }
    match c.queue_average.as_deref() {
        None => {}
        Some("float") => cfg.queue_average = QueueAverage::Float,
        Some("fixed_point") => cfg.queue_average = QueueAverage::FixedPoint,
        Some(o) => {
            return Err(bad(format!("protocol.queue_average: unknown arithmetic `{o}` (known: float, fixed_point)")))
        }
    }
    // The code's weight is a whole number of hundredths (ALPHA); another w_q would be rounded
    // silently [CODE usc-ifrc: QueuedSendM.nc calQueueLength].
    let scaled = cfg.ewma_weight * f64::from(FIXED_POINT_SCALE);
    if cfg.queue_average == QueueAverage::FixedPoint && (scaled - scaled.round()).abs() > 1e-9 {
        return Err(bad(format!(
            "protocol.w_q = {}: the fixed-point queue average{} takes a whole number of hundredths (the authors' \
             ALPHA); use e.g. {} or {}, or protocol.queue_average = \"float\"",
            crate::scenario::short_num(cfg.ewma_weight),
            if c.queue_average.is_none() { " (the reference-code profile's)" } else { "" },
            scaled.floor() / f64::from(FIXED_POINT_SCALE),
            scaled.ceil() / f64::from(FIXED_POINT_SCALE),
        )));
    }
    // A queue that can never hold U(0) packets never signals congestion: it just overflows.
    if cfg.upper_threshold >= cfg.queue_capacity as f64 {
        let holds = match cfg.profile {
            Profile::Paper => format!("mac.queue_capacity = {}", mac.queue_capacity),
            Profile::ReferenceCode => {
                format!("mac.queue_capacity − 1 = {} under the reference-code profile", cfg.queue_capacity)
            }
        };
        return Err(bad(format!(
            "protocol.u0 = {}{}: at or above the {} packets a node's queue holds ({holds}, preset {}), so no node \
             could ever detect congestion; lower protocol.u0 or raise mac.queue_capacity",
            crate::scenario::short_num(cfg.upper_threshold),
            if c.u0.is_none() { " (the profile's default)" } else { "" },
            cfg.queue_capacity,
            mac.preset
        )));
    }
    // The header carries the average queue up to 65535/256 packets: a threshold a queue can
    // reach but the header cannot show would be crossed unseen by every neighbour.
    let most = wsn_wire::ifrc::queue_from_raw(u16::MAX);
    if let Some((k, u)) =
        cfg.thresholds().into_iter().enumerate().find(|&(_, u)| u >= most && u < cfg.queue_capacity as f64)
    {
        return Err(bad(format!(
            "threshold U({k}) = {u} packets: at or above the largest average queue the IFRC header carries \
             ({most:.3}), though the queue ({} packets) can reach it, so neighbours could never see it crossed; \
             lower protocol.u0 / protocol.increment or mac.queue_capacity",
            cfg.queue_capacity
        )));
    }
    Ok(cfg)
}

/// The agent factory of an IFRC run. `node_sink[i]` is the tree node `i` sends on;
/// `traffic_start` is the first flow's start, where the agents' rate control begins when the
/// profile starts it with the traffic ([`IfrcConfig::start_with_traffic`]; otherwise at 0).
pub fn agent_factory(
    c: &IfrcScenario,
    mac: &MacConfig,
    node_sink: &[Option<NodeId>],
    sinks: &[NodeId],
    traffic_start: Instant,
) -> Result<AgentFactory, RunError> {
    let cfg = config(c, mac)?;
    let start = if cfg.start_with_traffic { traffic_start } else { Instant::ZERO };
    let n = node_sink.len();
    let mut weights = vec![1.0; n];
    let mut named: std::collections::BTreeMap<usize, &str> = std::collections::BTreeMap::new();
    for (k, &w) in &c.weights {
        let i: usize =
            k.parse().ok().filter(|&i: &usize| i < n).ok_or_else(|| crate::runner::weight_not_a_node(k, n))?;
        // `"3"` and `"03"` are two keys of the table but one node: refuse rather than keep one.
        if let Some(other) = named.insert(i, k) {
            return Err(RunError::Config(format!("protocol.weights: `{other}` and `{k}` both name node {i}")));
        }
        // A node originates at w·r: a weight beyond MAX_WEIGHT would ask for more packets than
        // any radio carries (and a huge one would stall the run in slot events).
        if !(w.is_finite() && (0.0..=MAX_WEIGHT).contains(&w)) {
            return Err(RunError::Config(format!(
                "protocol.weights.{k} = {}: must be within 0 … {MAX_WEIGHT}",
                crate::scenario::short_num(w)
            )));
        }
        if sinks.contains(&NodeId(i as u16)) {
            return Err(RunError::Config(format!(
                "protocol.weights.{k}: node {k} is a base station, which originates nothing"
            )));
        }
        weights[i] = w;
    }
    let node_sink = node_sink.to_vec();
    let sinks = sinks.to_vec();
    Ok(Box::new(move |i, id, fwd: &ForwarderConfig| {
        // A node without a flow is on the first sink's tree until it has a route to one (then
        // the best-path sink's, with several).
        let role =
            if sinks.contains(&id) { Role::BaseStation } else { Role::Node { sink: node_sink[i].unwrap_or(sinks[0]) } };
        // The code extension of the header ([`IfrcConfig::code_header`]) comes on top of the
        // frame bound the flows were checked against (the 12-byte header's): its 10 bytes go on
        // the air too [AMBIG → chosen; the code's own header holds these fields within its
        // 48-byte frame].
        let ext = if cfg.code_header() { wsn_wire::ifrc::EXT_LEN } else { 0 };
        let fwd = ForwarderConfig {
            queue_capacity: cfg.queue_capacity,
            max_frame_payload: fwd.max_frame_payload + ext,
            ..fwd.clone()
        };
        let mut a = IfrcAgent::new(id, role, cfg.clone(), fwd, start);
        a.set_weight(weights[i]);
        if node_sink[i].is_none() && sinks.len() > 1 {
            a.set_relay_sinks(sinks.clone());
        }
        Box::new(a)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_bound_and_rate_floor_follow_the_profile() {
        let mac = MacConfig::ifrc2006();
        let paper = config(&IfrcScenario::default(), &mac).unwrap();
        assert_eq!(paper.queue_capacity, mac.queue_capacity);
        let code = IfrcScenario { profile: RcrtProfile::ReferenceCode, ..IfrcScenario::default() };
        let cfg = config(&code, &mac).unwrap();
        assert_eq!(cfg.queue_capacity, mac.queue_capacity - 1, "a ring of N slots holds N − 1");
        assert_eq!(cfg.min_rate_pps, cfg.initial_rate_pps);
        // The code's floor is r_init, also when r_init is set.
        let cfg = config(&IfrcScenario { r_init: Some(0.05), ..code }, &mac).unwrap();
        assert_eq!((cfg.initial_rate_pps, cfg.min_rate_pps), (0.05, 0.05));
        // The paper profile keeps its own floor.
        let cfg = config(&IfrcScenario { r_init: Some(0.05), ..IfrcScenario::default() }, &mac).unwrap();
        assert!(cfg.min_rate_pps < 0.05);
    }

    #[test]
    fn queue_average_follows_the_profile_and_needs_whole_hundredths_in_fixed_point() {
        let mac = MacConfig::ifrc2006();
        let code = IfrcScenario { profile: RcrtProfile::ReferenceCode, ..IfrcScenario::default() };
        assert_eq!(config(&IfrcScenario::default(), &mac).unwrap().queue_average, QueueAverage::Float);
        assert_eq!(config(&code, &mac).unwrap().queue_average, QueueAverage::FixedPoint);
        let fixed = |p: &IfrcScenario| IfrcScenario { queue_average: Some("fixed_point".into()), ..p.clone() };
        let cfg = config(&fixed(&IfrcScenario { w_q: Some(0.05), ..IfrcScenario::default() }), &mac).unwrap();
        assert_eq!((cfg.queue_average, cfg.ewma_weight), (QueueAverage::FixedPoint, 0.05));
        // The code's ALPHA is a whole number of hundredths: 0.025 would be rounded silently.
        let err = config(&IfrcScenario { w_q: Some(0.025), ..code.clone() }, &mac).unwrap_err().to_string();
        assert!(err.contains("protocol.w_q = 0.025") && err.contains("reference-code profile"), "{err}");
        assert!(err.contains("0.02 or 0.03") && err.contains("queue_average = \"float\""), "{err}");
        let err = config(&fixed(&IfrcScenario { w_q: Some(0.025), ..IfrcScenario::default() }), &mac).unwrap_err();
        assert!(!err.to_string().contains("reference-code"), "{err}");
        let float = IfrcScenario { w_q: Some(0.025), queue_average: Some("float".into()), ..code };
        assert_eq!(config(&float, &mac).unwrap().queue_average, QueueAverage::Float);
        let err = config(&IfrcScenario { queue_average: Some("double".into()), ..float }, &mac).unwrap_err();
        assert!(err.to_string().contains("unknown arithmetic `double` (known: float, fixed_point)"), "{err}");
    }

    /// Boundaries of the `[protocol]` overrides `config` checks, each taken from its own rule.
    mod audit35 {
        use super::*;

        fn code() -> IfrcScenario {
            IfrcScenario { profile: RcrtProfile::ReferenceCode, ..IfrcScenario::default() }
        }

        /// "protocol.w_q … must be within (0, 1]": 1 itself is a valid weight.
        #[test]
        fn w_q_of_one_is_accepted() {
            let mac = MacConfig::ifrc2006();
            let cfg = config(&IfrcScenario { w_q: Some(1.0), ..IfrcScenario::default() }, &mac).unwrap();
            assert_eq!(cfg.ewma_weight, 1.0);
            assert!(config(&IfrcScenario { w_q: Some(1.0 + 1e-9), ..IfrcScenario::default() }, &mac).is_err());
        }

        /// The reference code's rate floor is r_init itself, so an r_init below the profile's
        /// default floor is no error there (only the paper profile bounds r_init from below).
        #[test]
        fn reference_code_r_init_below_the_default_floor_is_its_own_floor() {
            let mac = MacConfig::ifrc2006();
            let default_floor = config(&code(), &mac).unwrap().min_rate_pps;
            let r = default_floor / 4.0;
            let cfg = config(&IfrcScenario { r_init: Some(r), ..code() }, &mac).unwrap();
            assert_eq!((cfg.initial_rate_pps, cfg.min_rate_pps), (r, r));
        }

        /// φ = r_init / 8 [PAPER §5] unless `phi` is set explicitly.
        #[test]
        fn phi_is_an_eighth_of_r_init_unless_set() {
            let mac = MacConfig::ifrc2006();
            let cfg = config(&IfrcScenario { r_init: Some(0.8), ..IfrcScenario::default() }, &mac).unwrap();
            assert_eq!(cfg.slow_start_increment_pps, 0.1);
            let cfg = config(&IfrcScenario { r_init: Some(0.8), phi: Some(0.3), ..IfrcScenario::default() }, &mac);
            assert_eq!(cfg.unwrap().slow_start_increment_pps, 0.3);
        }

        /// r_b is refused only *above* the nominal channel rate every rate is capped at: the cap
        /// itself is a valid r_b, under both profiles.
        #[test]
        fn bs_initial_rate_at_the_cap_is_accepted() {
            let mac = MacConfig::ifrc2006();
            for base in [IfrcScenario::default(), code()] {
                let cap = config(&base, &mac).unwrap().max_rate_pps;
                let cfg = config(&IfrcScenario { bs_initial_rate: Some(cap), ..base.clone() }, &mac).unwrap();
                assert_eq!(cfg.bs_initial_rate_pps, cap);
                assert!(config(&IfrcScenario { bs_initial_rate: Some(cap * 1.01), ..base }, &mac).is_err());
            }
        }

        /// "A queue that can never hold U(0) packets never signals congestion": a u0 equal to
        /// the queue bound is refused, one just below it is not.
        #[test]
        fn u0_at_the_queue_bound_is_refused() {
            let mac = MacConfig::ifrc2006();
            let cap = config(&IfrcScenario::default(), &mac).unwrap().queue_capacity as f64;
            let err = config(&IfrcScenario { u0: Some(cap), ..IfrcScenario::default() }, &mac).unwrap_err();
            assert!(err.to_string().contains("no node could ever detect congestion"), "{err}");
            let lower = config(&IfrcScenario::default(), &mac).unwrap().lower_threshold;
            assert!(lower < cap - 0.5);
            assert!(config(&IfrcScenario { u0: Some(cap - 0.5), ..IfrcScenario::default() }, &mac).is_ok());
        }

        /// A weight's key must be a node id of the topology (`weight_not_a_node`: ids 0 to
        /// n − 1): the node count itself is refused with that message, not used as an index.
        #[test]
        fn a_weight_for_the_node_count_is_refused() {
            let mac = MacConfig::ifrc2006();
            let node_sink = [None, Some(NodeId(0)), Some(NodeId(0))];
            let sinks = [NodeId(0)];
            let c = |k: &str| IfrcScenario {
                weights: [(k.to_string(), 2.0)].into_iter().collect(),
                ..IfrcScenario::default()
            };
            assert!(agent_factory(&c("2"), &mac, &node_sink, &sinks, Instant::ZERO).is_ok());
            let err = agent_factory(&c("3"), &mac, &node_sink, &sinks, Instant::ZERO).err().expect("node 3 of 3");
            assert!(err.to_string().contains("is not a node id of this topology (node ids 0 to 2)"), "{err}");
        }
    }
}
