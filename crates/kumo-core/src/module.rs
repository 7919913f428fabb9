//! Module identity and counters, as in the gopcp webcrawler: every downloader, analyzer
//! (parser) and pipeline instance has an ID (`D1`, `A2|10.0.0.5:8080`) and counts how often it
//! was called, accepted work, completed it, and how much it is handling now.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Serialize, Serializer};

/// The type letter of a module ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModuleKind {
    /// Fetches requests (`D`).
    Downloader,
    /// Parses responses into links and items (`A`).
    Analyzer,
    /// Processes and writes items (`P`).
    Pipeline,
}

impl ModuleKind {
    /// The letter that starts an ID of this kind: `D`, `A` or `P`.
    pub fn letter(self) -> char {
        match self {
            ModuleKind::Downloader => 'D',
            ModuleKind::Analyzer => 'A',
            ModuleKind::Pipeline => 'P',
        }
    }
}

/// A module instance's identity: type letter, serial number, optional network address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModuleId {
    /// What kind of module it is.
    pub kind: ModuleKind,
    /// Its serial number, which tells it from others of its kind (positive in any ID that
    /// parses).
    pub serial: u64,
    /// The `host:port` it is reached at, for a module elsewhere on the network.
    pub addr: Option<String>,
}

impl ModuleId {
    /// The ID of module `serial` of `kind`, without an address.
    pub fn new(kind: ModuleKind, serial: u64) -> Self {
        ModuleId { kind, serial, addr: None }
    }

    /// Sets the address, builder style. It is not checked; parsing an ID checks `host:port`.
    pub fn with_addr(mut self, addr: impl Into<String>) -> Self {
        self.addr = Some(addr.into());
        self
    }
}

impl fmt::Display for ModuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.letter(), self.serial)?;
        if let Some(a) = &self.addr {
            write!(f, "|{a}")?;
        }
        Ok(())
    }
}

impl Serialize for ModuleId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a module ID string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModuleIdError {
    /// The string is empty.
    #[error("module ID is empty")]
    Empty,
    /// The first character is not `D`, `A` or `P`.
    #[error("unknown module type letter {0:?} (expected D, A or P)")]
    Letter(char),
    /// What follows the letter is missing, not a number, or 0.
    #[error("module serial number {0:?} is not a positive integer")]
    Serial(String),
    /// What follows `|` is not `host:port` with a numeric port.
    #[error("module address {0:?} is not host:port")]
    Addr(String),
}

impl FromStr for ModuleId {
    type Err = ModuleIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (head, addr) = match s.split_once('|') {
            Some((h, a)) => (h, Some(a)),
            None => (s, None),
        };
        let mut chars = head.chars();
        let kind = match chars.next().ok_or(ModuleIdError::Empty)? {
            'D' => ModuleKind::Downloader,
            'A' => ModuleKind::Analyzer,
            'P' => ModuleKind::Pipeline,
            c => return Err(ModuleIdError::Letter(c)),
        };
        let serial_str = chars.as_str();
        let serial: u64 = serial_str
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| ModuleIdError::Serial(serial_str.to_string()))?;
        if let Some(a) = addr {
            let ok = a.rsplit_once(':').is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
            if !ok {
                return Err(ModuleIdError::Addr(a.to_string()));
            }
        }
        Ok(ModuleId { kind, serial, addr: addr.map(str::to_string) })
    }
}

/// Live counters of one module instance. Cheap to update from any thread.
#[derive(Debug, Default)]
pub struct ModuleCounters {
    called: AtomicU64,
    accepted: AtomicU64,
    completed: AtomicU64,
    handling: AtomicU64,
}

impl ModuleCounters {
    /// A call arrived (whether or not it is accepted).
    pub fn called(&self) {
        self.called.fetch_add(1, Ordering::Relaxed);
    }

    /// The call passed the module's checks and work starts.
    pub fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
        self.handling.fetch_add(1, Ordering::Relaxed);
    }

    /// Accepted work ended; `ok` says whether it completed successfully.
    pub fn finished(&self, ok: bool) {
        if ok {
            self.completed.fetch_add(1, Ordering::Relaxed);
        }
        self.handling.fetch_sub(1, Ordering::Relaxed);
    }

    /// The counts now. Each is read on its own, so a snapshot taken while the module works
    /// may not be one consistent moment.
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            called: self.called.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            handling: self.handling.load(Ordering::Relaxed),
        }
    }
}

/// A point-in-time copy of [`ModuleCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CounterSnapshot {
    /// Calls that arrived, accepted or not.
    pub called: u64,
    /// Calls accepted: work started.
    pub accepted: u64,
    /// Accepted work that ended successfully.
    pub completed: u64,
    /// Accepted work not ended yet.
    pub handling: u64,
}

impl CounterSnapshot {
    /// The seeds' simple score: lower is less loaded. Handling work weighs most.
    pub fn simple_score(&self) -> u64 {
        self.called + (self.accepted << 1) + (self.completed << 2) + (self.handling << 4)
    }
}

/// One module's line in the crawl summary.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleSummary {
    /// Which module the line is about.
    pub id: ModuleId,
    /// Its counters, written as fields of the line itself.
    #[serde(flatten)]
    pub counts: CounterSnapshot,
    /// Anything module-specific (for a downloader: errors by kind…).
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub extra: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_and_parse() {
        let d = ModuleId::new(ModuleKind::Downloader, 1);
        assert_eq!(d.to_string(), "D1");
        let a = ModuleId::new(ModuleKind::Analyzer, 2).with_addr("10.0.0.5:8080");
        assert_eq!(a.to_string(), "A2|10.0.0.5:8080");
        assert_eq!("A2|10.0.0.5:8080".parse::<ModuleId>().unwrap(), a);
        assert_eq!("P7".parse::<ModuleId>().unwrap(), ModuleId::new(ModuleKind::Pipeline, 7));
    }

    #[test]
    fn bad_ids_are_refused() {
        assert_eq!("".parse::<ModuleId>(), Err(ModuleIdError::Empty));
        assert_eq!("X1".parse::<ModuleId>(), Err(ModuleIdError::Letter('X')));
        assert!(matches!("D0".parse::<ModuleId>(), Err(ModuleIdError::Serial(_))));
        assert!(matches!("Dx".parse::<ModuleId>(), Err(ModuleIdError::Serial(_))));
        assert!(matches!("D1|nohost".parse::<ModuleId>(), Err(ModuleIdError::Addr(_))));
    }

    #[test]
    fn counters_track_handling() {
        let c = ModuleCounters::default();
        c.called();
        c.accepted();
        c.called();
        c.accepted();
        c.finished(true);
        c.called();
        let s = c.snapshot();
        assert_eq!((s.called, s.accepted, s.completed, s.handling), (3, 2, 1, 1));
        assert_eq!(s.simple_score(), 3 + 4 + 4 + 16);
    }
}
