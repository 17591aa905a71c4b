//! Simulated and real time as integers.
//!
//! [`Instant`] and [`Duration`] count **nanoseconds** in a `u64` (about 584 years of range).
//! They are never floats, so event ordering is exact and runs are reproducible. The simulator
//! starts its clock at [`Instant::ZERO`]; a real-time driver converts from the wall clock at
//! its edge. One TinyOS *jiffy* (1/32768 s) is 30 517.578 125 ns and is rounded to the nearest
//! nanosecond by [`Duration::from_jiffies`].

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A point in time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

impl Instant {
    /// The start of every simulated run.
    pub const ZERO: Instant = Instant(0);
    /// Largest representable instant ("never").
    pub const MAX: Instant = Instant(u64::MAX);

    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole microseconds since the start.
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// Whole milliseconds since the start.
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// Seconds since the start, for reports only (never for event ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Instant from seconds (for configuration only), saturating.
    pub const fn from_secs(s: u64) -> Instant {
        Instant(s.saturating_mul(1_000_000_000))
    }
    /// Instant from milliseconds, saturating.
    pub const fn from_millis(ms: u64) -> Instant {
        Instant(ms.saturating_mul(1_000_000))
    }
    /// Time elapsed since `earlier`, saturating at zero.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);

    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    /// From microseconds, saturating.
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us.saturating_mul(1_000))
    }
    /// From milliseconds, saturating.
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms.saturating_mul(1_000_000))
    }
    /// From whole seconds, saturating.
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s.saturating_mul(1_000_000_000))
    }
    /// From TinyOS jiffies (1/32768 s), rounded to the nearest nanosecond, saturating.
    pub const fn from_jiffies(j: u64) -> Duration {
        match j.checked_mul(1_000_000_000) {
            Some(ns) => Duration(ns.saturating_add(16_384) / 32_768),
            None => Duration(u64::MAX),
        }
    }
    /// From TinyOS binary milliseconds (1/1024 s), rounded to the nearest nanosecond,
    /// saturating.
    pub const fn from_binary_millis(ms: u64) -> Duration {
        match ms.checked_mul(1_000_000_000) {
            Some(ns) => Duration(ns.saturating_add(512) / 1_024),
            None => Duration(u64::MAX),
        }
    }
    /// From seconds given as a float (configuration input only), rounded to the nanosecond.
    /// Negative input and NaN give zero; +∞ and values beyond the range saturate (the float →
    /// integer cast saturates).
    pub fn from_secs_f64(s: f64) -> Duration {
        if s > 0.0 {
            Duration((s * 1e9 + 0.5) as u64)
        } else {
            Duration::ZERO
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole microseconds.
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Multiply by an integer, saturating.
    pub const fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating difference.
    fn sub(self, other: Instant) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffy_conversions_round_to_nearest_nanosecond() {
        assert_eq!(Duration::from_jiffies(1).as_nanos(), 30_518);
        assert_eq!(Duration::from_jiffies(32_768).as_nanos(), 1_000_000_000);
        assert_eq!(Duration::from_binary_millis(1024).as_nanos(), 1_000_000_000);
    }

    #[test]
    fn instant_arithmetic_saturates() {
        let t = Instant::from_millis(5);
        assert_eq!(t - Instant::from_millis(7), Duration::ZERO);
        assert_eq!((t + Duration::from_micros(250)).as_micros(), 5_250);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
    }

    /// Conversions saturate instead of wrapping (release builds do not check overflow), and
    /// "never" (+∞ seconds) is the longest duration, not zero.
    #[test]
    fn conversions_saturate() {
        assert_eq!(Duration::from_secs(u64::MAX).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_millis(u64::MAX / 2).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_micros(u64::MAX).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_jiffies(u64::MAX).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_binary_millis(1 << 60).as_nanos(), u64::MAX);
        assert_eq!(Instant::from_secs(u64::MAX), Instant::MAX);
        assert_eq!(Duration::from_secs_f64(f64::INFINITY).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_secs_f64(1e30).as_nanos(), u64::MAX);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
    }
}
