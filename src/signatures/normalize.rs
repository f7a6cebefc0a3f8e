//! Normalizing GitHub Actions raw job logs, one line at a time: what a signature's pattern sees.
//!
//! A raw log line is `BOM? TIMESTAMP SPACE message CR? LF`, where the timestamp looks like
//! `2026-07-15T21:26:03.1234567Z`, continuation lines of a multi-line message carry no timestamp,
//! a UTF-8 BOM may appear anywhere (GitHub concatenates step logs), ANSI escape sequences appear
//! anywhere, and bytes may be invalid UTF-8. Normalizing drops the BOMs, the timestamp, the ANSI
//! and other terminal escape sequences, C1 control characters and the trailing CR, and decodes
//! the rest lossily. Logs in any other format (plain text, stdin) simply have no timestamps.
//!
//! The matcher's fast path only calls [`normalize_line`] for lines that need it ([`needs_cleaning`]);
//! for the others the normalized text is a sub-slice of the raw line ([`strip_prefix`]).

use std::borrow::Cow;

const BOM: &[u8] = "\u{feff}".as_bytes();
const ESC: u8 = 0x1b;

/// Length of the GitHub timestamp prefix at the start of `line` (including the space after it),
/// or 0. Accepts `YYYY-MM-DDTHH:MM:SS` with an optional fraction of 1 to 9 digits, then `Z `.
pub fn timestamp_len(line: &[u8]) -> usize {
    const SHAPE: &[u8; 19] = b"0000-00-00T00:00:00";
    if line.len() < 21 {
        return 0;
    }
    for (i, &want) in SHAPE.iter().enumerate() {
        let got = line[i];
        let ok = if want == b'0' {
            got.is_ascii_digit()
        } else {
            got == want
        };
        if !ok {
            return 0;
        }
    }
    let mut i = 19;
    if line[i] == b'.' {
        let digits = line[i + 1..]
            .iter()
            .take(10)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || digits > 9 {
            return 0;
        }
        i += 1 + digits;
    }
    if line.len() >= i + 2 && line[i] == b'Z' && line[i + 1] == b' ' {
        i + 2
    } else if line.len() == i + 1 && line[i] == b'Z' {
        // A timestamp followed by an empty message and no space.
        i + 1
    } else {
        0
    }
}

/// The line without its trailing CR and leading timestamp, for a line that needs no cleaning.
/// `line` excludes the LF.
pub fn strip_prefix(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    &line[timestamp_len(line)..]
}

/// Whether `line` holds anything [`strip_prefix`] would leave in: an escape sequence, a BOM, a C1
/// control character, or invalid UTF-8.
pub fn needs_cleaning(line: &[u8]) -> bool {
    if memchr::memchr3(ESC, 0xef, 0xc2, line).is_some() {
        let mut rest = line;
        while let Some(i) = memchr::memchr3(ESC, 0xef, 0xc2, rest) {
            match rest[i] {
                ESC => return true,
                0xef if rest[i..].starts_with(BOM) => return true,
                0xc2 if rest.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => {
                    return true;
                }
                _ => {}
            }
            rest = &rest[i + 1..];
        }
    }
    std::str::from_utf8(line).is_err()
}

/// The normalized text of one raw line (without its LF): BOMs, the timestamp, escape sequences,
/// C1 controls and a trailing CR removed, invalid UTF-8 replaced by U+FFFD.
pub fn normalize_line(line: &[u8]) -> Cow<'_, str> {
    if !needs_cleaning(line) {
        let text = strip_prefix(line);
        // needs_cleaning checked the whole line is UTF-8.
        return Cow::Borrowed(std::str::from_utf8(text).unwrap_or_default());
    }
    let mut out = String::with_capacity(line.len());
    normalize_into(line, &mut out);
    Cow::Owned(out)
}

