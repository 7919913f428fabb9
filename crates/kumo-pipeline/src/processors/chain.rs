//! An ordered list of processors with a counter set per processor.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use kumo_core::Item;
use serde::Serialize;

use super::{ProcessOutcome, Processor};
use crate::StateEntry;

/// Processors run in order. With `fail_fast`, an invalid item stops where it was found
/// invalid (the seeds' pipeline); without, it is counted and goes on through the remaining
/// processors to the sinks. A dropped item always stops.
pub struct ProcessorChain {
    steps: Vec<Step>,
    fail_fast: bool,
}

struct Step {
    processor: Box<dyn Processor>,
    seen: AtomicU64,
    kept: AtomicU64,
    dropped: AtomicU64,
    invalid: AtomicU64,
}

/// One processor's counts, as the summary shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcessorStats {
    /// The processor's [`name`](Processor::name).
    pub name: String,
    /// Items it was given.
    pub seen: u64,
    /// Items it passed on.
    pub kept: u64,
    /// Items it left out on purpose.
    pub dropped: u64,
    /// Items it found invalid.
    pub invalid: u64,
}

/// What a chain let through, and the problems (invalid items) it met.
#[derive(Debug, Default)]
pub struct ChainOutput {
    /// The items that came through, in order.
    pub items: Vec<Item>,
    /// One line per invalid item: `processor: reason`.
    pub problems: Vec<String>,
}

impl Default for ProcessorChain {
    fn default() -> Self {
        ProcessorChain::new(true)
    }
}

impl ProcessorChain {
    /// A chain with no processors; with `fail_fast`, an invalid item goes no further.
    pub fn new(fail_fast: bool) -> Self {
        ProcessorChain { steps: Vec::new(), fail_fast }
    }

    /// Adds a processor at the end, builder style.
    pub fn with(mut self, p: impl Processor + 'static) -> Self {
        self.push(Box::new(p));
        self
    }

    /// Adds a processor at the end.
    pub fn push(&mut self, processor: Box<dyn Processor>) {
        self.steps.push(Step {
            processor,
            seen: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            invalid: AtomicU64::new(0),
        });
    }

    /// Whether the chain has no processors.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// How many processors it has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Runs every item through the processors in order.
    pub fn apply(&self, items: impl IntoIterator<Item = Item>) -> ChainOutput {
        let mut out = ChainOutput::default();
        'items: for mut item in items {
            for step in &self.steps {
                step.seen.fetch_add(1, Relaxed);
                // Without fail-fast an invalid item goes on unchanged, so keep a copy.
                let backup = (!self.fail_fast).then(|| item.clone());
                match step.processor.process(item) {
                    ProcessOutcome::Keep(next) => {
                        step.kept.fetch_add(1, Relaxed);
                        item = next;
                    }
                    ProcessOutcome::Drop(_) => {
                        step.dropped.fetch_add(1, Relaxed);
                        continue 'items;
                    }
                    ProcessOutcome::Invalid(reason) => {
                        step.invalid.fetch_add(1, Relaxed);
                        out.problems.push(format!("{}: {reason}", step.processor.name()));
                        match backup {
                            Some(copy) => item = copy,
                            None => continue 'items,
                        }
                    }
                }
            }
            out.items.push(item);
        }
        out
    }

    /// Whether an invalid item stops where it was found invalid.
    pub fn fail_fast(&self) -> bool {
        self.fail_fast
    }

    /// The state entries its processors added since the last call, each tagged with its
    /// processor's index in the chain.
    pub fn take_state(&self) -> Vec<StateEntry> {
        let mut out = Vec::new();
        for (i, step) in (0u32..).zip(&self.steps) {
            out.extend(step.processor.take_state().into_iter().map(|data| StateEntry { processor: i, data }));
        }
        out
    }

    /// Hands each entry to the processor its index names, in order; entries naming no
    /// processor of this chain are ignored.
    pub fn restore_state(&self, entries: &[StateEntry]) {
        let mut per_step: Vec<Vec<&[u8]>> = vec![Vec::new(); self.steps.len()];
        for e in entries {
            if let Some(mine) = usize::try_from(e.processor).ok().and_then(|i| per_step.get_mut(i)) {
                mine.push(&e.data);
            }
        }
        for (step, mine) in self.steps.iter().zip(per_step) {
            if !mine.is_empty() {
                step.processor.restore_state(&mine);
            }
        }
    }

    /// Each processor's counts so far, in chain order.
    pub fn stats(&self) -> Vec<ProcessorStats> {
        self.steps
            .iter()
            .map(|s| ProcessorStats {
                name: s.processor.name(),
                seen: s.seen.load(Relaxed),
                kept: s.kept.load(Relaxed),
                dropped: s.dropped.load(Relaxed),
                invalid: s.invalid.load(Relaxed),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::{DedupByKey, Set};

    fn chain() -> ProcessorChain {
        ProcessorChain::new(true).with(Set::new("k", "v")).with(DedupByKey::new(["a"]))
    }

    #[test]
    fn state_is_tagged_with_the_processor_index_and_routed_back() {
        let before = chain();
        before.apply([Item::new().with("a", 1), Item::new().with("a", 2)]);
        let mut state = before.take_state();
        assert_eq!(state.len(), 2);
        assert!(state.iter().all(|e| e.processor == 1));
        // An entry for a processor the chain does not have is ignored.
        state.push(StateEntry { processor: 7, data: vec![0; 16] });

        let after = chain();
        after.restore_state(&state);
        let out = after.apply([Item::new().with("a", 1), Item::new().with("a", 3)]);
        assert_eq!(out.items, [Item::new().with("a", 3).with("k", "v")]);
        assert_eq!(after.take_state().len(), 1, "only the new key");
    }
}
