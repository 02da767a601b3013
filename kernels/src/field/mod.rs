//! Prime fields (placeholder).
