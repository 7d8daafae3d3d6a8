//! RC4 stream cipher.
//!
//! # Why this exists
//!
//! RC4 is broken: its key stream is measurably biased and RFC 7465 prohibits
//! it in TLS. It is here only so that the benchmark can measure it next to
//! the other ciphers (`openssl speed rc4`, `cryptsetup benchmark` style) and
//! for reading legacy data. Do not use it to protect anything.
//!
//! The RustCrypto [`rc4`](https://docs.rs/rc4) 0.2 crate generates one key
//! stream byte per call of a method on `&mut self` and XORs byte by byte.
//! This implementation keeps `i` and `j` in registers for the whole call,
//! generates eight key stream bytes per iteration and XORs them into the
//! data as one 64-bit word, in the manner of OpenSSL's `rc4-x86_64`:
//!
//! * the state is a `[u32; 256]` holding bytes: with `[u8; 256]`, the loads
//!   and stores of neighbouring entries share a word, and the CPU makes the
//!   loads wait for those stores (measured on an AMD EPYC Zen 3 core: 470
//!   against 720 MiB/s for the same loop);
//! * `i` is brought to a multiple of 8 first (byte by byte), so the eight
//!   `S[i]` of an iteration are fixed offsets from one base;
//! * the next `S[i]` is loaded early, before the store to the current
//!   `S[i]`, so that it is ready when `j` needs it.
//!
//! # What runs where
//!
//! * **x86-64**: `groups_x86_64`, the eight-byte loop in `asm!` (baseline
//!   instructions only, so it runs at every CPU tier and needs no dispatch;
//!   `dispatch::rc4` names it `x86-64-asm`). `i` and `j` are bytes held in
//!   64-bit registers and advanced by byte additions (`add %cl,%dil`), which
//!   wrap at 256 with no masking while the upper bits stay zero for
//!   indexing. The next `S[i]` is loaded *before* the step's two stores and
//!   a compare and branch (`j == i + 1`, 1 in 256, out of line) replaces it
//!   with the value just stored to `S[j]` in the rare case that store hit
//!   it. `j`'s chain is then one addition a byte: loaded after the store
//!   (the loop until 2026-11-27, as OpenSSL's `rc4-x86_64` orders it), the
//!   next `S[i]` waited on the store's address, which is `j`, and each
//!   byte's `j` on the last; patched with `cmov` instead of a branch, `j`
//!   is on the next `S[i]`'s path again (two thirds of the speed). Measured
//!   in one process against the loop after the store (Zen 4, alternating
//!   1 MiB passes): 1.19-1.35x. The key-stream bytes are gathered into
//!   `%rax` two at a time (`mov (S,idx,4),%al`, then `%ah`, `ror $16`) and
//!   XORed into the data with one 64-bit read-modify-write (gathering with
//!   `movzbl`, shifts and ORs measured 0.95-1.00x; it is not the chain).
//! * **elsewhere**: `groups_portable`, the same eight-byte loop in safe
//!   Rust (indices are masked `u8`/`usize` values, so there are no bounds
//!   checks). It reads the next `S[i]` before both stores of a step and
//!   patches it in the rare case (1 in 256) that the store to `S[j]` hit
//!   it. On x86-64 it is the tests' oracle for the `asm!` loop. A Rust loop
//!   in program order (11.75 instructions per byte) was 10% slower in wall
//!   time: its loads waited on the stores.
//!
//! The key stream is bit-for-bit that of the `rc4` crate and of RFC 6229.

use cipher::InvalidLength;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Shortest accepted key, in bytes: the `rc4` crate's limit (the catalogue
/// itself offers 40 to 2048-bit keys).
pub const MIN_KEY_LEN: usize = 1;
/// Longest accepted key, in bytes (2048 bits).
pub const MAX_KEY_LEN: usize = 256;

/// RC4 ("ARCFOUR") stream cipher state: the permutation `S` and the indices
/// `i` and `j`.
///
/// Deliberately not `Clone`: a copy would repeat the key stream.
pub struct Rc4 {
    /// The permutation; every entry is below 256 (the x86-64 `asm!` loop
    /// indexes with entries, so its memory safety rests on this; see the
    /// module docs for why the entries are words).
    s: [u32; 256],
    /// Index `i`.
    i: u8,
    /// Index `j`.
    j: u8,
}

