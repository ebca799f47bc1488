//! Benchmarks behind `mindgate memory bench`: LoCoMo evidence recall and synthetic
//! latency/throughput. Figures are reported, never asserted.

pub mod locomo;
pub mod synthetic;
