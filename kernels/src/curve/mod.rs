//! Curves (placeholder).
