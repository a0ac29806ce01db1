//! The one error type of this crate.

/// Why a buffer could not be parsed or a frame could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The buffer is shorter than the header or the length fields require.
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated {
        /// Bytes the format requires.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// A field holds a value the format forbids (e.g. IPv4 IHL < 5).
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// A valid packet of a kind this crate does not model.
    #[error("unsupported {0}")]
    Unsupported(&'static str),
    /// A checksum or CRC does not match the bytes it covers.
    #[error("bad {0}")]
    BadChecksum(&'static str),
    /// A value given to a builder does not fit its field.
    #[error("field out of range: {0}")]
    OutOfRange(&'static str),
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

/// Fails with [`Error::Truncated`] unless `buf` has at least `need` bytes.
pub(crate) fn need(buf: &[u8], need: usize) -> Result<()> {
    if buf.len() < need {
        Err(Error::Truncated { need, have: buf.len() })
    } else {
        Ok(())
    }
}
