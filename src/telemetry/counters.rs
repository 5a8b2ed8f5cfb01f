//! One counter per value of a label vocabulary, resolved once: counting is an array index and
//! an atomic increment, never a label lookup.

use super::vocab::Vocabulary;
use prometheus::{IntCounter, IntCounterVec, Opts};
use std::marker::PhantomData;

/// A counter family with one label from vocabulary `V`, every value created at zero.
#[derive(Clone)]
pub struct ByLabel<V: Vocabulary> {
    family: IntCounterVec,
    counters: Box<[IntCounter]>,
    vocabulary: PhantomData<V>,
}

impl<V: Vocabulary> ByLabel<V> {
    /// The family `name` with label `label`.
    pub fn new(name: &str, help: &str, label: &str) -> Self {
        let family =
            IntCounterVec::new(Opts::new(name, help), &[label]).expect("static metric definition");
        let counters = V::ALL
            .iter()
            .map(|v| family.with_label_values(&[v.label()]))
            .collect();
        Self {
            family,
            counters,
            vocabulary: PhantomData,
        }
    }

    /// Counts one event of kind `value`.
    pub fn inc(&self, value: V) {
        self.counters[value.index()].inc();
    }

    /// The current count of `value`.
    pub fn get(&self, value: V) -> u64 {
        self.counters[value.index()].get()
    }

    /// The family, for registration.
    pub fn collector(&self) -> Box<dyn prometheus::core::Collector> {
        Box::new(self.family.clone())
    }
}