impl Rc4 {
    /// Runs the key-scheduling algorithm on a key of [`MIN_KEY_LEN`] to
    /// [`MAX_KEY_LEN`] bytes (the range the `rc4` crate accepts).
    ///
    /// # Errors
    ///
    /// [`InvalidLength`] if the key is empty or longer than 256 bytes.
    pub fn new(key: &[u8]) -> Result<Self, InvalidLength> {
        if !(MIN_KEY_LEN..=MAX_KEY_LEN).contains(&key.len()) {
            return Err(InvalidLength);
        }
        let mut s = [0u32; 256];
        for (n, v) in (0..=255u32).zip(s.iter_mut()) {
            *v = n;
        }
        let mut j = 0u8;
        for (i, &k) in (0..256usize).zip(key.iter().cycle()) {
            j = j.wrapping_add(s[i] as u8).wrapping_add(k);
            s.swap(i, usize::from(j));
        }
        j.zeroize();
        Ok(Self { s, i: 0, j: 0 })
    }

    /// XORs the next `data.len()` bytes of the key stream into `data`
    /// (encryption and decryption are the same). The key stream continues
    /// across calls.
    pub fn apply_keystream(&mut self, data: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        self.apply_with(data, groups_x86_64);
        #[cfg(not(target_arch = "x86_64"))]
        self.apply_with(data, groups_portable);
    }

    /// [`Rc4::apply_keystream`] with the eight-byte groups generated by
    /// `groups` (one of the `groups_*` functions, same contract).
    #[inline(always)]
    fn apply_with(
        &mut self,
        data: &mut [u8],
        groups: impl FnOnce(&mut [u32; 256], u8, u8, &mut [u8]) -> (u8, u8),
    ) {
        let s = &mut self.s;
        let mut i = self.i;
        let mut j = self.j;
        // Byte by byte until the next `i` is a multiple of 8, so that each
        // eight-byte group reads `S[i + 1..i + 9]` at fixed offsets from one
        // base without wrapping.
        let head = usize::from(i.wrapping_add(1).wrapping_neg() & 7).min(data.len());
        let (head, rest) = data.split_at_mut(head);
        for b in head {
            *b ^= step(s, &mut i, &mut j);
        }
        let bulk = rest.len() & !7;
        let (bulk, tail) = rest.split_at_mut(bulk);
        if !bulk.is_empty() {
            (i, j) = groups(s, i, j, bulk);
        }
        for b in tail {
            *b ^= step(s, &mut i, &mut j);
        }
        self.i = i;
        self.j = j;
    }
}

/// The portable key-stream loop: XORs the key stream into `data`, whose
/// length is a multiple of 8, eight bytes per iteration, from state
/// `(s, i, j)` with `i + 1` a multiple of 8; returns the new `(i, j)`.
///
/// It runs on every architecture but x86-64, and on x86-64 it is the
/// oracle the tests hold [`groups_x86_64`] to.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn groups_portable(s: &mut [u32; 256], mut i: u8, j: u8, data: &mut [u8]) -> (u8, u8) {
    debug_assert!(data.len().is_multiple_of(8) && i.wrapping_add(1).is_multiple_of(8));
    // `j` unmasked: the loop-carried chain is one addition per byte, the
    // mask is off it.
    let mut jj = u32::from(j);
    // S[i + 1], carried from one group to the next.
    let mut x = s[usize::from(i.wrapping_add(1))];
    for chunk in data.chunks_exact_mut(8) {
        let base = usize::from(i.wrapping_add(1) & 0xF8);
        let mut ks = 0u64;
        for k in 0..8 {
            jj = jj.wrapping_add(x);
            let jx = (jj & 0xFF) as usize;
            let y = s[jx];
            // The next S[i] is read before the two stores of this step
            // rather than after them, so that it never waits on the
            // address of the store to S[j]; in the rare case (1 in 256)
            // that S[j] is the next S[i], that store's value replaces it.
            let ni = (base + k + 1) & 0xFF;
            let mut next = s[ni];
            if jx == ni {
                core::hint::cold_path();
                next = x;
            }
            s[jx] = x;
            s[base | k] = y;
            ks |= u64::from(s[usize::from(x.wrapping_add(y) as u8)]) << (8 * k);
            x = next;
        }
        i = i.wrapping_add(8);
        let chunk: &mut [u8; 8] = chunk.try_into().expect("chunk of 8");
        *chunk = (u64::from_le_bytes(*chunk) ^ ks).to_le_bytes();
    }
    (i, jj as u8)
}

