//! Host interpreter for the PTX chains (placeholder).