/// Like [`normalize_line`], into a reused buffer (cleared first).
pub fn normalize_into(line: &[u8], out: &mut String) {
    out.clear();
    let mut line = line.strip_suffix(b"\r").unwrap_or(line);
    while let Some(rest) = line.strip_prefix(BOM) {
        line = rest;
    }
    line = &line[timestamp_len(line)..];
    // Kept bytes are copied in runs; invalid UTF-8 is decoded lossily at the end.
    let mut bytes: Vec<u8> = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if b == ESC {
            i += escape_len(&line[i..]);
        } else if line[i..].starts_with(BOM) {
            i += BOM.len();
        } else if b == 0xc2 && line.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) {
            // C1 control (U+0080..U+009F); U+009B is a CSI introducer.
            if line[i + 1] == 0x9b {
                i += 2 + csi_tail_len(&line[i + 2..]);
            } else {
                i += 2;
            }
        } else {
            bytes.push(b);
            i += 1;
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => *out = text,
        Err(e) => out.push_str(&String::from_utf8_lossy(e.as_bytes())),
    }
}

/// Length of the escape sequence starting with ESC at `s[0]`: CSI (`ESC [ params final`), OSC
/// (`ESC ] … BEL` or `ESC ] … ESC \`), or a two-byte escape. A lone ESC at the end is one byte.
fn escape_len(s: &[u8]) -> usize {
    match s.get(1) {
        None => 1,
        Some(b'[') => 2 + csi_tail_len(&s[2..]),
        Some(b']') => {
            let mut i = 2;
            while i < s.len() {
                if s[i] == 0x07 {
                    return i + 1;
                }
                if s[i] == ESC && s.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            s.len()
        }
        Some(&b) if (0x40..=0x5f).contains(&b) => 2,
        Some(&b) if (0x20..=0x2f).contains(&b) => {
            // nF escape: intermediates, then one final byte (`ESC ( B`).
            let mut i = 1;
            while i < s.len() && (0x20..=0x2f).contains(&s[i]) {
                i += 1;
            }
            (i + 1).min(s.len())
        }
        Some(_) => 1,
    }
}

/// Length of a CSI sequence after its introducer: parameter bytes `0-?`, intermediate bytes
/// ` -/`, one final byte `@-~`. An unterminated sequence stops at the first other byte.
fn csi_tail_len(s: &[u8]) -> usize {
    let mut i = 0;
    while i < s.len() && (0x30..=0x3f).contains(&s[i]) {
        i += 1;
    }
    while i < s.len() && (0x20..=0x2f).contains(&s[i]) {
        i += 1;
    }
    if i < s.len() && (0x40..=0x7e).contains(&s[i]) {
        i + 1
    } else {
        i
    }
}

/// The step a `##[group]` line opens, if `text` (normalized) is one.
pub fn group_title(text: &str) -> Option<&str> {
    text.strip_prefix("##[group]")
}

/// Whether `text` (normalized) is the `##[error]Process completed with exit code N.` line that
/// ends every failed step: boilerplate that must never tell one failure from another.
pub fn is_exit_code_boilerplate(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("##[error]Process completed with exit code ") else {
        return false;
    };
    let rest = rest.strip_suffix('.').unwrap_or(rest);
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a sample of a file (its first block) looks binary: more than 1 NUL byte per 100 bytes.
/// Text logs have none; UTF-16 text has one every other byte.
pub fn looks_binary(sample: &[u8]) -> bool {
    let nuls = memchr::memchr_iter(0, sample).count();
    nuls > 0 && nuls * 100 >= sample.len()
}

/// Magic numbers of compressed and archive formats a log is never in.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x1f\x8b", "gzip data"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"PK\x03\x04", "zip data"),
    (b"PK\x05\x06", "zip data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"BZh", "bzip2 data"),
    (b"7z\xbc\xaf\x27\x1c", "7-zip data"),
    (b"\x7fELF", "an executable"),
];

/// Below this many bytes the byte entropy says little; only the other tests apply.
const ENTROPY_MIN_SAMPLE: usize = 512;
/// Bits per byte above which a sample is compressed or random data. Text, UTF-8 in any
/// script included, stays well below (English logs ≈ 5, CJK ≈ 6.5); compressed data is ≈ 8.
const ENTROPY_BINARY: f64 = 7.5;

/// Why a sample of a file (its first block) is not a text log: many NUL bytes, the magic number
/// of a compressed or archive format (gzip, zstd, zip, xz, bzip2, 7-zip, ELF), or bytes as
/// evenly spread as compressed or random data. `None` for text.
pub fn binary_reason(sample: &[u8]) -> Option<&'static str> {
    let bom = b"\xef\xbb\xbf";
    let body = sample.strip_prefix(bom).unwrap_or(sample);
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| body.starts_with(magic)) {
        // `BZh` is also how a line of text may start: bzip2 has a block size digit after it.
        if *what != "bzip2 data" || body.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
            return Some(what);
        }
    }
    if looks_binary(sample) {
        return Some("many NUL bytes");
    }
    if sample.len() >= ENTROPY_MIN_SAMPLE && entropy(sample) > ENTROPY_BINARY {
        return Some("compressed or random bytes");
    }
    None
}

