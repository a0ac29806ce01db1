//! `dfsssp` (placeholder, replaced below).
use super::tables::{Fabric, SlTable, Tables};
pub fn route(_f: &Fabric, _vls: u8) -> Result<(Tables, SlTable), String> {
    Err("dfsssp: not implemented".into())
}
