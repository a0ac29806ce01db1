//! The two CRCs of this crate, as table-driven, bit-reflected CRCs.
//!
//! * [`crc32`]: the IEEE 802.3 CRC-32 (polynomial 0x04C11DB7, reflected
//!   0xEDB88320, initial value and final XOR 0xFFFF_FFFF; IEEE 802.3-2018
//!   §3.2.9). It is the Ethernet FCS and, over masked headers, the
//!   InfiniBand ICRC (IBTA Vol 1 §7.8.1 uses the same polynomial and
//!   conventions; Linux `rxe_icrc.c` computes it with `crc32_le`).
//! * [`vcrc16`]: the InfiniBand variant CRC (IBTA Vol 1 §7.8.2: polynomial
//!   x^16 + x^12 + x^3 + x + 1 = 0x100B, reflected 0xD008, initial value and
//!   final XOR 0xFFFF). The reflected form and the 0xFFFF pre/post
//!   conditioning match Endace's InfiniBand capture library (`dagcrc.c`,
//!   `dagcrc_infiniband_vcrc16_r`).
//!
//! Both results are transmitted least significant byte first, like the
//! Ethernet FCS: `crc.to_le_bytes()`. For the FCS and the RoCEv2 ICRC this
//! is confirmed (Wireshark verifies the FCS; a ConnectX-4 Lx CNP capture
//! pins the ICRC). For the native VCRC it is an assumption by analogy:
//! Wireshark does not verify VCRCs and no native IB capture with a known
//! VCRC was at hand.

/// Reflected CRC-32 polynomial of IEEE 802.3 §3.2.9.
const CRC32_POLY_REFLECTED: u32 = 0xEDB8_8320;
/// Reflected VCRC polynomial of IBTA Vol 1 §7.8.2 (0x100B bit-reversed).
const CRC16_POLY_REFLECTED: u16 = 0xD008;

const fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { CRC32_POLY_REFLECTED ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
}

const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { CRC16_POLY_REFLECTED ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
}

static CRC32_TABLE: [u32; 256] = crc32_table();
static CRC16_TABLE: [u16; 256] = crc16_table();

/// An incremental IEEE 802.3 CRC-32, for CRCs over several slices.
#[derive(Debug, Clone, Copy)]
pub struct Crc32 {
    state: u32,
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32 {
    /// A CRC with the standard initial value 0xFFFF_FFFF.
    pub const fn new() -> Self {
        Crc32 { state: 0xFFFF_FFFF }
    }

    /// Feeds `data`.
    pub fn update(&mut self, data: &[u8]) {
        let mut c = self.state;
        for &b in data {
            c = CRC32_TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
        }
        self.state = c;
    }

    /// The CRC of everything fed so far (final XOR applied).
    pub const fn finish(&self) -> u32 {
        self.state ^ 0xFFFF_FFFF
    }
}

/// IEEE 802.3 CRC-32 of `data`. `crc32(b"123456789") == 0xCBF4_3926`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = Crc32::new();
    c.update(data);
    c.finish()
}

/// InfiniBand VCRC (IBTA Vol 1 §7.8.2) of `data`.
pub fn vcrc16(data: &[u8]) -> u16 {
    let mut c: u16 = 0xFFFF;
    for &b in data {
        c = CRC16_TABLE[((c ^ b as u16) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    // Bit-at-a-time reference implementations, to check the tables.
    fn crc32_bitwise(data: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in data {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
            }
        }
        !c
    }

    #[test]
    fn crc32_check_value() {
        // The catalogue "check" value of CRC-32/ISO-HDLC (the 802.3 CRC).
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn crc32_matches_bitwise() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        assert_eq!(crc32(&data), crc32_bitwise(&data));
        let mut inc = Crc32::new();
        inc.update(&data[..333]);
        inc.update(&data[333..]);
        assert_eq!(inc.finish(), crc32(&data));
    }

    #[test]
    fn crc32_of_eight_ones_leaves_rxe_seed() {
        // Linux rxe seeds its ICRC with 0xdebb20e3, "the result of computing
        // a CRC with a seed of 0xffffffff and 8 bytes of 0xff representing a
        // masked LRH" (drivers/infiniband/sw/rxe/rxe_icrc.c).
        let mut c = Crc32::new();
        c.update(&[0xFF; 8]);
        assert_eq!(c.state, 0xDEBB_20E3);
    }

    #[test]
    fn vcrc16_check_value() {
        // Reflected 0x100B, init/xorout 0xFFFF: the value follows from the
        // definition; checked against a bit-at-a-time computation.
        let mut c = 0xFFFFu16;
        for &b in b"123456789" {
            c ^= b as u16;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ 0xD008 } else { c >> 1 };
            }
        }
        assert_eq!(vcrc16(b"123456789"), !c);
        assert_ne!(vcrc16(b"123456789"), vcrc16(b"123456788"));
    }
}