/// Shannon entropy of the byte distribution, in bits per byte (0 to 8).
fn entropy(sample: &[u8]) -> f64 {
    let mut counts = [0u64; 256];
    for &b in sample {
        counts[usize::from(b)] += 1;
    }
    let n = sample.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_timestamp_bom_ansi_and_cr() {
        let raw = b"\xef\xbb\xbf2026-07-15T21:26:03.1234567Z \x1b[36;1mpytest -v\x1b[0m tests/\r";
        assert_eq!(normalize_line(raw), "pytest -v tests/");
    }

    #[test]
    fn keeps_lines_without_timestamp() {
        assert_eq!(normalize_line(b"    continuation"), "    continuation");
        assert_eq!(
            normalize_line(b"2026-07-15 not a timestamp"),
            "2026-07-15 not a timestamp"
        );
    }

    #[test]
    fn timestamp_variants() {
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567Z x"), 29);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03Z x"), 21);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567Z"), 28);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567 x"), 0);
        assert_eq!(timestamp_len(b"2026-07-15X21:26:03.1234567Z x"), 0);
    }

    #[test]
    fn bom_mid_line_and_invalid_utf8() {
        assert_eq!(normalize_line(b"a\xef\xbb\xbfb"), "ab");
        assert_eq!(normalize_line(b"bad \xff byte"), "bad \u{fffd} byte");
    }

    #[test]
    fn escape_sequences_of_every_kind() {
        assert_eq!(normalize_line(b"\x1b]0;title\x07x\x1b(By\x1b[?25lz"), "xyz");
        assert_eq!(normalize_line("a\u{9b}31mb\u{85}c".as_bytes()), "abc");
        assert_eq!(normalize_line(b"lone\x1b"), "lone");
    }

    #[test]
    fn needs_cleaning_only_when_it_matters() {
        assert!(!needs_cleaning("caf\u{e9} \u{fffd} \u{ff01}".as_bytes()));
        assert!(needs_cleaning(b"x\x1b[0m"));
        assert!(needs_cleaning(b"x\xef\xbb\xbf"));
        assert!(needs_cleaning(b"x\xff"));
    }

    #[test]
    fn exit_code_boilerplate() {
        assert!(is_exit_code_boilerplate(
            "##[error]Process completed with exit code 1."
        ));
        assert!(is_exit_code_boilerplate(
            "##[error]Process completed with exit code 137"
        ));
        assert!(!is_exit_code_boilerplate(
            "##[error]Process completed with exit code"
        ));
        assert!(!is_exit_code_boilerplate(
            "Process completed with exit code 1."
        ));
    }

    #[test]
    fn compressed_and_random_data_is_binary_and_text_is_not() {
        let text =
            "2026-07-15T21:26:03.1234567Z E   AssertionError: condition not satisfied\n".repeat(40);
        let gz = {
            use std::io::Write;
            let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        assert_eq!(binary_reason(&gz), Some("zstd data"));
        assert_eq!(binary_reason(b"\x1f\x8b\x08\x00rest"), Some("gzip data"));
        assert_eq!(binary_reason(b"PK\x03\x04rest"), Some("zip data"));
        // A xorshift stream: random bytes without a magic number.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(binary_reason(&random), Some("compressed or random bytes"));
        assert_eq!(binary_reason(text.as_bytes()), None);
        assert_eq!(
            binary_reason("BZh is how this line starts\n".as_bytes()),
            None
        );
        let cjk = "2026-07-15T21:26:03Z 错误：测试失败，条件在超时内未满足。日本語のログ行です。\n"
            .repeat(60);
        assert_eq!(binary_reason(cjk.as_bytes()), None);
        assert_eq!(binary_reason(b""), None);
    }

    #[test]
    fn binary_detection() {
        assert!(looks_binary(&[0, 0, 0, 1]));
        assert!(looks_binary("a\0b\0c\0".as_bytes()));
        assert!(!looks_binary(b"plain text\n"));
        assert!(!looks_binary(b""));
    }
}
