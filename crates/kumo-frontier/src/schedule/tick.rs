//! An instant in 8 bytes, for the times every host keeps: nanoseconds from one epoch per
//! process (a std `Instant` takes 16, and an `Option` of one 16 too). Exact both ways, and
//! good for some 292 years on either side of the epoch, which covers every instant the
//! frontier computes (`later` caps them at a century) and those restored from an earlier run.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

static EPOCH: OnceLock<Instant> = OnceLock::new();

fn epoch() -> Instant {
    *EPOCH.get_or_init(Instant::now)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Tick(i64);

impl Tick {
    /// No instant at all: a host never leased.
    pub const NEVER: Tick = Tick(i64::MIN);

    pub fn instant(self) -> Instant {
        let e = epoch();
        if self.0 >= 0 {
            e + Duration::from_nanos(self.0.unsigned_abs())
        } else {
            e.checked_sub(Duration::from_nanos(self.0.unsigned_abs())).unwrap_or(e)
        }
    }

    /// The instant, unless this is [`Tick::NEVER`].
    pub fn get(self) -> Option<Instant> {
        (self != Tick::NEVER).then(|| self.instant())
    }
}

impl From<Instant> for Tick {
    fn from(t: Instant) -> Tick {
        let e = epoch();
        let nanos = |d: Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        match t.checked_duration_since(e) {
            Some(after) => Tick(nanos(after)),
            // Never NEVER: at worst one nanosecond later.
            None => Tick((-nanos(e - t)).max(i64::MIN + 1)),
        }
    }
}

impl From<Option<Instant>> for Tick {
    fn from(t: Option<Instant>) -> Tick {
        t.map_or(Tick::NEVER, Tick::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_go_and_come_back_exactly() {
        let now = Instant::now();
        for t in [now, now + Duration::from_nanos(1), now + Duration::from_secs(100 * 365 * 86_400)] {
            assert_eq!(Tick::from(t).instant(), t);
        }
        let before = epoch().checked_sub(Duration::from_secs(3600));
        if let Some(t) = before {
            assert_eq!(Tick::from(t).instant(), t, "an instant before the epoch");
        }
        assert!(Tick::from(now) < Tick::from(now + Duration::from_nanos(1)));
        assert_eq!(Tick::from(None).get(), None);
        assert_eq!(Tick::from(Some(now)).get(), Some(now));
    }
}
