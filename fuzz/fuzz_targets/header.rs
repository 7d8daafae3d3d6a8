//! Arbitrary bytes as the start of a clustercrypt file: `Header::parse` and
//! `stream::open_header` must return an error or a header, never panic, and a
//! header that parses must be canonical (it writes back the bytes it was read
//! from). `open_header` runs with a fixed key-file key, so Argon2 never runs
//! whatever cost a hostile header asks for, and since the MAC is random it
//! must never accept.
//!
//! Run with `cargo +nightly fuzz run header` in `fuzz/`.

#![no_main]

use clustercrypt_engine::format::{HEADER_LEN, HEADER_MAC_OFFSET, Header};
use clustercrypt_engine::stream::open_header;
use clustercrypt_engine::{KeySource, MasterKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((header, mac)) = Header::parse(data) {
        assert!(data.len() >= HEADER_LEN);
        assert_eq!(&header.body()[..], &data[..HEADER_MAC_OFFSET]);
        assert_eq!(&mac[..], &data[HEADER_MAC_OFFSET..HEADER_LEN]);
    }
    let key = KeySource::Key(MasterKey::from_bytes([42; 32]));
    let mut input = data;
    // A forged header would need the HMAC-SHA256 of its body under a key
    // derived from this key: with random bytes that does not happen.
    assert!(open_header(&mut input, &key).is_err());
});
