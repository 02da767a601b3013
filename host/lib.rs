//! zkgpu host library (placeholder).
/// PTX for sm_90 devices.
pub const PTX_SM90: &str = include_str!(concat!(env!("OUT_DIR"), "/zkgpu_sm_90.ptx"));
/// PTX for sm_80 devices.
pub const PTX_SM80: &str = include_str!(concat!(env!("OUT_DIR"), "/zkgpu_sm_80.ptx"));