/// One step of the x86-64 loop (`$k` in 0..7; steps 0 to 6, step 7 is
/// written out in [`groups_x86_64`]): `$cur` holds `S[i]` (`i` = `x + $k`),
/// `$next` receives `S[i + 1]`, and the key-stream byte goes to `$byte`
/// (`%al` for even steps, `%ah` for odd ones). The `@fix` arm is the step's
/// out-of-line path for the store to `S[j]` having hit `S[i + 1]`.
#[cfg(target_arch = "x86_64")]
macro_rules! rc4_step {
    ($k:literal, $cur:literal, $next:literal, $byte:literal) => {
        concat!(
            // j += S[i] (wraps in the byte register; its upper bits stay 0)
            "add {",
            $cur,
            ":l}, {y:l}\n",
            // the next S[i], before the store to S[j] that may change it
            "movl 4*",
            $k,
            "+4({s}, {x}, 4), {",
            $next,
            ":e}\n",
            // %edx = S[j]; S[j] = S[i]; S[i] = S[j]
            "movl ({s}, {y}, 4), %edx\n",
            "movl {",
            $cur,
            ":e}, ({s}, {y}, 4)\n",
            "movl %edx, 4*",
            $k,
            "({s}, {x}, 4)\n",
            // j = i + 1 (1 in 256): the next S[i] is the value just stored
            "lea ",
            $k,
            "+1({x}), {t}\n",
            "cmp {t}, {y}\n",
            "je 3",
            $k,
            "b\n",
            "4",
            $k,
            ":\n",
            // key-stream byte S[(S[i] + S[j]) & 255]
            "add {",
            $cur,
            ":l}, %dl\n",
            "movb ({s}, %rdx, 4), ",
            $byte,
            "\n",
        )
    };
    (@fix $k:literal, $cur:literal, $next:literal) => {
        concat!(
            "3", $k, ":\n", "movl {", $cur, ":e}, {", $next, ":e}\n", "jmp 4", $k, "f\n",
        )
    };
}

