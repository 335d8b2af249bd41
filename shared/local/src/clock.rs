//! The test clock: real time plus an offset that only grows,
//! so time flows normally in `make run` and jumps forward when a test says so. Every
//! component of the local runtime reads this clock.

use std::sync::RwLock;

use jiff::{SignedDuration, Timestamp};
use openloop_core::ports::Clock;

#[derive(Default)]
pub struct TestClock {
    offset: RwLock<SignedDuration>,
}

impl TestClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Move the clock to `to`; refused if that is in its past.
    pub fn set(&self, to: Timestamp) -> Result<Timestamp, Timestamp> {
        let mut offset = self.offset.write().unwrap_or_else(|e| e.into_inner());
        let real = Timestamp::now();
        let current = real + *offset;
        if to < current {
            return Err(current);
        }
        *offset = to.duration_since(real);
        Ok(to)
    }
}

impl TestClock {
    /// How far ahead of real time the clock is.
    pub fn offset(&self) -> SignedDuration {
        *self.offset.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        Timestamp::now() + *self.offset.read().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_only_moves_forward() {
        let clock = TestClock::new();
        let later: Timestamp = "2031-01-01T00:00:00Z".parse().expect("ts");
        assert_eq!(clock.set(later), Ok(later));
        assert!(clock.now() >= later);
        assert!(clock.set("2030-01-01T00:00:00Z".parse().expect("ts")).is_err());
    }
}
