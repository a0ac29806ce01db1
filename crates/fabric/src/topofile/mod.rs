//! Topology files (placeholder).