/// [`groups_portable`] in `asm!` for x86-64 (baseline instructions only), in
/// the manner of OpenSSL's `rc4-x86_64` eight-byte loop; see the module docs.
#[cfg(target_arch = "x86_64")]
fn groups_x86_64(s: &mut [u32; 256], i: u8, j: u8, data: &mut [u8]) -> (u8, u8) {
    debug_assert!(data.len().is_multiple_of(8) && i.wrapping_add(1).is_multiple_of(8));
    if data.is_empty() {
        return (i, j);
    }
    // The indices are bytes held zero-extended in 64-bit registers and only
    // ever changed by byte-wide additions, so they stay below 256.
    let mut x = u64::from(i.wrapping_add(1));
    let mut y = u64::from(j);
    let len = data.len() & !7;
    let end = data[len..].as_mut_ptr();
    // Counts up from -len to 0: one register is both offset and counter.
    let n = -(len as isize);
    // SAFETY: memory: every `S` access is `s + 4 * index` with index
    // `x + k` (x a multiple of 8 below 256, k < 8), `(x + 8) & 255` (made
    // with `movzbl`; it becomes the next `x`), `y`, or a sum byte, all
    // below 256, because each `S` entry is below 256 (`S` is a permutation of
    // 0..=255 that only this module writes) and `y` and the sums are only
    // changed by byte additions; `movl` loads zero-extend and `%dl`
    // additions leave bits 8.. of `%rdx` clear. (`x + k + 1` in `{t}` of
    // steps 0-6 is only compared, never an address.) The jumps stay inside
    // the block: the `@fix` paths sit before the loop and return into it.
    // The data is read and written as 8-byte words at `end + n` for `n`
    // from `-len` (a nonzero multiple of 8) up to -8, inside `data`.
    // Registers: every written register is an output (`%rax`, `%rdx`
    // clobbered); the flags are clobbered (the default); no stack use. `s`
    // is in `reg_abcd` (and so `%rcx`, as `%rax` and `%rdx` are taken)
    // because an instruction that names `%ah` cannot have a REX prefix, so
    // its address registers must be legacy ones.
    unsafe {
        core::arch::asm!(
            "movl ({s}, {x}, 4), {ta:e}",
            "jmp 2f",
            // The rare paths, out of the loop's way.
            rc4_step!(@fix 0, "ta", "tb"),
            rc4_step!(@fix 1, "tb", "ta"),
            rc4_step!(@fix 2, "ta", "tb"),
            rc4_step!(@fix 3, "tb", "ta"),
            rc4_step!(@fix 4, "ta", "tb"),
            rc4_step!(@fix 5, "tb", "ta"),
            rc4_step!(@fix 6, "ta", "tb"),
            rc4_step!(@fix 7, "tb", "ta"),
            ".p2align 4",
            "2:",
            rc4_step!(0, "ta", "tb", "%al"),
            rc4_step!(1, "tb", "ta", "%ah"),
            "ror $16, %rax",
            rc4_step!(2, "ta", "tb", "%al"),
            rc4_step!(3, "tb", "ta", "%ah"),
            "ror $16, %rax",
            rc4_step!(4, "ta", "tb", "%al"),
            rc4_step!(5, "tb", "ta", "%ah"),
            "ror $16, %rax",
            rc4_step!(6, "ta", "tb", "%al"),
            // Step 7: the next group's first S[i] is S[(x + 8) & 255],
            // loaded before the stores as in the other steps; then `x`
            // moves on by 8.
            "add {tb:l}, {y:l}",
            "lea 8({x}), {t}",
            "movzbl {t:l}, {t:e}",
            "movl ({s}, {t}, 4), {ta:e}",
            "movl ({s}, {y}, 4), %edx",
            "movl {tb:e}, ({s}, {y}, 4)",
            "movl %edx, 4*7({s}, {x}, 4)",
            "mov {t}, {x}",
            "cmp {t}, {y}",
            "je 37b",
            "47:",
            "add {tb:l}, %dl",
            "movb ({s}, %rdx, 4), %ah",
            // After four 16-bit rotations byte k of %rax is step k's.
            "ror $16, %rax",
            "xor %rax, ({end}, {n})",
            "add $8, {n}",
            "jnz 2b",
            s = in(reg_abcd) s.as_mut_ptr(),
            x = inout(reg) x,
            y = inout(reg) y,
            ta = out(reg) _,
            tb = out(reg) _,
            t = out(reg) _,
            end = in(reg) end,
            n = inout(reg) n => _,
            out("rax") _,
            out("rdx") _,
            options(att_syntax, nostack),
        );
    }
    ((x as u8).wrapping_sub(1), y as u8)
}

/// One step of the pseudo-random generation algorithm.
#[inline(always)]
fn step(s: &mut [u32; 256], i: &mut u8, j: &mut u8) -> u8 {
    *i = i.wrapping_add(1);
    let x = s[usize::from(*i)];
    *j = j.wrapping_add(x as u8);
    let y = s[usize::from(*j)];
    s[usize::from(*i)] = y;
    s[usize::from(*j)] = x;
    s[usize::from(x.wrapping_add(y) as u8)] as u8
}

impl core::fmt::Debug for Rc4 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Rc4 { ... }")
    }
}

impl Drop for Rc4 {
    fn drop(&mut self) {
        self.s.zeroize();
        self.i.zeroize();
        self.j.zeroize();
    }
}

