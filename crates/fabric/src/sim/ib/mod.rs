//! TODO doc

pub(super) mod cc;
pub(super) mod credits;
pub(super) mod vl;
