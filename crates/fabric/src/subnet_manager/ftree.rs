//! `ftree` (placeholder, replaced below).
use super::tables::{Fabric, Tables};
pub fn route(_f: &Fabric, _roots: &[usize], _lmc: u8) -> Result<(Tables, Vec<usize>), String> {
    Err("ftree: not implemented".into())
}