impl ZeroizeOnDrop for Rc4 {}

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{KeyInit, StreamCipher};
    use hex_literal::hex;

    /// Reference implementation (RustCrypto `rc4` 0.2).
    type Reference = ::rc4::Rc4;

    /// The key stream offsets RFC 6229 tabulates, 16 bytes each.
    const OFFSETS: [usize; 18] = [
        0, 16, 240, 256, 496, 512, 752, 768, 1008, 1024, 1520, 1536, 2032, 2048, 3056, 3072, 4080,
        4096,
    ];

    /// RFC 6229 section 2: (key, key stream at each of [`OFFSETS`]).
    const RFC6229: [(&[u8], [[u8; 16]; 18]); 6] = [
        // 40-bit key, first key set.
        (
            &hex!("0102030405"),
            [
                hex!("b2396305f03dc027ccc3524a0a1118a8"),
                hex!("6982944f18fc82d589c403a47a0d0919"),
                hex!("28cb1132c96ce286421dcaadb8b69eae"),
                hex!("1cfcf62b03eddb641d77dfcf7f8d8c93"),
                hex!("42b7d0cdd918a8a33dd51781c81f4041"),
                hex!("6459844432a7da923cfb3eb4980661f6"),
                hex!("ec10327bde2beefd18f9277680457e22"),
                hex!("eb62638d4f0ba1fe9fca20e05bf8ff2b"),
                hex!("45129048e6a0ed0b56b490338f078da5"),
                hex!("30abbcc7c20b01609f23ee2d5f6bb7df"),
                hex!("3294f744d8f9790507e70f62e5bbceea"),
                hex!("d8729db41882259bee4f825325f5a130"),
                hex!("1eb14a0c13b3bf47fa2a0ba93ad45b8b"),
                hex!("cc582f8ba9f265e2b1be9112e975d2d7"),
                hex!("f2e30f9bd102ecbf75aaade9bc35c43c"),
                hex!("ec0e11c479dc329dc8da7968fe965681"),
                hex!("068326a2118416d21f9d04b2cd1ca050"),
                hex!("ff25b58995996707e51fbdf08b34d875"),
            ],
        ),
        // 128-bit key, first key set.
        (
            &hex!("0102030405060708090a0b0c0d0e0f10"),
            [
                hex!("9ac7cc9a609d1ef7b2932899cde41b97"),
                hex!("5248c4959014126a6e8a84f11d1a9e1c"),
                hex!("065902e4b620f6cc36c8589f66432f2b"),
                hex!("d39d566bc6bce3010768151549f3873f"),
                hex!("b6d1e6c4a5e4771cad79538df295fb11"),
                hex!("c68c1d5c559a974123df1dbc52a43b89"),
                hex!("c5ecf88de897fd57fed301701b82a259"),
                hex!("eccbe13de1fcc91c11a0b26c0bc8fa4d"),
                hex!("e7a72574f8782ae26aabcf9ebcd66065"),
                hex!("bdf0324e6083dcc6d3cedd3ca8c53c16"),
                hex!("b40110c4190b5622a96116b0017ed297"),
                hex!("ffa0b514647ec04f6306b892ae661181"),
                hex!("d03d1bc03cd33d70dff9fa5d71963ebd"),
                hex!("8a44126411eaa78bd51e8d87a8879bf5"),
                hex!("fabeb76028ade2d0e48722e46c4615a3"),
                hex!("c05d88abd50357f935a63c59ee537623"),
                hex!("ff38265c1642c1abe8d3c2fe5e572bf8"),
                hex!("a36a4c301ae8ac13610ccbc12256cacc"),
            ],
        ),
        // 256-bit key, first key set.
        (
            &hex!("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"),
            [
                hex!("eaa6bd25880bf93d3f5d1e4ca2611d91"),
                hex!("cfa45c9f7e714b54bdfa80027cb14380"),
                hex!("114ae344ded71b35f2e60febad727fd8"),
                hex!("02e1e7056b0f623900496422943e97b6"),
                hex!("91cb93c787964e10d9527d999c6f936b"),
                hex!("49b18b42f8e8367cbeb5ef104ba1c7cd"),
                hex!("87084b3ba700bade955610672745b374"),
                hex!("e7a7b9e9ec540d5ff43bdb12792d1b35"),
                hex!("c799b596738f6b018c76c74b1759bd90"),
                hex!("7fec5bfd9f9b89ce6548309092d7e958"),
                hex!("40f250b26d1f096a4afd4c340a588815"),
                hex!("3e34135c79db010200767651cf263073"),
                hex!("f656abccf88dd827027b2ce917d464ec"),
                hex!("18b62503bfbc077fbabb98f20d98ab34"),
                hex!("8aed95ee5b0dcbfbef4eb21d3a3f52f9"),
                hex!("625a1ab00ee39a5327346bddb01a9c18"),
                hex!("a13a7c79c7e119b5ab0296ab28c300b9"),
                hex!("f3e4c0a2e02d1d01f7f0a74618af2b48"),
            ],
        ),
        // 40-bit key, second key set.
        (
            &hex!("833222772a"),
            [
                hex!("80ad97bdc973df8a2e879e92a497efda"),
                hex!("20f060c2f2e5126501d3d4fea10d5fc0"),
                hex!("faa148e99046181fec6b2085f3b20ed9"),
                hex!("f0daf5bab3d596839857846f73fbfe5a"),
                hex!("1c7e2fc4639232fe297584b296996bc8"),
                hex!("3db9b249406cc8edffac55ccd322ba12"),
                hex!("e4f9f7e0066154bbd125b745569bc897"),
                hex!("75d5ef262b44c41a9cf63ae14568e1b9"),
                hex!("6da453dbf81e82334a3d8866cb50a1e3"),
                hex!("7828d074119cab5c22b294d7a9bfa0bb"),
                hex!("adb89cea9a15fbe617295bd04b8ca05c"),
                hex!("6251d87fd4aaae9a7e4ad5c217d3f300"),
                hex!("e7119bd6dd9b22afe8f89585432881e2"),
                hex!("785b60fd7ec4e9fcb6545f350d660fab"),
                hex!("afecc037fdb7b0838eb3d70bcd268382"),
                hex!("dbc1a7b49d57358cc9fa6d61d73b7cf0"),
                hex!("6349d126a37afcba89794f9804914fdc"),
                hex!("bf42c3018c2f7c66bfde524975768115"),
            ],
        ),
        // 128-bit key, second key set.
        (
            &hex!("ebb46227c6cc8b37641910833222772a"),
            [
                hex!("720c94b63edf44e131d950ca211a5a30"),
                hex!("c366fdeacf9ca80436be7c358424d20b"),
                hex!("b3394a40aabf75cba42282ef25a0059f"),
                hex!("4847d81da4942dbc249defc48c922b9f"),
                hex!("08128c469f275342adda202b2b58da95"),
                hex!("970dacef40ad98723bac5d6955b81761"),
                hex!("3cb89993b07b0ced93de13d2a11013ac"),
                hex!("ef2d676f1545c2c13dc680a02f4adbfe"),
                hex!("b60595514f24bc9fe522a6cad7393644"),
                hex!("b515a8c5011754f59003058bdb81514e"),
                hex!("3c70047e8cbc038e3b9820db601da495"),
                hex!("1175da6ee756de46a53e2b075660b770"),
                hex!("00a542bba02111cc2c65b38ebdba587e"),
                hex!("5865fdbb5b48064104e830b380f2aede"),
                hex!("34b21ad2ad44e999db2d7f0863f0d9b6"),
                hex!("84a9218fc36e8a5f2ccfbeae53a27d25"),
                hex!("a2221a11b833ccb498a59540f0545f4a"),
                hex!("5bbeb4787d59e5373fdbea6c6f75c29b"),
            ],
        ),
        // 256-bit key, second key set.
        (
            &hex!("1ada31d5cf688221c109163908ebe51debb46227c6cc8b37641910833222772a"),
            [
                hex!("dd5bcb0018e922d494759d7c395d02d3"),
                hex!("c8446f8f77abf737685353eb89a1c9eb"),
                hex!("af3e30f9c095045938151575c3fb9098"),
                hex!("f8cb6274db99b80b1d2012a98ed48f0e"),
                hex!("25c3005a1cb85de076259839ab7198ab"),
                hex!("9dcbc183e8cb994b727b75be3180769c"),
                hex!("a1d3078dfa9169503ed9d4491dee4eb2"),
                hex!("8514a5495858096f596e4bcd66b10665"),
                hex!("5f40d59ec1b03b33738efa60b2255d31"),
                hex!("3477c7f764a41baceff90bf14f92b7cc"),
                hex!("ac4e95368d99b9eb78b8da8f81ffa795"),
                hex!("8c3c13f8c2388bb73f38576e65b7c446"),
                hex!("13c4b9c1dfb66579eddd8a280b9f7316"),
                hex!("ddd27820550126698efaadc64b64f66e"),
                hex!("f08f2e66d28ed143f3a237cf9de73559"),
                hex!("9ea36c525531b880ba124334f57b0b70"),
                hex!("d5a39e3dfcc50280bac4a6b5aa0dca7d"),
                hex!("370b1c1fe655916d97fd0d47ca1d72b8"),
            ],
        ),
    ];

    use crate::ciphers::test_support::XorShift;

    /// Applies the key stream to `data` in calls of the given sizes (cycled;
    /// the last call takes whatever is left).
    fn apply_in_pieces(rc4: &mut Rc4, data: &mut [u8], sizes: &[usize]) {
        let mut rest = data;
        for &n in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (head, tail) = rest.split_at_mut(n.min(rest.len()));
            rc4.apply_keystream(head);
            rest = tail;
        }
    }

    /// RFC 6229 key streams (the key stream is the encryption of zeros),
    /// generated in one call and in uneven pieces that start and end at
    /// every alignment of the eight-byte loop.
    #[test]
    fn rfc6229() {
        let len = OFFSETS[17] + 16;
        let splits: [&[usize]; 5] = [
            &[len],
            &[1],
            &[7, 1, 13, 64, 3, 250, 9, 1000],
            &[16],
            &[5, 8, 31, 17, 2, 240, 511],
        ];
        for (key, expected) in RFC6229 {
            for sizes in splits {
                let mut rc4 = Rc4::new(key).unwrap();
                let mut stream = vec![0u8; len];
                apply_in_pieces(&mut rc4, &mut stream, sizes);
                for (&off, want) in OFFSETS.iter().zip(&expected) {
                    assert_eq!(
                        &stream[off..off + 16],
                        want,
                        "key {}, offset {off}, pieces {sizes:?}",
                        hex::encode(key)
                    );
                }
            }
        }
    }

    /// Encryption XORs into the data, and a second pass with a fresh state
    /// decrypts.
    #[test]
    fn round_trip() {
        let key = hex!("0102030405060708090a0b0c0d0e0f10");
        let pt: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = pt.clone();
        Rc4::new(&key).unwrap().apply_keystream(&mut buf);
        let mut stream = vec![0u8; pt.len()];
        Rc4::new(&key).unwrap().apply_keystream(&mut stream);
        for ((c, p), k) in buf.iter().zip(&pt).zip(&stream) {
            assert_eq!(*c, p ^ k);
        }
        Rc4::new(&key).unwrap().apply_keystream(&mut buf);
        assert_eq!(buf, pt);
    }

    /// Same accepted key lengths as the `rc4` crate: 1 to 256 bytes.
    #[test]
    fn key_lengths() {
        for len in [0usize, 257, 300] {
            assert!(Rc4::new(&vec![1u8; len]).is_err(), "{len}");
            assert!(Reference::new_from_slice(&vec![1u8; len]).is_err(), "{len}");
        }
        for len in [1usize, 5, 16, 32, 255, 256] {
            assert!(Rc4::new(&vec![1u8; len]).is_ok(), "{len}");
            assert!(Reference::new_from_slice(&vec![1u8; len]).is_ok(), "{len}");
        }
    }

    #[test]
    fn debug_hides_state() {
        assert_eq!(format!("{:?}", Rc4::new(&[1; 16]).unwrap()), "Rc4 { ... }");
        fn zeroizes<T: ZeroizeOnDrop>() {}
        zeroizes::<Rc4>();
    }

    /// A random state: the key schedule of a random key, then a random
    /// number of key-stream bytes so that `i` and `j` are anywhere.
    #[cfg(target_arch = "x86_64")]
    fn random_state(rng: &mut XorShift) -> Rc4 {
        let mut key = vec![0u8; 1 + rng.below(256)];
        rng.fill(&mut key);
        let mut rc4 = Rc4::new(&key).unwrap();
        rc4.apply_keystream(&mut vec![0u8; rng.below(600)]);
        rc4
    }

    /// The x86-64 kernel against the portable loop, called directly: every
    /// start `i` it accepts (`i + 1` = 0, 8, ..., 248, so groups start at
    /// every base and wrap past 255), lengths of 8 to 4096 bytes in groups
    /// of 8, random data; output, `i`, `j` and all of `S` compared.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_64_groups_match_portable() {
        let mut rng = XorShift(0x0123_4567_89AB_CDEF);
        for iter in 0..2000 {
            let start = random_state(&mut rng);
            let i = ((iter % 32) * 8 + 7) as u8;
            let j = rng.below(256) as u8;
            let len = 8 * rng.below(if iter % 50 == 0 { 513 } else { 40 });
            let mut data = vec![0u8; len];
            rng.fill(&mut data);
            let (mut s_asm, mut s_rs) = (start.s, start.s);
            let mut a = data.clone();
            let mut b = data;
            let got = groups_x86_64(&mut s_asm, i, j, &mut a);
            let want = groups_portable(&mut s_rs, i, j, &mut b);
            assert_eq!(got, want, "i {i} j {j} len {len}");
            assert!(a == b && s_asm == s_rs, "i {i} j {j} len {len}");
        }
    }

    /// The rare path of every step of the x86-64 kernel, forced: for each
    /// step `k` of a group (0-7, the last one's next index wrapping at the
    /// top of `S`) and group bases at the bottom, middle and top of `S`, a
    /// start `j` for which the step's store to `S[j]` lands on the next
    /// `S[i]` (found by running the steps), then kernel against portable.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_64_groups_handle_the_store_to_the_next_s_i() {
        let mut rng = XorShift(0x5EED_0000_0000_0A11);
        for base in [0u8, 128, 248] {
            for k in 0..8u8 {
                let mut found = 0;
                for _ in 0..20 {
                    let start = random_state(&mut rng);
                    let i = base.wrapping_sub(1);
                    // A start `j` whose step `k` has j = i + 1.
                    let hit = (0..=255u8).find(|&j0| {
                        let (mut s, mut ii, mut jj) = (start.s, i, j0);
                        for _ in 0..k {
                            step(&mut s, &mut ii, &mut jj);
                        }
                        step(&mut s, &mut ii, &mut jj);
                        jj == ii.wrapping_add(1)
                    });
                    let Some(j) = hit else { continue };
                    found += 1;
                    let mut data = vec![0u8; 64];
                    rng.fill(&mut data);
                    let (mut s_asm, mut s_rs) = (start.s, start.s);
                    let (mut a, mut b) = (data.clone(), data);
                    let got = groups_x86_64(&mut s_asm, i, j, &mut a);
                    let want = groups_portable(&mut s_rs, i, j, &mut b);
                    assert_eq!(got, want, "base {base} step {k} j {j}");
                    assert!(a == b && s_asm == s_rs, "base {base} step {k} j {j}");
                }
                assert!(found >= 10, "base {base} step {k}: {found} states hit");
            }
        }
    }

    /// The whole call on x86-64 (head and tail bytes around the kernel)
    /// against the same call on the portable loop: random states, calls of
    /// 0 to 300 bytes so that each call starts at every residue of `i`
    /// mod 8, and long streams; compared after every call.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_64_matches_portable() {
        let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
        for iter in 0..300 {
            let mut asm = random_state(&mut rng);
            let mut rs = Rc4 {
                s: asm.s,
                i: asm.i,
                j: asm.j,
            };
            let len = rng.below(if iter % 30 == 0 { 200_000 } else { 3000 });
            let mut data = vec![0u8; len];
            rng.fill(&mut data);
            let (mut a, mut b) = (data.clone(), data);
            let mut done = 0;
            while done < len {
                let n = if iter % 30 == 0 {
                    rng.below(70_000)
                } else {
                    rng.below(301)
                }
                .min(len - done);
                asm.apply_with(&mut a[done..done + n], groups_x86_64);
                rs.apply_with(&mut b[done..done + n], groups_portable);
                done += n;
                assert_eq!(a[..done], b[..done], "iter {iter} at {done}");
                assert!(asm.s == rs.s && (asm.i, asm.j) == (rs.i, rs.j));
            }
        }
    }

    /// Cross-check against the `rc4` crate: 3000 random keys of every
    /// accepted length, random data consumed in random call sizes (both
    /// sides split differently), compared after every call.
    #[test]
    fn matches_rc4_crate() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for iter in 0..3000 {
            let key_len = if iter < 256 {
                iter + 1
            } else {
                1 + rng.below(256)
            };
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let mut ours = Rc4::new(&key).unwrap();
            let mut reference = Reference::new_from_slice(&key).unwrap();
            let len = rng.below(if iter % 100 == 0 { 20_000 } else { 600 });
            let mut data = vec![0u8; len];
            rng.fill(&mut data);
            let mut a = data.clone();
            let mut b = data;
            let mut done = 0;
            while done < len {
                let n = (1 + rng.below(if iter % 2 == 0 { 20 } else { 300 })).min(len - done);
                ours.apply_keystream(&mut a[done..done + n]);
                reference.apply_keystream(&mut b[done..done + n]);
                done += n;
                assert_eq!(a[..done], b[..done], "key {}", hex::encode(&key));
            }
        }
    }
}
