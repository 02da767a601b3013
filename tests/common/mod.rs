//! Helpers shared by the integration tests: property templates written once and instantiated per
//! field/curve (in the style of arkworks' test templates), and the GPU harness.
#![allow(dead_code)]
pub mod curve_props;
pub mod field_props;
pub mod gpu;
