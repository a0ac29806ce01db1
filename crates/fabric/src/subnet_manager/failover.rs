//! Master/standby SMs (placeholder).
